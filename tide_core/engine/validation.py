"""Input validation: turn raw note rows into Notes, quarantining bad rows with a reason.

Every input row ends up either as a Note or as a Quarantined record: nothing is dropped.
Reasons name the row number and note id, never the text.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from tide_core.errors import ConfigError
from tide_core.spans import Note, Quarantined

REQUIRED_COLUMNS = ("note_id", "patient_id", "text")
METADATA_COLUMNS = ("note_date", "note_type", "source", "site")


@dataclass(frozen=True)
class ValidatedInput:
    """A whole input, decided: every row is either a valid note or a quarantined row, never both."""

    notes: list[Note]
    quarantined: list[Quarantined]

    @property
    def n_rows(self) -> int:
        """Input rows decided (valid notes plus quarantined rows)."""
        return len(self.notes) + len(self.quarantined)


def check_columns(columns: Iterable[str], table: str = "notes") -> None:
    """Refuse a notes table without the required columns (E600), naming the columns it has.

    Column names are matched exactly: ``NOTE_ID`` is not ``note_id`` (BigQuery and Parquet
    keep the case, and the rows read carry the names as stored); the error says which names
    differ only in case, so a view can rename them.
    """
    have = list(columns)
    missing = [c for c in REQUIRED_COLUMNS if c not in set(have)]
    if missing:
        by_fold = {c.casefold(): c for c in have}
        cased = [f"{by_fold[c]} -> {c}" for c in missing if c in by_fold]
        shown = ", ".join(have[:_SHOWN_COLUMNS]) + (f", ... ({len(have)} in all)" if len(have) > _SHOWN_COLUMNS else "")
        rename = f"; these differ only in case, rename them: {', '.join(cased)}" if cased else ""
        raise ConfigError(
            "E600",
            f"table {table} lacks required column(s) {', '.join(missing)}",
            hint=f"expected {', '.join(REQUIRED_COLUMNS)}; found {shown or 'no columns'}{rename}. The notes table "
            "needs note_id, patient_id, text (+ optional note_date, note_type, source, site), named in lower "
            "case; map your columns with a view (CREATE VIEW notes AS SELECT NOTE_ID AS note_id, ...)",
        )


#: How many of a table's column names an E600 error lists.
_SHOWN_COLUMNS = 20


def _type_name(value: Any) -> str:
    """The kind of a non-text value, as SQL names it (never the value itself)."""
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "INTEGER"
    if isinstance(value, float):
        return "FLOAT"
    if isinstance(value, (list, tuple)):
        return "LIST"
    if isinstance(value, dict):
        return "STRUCT or MAP"
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return "DATE or TIME"
    return type(value).__name__.upper()


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


def _validate_row(i: int, row: Mapping[str, Any], max_chars: int) -> Note | Quarantined:
    """One raw row (row number ``i`` of the study's input) as a Note, or why it is quarantined."""

    def q(note_id: str | None, patient_id: str | None, code: str, reason: str) -> Quarantined:
        return Quarantined(note_id, patient_id, "input", code, reason, i)

    note_id = _as_str_id(row.get("note_id"))
    patient_id = _as_str_id(row.get("patient_id"))
    text = row.get("text")
    if note_id is None:
        raw = row.get("note_id")
        if isinstance(raw, (bytes, bytearray, memoryview)) and bytes(raw).strip():
            return q(
                None,
                patient_id,
                "E623",
                f"row {i}: note_id is bytes that are not valid UTF-8 text; store note ids as VARCHAR (UTF-8)",
            )
        return q(None, patient_id, "E601", f"row {i}: note_id is null or empty")
    if patient_id is None:
        return q(
            note_id,
            None,
            "E602",
            f"row {i} (note {note_id}): patient_id is null or empty; "
            "dates are shifted per patient, so the note cannot be released",
        )
    if isinstance(text, (bytes, bytearray, memoryview)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            return q(
                note_id,
                patient_id,
                "E603",
                f"row {i} (note {note_id}): text is not valid UTF-8 "
                f"(byte offset {exc.start}); re-export the note as UTF-8",
            )
    if text is not None and not isinstance(text, str):
        return q(
            note_id,
            patient_id,
            "E622",
            f"row {i} (note {note_id}): text is a {_type_name(text)} value, expected VARCHAR (STRING) "
            "or UTF-8 BLOB (BYTES); cast the column to text in a view",
        )
    if text is None or not text.strip():
        return q(note_id, patient_id, "E604", f"row {i} (note {note_id}): text is null or empty")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return q(
            note_id,
            patient_id,
            "E603",
            f"row {i} (note {note_id}): text holds an unpaired surrogate "
            f"at character {exc.start}; re-export the note as UTF-8",
        )
    if len(text) > max_chars:
        return q(
            note_id,
            patient_id,
            "E605",
            f"row {i} (note {note_id}): text has {len(text)} characters, "
            f"more than the limit {max_chars}; raise max_note_chars",
        )
    try:
        note_date = _iso_date(row.get("note_date"))
    except (ValueError, TypeError):
        return q(note_id, patient_id, "E606", f"row {i} (note {note_id}): note_date is not an ISO date")
    meta: dict[str, Any] = {"note_date": note_date}
    for col in METADATA_COLUMNS[1:]:
        v = row.get(col)
        meta[col] = None if v is None else str(v)
    return Note(note_id, patient_id, text, meta)


def validate_chunk(
    rows: Iterable[Mapping[str, Any]], first_row: int = 0, max_chars: int = 2_000_000
) -> tuple[list[tuple[int, Note]], list[Quarantined]]:
    """Validate rows ``first_row, first_row + 1, ...`` of a study's input, one by one.

    Returns the valid rows as (row number, Note) and the quarantined rows.  Duplicate note ids
    are not looked at here (they may span chunks): :func:`resolve_duplicates` decides them.
    """
    return validate_numbered(enumerate(rows, start=first_row), max_chars)


def validate_numbered(
    rows: Iterable[tuple[int, Mapping[str, Any]]], max_chars: int = 2_000_000
) -> tuple[list[tuple[int, Note]], list[Quarantined]]:
    """:func:`validate_chunk` of rows that carry their own study-wide row numbers (a shard's)."""
    notes: list[tuple[int, Note]] = []
    quarantined: list[Quarantined] = []
    for i, row in rows:
        out = _validate_row(i, row, max_chars)
        if isinstance(out, Note):
            notes.append((i, out))
        else:
            quarantined.append(out)
    return notes, quarantined


def resolve_duplicates(notes: Sequence[tuple[int, Note]]) -> tuple[list[Note], list[Quarantined]]:
    """Duplicate note ids: exact duplicates keep the first row; conflicting ones are all quarantined.

    ``notes`` are (row number, Note) in row order and must hold every valid row of each note id
    that appears more than once (rows of other ids pass through unchanged).
    """
    quarantined: list[Quarantined] = []

    def q(i: int, note_id: str, patient_id: str, code: str, reason: str) -> None:
        quarantined.append(Quarantined(note_id, patient_id, "input", code, reason, i))

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
    return kept, quarantined


def sort_quarantined(items: Iterable[Quarantined]) -> list[Quarantined]:
    """Quarantined input rows in row order (rows without a number first)."""
    return sorted(items, key=lambda r: r.row_number if r.row_number is not None else -1)


def validate_rows(rows: Iterable[Mapping[str, Any]], max_chars: int = 2_000_000) -> ValidatedInput:
    """Validate a whole input held in memory: each row (:func:`validate_chunk`), then duplicate ids.

    Quarantined rows come back in row order (:func:`sort_quarantined`).
    """
    notes, quarantined = validate_chunk(rows, 0, max_chars)
    kept, duplicates = resolve_duplicates(notes)
    return ValidatedInput(kept, sort_quarantined(quarantined + duplicates))


def validate_table(table: pa.Table, name: str = "notes", max_chars: int = 2_000_000) -> ValidatedInput:
    """Validate an Arrow notes table: refuse it without the required columns (E600), then its rows."""
    check_columns(table.column_names, name)
    return validate_rows(table.to_pylist(), max_chars)
