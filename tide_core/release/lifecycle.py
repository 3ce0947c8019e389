"""The release lifecycle of one (study, key): write, verify, gate, publish.

1. **write** -- anonymization (``tide run`` or Dagster's ``deidentified_notes``) marks the
   release ``pending`` and rewrites the **candidate** (``tide_deid_notes`` and friends, one
   ``released_at`` stamp per run, kept by a resumed run).  Researchers never read the candidate.
2. **verify** -- the blocking checks (:data:`BLOCKING_CHECKS`) run on the candidate.
3. **gate** -- audit rounds count only for the content their frames hold
   (:mod:`tide_core.release.evidence`); content no round covers awaits audit.
4. **publish** -- :func:`decide` publishes exactly the content it verified and gated as a new
   immutable version (:mod:`tide_core.release.publish`), or records why not.

``tide_releases`` holds one row per (study, key): the candidate's status (``pending``,
``blocked``, ``awaiting_audit``, ``published``, ``rolled_back``), its content fingerprint, the
version researchers see (``published_version``), the gate policy and any approval, counts, and
reasons made of ids and counts only (never a metadata value or a bucket name).  The same code
runs under Dagster (``release_summary``) and the CLI (``tide release publish``).
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace
from typing import Any

import pyarrow as pa

from tide_core.assurance.gate import ReleaseGatePolicy
from tide_core.assurance.guard_hold import NO_GUARD, HoldReport, load_pinned_guard, release_guard_columns
from tide_core.config import TideConfig
from tide_core.engine.ledger import interrupted_chunks
from tide_core.errors import TideError
from tide_core.io.warehouse import RefreshableWarehouse, Warehouse
from tide_core.release import checks as rc
from tide_core.release import evidence, publish
from tide_core.release.chunk_verdicts import ChunkVerdicts
from tide_core.release.guard_stream import stream_guard
from tide_core.release.known_phi_check import KnownPhiScan, known_phi_survives
from tide_core.release.known_phi_rider import KnownPhiRider
from tide_core.release.outcome import CheckOutcome
from tide_core.release.scan import (
    SCANNED,
    SourceSummary,
    SummaryCounts,
    release_summary_counts,
    scan_release,
    stored_fingerprint,
)
from tide_core.store.release_content import content_fingerprint
from tide_core.store.release_store import ReleaseStore
from tide_core.store.tables import RELEASES, TableNames

PENDING = "pending"
BLOCKED = "blocked"
AWAITING_AUDIT = "awaiting_audit"
PUBLISHED = "published"
ROLLED_BACK = "rolled_back"
STATUSES = (PENDING, BLOCKED, AWAITING_AUDIT, PUBLISHED, ROLLED_BACK)

KNOWN_PHI = "known_phi_survives"
#: The checks :func:`verify_release` runs in one shared pass (when CHECKS holds them unchanged).
_STREAMED = {
    "rows_accounted": rc.rows_accounted,
    "offsets_in_text": rc.offsets_in_text,
    "no_surface_survives": rc.no_surface_survives,
}
#: The blocking checks a release must pass before it is published.
CHECKS = {
    "rows_accounted": rc.rows_accounted,
    "offsets_in_text": rc.offsets_in_text,
    "no_surface_survives": rc.no_surface_survives,
    "known_phi_survives": known_phi_survives,
    "versions_recorded": rc.versions_recorded,
}
BLOCKING_CHECKS = tuple(CHECKS)

_DUCKDB_TYPES = {
    pa.string(): "VARCHAR",
    pa.timestamp("us", tz="UTC"): "TIMESTAMPTZ",
    pa.bool_(): "BOOLEAN",
    pa.float64(): "DOUBLE",
}
__all__ = ["RELEASES", "decide", "read_release", "set_status", "summarize_release", "verify_release"]


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


def _names(wh: Warehouse, table: str, config: TideConfig | None = None) -> TableNames:
    names = config.tables if config is not None else ReleaseStore(wh).names
    return replace(names, releases=table)


def read_release(wh: Warehouse, study: str, key: str, table: str = "tide_releases") -> dict[str, Any] | None:
    """The ``tide_releases`` row of (study, key), or None."""
    return ReleaseStore(wh, _names(wh, table)).release(study, key)


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
    """Record that the candidate is ``pending`` (being rewritten) or ``blocked`` (a check or the
    gate failed).  What researchers see (``published_version``) is not touched: only publish
    and rollback move it."""
    if status not in (PENDING, BLOCKED):
        raise ValueError(f"set_status cannot make a release {status!r}; publish through decide")
    prev = read_release(wh, study, key, table) or {"study": study, "key": key}
    row = dict(
        prev,
        status=status,
        gate_passed=False,
        gate_reasons=reason,
        gate_statement="",
        decided_at=dt.datetime.now(dt.UTC),
    )
    return _write(wh, table, row)


def release_stamps(wh: Warehouse, config: TideConfig, study: str, key: str) -> list[dt.datetime | None]:
    """The distinct ``released_at`` stamps of the candidate: one per anonymization run."""
    return ReleaseStore(wh, config.tables).stamps(study, key)


def verify_release(
    wh: Warehouse, config: TideConfig, study: str, key: str, summary: SourceSummary | None = None
) -> dict[str, CheckOutcome]:
    """Run the blocking checks on the candidate; {check name: CheckOutcome}.

    The checks that read text share one streamed pass over the study's chunks
    (:func:`tide_core.release.scan.scan_release`, the known-PHI scan riding along), so verifying
    reads the study once, a chunk at a time; ``summary`` (the run's
    :class:`~tide_core.release.scan.SourceSummary`) gives that pass the study's chunk plan.
    Chunks whose verified digest is unchanged since an earlier pass keep their recorded tallies
    (:mod:`tide_core.release.chunk_verdicts`); every streamed outcome says how many chunks were
    reused and how many scanned (``scan/n_chunks_reused``, ``scan/n_chunks_scanned``).
    """
    shared = [name for name in SCANNED if CHECKS.get(name) is _STREAMED[name]]
    known = KnownPhiScan(wh, config, study, key) if CHECKS.get(KNOWN_PHI) is known_phi_survives else None
    source = summary.source if summary is not None else None
    verdicts = ChunkVerdicts(wh, config.tables, study, key).load()
    riders = [KnownPhiRider(known)] if known else []
    done = scan_release(wh, config, study, key, shared, riders=riders, source=source, verdicts=verdicts)
    if known is not None:
        outcome = known.outcome()
        done[KNOWN_PHI] = replace(outcome, metadata={**outcome.metadata, **verdicts.metadata()})
    return {name: done[name] if name in done else fn(wh, config, study, key) for name, fn in CHECKS.items()}


def _fingerprint(wh: Warehouse, names: TableNames, study: str, key: str) -> str:
    """The candidate's content fingerprint, every row verified against its hash (E932 / E937):
    two streamed passes (the verification, then the hashes as the warehouse sorts them)."""
    evidence.verify_candidate(wh, names, study, key)
    return stored_fingerprint(wh, names.deid_notes, study, key) or content_fingerprint(())


def gate(
    wh: Warehouse,
    config: TideConfig,
    study: str,
    key: str,
    policy: ReleaseGatePolicy | None = None,
    verified: bool = False,
) -> evidence.EvidenceDecision:
    """The release gate on the candidate's content: evidence per batch, and the drift verdict.

    The candidate's rows are verified against their hashes first (E932 / E937), unless the
    caller has just done so (``verified``), then judged as the warehouse streams them in
    row-hash order (:func:`~tide_core.release.evidence.sorted_candidate_rows`): none is kept."""
    policy = policy or ReleaseGatePolicy()
    names = config.tables
    if not verified:
        evidence.verify_candidate(wh, names, study, key)
    drift = ReleaseStore(wh, names).latest_drift(study, key)
    return evidence.evaluate_evidence(
        evidence.sorted_candidate_rows(wh, names, study, key),
        evidence.frames(wh, names, study, key),
        evidence.audit_records(wh, names, study, key),
        policy,
        drift["band"] if drift else None,
        population=f"release {study}/{key}",
    )


def _preflight(
    wh: Warehouse, config: TideConfig, names: TableNames, study: str, key: str, reasons: list[str]
) -> tuple[SummaryCounts, list[Any]]:
    """Step 1 of :func:`decide`: the candidate's counts and stamps; an interrupted or mixed
    anonymization is a reason (E920)."""
    interrupted = interrupted_chunks(wh, config, study, key, "anonymization")
    if interrupted:
        reasons.append(
            f"[E920] the anonymization run of {study}/{key} was interrupted after {len(interrupted)} chunks; "
            "run it again (it resumes) before the release can be decided"
        )
    counts = release_summary_counts(wh, names, study, key)
    stamps = sorted(counts.stamps, key=lambda v: (v is None, v))
    if len(stamps) > 1:
        reasons.append(f"[E920] the candidate of {study}/{key} mixes {len(stamps)} anonymization runs; run it again")
    return counts, stamps


def _verify_and_gate(
    wh: Warehouse,
    config: TideConfig,
    names: TableNames,
    study: str,
    key: str,
    policy: ReleaseGatePolicy,
    reasons: list[str],
) -> tuple[str, dict[str, CheckOutcome], evidence.EvidenceDecision | None]:
    """Step 2 of :func:`decide`: fingerprint the candidate (its row hashes verified), run the
    blocking checks, gate its evidence; every failure is a reason.  (fingerprint, checks, decision)."""
    try:
        fp = _fingerprint(wh, names, study, key)
    except TideError as exc:
        fp = ""
        reasons.append(f"[{exc.code}] {exc.message}")
    checks = verify_release(wh, config, study, key)
    reasons += [f"check {name} failed: {out.description}" for name, out in checks.items() if not out.passed]
    decision = gate(wh, config, study, key, policy, verified=True) if fp else None
    if isinstance(wh, RefreshableWarehouse):
        wh.refresh()  # what DuckDB kept for the passes above is handed back before publishing
    if decision is not None and not decision.passed:
        reasons.extend(decision.reasons)
    if fp and _fingerprint(wh, names, study, key) != fp:  # rewritten while it was being verified
        reasons.append(f"[E921] the candidate of {study}/{key} changed while it was verified; decide it again")
    return fp, checks, decision


def _publish_verified(
    wh: Warehouse,
    names: TableNames,
    study: str,
    key: str,
    policy: ReleaseGatePolicy,
    decision: evidence.EvidenceDecision | None,
    fp: str,
    reasons: list[str],
    *,
    actor: str,
    allow_withdrawn: bool,
) -> publish.Published | None:
    """Step 3 of :func:`decide`: publish exactly the verified content when nothing stands against it."""
    if reasons:
        return None
    try:
        return publish.publish(
            wh,
            names,
            study,
            key,
            gate_policy=policy.describe(),
            gate_approval=policy.approval,
            gate_statement=decision.statement if decision else "",
            actor=actor,
            expect_fingerprint=fp,
            allow_withdrawn=allow_withdrawn,
        )
    except TideError as exc:
        reasons.append(f"[{exc.code}] {exc.message}")
        return None


def _status(published: publish.Published | None, decision: evidence.EvidenceDecision | None, reasons: list[str]) -> str:
    """Published; awaiting audit when missing evidence is the only reason; else blocked."""
    if published is not None:
        return PUBLISHED
    only_evidence = decision is not None and not decision.passed and len(reasons) == len(decision.reasons)
    if only_evidence and decision is not None and decision.awaiting_audit:
        return AWAITING_AUDIT
    return BLOCKED


def _release_row(
    wh: Warehouse,
    config: TideConfig,
    names: TableNames,
    study: str,
    key: str,
    counts: SummaryCounts,
    stamps: list[Any],
    verdict: tuple[str, str, list[str], evidence.EvidenceDecision | None],
    policy: ReleaseGatePolicy,
    guard_report: HoldReport | None,
) -> dict[str, Any]:
    """Step 4 of :func:`decide`: the ``tide_releases`` row of the decision (``verdict``: status,
    fingerprint, reasons, evidence decision)."""
    status, fp, reasons, decision = verdict
    pointer = publish.published_version(wh, names, study, key)
    store = ReleaseStore(wh, names)
    return {
        "study": study,
        "key": key,
        "n_in": rc.source_rows(wh, config, study),
        "n_released": counts.n_released,
        "n_quarantined": store.count("quarantine", study, key),
        "n_spans": counts.n_spans,
        "spans_by_label": json.dumps(dict(sorted(counts.spans_by_label.items()))),
        "anonymizer": ", ".join(sorted(counts.anonymizers)),
        "recognizers": ", ".join(sorted(counts.recognizers)),
        "gate_passed": status == PUBLISHED,
        "gate_reasons": "; ".join(reasons),
        "gate_statement": decision.statement if decision and status == PUBLISHED else "",
        "decided_at": dt.datetime.now(dt.UTC),
        "status": status,
        "released_at": stamps[0] if len(stamps) == 1 else None,
        "content_fingerprint": fp,
        "published_version": (pointer or {}).get("version"),
        "gate_policy": policy.describe(),
        "gate_approval": policy.approval,
        **release_guard_columns(guard_report),
    }


def decide(
    wh: Warehouse,
    config: TideConfig,
    study: str,
    key: str,
    policy: ReleaseGatePolicy | None = None,
    table: str = "tide_releases",
    *,
    actor: str = "",
    allow_withdrawn: bool = False,
) -> dict[str, Any]:
    """Guard, verify, gate and (when all pass) publish the candidate of one release; returns its
    ``tide_releases`` row, with ``gate`` (the decision's metadata) and ``guard`` added.

    With a PHI Guard configured (``config.guard_dir``), the documents it flags are held first
    (quarantined as E773 and queued for review), so the rows verified and published are the
    release set.  Only the content that was verified and gated is published: a candidate that
    changes meanwhile is not (E921).
    """
    policy = policy or ReleaseGatePolicy()
    names = _names(wh, table, config)
    previous = read_release(wh, study, key, table)
    guard_report = _guard(wh, config, study, key)
    reasons: list[str] = []
    counts, stamps = _preflight(wh, config, names, study, key, reasons)
    fp, checks, decision = _verify_and_gate(wh, config, names, study, key, policy, reasons)
    published = _publish_verified(
        wh, names, study, key, policy, decision, fp, reasons, actor=actor, allow_withdrawn=allow_withdrawn
    )
    status = _status(published, decision, reasons)
    row = _release_row(
        wh, config, names, study, key, counts, stamps, (status, fp, reasons, decision), policy, guard_report
    )
    out = _write(wh, table, row)
    md = (
        decision.metadata(policy)
        if decision
        else {"passed": False, "awaiting_audit": False, "reasons": "; ".join(reasons)}
    )
    out["gate"] = dict(md, status=status, published_version=row["published_version"] or "", content_fingerprint=fp)
    out["checks"] = {name: o.passed for name, o in checks.items()}
    out["scan"] = {k: v for o in checks.values() for k, v in o.metadata.items() if k.startswith("scan/")}
    out["guard"] = guard_report.metadata() if guard_report is not None else {"guard_version": NO_GUARD}
    # a changed guard version re-baselines the flag rates: it is not drift of the data
    prev_version = (previous or {}).get("guard_version") or ""
    out["guard"]["rebaseline"] = bool(prev_version and prev_version != row["guard_version"])
    return out


#: The Dagster asset's name for :func:`decide`.
summarize_release = decide


def rollback(
    wh: Warehouse,
    names: TableNames,
    study: str,
    key: str,
    to_version: str | None = None,
    actor: str = "",
    allow_withdrawn: bool = False,
) -> dict[str, Any]:
    """Point researchers back at an earlier published version; the release row says so (written
    before the pointer moves: a kill in between leaves a row that claims no publication)."""

    def release_row(version: str) -> None:
        prev = read_release(wh, study, key, names.releases) or {"study": study, "key": key}
        row = dict(
            prev,
            status=ROLLED_BACK,
            gate_passed=False,
            gate_reasons=f"rolled back to {version}; the content moved away from is withdrawn",
            decided_at=dt.datetime.now(dt.UTC),
            published_version=version,
        )
        _write(wh, names.releases, row)

    publish.rollback(wh, names, study, key, to_version, actor, allow_withdrawn, before_commit=release_row)
    return read_release(wh, study, key, names.releases) or {}


def _guard(wh: Warehouse, config: TideConfig, study: str, key: str) -> HoldReport | None:
    """Hold what the configured PHI Guard flags, chunk by chunk (None: no guard configured for this site)."""
    guard = load_pinned_guard(config)
    if guard is None:
        return None
    return stream_guard(wh, config, study, key, guard)  # one source chunk in memory at a time
