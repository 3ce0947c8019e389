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
from tide_core.store.tables import AUDITS

if TYPE_CHECKING:
    pass

TABLE_NAME = "tide_audits"
__all__ = ["AUDITS", "TABLE_NAME", "AuditRecord", "records_from_table", "records_to_table"]


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
    #: a round of a stratified audit (``tide audit plan --warehouse``): stratum name and size; the
    #: gate combines a bucket's strata with the weighted bound of tide_core.assurance.stratified
    stratum: str = ""
    stratum_population: int | None = None
    #: the audit frame the round sampled (tide_audit_frames: exactly which released rows) and its
    #: distinct patients; a round without a frame covers no content and counts for nothing
    frame_id: str = ""
    frame_patients: int | None = None

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
        stratum: str = "",
        stratum_population: int | None = None,
        frame_id: str = "",
        frame_patients: int | None = None,
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
            stratum,
            None if stratum_population is None else int(stratum_population),
            frame_id,
            None if frame_patients is None else int(frame_patients),
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
    # absent from tables written before stratified audits / audit frames
    optional = {"stratum", "stratum_population", "frame_id", "frame_patients"}
    missing = [f.name for f in fields(AuditRecord) if f.name not in table.column_names and f.name not in optional]
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
                str(row.get("stratum") or ""),
                None if row.get("stratum_population") is None else int(row["stratum_population"]),
                str(row.get("frame_id") or ""),
                None if row.get("frame_patients") is None else int(row["frame_patients"]),
            )
        )
    return out
