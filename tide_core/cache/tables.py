"""Arrow schemas of the tables TIDE writes into the source schema.

The span-metadata table (``tide_spans``) is written by recognition before any text changes;
anonymization reads only from it.  None of these tables holds key material; released tables
hold no original values.  The BigQuery DDL in ``sql/`` mirrors these schemas.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import pyarrow as pa

from tide_core.errors import ConfigError

TS = pa.timestamp("us", tz="UTC")

SPANS = pa.schema(
    [
        ("study", pa.string()),
        ("note_id", pa.string()),
        ("start", pa.int64()),
        ("end", pa.int64()),
        ("label", pa.string()),
        ("score", pa.float64()),
        ("recognizer", pa.string()),
        ("fingerprint", pa.string()),
        ("origin", pa.string()),
        ("decision", pa.string()),
        ("created_at", TS),
    ]
)

RECOGNIZED_NOTES = pa.schema(
    [
        ("study", pa.string()),
        ("note_id", pa.string()),
        ("patient_id", pa.string()),
        ("text_sha256", pa.string()),
        ("fingerprint", pa.string()),
        ("status", pa.string()),
        ("error_code", pa.string()),
        ("n_spans", pa.int64()),
        ("recognized_at", TS),
    ]
)

DEID_NOTES = pa.schema(
    [
        ("study", pa.string()),
        ("key", pa.string()),
        ("note_id", pa.string()),
        ("note_ref", pa.string()),
        ("patient_ref", pa.string()),
        ("text", pa.string()),
        ("note_date", pa.string()),
        ("note_type", pa.string()),
        ("source", pa.string()),
        ("site", pa.string()),
        ("anonymizer", pa.string()),
        ("fingerprint", pa.string()),
        ("released_at", TS),
    ]
)

RELEASED_SPANS = pa.schema(
    [
        ("study", pa.string()),
        ("key", pa.string()),
        ("note_id", pa.string()),
        ("start", pa.int64()),
        ("end", pa.int64()),
        ("out_start", pa.int64()),
        ("out_end", pa.int64()),
        ("label", pa.string()),
        ("operator", pa.string()),
        ("recognizer", pa.string()),
    ]
)

QUARANTINE = pa.schema(
    [
        ("study", pa.string()),
        ("key", pa.string()),
        ("note_id", pa.string()),
        ("patient_id", pa.string()),
        ("stage", pa.string()),
        ("code", pa.string()),
        ("reason", pa.string()),
        ("row_number", pa.int64()),
        ("quarantined_at", TS),
    ]
)

RUNS = pa.schema(
    [
        ("run_id", pa.string()),
        ("study", pa.string()),
        ("key", pa.string()),
        ("stage", pa.string()),
        ("started_at", TS),
        ("finished_at", TS),
        ("n_in", pa.int64()),
        ("n_released", pa.int64()),
        ("n_quarantined", pa.int64()),
        ("n_spans", pa.int64()),
        ("n_recognized", pa.int64()),
        ("n_cached", pa.int64()),
        ("notes_per_s", pa.float64()),
        ("recognizers", pa.string()),
        ("anonymizer", pa.string()),
        ("fingerprint", pa.string()),
    ]
)

#: Reviewer decisions: data, not cache.  Recognition never rewrites this table (``tide run
#: --force`` and recognizer or model changes keep every row); decisions are re-applied to the
#: recognized spans on every read, for the note text (``text_sha256``) they were made on.
REVIEW_DECISIONS = pa.schema(
    [
        ("study", pa.string()),
        ("note_id", pa.string()),
        ("text_sha256", pa.string()),
        ("start", pa.int64()),
        ("end", pa.int64()),
        ("label", pa.string()),
        ("decision", pa.string()),
        ("reviewer", pa.string()),
        ("fingerprint", pa.string()),
        ("decided_at", TS),
    ]
)

SCHEMAS: dict[str, pa.Schema] = {
    "spans": SPANS,
    "recognized_notes": RECOGNIZED_NOTES,
    "deid_notes": DEID_NOTES,
    "released_spans": RELEASED_SPANS,
    "quarantine": QUARANTINE,
    "runs": RUNS,
    "review_decisions": REVIEW_DECISIONS,
}

#: Columns each table is partitioned (and clustered) by.
PARTITION_COLUMNS: dict[str, tuple[str, ...]] = {
    "spans": ("study",),
    "recognized_notes": ("study",),
    "deid_notes": ("study", "key"),
    "released_spans": ("study", "key"),
    "quarantine": ("study", "key"),
    "runs": (),
    "review_decisions": ("study",),
}


@dataclass(frozen=True)
class TableNames:
    """Where TIDE's tables live in the source schema.  Override any name per site."""

    notes: str = "notes"
    patients: str = "patients"
    spans: str = "tide_spans"
    recognized_notes: str = "tide_recognized_notes"
    deid_notes: str = "tide_deid_notes"
    released_spans: str = "tide_released_spans"
    quarantine: str = "tide_quarantine"
    runs: str = "tide_runs"
    review_decisions: str = "tide_review_decisions"

    @classmethod
    def with_prefix(cls, prefix: str, notes: str = "notes", patients: str = "patients") -> TableNames:
        return cls(notes, patients, *(f"{prefix}{k}" for k in SCHEMAS))

    def __post_init__(self) -> None:
        names = [getattr(self, f.name) for f in fields(self)]
        if len(set(names)) != len(names):
            raise ConfigError(
                "E390",
                "two TIDE tables are configured with the same name",
                hint="give every table in TableNames a distinct name",
            )


def empty(kind: str) -> pa.Table:
    return SCHEMAS[kind].empty_table()


def to_table(kind: str, rows: list[dict[str, Any]]) -> pa.Table:
    """Build an Arrow table of ``kind`` from row dicts (missing columns become null)."""
    schema = SCHEMAS[kind]
    cols = {f.name: [r.get(f.name) for r in rows] for f in schema}
    return pa.table(cols, schema=schema)
