"""Gold-standard annotation files: one JSON document per line.

Format (see docs/architecture.md, "Data shapes")::

    {"note_id": "...", "patient_id": "...", "text": "...",
     "spans": [{"start": 0, "end": 4, "label": "PATIENT"}], "metadata": {...}}

The reader validates every line (JSON, required keys, offsets inside the text, known labels)
and names the file line and note id when something is wrong -- never the text itself, which is
PHI in a real gold corpus.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tide_core.errors import InputError, TideError
from tide_core.spans import Note, Span
from tide_core.types import LABELS

GOLD_RECOGNIZER = "gold@1"

#: Metadata keys copied into ``Note.metadata`` by :meth:`GoldDoc.to_note`; the rest (template
#: ids, hard-negative offsets, the patient row of a held-out document) stays gold-only.
NOTE_METADATA_KEYS = ("note_date", "note_type", "source", "site")


@dataclass(frozen=True)
class GoldDoc:
    """One annotated note: the text plus its gold PHI spans (sorted by offset)."""

    note_id: str
    patient_id: str
    text: str
    spans: tuple[Span, ...]
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_note(self) -> Note:
        """The note as a pipeline input (no gold information in its metadata)."""
        meta = {k: self.metadata.get(k) for k in NOTE_METADATA_KEYS}
        return Note(self.note_id, self.patient_id, self.text, meta)

    def to_dict(self) -> dict[str, Any]:
        return {
            "note_id": self.note_id,
            "patient_id": self.patient_id,
            "text": self.text,
            "spans": [{"start": s.start, "end": s.end, "label": s.label} for s in self.spans],
            "metadata": self.metadata,
        }

    def surfaces(self) -> list[tuple[str, str]]:
        """(label, surface) pairs -- for tests and local inspection only, never for logs."""
        return [(s.label, self.text[s.start : s.end]) for s in self.spans]


def _bad(path: Path, line_no: int, message: str, hint: str) -> InputError:
    return InputError("E610", f"{path.name} line {line_no}: {message}", hint=hint)


def _parse_line(path: Path, line_no: int, raw: str) -> GoldDoc:
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise _bad(
            path,
            line_no,
            f"invalid JSON at column {exc.colno}",
            "each line must be one JSON object; check quoting and escapes",
        ) from None
    if not isinstance(obj, dict):
        raise _bad(path, line_no, "line is not a JSON object", "write one object per line")
    for key in ("note_id", "text", "spans"):
        if key not in obj:
            raise _bad(
                path, line_no, f"missing key {key!r}", "required keys: note_id, patient_id, text, spans, metadata"
            )
    note_id, text = obj["note_id"], obj["text"]
    if not isinstance(note_id, str) or not isinstance(text, str):
        raise _bad(path, line_no, "note_id and text must be strings", "fix the value types")
    patient_id = obj.get("patient_id") or ""
    metadata = obj.get("metadata") or {}
    if not isinstance(metadata, dict) or not isinstance(obj["spans"], list):
        raise _bad(
            path, line_no, f"note {note_id!r}: spans must be a list and metadata an object", "fix the value types"
        )
    spans: list[Span] = []
    for i, raw_span in enumerate(obj["spans"]):
        if not isinstance(raw_span, dict) or not {"start", "end", "label"} <= set(raw_span):
            raise _bad(
                path,
                line_no,
                f"note {note_id!r} span #{i} lacks start/end/label",
                'write spans as {"start": int, "end": int, "label": str}',
            )
        start, end, label = raw_span["start"], raw_span["end"], raw_span["label"]
        if label not in LABELS:
            raise _bad(
                path,
                line_no,
                f"note {note_id!r} span #{i} has unknown label {label!r}",
                f"use one of {', '.join(LABELS)}",
            )
        if (
            not isinstance(start, int)
            or not isinstance(end, int)
            or isinstance(start, bool)
            or not (0 <= start < end <= len(text))
        ):
            raise _bad(
                path,
                line_no,
                f"note {note_id!r} span #{i} offsets [{start}, {end}) outside the text (length {len(text)})",
                "offsets are end-exclusive character offsets into text",
            )
        try:
            spans.append(Span(note_id, start, end, label, 1.0, GOLD_RECOGNIZER))
        except TideError as exc:  # pragma: no cover - guarded above
            raise _bad(path, line_no, exc.message, exc.hint) from None
    spans.sort(key=lambda s: (s.start, s.end))
    return GoldDoc(note_id, str(patient_id), text, tuple(spans), metadata)


def read_gold(path: str | Path) -> list[GoldDoc]:
    """Read a gold JSONL file; blank lines are skipped.  Raises InputError (E610/E611)."""
    path = Path(path)
    if not path.exists():
        raise InputError(
            "E611",
            f"gold file {path} does not exist",
            hint="pass the path of a JSONL file written by write_gold or `tide synth`",
        )
    docs: list[GoldDoc] = []
    with path.open("r", encoding="utf-8") as fh:
        for line_no, raw in enumerate(fh, start=1):
            if raw.strip():
                docs.append(_parse_line(path, line_no, raw))
    return docs


def write_gold(path: str | Path, docs: Iterable[GoldDoc]) -> int:
    """Write documents as JSONL (UTF-8, one per line); returns the number written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for doc in docs:
            for s in doc.spans:
                s.check_inside(doc.text)
            fh.write(json.dumps(doc.to_dict(), ensure_ascii=False, sort_keys=False))
            fh.write("\n")
            n += 1
    return n


def gold_from_mapping(obj: Mapping[str, Any]) -> GoldDoc:
    """Build a GoldDoc from an in-memory dict of the JSONL shape (validated like a file line)."""
    return _parse_line(Path("<memory>"), 1, json.dumps(obj))
