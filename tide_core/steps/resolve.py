"""Span resolution: turn the union of every recognizer's spans into one non-overlapping set.

Several recognizers run on each note and they disagree at the edges ("Dr. John Smith" from the
regex layer, "John Smith" from the token classifier, "Smith" from the known-PHI list).  The
anonymizer needs exactly one label per character, so resolution is a pure, deterministic
function of the *set* of input spans (the input order never matters):

1. spans under the per-label ``min_score`` are dropped;
2. overlapping spans that share a label are unioned (when ``merge_same_label_overlaps``); the
   union keeps the highest score and the recognizer that gave it;
3. among spans that still overlap, the longest wins; ties go to the label that comes first in
   ``label_priority``, then to the higher score, then to the smaller recognizer name.  A union
   that loses falls back to its member spans, so a span is only ever dropped for a conflict.
4. what a losing span covered beyond the winners is not given up: after roles and propagation,
   :func:`uncovered_parts` returns those parts as spans of the losing span's label, score and
   recognizer (``finish_note`` tidies and adds them).  The characters the output covers are then
   exactly those the input spans above their thresholds covered: a conflict decides a label,
   never whether a character is replaced.  Before version 2, "Dr. Ann Lee  Tue 11/24 7:41 AM"
   with the name spanning "Ann Lee  Tue" released "11/24 7:41 AM" in clear, as the longer name
   beat the date.

Touching spans ("03/04" + "/2021" as [0,5) and [5,10)) do not overlap and are never merged:
gold annotations keep adjacent entities apart, and merging them would change span counts.

A :class:`ResolutionPolicy` is the step ``tide.resolve@VERSION`` of the recognition fingerprint
(``qualified_name``, ``config()``); bump :data:`VERSION` when a code change here changes which
spans survive.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tide_core.errors import ConfigError
from tide_core.spans import RecognizerResult, Span
from tide_core.types import LABELS

NAME = "tide.resolve"
VERSION = "2"

#: Default tie-break order: structured identifiers first (their patterns are the most specific),
#: then names (a titled name is stronger evidence of DOCTOR than a name list is of PATIENT),
#: then places and the catch-all.
DEFAULT_LABEL_PRIORITY: tuple[str, ...] = (
    "ID",
    "PHONE",
    "EMAIL",
    "URL",
    "DATE",
    "AGE",
    "DOCTOR",
    "PATIENT",
    "OTHER",
    "HOSPITAL",
    "LOCATION",
)


@dataclass(frozen=True)
class ResolutionPolicy:
    """How overlapping spans from several recognizers are reconciled."""

    label_priority: tuple[str, ...] = DEFAULT_LABEL_PRIORITY
    min_score: Mapping[str, float] = field(default_factory=dict)
    default_min_score: float = 0.0
    merge_same_label_overlaps: bool = True

    def __post_init__(self) -> None:
        for label in list(self.label_priority) + list(self.min_score):
            if label not in LABELS:
                raise ConfigError(
                    "E120",
                    f"unknown label {label!r} in the resolution policy",
                    hint=f"use labels from: {', '.join(LABELS)}",
                )
        object.__setattr__(self, "label_priority", tuple(self.label_priority))
        object.__setattr__(self, "min_score", dict(self.min_score))

    def threshold(self, label: str) -> float:
        return float(self.min_score.get(label, self.default_min_score))

    def rank(self, label: str) -> int:
        try:
            return self.label_priority.index(label)
        except ValueError:
            return len(self.label_priority) + LABELS.index(label)

    @property
    def qualified_name(self) -> str:
        return f"{NAME}@{VERSION}"

    def config(self) -> dict[str, Any]:
        """Output-affecting settings, for the recognition fingerprint."""
        return {
            "label_priority": list(self.label_priority),
            "min_score": {k: float(v) for k, v in sorted(self.min_score.items())},
            "default_min_score": float(self.default_min_score),
            "merge_same_label_overlaps": bool(self.merge_same_label_overlaps),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> ResolutionPolicy:
        if not data:
            return cls()
        known = {"label_priority", "min_score", "default_min_score", "merge_same_label_overlaps"}
        unknown = set(data) - known
        if unknown:
            raise ConfigError(
                "E121",
                f"unknown resolution policy option(s): {', '.join(sorted(unknown))}",
                hint=f"valid options: {', '.join(sorted(known))}",
            )
        kwargs = dict(data)
        if "label_priority" in kwargs:
            kwargs["label_priority"] = tuple(kwargs["label_priority"])
        return cls(**kwargs)


def _union_same_label(spans: list[Span]) -> list[Span]:
    """Union overlapping spans of one label in one note (connected components of overlap)."""
    out: list[Span] = []
    spans = sorted(spans, key=lambda s: (s.start, s.end, -s.score, s.recognizer))
    group: list[Span] = []
    group_end = -1
    for s in spans:
        if group and s.start < group_end:  # strict overlap; touching starts a new group
            group.append(s)
            group_end = max(group_end, s.end)
            continue
        if group:
            out.append(_merge(group, group_end))
        group, group_end = [s], s.end
    if group:
        out.append(_merge(group, group_end))
    return out


def _merge(group: list[Span], end: int) -> Span:
    if len(group) == 1:
        return group[0]
    best = min(group, key=lambda s: (-s.score, s.recognizer))
    return Span(best.note_id, min(s.start for s in group), end, best.label, best.score, best.recognizer)


def _in_resolution_order(spans: Iterable[Span], policy: ResolutionPolicy) -> list[Span]:
    """A total order: longest first, then label priority, score, recognizer name, position."""
    unique = set(spans)
    rank = {label: policy.rank(label) for label in {s.label for s in unique}}
    return sorted(unique, key=lambda s: (s.start - s.end, rank[s.label], -s.score, s.recognizer, s.start, s.label))


def _resolve_one_note(spans: list[Span], policy: ResolutionPolicy) -> list[Span]:
    if policy.merge_same_label_overlaps:
        by_label: dict[str, list[Span]] = {}
        for s in spans:
            by_label.setdefault(s.label, []).append(s)
        unions = [m for label in sorted(by_label) for m in _union_same_label(by_label[label])]
        # A union that loses to a longer span of another label falls back to its members, so the
        # parts that do not conflict are still kept (nothing is dropped without a conflict).
        spans = unions + spans
    kept: list[Span] = []
    occupied: list[tuple[int, int]] = []  # sorted, non-overlapping intervals already taken
    for s in _in_resolution_order(spans, policy):
        i = bisect.bisect_left(occupied, (s.start, s.start))
        clash = (i > 0 and occupied[i - 1][1] > s.start) or (i < len(occupied) and occupied[i][0] < s.end)
        if clash:
            continue
        occupied.insert(i, (s.start, s.end))
        kept.append(s)
    return sorted(kept, key=lambda s: (s.start, s.end))


def resolve_spans(spans: Iterable[Span], policy: ResolutionPolicy | None = None) -> list[Span]:
    """Return non-overlapping spans, sorted by (note_id, start); see the module docstring."""
    policy = policy or ResolutionPolicy()
    per_note: dict[str, list[Span]] = {}
    thresholds: dict[str, float] = {}
    for s in spans:
        threshold = thresholds.get(s.label)
        if threshold is None:
            threshold = thresholds[s.label] = policy.threshold(s.label)
        if s.score < threshold:
            continue
        per_note.setdefault(s.note_id, []).append(s)
    out: list[Span] = []
    for note_id in sorted(per_note):
        out.extend(_resolve_one_note(per_note[note_id], policy))
    return out


def uncovered_parts(spans: Iterable[Span], kept: Iterable[Span], policy: ResolutionPolicy | None = None) -> list[Span]:
    """The parts of ``spans`` (one note's input to :func:`resolve_spans`) that no span of ``kept``
    (non-overlapping) covers, as spans with the label, score and recognizer of the span they come
    from; inputs under their label's ``min_score`` are left out, as resolution leaves them out.

    Inputs are visited in resolution's order and each part found is taken, so the parts never
    overlap each other or ``kept``.  Parts are not tidied: the caller trims them (white space
    around a part of a longer span) with the note's text.
    """
    policy = policy or ResolutionPolicy()
    occupied = sorted((s.start, s.end) for s in kept)
    parts: list[Span] = []
    above = (s for s in spans if s.score >= policy.threshold(s.label))
    for s in _in_resolution_order(above, policy):
        i = bisect.bisect_left(occupied, (s.start, s.start))
        if i > 0 and occupied[i - 1][1] > s.start:
            i -= 1
        gaps: list[tuple[int, int]] = []
        pos = s.start
        while i < len(occupied) and occupied[i][0] < s.end:
            if occupied[i][0] > pos:
                gaps.append((pos, occupied[i][0]))
            pos = max(pos, occupied[i][1])
            i += 1
        if pos < s.end:
            gaps.append((pos, s.end))
        for a, b in gaps:
            parts.append(Span(s.note_id, a, b, s.label, s.score, s.recognizer))
            bisect.insort(occupied, (a, b))
    return sorted(parts, key=lambda s: (s.start, s.end))


def resolve_results(
    results: Sequence[RecognizerResult],
    policy: ResolutionPolicy | None = None,
    note_id: str = "_",
    recognizer: str = "unknown@0",
) -> list[Span]:
    """Convenience for recognizers: resolve Presidio-shaped results of one text."""
    spans = [Span.from_result(note_id, r, recognizer) for r in results]
    return resolve_spans(spans, policy)
