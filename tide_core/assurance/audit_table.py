"""The ``tide_audits`` table: one row per completed audit round of one bucket.

Rows are appended, never replaced: every round counts ("ten rounds of 300 clean patients is
one sample of 3,000"; redrawing until a round comes back clean proves nothing), so the release
gate pools all rounds of a (study, key, bucket).  The table holds counts and the reviewer's
name/role only -- no patient ids, no note text.  ``upper_bound`` is what the reviewer's tool
computed; the gate recomputes it from the counts and never trusts the stored value.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime

import pyarrow as pa

from tide_core.assurance.bounds import clopper_pearson_upper
from tide_core.errors import InputError

TABLE_NAME = "tide_audits"

AUDITS = pa.schema(
    [
        ("study", pa.string()),
        ("key", pa.string()),
        ("bucket", pa.string()),
        ("n_patients_sampled", pa.int64()),
        ("n_leaks", pa.int64()),
        ("confidence", pa.float64()),
        ("upper_bound", pa.float64()),
        ("reviewer", pa.string()),
        ("audited_at", pa.timestamp("us", tz="UTC")),
    ]
)


@dataclass(frozen=True)
class AuditRecord:
    study: str
    key: str
    bucket: str
    n_patients_sampled: int
    n_leaks: int
    confidence: float = 0.95
    upper_bound: float | None = None
    reviewer: str = ""
    audited_at: datetime | None = None

    @classmethod
    def create(
        cls,
        study: str,
        key: str,
        bucket: str,
        n_patients_sampled: int,
        n_leaks: int,
        confidence: float = 0.95,
        reviewer: str = "",
        audited_at: datetime | None = None,
    ) -> AuditRecord:
        """A record with its exact upper bound filled in and a UTC timestamp."""
        return cls(
            study,
            key,
            bucket,
            int(n_patients_sampled),
            int(n_leaks),
            float(confidence),
            clopper_pearson_upper(n_patients_sampled, n_leaks, confidence),
            reviewer,
            audited_at or datetime.now(UTC),
        )


def records_to_table(records: Iterable[AuditRecord]) -> pa.Table:
    rows = [asdict(r) for r in records]
    for r in rows:
        if r["upper_bound"] is None:
            r["upper_bound"] = clopper_pearson_upper(r["n_patients_sampled"], r["n_leaks"], r["confidence"])
        if r["audited_at"] is None:
            r["audited_at"] = datetime.now(UTC)
    return pa.Table.from_pylist(rows, schema=AUDITS)


def records_from_table(table: pa.Table) -> list[AuditRecord]:
    missing = [f.name for f in fields(AuditRecord) if f.name not in table.column_names]
    if missing:
        raise InputError(
            "E744",
            f"audit table lacks columns {missing}",
            hint=f"the {TABLE_NAME} schema is tide_core.assurance.audit_table.AUDITS",
        )
    out = []
    for row in table.to_pylist():
        out.append(
            AuditRecord(
                str(row["study"]),
                str(row["key"] or ""),
                str(row["bucket"]),
                int(row["n_patients_sampled"]),
                int(row["n_leaks"]),
                float(row["confidence"]),
                row["upper_bound"],
                row["reviewer"] or "",
                row["audited_at"],
            )
        )
    return out
