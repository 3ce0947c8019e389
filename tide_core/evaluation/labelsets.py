"""Label sets for scoring: TIDE's own labels (``fine``) or a coarser set (``coarse``).

A corpus annotated with one ``NAME`` label cannot be scored per TIDE label (PATIENT vs DOCTOR),
but it can be scored on a coarser label set.  A label set maps every TIDE label onto one of its
own labels; the mapping is applied to **both** gold and predictions at scoring time (matching,
counts, character metrics), so a predicted DOCTOR span matches a gold NAME span.

``coarse`` is the category level of the i2b2 2014 de-identification guidelines (PROFESSION is
not a TIDE label):

============  ===========================================
coarse label  TIDE labels
============  ===========================================
NAME          PATIENT, DOCTOR
DATE          DATE
AGE           AGE
ID            ID
CONTACT       PHONE, EMAIL, URL
LOCATION      LOCATION, HOSPITAL, OTHER (organisations)
============  ===========================================

(i2b2 files hospitals and organisations under LOCATION; so does ``coarse``.)

:class:`tide_core.spans.Span` only holds TIDE labels, so a span whose *source* label is a coarse
label (``NAME`` in a gold file) is stored under that coarse label's representative TIDE label
(NAME → PATIENT, CONTACT → PHONE); scoring maps it back to NAME.  This is exact for scoring on
the coarse set and meaningless on the fine set, which is why coarse targets are only accepted
when the coarse label set is selected.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tide_core.errors import ConfigError
from tide_core.types import LABELS


@dataclass(frozen=True)
class LabelSet:
    """Scoring labels plus the TIDE label → scoring label map."""

    name: str
    labels: tuple[str, ...]
    fine_to_set: Mapping[str, str]  # every TIDE label -> one of ``labels``
    representative: Mapping[str, str]  # every label of the set -> a TIDE label that maps to it

    def map(self, label: str) -> str:
        """Scoring label of a TIDE label."""
        return self.fine_to_set[label]

    @property
    def label_map(self) -> dict[str, str] | None:
        """The TIDE → set map for the scorers, or ``None`` for the identity (fine) set."""
        if all(k == v for k, v in self.fine_to_set.items()):
            return None
        return dict(self.fine_to_set)


FINE = LabelSet("fine", tuple(LABELS), {lab: lab for lab in LABELS}, {lab: lab for lab in LABELS})

COARSE_MAP: dict[str, str] = {
    "PATIENT": "NAME",
    "DOCTOR": "NAME",
    "DATE": "DATE",
    "AGE": "AGE",
    "ID": "ID",
    "PHONE": "CONTACT",
    "EMAIL": "CONTACT",
    "URL": "CONTACT",
    "LOCATION": "LOCATION",
    "HOSPITAL": "LOCATION",
    "OTHER": "LOCATION",
}
COARSE_LABELS: tuple[str, ...] = ("NAME", "DATE", "AGE", "ID", "CONTACT", "LOCATION")
COARSE = LabelSet(
    "coarse",
    COARSE_LABELS,
    dict(COARSE_MAP),
    {"NAME": "PATIENT", "DATE": "DATE", "AGE": "AGE", "ID": "ID", "CONTACT": "PHONE", "LOCATION": "LOCATION"},
)

LABEL_SETS: dict[str, LabelSet] = {"fine": FINE, "coarse": COARSE}


def get_label_set(name: str | LabelSet | None) -> LabelSet:
    """``"fine"`` (default), ``"coarse"`` or a :class:`LabelSet`."""
    if name is None:
        return FINE
    if isinstance(name, LabelSet):
        return name
    try:
        return LABEL_SETS[str(name).lower()]
    except KeyError:
        raise ConfigError("E723", f"unknown label set {name!r}", hint=f"use one of {', '.join(LABEL_SETS)}") from None


# consistency of the built-ins (cheap, runs once at import)
for _ls in LABEL_SETS.values():
    assert set(_ls.fine_to_set) == set(LABELS) and set(_ls.fine_to_set.values()) == set(_ls.labels)
    assert all(_ls.fine_to_set[_ls.representative[lab]] == lab for lab in _ls.labels)
del _ls

__all__ = ["LabelSet", "FINE", "COARSE", "COARSE_MAP", "COARSE_LABELS", "LABEL_SETS", "get_label_set"]
