"""Input validation: turn raw note rows into Notes, quarantining bad rows with a reason.

Every input row ends up either as a Note or as a Quarantined record: nothing is dropped.
Reasons name the row number and note id, never the text.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from tide_core.errors import ConfigError
from tide_core.spans import Note, Quarantined

REQUIRED_COLUMNS = ("note_id", "patient_id", "text")
METADATA_COLUMNS = ("note_date", "note_type", "source", "site")


@dataclass(frozen=True)
class ValidatedInput:
    notes: list[Note]
    quarantined: list[Quarantined]

    @property
    def n_rows(self) -> int:
        return len(self.notes) + len(self.quarantined)


def check_columns(columns: Iterable[str], table: str = "notes") -> None:
    missing = [c for c in REQUIRED_COLUMNS if c not in set(columns)]
    if missing:
        raise ConfigError(
            "E600",
            f"table {table} lacks required column(s) {', '.join(missing)}",
            hint="the notes table needs note_id, patient_id, text (+ optional note_date, "
            "note_type, source, site); map your columns with a view",
        )


def _as_str_id(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    s = str(value).strip()
    return s or None


def _iso_date(value: Any) -> str | None:
    """Normalise a note_date to ISO yyyy-mm-dd; raises ValueError if it cannot be read."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    s = str(value).strip()
    if not s:
        return None
    return dt.date.fromisoformat(s[:10]).isoformat()


def validate_rows(rows: Iterable[Mapping[str, Any]], max_chars: int = 2_000_000) -> ValidatedInput:
    rows = list(rows)
    notes: list[tuple[int, Note]] = []
    quarantined: list[Quarantined] = []

    def q(i: int, note_id: str | None, patient_id: str | None, code: str, reason: str) -> None:
        quarantined.append(Quarantined(note_id, patient_id, "input", code, reason, i))

    for i, row in enumerate(rows):
        note_id = _as_str_id(row.get("note_id"))
        patient_id = _as_str_id(row.get("patient_id"))
        text = row.get("text")
        if note_id is None:
            q(i, None, patient_id, "E601", f"row {i}: note_id is null or empty")
            continue
        if patient_id is None:
            q(
                i,
                note_id,
                None,
                "E602",
                f"row {i} (note {note_id}): patient_id is null or empty; "
                "dates are shifted per patient, so the note cannot be released",
            )
            continue
        if isinstance(text, (bytes, bytearray, memoryview)):
            try:
                text = bytes(text).decode("utf-8")
            except UnicodeDecodeError as exc:
                q(
                    i,
                    note_id,
                    patient_id,
                    "E603",
                    f"row {i} (note {note_id}): text is not valid UTF-8 "
                    f"(byte offset {exc.start}); re-export the note as UTF-8",
                )
                continue
        if text is None or not isinstance(text, str) or not text.strip():
            q(i, note_id, patient_id, "E604", f"row {i} (note {note_id}): text is null or empty")
            continue
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            q(
                i,
                note_id,
                patient_id,
                "E603",
                f"row {i} (note {note_id}): text holds an unpaired surrogate "
                f"at character {exc.start}; re-export the note as UTF-8",
            )
            continue
        if len(text) > max_chars:
            q(
                i,
                note_id,
                patient_id,
                "E605",
                f"row {i} (note {note_id}): text has {len(text)} characters, "
                f"more than the limit {max_chars}; raise max_note_chars",
            )
            continue
        try:
            note_date = _iso_date(row.get("note_date"))
        except (ValueError, TypeError):
            q(i, note_id, patient_id, "E606", f"row {i} (note {note_id}): note_date is not an ISO date")
            continue
        meta = {"note_date": note_date}
        for col in METADATA_COLUMNS[1:]:
            v = row.get(col)
            meta[col] = None if v is None else str(v)
        notes.append((i, Note(note_id, patient_id, text, meta)))

    # Duplicate note ids: exact duplicates keep the first row; conflicting ones are all quarantined.
    counts = Counter(n.note_id for _, n in notes)
    kept: list[Note] = []
    first_row: dict[str, tuple[int, Note]] = {}
    conflicting = set()
    for i, n in notes:
        if counts[n.note_id] > 1:
            if n.note_id in first_row:
                j, m = first_row[n.note_id]
                if (m.text, m.patient_id) != (n.text, n.patient_id):
                    conflicting.add(n.note_id)
            else:
                first_row[n.note_id] = (i, n)
    for i, n in notes:
        if counts[n.note_id] == 1:
            kept.append(n)
        elif n.note_id in conflicting:
            q(
                i,
                n.note_id,
                n.patient_id,
                "E607",
                f"row {i}: note_id {n.note_id} appears {counts[n.note_id]} "
                "times with different text or patient; fix the source table",
            )
        elif first_row[n.note_id][0] == i:
            kept.append(n)
        else:
            q(
                i,
                n.note_id,
                n.patient_id,
                "E608",
                f"row {i}: exact duplicate of row {first_row[n.note_id][0]} (note {n.note_id}); released once",
            )
    quarantined.sort(key=lambda r: r.row_number if r.row_number is not None else -1)
    return ValidatedInput(kept, quarantined)


def validate_table(table: pa.Table, name: str = "notes", max_chars: int = 2_000_000) -> ValidatedInput:
    check_columns(table.column_names, name)
    return validate_rows(table.to_pylist(), max_chars)
