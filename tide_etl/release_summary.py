"""The release lifecycle of one (study, key): write, audit, publish.

``tide_releases`` holds one row per (study, key): counts, versions, the gate decision and the
release's **status**.  Researchers' views (``sql/views``) show a release only while its status
is ``published`` and its gate passed, and only the rows of the anonymization run that was
verified (``tide_deid_notes.released_at`` equal to the row's ``released_at`` stamp).  So:

1. **write** -- ``deidentified_notes`` first marks the release ``pending`` (gate_passed false:
   an earlier decision no longer holds), then anonymizes.  The new rows carry a new
   ``released_at`` stamp, so they are invisible to researchers even before the status flips.
2. **audit** -- the blocking checks verify the written rows; a failing check marks the
   release ``blocked`` (also after a re-verification of a published release, e.g. an edit).
3. **publish** -- ``summarize_release`` runs the blocking checks again on exactly the rows it
   publishes (a lone materialization of ``release_summary`` cannot skip them), evaluates the
   gate, and writes the row in one atomic partition replacement: ``published`` with the
   verified stamp, ``awaiting_audit`` (checks pass, no audit evidence yet), or ``blocked``.

Counts only (no text, no values).  Re-materializing ``release_summary`` after audit rounds are
recorded in ``tide_audits`` re-evaluates the gate; that is how a release becomes published.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from dataclasses import replace
from typing import Any

import pyarrow as pa

from tide_core.assurance.gate import ReleaseGatePolicy
from tide_core.assurance.guard_hold import NO_GUARD, HoldReport, apply_guard, load_pinned_guard, release_guard_columns
from tide_core.cache.release_store import ReleaseStore
from tide_core.cache.tables import RELEASES
from tide_core.config import TideConfig
from tide_core.io.warehouse import Warehouse
from tide_etl import release_checks as rc

PENDING = "pending"
BLOCKED = "blocked"
AWAITING_AUDIT = "awaiting_audit"
PUBLISHED = "published"
STATUSES = (PENDING, BLOCKED, AWAITING_AUDIT, PUBLISHED)

#: The blocking checks a release must pass before it is published (tide_etl.release_checks).
BLOCKING_CHECKS = ("rows_accounted", "offsets_in_text", "no_surface_survives", "versions_recorded")

_DUCKDB_TYPES = {
    pa.string(): "VARCHAR",
    pa.timestamp("us", tz="UTC"): "TIMESTAMPTZ",
    pa.bool_(): "BOOLEAN",
    pa.float64(): "DOUBLE",
}
__all__ = ["RELEASES", "read_release", "set_status", "summarize_release", "verify_release"]


def _ensure_columns(wh: Warehouse, table: str) -> None:
    """Add the lifecycle columns to a ``tide_releases`` written by an earlier version (DuckDB;
    the BigQuery warehouse adds missing columns itself)."""
    if not wh.table_exists(table) or not str(getattr(wh, "url", "")).startswith("duckdb:"):
        return
    have = set(wh.columns(table))
    qualified = f'"{getattr(wh, "schema", "main")}"."{table}"'
    sql: Any = getattr(wh, "sql")  # noqa: B009 -- DuckDB only (checked above)
    for f in RELEASES:
        if f.name not in have:
            sql(f'ALTER TABLE {qualified} ADD COLUMN "{f.name}" {_DUCKDB_TYPES.get(f.type, "BIGINT")}')


def _store(wh: Warehouse, table: str, config: TideConfig | None = None) -> ReleaseStore:
    names = config.tables if config is not None else ReleaseStore(wh).names
    return ReleaseStore(wh, replace(names, releases=table))


def read_release(wh: Warehouse, study: str, key: str, table: str = "tide_releases") -> dict[str, Any] | None:
    """The ``tide_releases`` row of (study, key), or None."""
    return _store(wh, table).release(study, key)


def _write(wh: Warehouse, table: str, row: dict[str, Any]) -> dict[str, Any]:
    _ensure_columns(wh, table)
    full = {f.name: row.get(f.name) for f in RELEASES}
    wh.replace_partition(
        table, pa.Table.from_pylist([full], schema=RELEASES), {"study": row["study"], "key": row["key"]}
    )
    return full


def set_status(
    wh: Warehouse, study: str, key: str, status: str, reason: str, table: str = "tide_releases"
) -> dict[str, Any]:
    """Take a release out of researchers' views: ``pending`` (being rewritten) or ``blocked``
    (a check or the gate failed).  Counts of the previous row are kept for the operator."""
    if status not in (PENDING, BLOCKED):
        raise ValueError(f"set_status cannot make a release {status!r}; publish through summarize_release")
    prev = read_release(wh, study, key, table) or {"study": study, "key": key}
    row = dict(
        prev,
        status=status,
        gate_passed=False,
        gate_reasons=reason,
        gate_statement="",
        decided_at=dt.datetime.now(dt.UTC),
        released_at=None if status == PENDING else prev.get("released_at"),
    )
    return _write(wh, table, row)


def release_stamps(wh: Warehouse, config: TideConfig, study: str, key: str) -> list[dt.datetime | None]:
    """The distinct ``released_at`` stamps of the released rows: one per anonymization run."""
    return ReleaseStore(wh, config.tables).stamps(study, key)


def verify_release(wh: Warehouse, config: TideConfig, study: str, key: str) -> dict[str, rc.CheckOutcome]:
    """Run the blocking checks; {check name: CheckOutcome}."""
    return {name: getattr(rc, name)(wh, config, study, key) for name in BLOCKING_CHECKS}


def summarize_release(
    wh: Warehouse,
    config: TideConfig,
    study: str,
    key: str,
    policy: ReleaseGatePolicy | None = None,
    table: str = "tide_releases",
) -> dict[str, Any]:
    """Guard, verify, gate and (when all pass) publish one release; returns its ``tide_releases`` row.

    With a PHI Guard configured (``config.guard_dir``), the documents it flags are held first
    (``tide_core.assurance.guard_hold``): quarantined as E773 and queued for review, so the rows
    verified and published are the release set.  Without one the row records that no guard ran.
    """
    store = _store(wh, table, config)
    previous = store.release(study, key)
    guard_report = _guard(wh, config, study, key)
    stamps = release_stamps(wh, config, study, key)
    checks = verify_release(wh, config, study, key)
    deid = store.deid_notes(study, key, ["anonymizer"])
    spans = store.released_spans(study, key, ["label", "recognizer"])
    n_q = store.count("quarantine", study, key)
    gate = rc.release_gate(wh, config, study, key, policy)
    failed = [name for name, out in checks.items() if not out.passed]
    reasons = [f"check {name} failed: {checks[name].description}" for name in failed]
    if len(stamps) > 1:
        reasons.append(
            f"[E920] the released rows of {study}/{key} come from {len(stamps)} anonymization runs; "
            "rematerialize deidentified_notes for this partition"
        )
    if not gate.passed:
        reasons.append(gate.metadata["reasons"])
    if release_stamps(wh, config, study, key) != stamps:  # rewritten while it was being verified
        reasons.append(
            f"[E921] the rows of {study}/{key} changed while they were verified; run release_checks_job again"
        )
    if not reasons:
        status = PUBLISHED
    elif not failed and len(stamps) <= 1 and gate.metadata.get("awaiting_audit") and len(reasons) == 1:
        status = AWAITING_AUDIT
    else:
        status = BLOCKED
    row = {
        "study": study,
        "key": key,
        "n_in": rc._source_notes(wh, config, study)["n_rows"],
        "n_released": len(deid),
        "n_quarantined": n_q,
        "n_spans": len(spans),
        "spans_by_label": json.dumps(dict(sorted(Counter(s["label"] for s in spans).items()))),
        "anonymizer": ", ".join(sorted({r["anonymizer"] for r in deid if r["anonymizer"]})),
        "recognizers": ", ".join(sorted({s["recognizer"] for s in spans if s["recognizer"]})),
        "gate_passed": status == PUBLISHED,
        "gate_reasons": "; ".join(reasons),
        "gate_statement": gate.metadata["statement"],
        "decided_at": dt.datetime.now(dt.UTC),
        "status": status,
        "released_at": stamps[0] if len(stamps) == 1 else None,
        **release_guard_columns(guard_report),
    }
    out = _write(wh, table, row)
    out["gate"] = dict(gate.metadata)  # the one evaluation of the gate; the release_gate check reports it
    out["guard"] = guard_report.metadata() if guard_report is not None else {"guard_version": NO_GUARD}
    # a changed guard version re-baselines the flag rates: it is not drift of the data
    prev_version = (previous or {}).get("guard_version") or ""
    out["guard"]["rebaseline"] = bool(prev_version and prev_version != row["guard_version"])
    return out


def _guard(wh: Warehouse, config: TideConfig, study: str, key: str) -> HoldReport | None:
    """Hold what the configured PHI Guard flags (None: no guard configured for this site)."""
    guard = load_pinned_guard(config)
    if guard is None:
        return None
    notes = rc._source_notes(wh, config, study)["notes"]
    return apply_guard(
        wh,
        config,
        study,
        key,
        guard,
        {nid: n.text for nid, n in notes.items()},
        {nid: n.patient_id for nid, n in notes.items()},
    )
