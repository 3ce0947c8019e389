"""Residual-PHI screen: re-scan released (de-identified) text with a recognizer set.

A hit in released text is either a surrogate the anonymizer put there on purpose (realistic
surrogates look like PHI -- that is the point) or residual PHI the pipeline missed.  With
``surrogate_aware=True`` a hit is ignored when every letter/digit of it lies inside a released
span's output range (``out_start``/``out_end``); a hit that reaches outside the surrogate (a
surname next to a replaced first name) still counts.  Released spans come from
``AnonymizedNote.spans`` or the ``released_spans`` mapping (``tide_released_spans`` rows).

Recognizers see the released text's normalised view (``tide_core.text.normalize``, the same view
recognition uses), so format characters and look-alikes hide nothing from the screen either.

The result holds counts per label and note ids only -- never a hit's text, which may be PHI.
The screen is a monitor, not a certificate: it can share the pipeline's blind spots, which is
why the random audit (``tide_core.assurance.audit``) is what supports a release claim.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from tide_core.errors import ConfigError
from tide_core.recognizers.base import Recognizer
from tide_core.spans import Note, Span
from tide_core.text.normalize import normalize

RecognizerSet = Callable[[Note], Sequence[Span]] | Sequence[Recognizer]


@dataclass
class ScreenResult:
    n_notes: int
    n_chars: int
    flagged_note_ids: list[str]
    hits_by_label: dict[str, int]
    notes_by_label: dict[str, int]
    n_hits_ignored_as_surrogate: int
    recognizers: list[str] = field(default_factory=list)
    #: note id -> {label: residual hits} for flagged notes (counts only; feeds the drift monitor)
    per_note_hits: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def n_flagged(self) -> int:
        return len(self.flagged_note_ids)

    @property
    def flag_rate(self) -> float:
        return self.n_flagged / self.n_notes if self.n_notes else float("nan")

    def rate_by_label(self) -> dict[str, float]:
        """Share of notes with at least one residual hit of each label."""
        return {lab: n / self.n_notes for lab, n in self.notes_by_label.items()} if self.n_notes else {}

    def hits_per_1k_chars(self) -> dict[str, float]:
        return {lab: 1000.0 * n / self.n_chars for lab, n in self.hits_by_label.items()} if self.n_chars else {}

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_notes": self.n_notes,
            "n_chars": self.n_chars,
            "n_flagged": self.n_flagged,
            "flag_rate": self.flag_rate if self.n_notes else None,
            "flagged_note_ids": self.flagged_note_ids,
            "hits_by_label": self.hits_by_label,
            "notes_by_label": self.notes_by_label,
            "rate_by_label": self.rate_by_label(),
            "hits_per_1k_chars": self.hits_per_1k_chars(),
            "n_hits_ignored_as_surrogate": self.n_hits_ignored_as_surrogate,
            "recognizers": self.recognizers,
        }


def _as_callable(recognizers: RecognizerSet) -> tuple[Callable[[Note], list[Span]], list[str]]:
    if callable(recognizers) and not isinstance(recognizers, (list, tuple)):
        return (lambda note: list(recognizers(note))), [getattr(recognizers, "__name__", "callable")]
    recs = list(recognizers)
    if not recs:
        raise ConfigError(
            "E745",
            "residual-PHI screen needs at least one recognizer",
            hint="pass a list of TideRecognizers or a callable note -> spans",
        )
    names = []
    for r in recs:
        if hasattr(r, "load"):
            r.load()
        names.append(getattr(r, "qualified_name", None) or repr(r))

    def run(note: Note) -> list[Span]:
        out: list[Span] = []
        for r in recs:
            out.extend(r.recognize(note))
        return out

    return run, names


def _residual(text: str, hit: Span, ranges: Sequence[tuple[int, int]]) -> bool:
    """True when some letter/digit of the hit lies outside every surrogate range."""
    for i in range(hit.start, min(hit.end, len(text))):
        if not text[i].isalnum():
            continue
        if not any(s <= i < e for s, e in ranges):
            return True
    return False


def screen_released(
    notes: Iterable[Any],
    recognizers: RecognizerSet,
    surrogate_aware: bool = True,
    released_spans: Mapping[str, Sequence[Any]] | None = None,
    min_score: float = 0.0,
    labels: Sequence[str] | None = None,
) -> ScreenResult:
    """Re-scan released notes; count residual hits by label and flag notes (ids only).

    ``notes``: ``AnonymizedNote`` (its ``spans`` give the surrogate positions) or ``Note`` rows
    of released text.  ``released_spans``: note id → objects with ``out_start``/``out_end``.
    """
    run, names = _as_callable(recognizers)
    hits: Counter[str] = Counter()
    notes_lab: Counter[str] = Counter()
    flagged: list[str] = []
    per_note: dict[str, dict[str, int]] = {}
    ignored = 0
    n_notes = n_chars = 0
    for item in notes:
        note = (
            item
            if isinstance(item, Note)
            else Note(item.note_id, getattr(item, "patient_id", ""), item.text, getattr(item, "metadata", {}) or {})
        )
        n_notes += 1
        n_chars += len(note.text)
        ranges: list[tuple[int, int]] = []
        if surrogate_aware:
            src = getattr(item, "spans", None) if not isinstance(item, Note) else None
            if src is None and released_spans is not None:
                src = released_spans.get(note.note_id, ())
            if src is None:
                raise ConfigError(
                    "E746",
                    f"surrogate-aware screen has no released spans for note {note.note_id!r}",
                    hint="pass AnonymizedNote objects or released_spans={note_id: [...]}, "
                    "or surrogate_aware=False to count every hit",
                )
            ranges = [(int(s.out_start), int(s.out_end)) for s in src]
        found = 0
        labs_here: Counter[str] = Counter()
        # screen the normalised view (as recognition does): a U+200B inside a residual phone
        # number must not hide it; hits are mapped back to offsets of the released text
        view = normalize(note.text)
        seen = note if view.identity else Note(note.note_id, note.patient_id, view.text, note.metadata)
        for hit in run(seen):
            if not view.identity:
                start, end = view.to_original(hit.start, hit.end)
                hit = replace(hit, start=start, end=end)
            if hit.score < min_score or (labels is not None and hit.label not in labels):
                continue
            if surrogate_aware and not _residual(note.text, hit, ranges):
                ignored += 1
                continue
            hits[hit.label] += 1
            labs_here[hit.label] += 1
            found += 1
        for lab in labs_here:
            notes_lab[lab] += 1
        if found:
            flagged.append(note.note_id)
            per_note[note.note_id] = dict(labs_here)
    return ScreenResult(n_notes, n_chars, flagged, dict(hits), dict(notes_lab), ignored, names, per_note)
