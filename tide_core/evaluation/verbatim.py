"""The release view of recall: which gold PHI surfaces survive verbatim in the released text.

Span recall says whether a prediction lined up with a gold span; what a reader of the release
sees is the text after the anonymizer ran on the predictions.  :func:`surviving_surfaces`
anonymizes every document with the predicted spans (one benchmark key) and counts the
gold surfaces that survive: a gold span no predicted span touches (its text is released where
it stood), or a surface of four or more characters that still occurs, as a whole word, anywhere
in that document's released text (a surrogate or a missed second mention can carry it).
Shorter surfaces (ages, initials) and bare four-digit numbers (years) are only counted where
they stood: "93" would otherwise be found in every "SpO2 93%", and a year inside another,
correctly shifted date of the same year is not a leak of that year's mention.  Two exemptions
follow the release rules rather than the recognizers: ages of 89 or less are kept on purpose
(HIPAA Safe Harbor aggregates only ages over 89), so gold AGE spans whose value is <= 89 are not
counted; and professions are not PHI, so they are not gold.

A document the anonymizer refuses (a coded ``AnonymizationError``: the engine quarantines it)
releases nothing; it is counted in ``quarantined`` and none of its surfaces survive.

With a second anonymizer under an independent key (``confirm``), a surface found elsewhere
counts only when it is found under both keys.  A surrogate that happens to equal another gold
surface of the same note (a shifted date landing on another real date, a surrogate town that is
also the patient's town) is a coincidence of one key and tells a reader nothing; an operator that
carries the original through, or a missed mention, survives under every key.  This makes the
figure independent of the key drawn (``coincidences`` counts what the second key ruled out).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tide_core.anonymize.engine import Anonymizer
from tide_core.errors import AnonymizationError
from tide_core.evaluation.gold_io import GoldDoc
from tide_core.spans import Span


@dataclass
class VerbatimResult:
    """Counts per label: gold surfaces considered and those found verbatim in the release."""

    n_surfaces: dict[str, int] = field(default_factory=dict)
    n_verbatim: dict[str, int] = field(default_factory=dict)
    quarantined: int = 0
    n_docs: int = 0
    coincidences: int = 0

    def share(self, label: str | None = None) -> float | None:
        """Share of gold surfaces (of ``label``, or all) that survive verbatim."""
        if label is None:
            total, hit = sum(self.n_surfaces.values()), sum(self.n_verbatim.values())
        else:
            total, hit = self.n_surfaces.get(label, 0), self.n_verbatim.get(label, 0)
        return hit / total if total else None

    def to_dict(self) -> dict[str, Any]:
        labels = sorted(self.n_surfaces)
        return {
            "n_docs": self.n_docs,
            "quarantined": self.quarantined,
            "coincidences": self.coincidences,
            "overall": self.share(),
            "category": {
                lab: {
                    "n_surfaces": self.n_surfaces[lab],
                    "n_verbatim": self.n_verbatim.get(lab, 0),
                    "share": self.share(lab),
                }
                for lab in labels
            },
        }


def _exempt(label: str, surface: str) -> bool:
    if label != "AGE":
        return False
    digits = "".join(c for c in surface if c.isdigit())
    return not digits or int(digits) <= 89


def surviving_surfaces(
    gold: Sequence[GoldDoc],
    predictions: Mapping[str, Sequence[Span]],
    anonymizer: Anonymizer,
    confirm: Anonymizer | None = None,
) -> VerbatimResult:
    """Anonymize each gold document with its (resolved) predicted spans; count surviving gold surfaces.

    ``confirm``: a second anonymizer under an independent key; a surface found away from where it
    stood then survives only if it is found in both releases (see the module docstring).
    """
    res = VerbatimResult()
    for doc in gold:
        res.n_docs += 1
        pred = list(predictions.get(doc.note_id, ()))
        released = _release(doc, pred, anonymizer)
        if released is None:
            res.quarantined += 1
        second = _release(doc, pred, confirm) if confirm is not None and released is not None else None
        for s in doc.spans:
            surface = doc.text[s.start : s.end].strip()
            if not surface or _exempt(s.label, surface):
                continue
            res.n_surfaces[s.label] = res.n_surfaces.get(s.label, 0) + 1
            if released is None:
                continue
            untouched = not any(p.start < s.end and s.start < p.end for p in pred)
            searchable = len(surface) >= 5 or (len(surface) == 4 and not surface.isdigit())
            elsewhere = searchable and _found(surface, released)
            if elsewhere and not untouched and second is not None and not _found(surface, second):
                res.coincidences += 1
                elsewhere = False
            if untouched or elsewhere:
                res.n_verbatim[s.label] = res.n_verbatim.get(s.label, 0) + 1
    return res


def _release(doc: GoldDoc, pred: Sequence[Span], anonymizer: Anonymizer) -> str | None:
    """The released text, or None when the anonymizer refuses the document (quarantine)."""
    try:
        return anonymizer.anonymize(doc.to_note(), list(pred)).text
    except AnonymizationError:
        return None


def _found(surface: str, text: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(surface) + r"(?!\w)", text) is not None
