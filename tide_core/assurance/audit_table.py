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
from typing import TYPE_CHECKING

import pyarrow as pa

from tide_core.assurance.bounds import clopper_pearson_upper
from tide_core.errors import InputError

if TYPE_CHECKING:
    from tide_core.io.warehouse import Warehouse

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


def released_patients(
    wh: Warehouse, study: str, key: str, bucket: str | None = None, deid_table: str = "tide_deid_notes"
) -> int:
    """Distinct patients released for (study, key), or for one bucket of it (``site|source|note_type``).

    Read from the released notes table (pseudonymous ``patient_ref`` only); 0 when nothing is released.
    """
    from tide_core.assurance.audit import bucket_of

    if not wh.table_exists(deid_table):
        return 0
    rows = wh.read_table(
        deid_table, ["patient_ref", "site", "source", "note_type"], where={"study": study, "key": key}
    ).to_pylist()
    return len({r["patient_ref"] for r in rows if r["patient_ref"] and (bucket is None or bucket_of(r) == bucket)})


def check_against_release(wh: Warehouse, record: AuditRecord, deid_table: str = "tide_deid_notes") -> None:
    """Refuse an audit round that reviewed more patients than were released (E747).

    The cap is the release's distinct patients for (study, key) and, when ``record.bucket`` is one
    of the release's buckets, that bucket's patients.  ``leaks <= n`` is checked when the record
    is created (E740).
    """
    clopper_pearson_upper(record.n_patients_sampled, record.n_leaks, record.confidence)  # E740/E741
    where = f"release {record.study}/{record.key}"
    cap = released_patients(wh, record.study, record.key, deid_table=deid_table)
    in_bucket = released_patients(wh, record.study, record.key, record.bucket, deid_table) if cap else 0
    if in_bucket:
        cap, where = in_bucket, f"bucket {record.bucket!r} of {where}"
    if record.n_patients_sampled > cap:
        raise InputError(
            "E747",
            f"audit round reviewed {record.n_patients_sampled} patients but {where} has {cap} distinct "
            f"released patients in {deid_table}",
            hint="pass --n as the number of patients actually reviewed (at most the released patients; "
            "a bucket with fewer patients than the plan asks is reviewed in full), and check --study/--key",
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
