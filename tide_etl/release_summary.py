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

import pyarrow as pa

PENDING = "pending"
BLOCKED = "blocked"
AWAITING_AUDIT = "awaiting_audit"
PUBLISHED = "published"
STATUSES = (PENDING, BLOCKED, AWAITING_AUDIT, PUBLISHED)

RELEASES = pa.schema(
    [
        ("study", pa.string()),
        ("key", pa.string()),
        ("n_in", pa.int64()),
        ("n_released", pa.int64()),
        ("n_quarantined", pa.int64()),
        ("n_spans", pa.int64()),
        ("spans_by_label", pa.string()),
        ("anonymizer", pa.string()),
        ("recognizers", pa.string()),
        ("gate_passed", pa.bool_()),
        ("gate_reasons", pa.string()),
        ("gate_statement", pa.string()),
        ("decided_at", pa.timestamp("us", tz="UTC")),
        ("status", pa.string()),
        ("released_at", pa.timestamp("us", tz="UTC")),
    ]
)

#: The blocking checks a release must pass before it is published (tide_etl.release_checks).
BLOCKING_CHECKS = ("rows_accounted", "offsets_in_text", "no_surface_survives", "versions_recorded")

_DUCKDB_TYPES = {pa.string(): "VARCHAR", pa.timestamp("us", tz="UTC"): "TIMESTAMPTZ", pa.bool_(): "BOOLEAN"}


def _ensure_columns(wh, table: str) -> None:
    """Add the lifecycle columns to a ``tide_releases`` written by an earlier version (DuckDB;
    the BigQuery warehouse adds missing columns itself)."""
    if not wh.table_exists(table) or not str(getattr(wh, "url", "")).startswith("duckdb:"):
        return
    have = set(wh.columns(table))
    qualified = f'"{getattr(wh, "schema", "main")}"."{table}"'
    for f in RELEASES:
        if f.name not in have:
            wh.sql(f'ALTER TABLE {qualified} ADD COLUMN "{f.name}" {_DUCKDB_TYPES.get(f.type, "BIGINT")}')


def read_release(wh, study: str, key: str, table: str = "tide_releases") -> dict | None:
    """The ``tide_releases`` row of (study, key), or None."""
    if not wh.table_exists(table):
        return None
    rows = wh.read_table(table, where={"study": study, "key": key}).to_pylist()
    return rows[0] if rows else None


def _write(wh, table: str, row: dict) -> dict:
    _ensure_columns(wh, table)
    full = {f.name: row.get(f.name) for f in RELEASES}
    wh.replace_partition(
        table, pa.Table.from_pylist([full], schema=RELEASES), {"study": row["study"], "key": row["key"]}
    )
    return full


def set_status(wh, study: str, key: str, status: str, reason: str, table: str = "tide_releases") -> dict:
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


def release_stamps(wh, config, study: str, key: str) -> list:
    """The distinct ``released_at`` stamps of the released rows: one per anonymization run."""
    from tide_etl.release_checks import _release_rows

    rows = _release_rows(wh, config.tables, study, key, "deid_notes", ["released_at"])
    return sorted({r["released_at"] for r in rows}, key=lambda v: (v is None, v))


def verify_release(wh, config, study: str, key: str) -> dict:
    """Run the blocking checks; {check name: CheckOutcome}."""
    from tide_etl import release_checks as rc

    return {name: getattr(rc, name)(wh, config, study, key) for name in BLOCKING_CHECKS}


def summarize_release(wh, config, study: str, key: str, policy=None, table: str = "tide_releases") -> dict:
    """Verify, gate and (when both pass) publish one release; returns its ``tide_releases`` row."""
    from tide_etl.release_checks import _release_rows, _source_notes, release_gate

    part = {"study": study, "key": key}
    stamps = release_stamps(wh, config, study, key)
    checks = verify_release(wh, config, study, key)
    deid = _release_rows(wh, config.tables, study, key, "deid_notes", ["anonymizer"])
    spans = _release_rows(wh, config.tables, study, key, "released_spans", ["label", "recognizer"])
    n_q = wh.count(config.tables.quarantine, part) if wh.table_exists(config.tables.quarantine) else 0
    gate = release_gate(wh, config, study, key, policy)
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
        "n_in": _source_notes(wh, config, study)["n_rows"],
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
    }
    return _write(wh, table, row)
