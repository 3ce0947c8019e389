"""The span model: what recognizers emit, what the span cache stores, what the anonymizer consumes.

Offsets are character offsets into the *original* note text, end-exclusive (Python slicing).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tide_core.errors import InputError
from tide_core.types import LABELS


@dataclass
class RecognizerResult:
    """Presidio-shaped result (``entity_type, start, end, score``) without importing Presidio."""

    entity_type: str
    start: int
    end: int
    score: float
    recognition_metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"entity_type": self.entity_type, "start": self.start, "end": self.end, "score": self.score}


@dataclass(frozen=True, order=True)
class Span:
    """One detected (or gold) PHI span in one note."""

    note_id: str
    start: int
    end: int
    label: str
    score: float = 1.0
    recognizer: str = "unknown@0"

    def __post_init__(self) -> None:
        if not isinstance(self.start, int) or not isinstance(self.end, int):
            raise InputError("E010", f"span offsets must be integers in note {self.note_id!r}")
        if self.start < 0 or self.end <= self.start:
            raise InputError(
                "E011",
                f"invalid span [{self.start}, {self.end}) in note {self.note_id!r}",
                hint="offsets are end-exclusive character offsets with 0 <= start < end",
            )
        if self.label not in LABELS:
            raise InputError(
                "E012", f"unknown label {self.label!r} in note {self.note_id!r}", hint=f"use one of {', '.join(LABELS)}"
            )
        if not (0.0 <= float(self.score) <= 1.0):
            raise InputError("E013", f"score {self.score} outside [0, 1] in note {self.note_id!r}")

    @property
    def length(self) -> int:
        return self.end - self.start

    def check_inside(self, text: str) -> None:
        if self.end > len(text):
            raise InputError(
                "E014",
                f"span [{self.start}, {self.end}) lies past the end of note {self.note_id!r} (length {len(text)})",
            )

    def overlaps(self, other: Span) -> bool:
        return self.start < other.end and other.start < self.end

    def to_result(self) -> RecognizerResult:
        return RecognizerResult(
            self.label, self.start, self.end, float(self.score), {"recognizer_name": self.recognizer}
        )

    @classmethod
    def from_result(
        cls, note_id: str, result: Any, recognizer: str | None = None, label_map: Mapping[str, str] | None = None
    ) -> Span:
        """Build a Span from a RecognizerResult or a Presidio RecognizerResult."""
        entity = result.entity_type
        if label_map is not None:
            entity = label_map.get(entity, entity)
        meta = getattr(result, "recognition_metadata", None) or {}
        name = recognizer or meta.get("recognizer_name") or "unknown@0"
        return cls(note_id, int(result.start), int(result.end), entity, float(result.score), name)

    @classmethod
    def from_presidio(
        cls, note_id: str, result: Any, recognizer: str | None = None, label_map: Mapping[str, str] | None = None
    ) -> Span:
        return cls.from_result(note_id, result, recognizer, label_map)

    def to_dict(self) -> dict[str, Any]:
        return {
            "note_id": self.note_id,
            "start": self.start,
            "end": self.end,
            "label": self.label,
            "score": float(self.score),
            "recognizer": self.recognizer,
        }


@dataclass(frozen=True)
class Note:
    """One input note.  ``metadata`` carries note_date, note_type, source, site, ..."""

    note_id: str
    patient_id: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ReleasedSpan:
    """Span metadata of a released note: offsets in the original *and* the output text, no values."""

    note_id: str
    start: int
    end: int
    out_start: int
    out_end: int
    label: str
    operator: str
    recognizer: str


@dataclass(frozen=True)
class AnonymizedNote:
    note_id: str
    patient_id: str
    text: str
    spans: tuple[ReleasedSpan, ...]


@dataclass(frozen=True)
class Quarantined:
    """A row that was not released, with the stage and a reason that names no PHI."""

    note_id: str | None
    patient_id: str | None
    stage: str  # "input", "recognition", "anonymization", "release"
    code: str
    reason: str
    row_number: int | None = None
