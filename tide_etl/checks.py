"""Asset checks guarding every release partition (blocking: a failure stops release_summary).

Each check is a partitioned asset check over (study, key) that calls a plain function in
``tide_core.release.checks``, so it can also be run on its own against an existing partition
(job ``release_checks_job``) to catch edits made after release.  A failing check also takes
the release out of researchers' views at once (``tide_releases.status = 'blocked'``): a
blocking check only stops what runs after it, and the release may have been published before.

``release_gate`` reports the decision ``release_summary`` recorded in the same run (read from that
materialization's ``gate/*`` metadata: the gate is evaluated once per run): WARN while the release
is only awaiting audit evidence (the normal state of a first release: the run succeeds),
ERROR when a bound is not below the target, the drift band blocks, or anything else failed.
"""

import warnings
from collections.abc import Callable
from typing import Any

import dagster as dg

from tide_core.release import checks as rc
from tide_core.release.known_phi_check import known_phi_survives as _known_phi_survives
from tide_core.release.lifecycle import AWAITING_AUDIT, BLOCKED, PUBLISHED, read_release, set_status
from tide_core.release.outcome import CheckOutcome
from tide_etl.assets import GATE_METADATA_PREFIX, deidentified_notes, release_summary
from tide_etl.partitions import release_partitions, split_release_key
from tide_etl.resources import TideConfigResource, WarehouseResource
from tide_etl.retry import POOL, TRANSIENT_RETRY, transient_only


def _release_check(**kwargs: Any) -> Callable[[Callable[..., Any]], dg.AssetChecksDefinition]:
    """``dg.asset_check`` with the preview warning of partitioned checks (Dagster 1.13, pinned; tests
    cover them) silenced for this definition only, not process-wide."""

    def wrap(fn: Callable[..., Any]) -> dg.AssetChecksDefinition:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*partitions_def on an AssetCheckSpec.*")
            return dg.asset_check(**kwargs)(fn)

    return wrap


def _result(outcome: CheckOutcome, severity=dg.AssetCheckSeverity.ERROR) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        passed=outcome.passed, severity=severity, description=outcome.description, metadata=outcome.metadata
    )


def _run(fn, context, warehouse: WarehouseResource, tide_config: TideConfigResource) -> dg.AssetCheckResult:
    study, key = split_release_key(context.partition_key)
    config = tide_config.build()
    with transient_only(), warehouse.open() as wh:
        outcome = fn(wh, config, study, key)
        if not outcome.passed:  # fail closed at once: hidden from researchers until a release passes
            name = fn.__name__.lstrip("_")
            set_status(wh, study, key, BLOCKED, f"check {name} failed: {outcome.description}", config.tables.releases)
        return _result(outcome)


@_release_check(
    asset=deidentified_notes,
    partitions_def=release_partitions,
    blocking=True,
    pool=POOL,
    retry_policy=TRANSIENT_RETRY,
    description="rows in = de-identified + quarantined; no note in both; none released twice",
)
def rows_accounted(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource, tide_config: TideConfigResource
) -> dg.AssetCheckResult:
    return _run(rc.rows_accounted, context, warehouse, tide_config)


@_release_check(
    asset=deidentified_notes,
    partitions_def=release_partitions,
    blocking=True,
    pool=POOL,
    retry_policy=TRANSIENT_RETRY,
    description="every released span's output offsets lie inside its released text",
)
def offsets_in_text(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource, tide_config: TideConfigResource
) -> dg.AssetCheckResult:
    return _run(rc.offsets_in_text, context, warehouse, tide_config)


@_release_check(
    asset=deidentified_notes,
    partitions_def=release_partitions,
    blocking=True,
    pool=POOL,
    retry_policy=TRANSIENT_RETRY,
    description="no original span surface (span cache + source text) survives in the released text",
)
def no_surface_survives(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource, tide_config: TideConfigResource
) -> dg.AssetCheckResult:
    return _run(rc.no_surface_survives, context, warehouse, tide_config)


@_release_check(
    asset=deidentified_notes,
    partitions_def=release_partitions,
    blocking=True,
    pool=POOL,
    retry_policy=TRANSIENT_RETRY,
    description="no known value of the note's patient (patients table: names, ids, phones, e-mails, address, "
    "date of birth) appears in the released text, compared on the normalised view",
)
def known_phi_survives(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource, tide_config: TideConfigResource
) -> dg.AssetCheckResult:
    return _run(_known_phi_survives, context, warehouse, tide_config)


@_release_check(
    asset=deidentified_notes,
    partitions_def=release_partitions,
    blocking=True,
    pool=POOL,
    retry_policy=TRANSIENT_RETRY,
    description="recognizer and anonymizer name@version recorded on released rows and runs",
)
def versions_recorded(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource, tide_config: TideConfigResource
) -> dg.AssetCheckResult:
    return _run(rc.versions_recorded, context, warehouse, tide_config)


@_release_check(
    asset=release_summary,
    partitions_def=release_partitions,
    blocking=True,
    pool=POOL,
    retry_policy=TRANSIENT_RETRY,
    description="release gate, as release_summary decided it in this run: audit rounds whose frames hold the "
    "content cover every batch of it and their exact bounds are below the target rate "
    "(tide_core.release.evidence); WARN while awaiting audit, ERROR when a bound, a leak or the drift band blocks",
)
def release_gate(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource, tide_config: TideConfigResource
) -> dg.AssetCheckResult:
    study, key = split_release_key(context.partition_key)
    config = tide_config.build()
    gate = recorded_gate(context)
    if gate is None:  # fail closed: never report a decision this run did not make
        return dg.AssetCheckResult(
            passed=False,
            severity=dg.AssetCheckSeverity.ERROR,
            description=f"no release decision for {study}/{key} was recorded in this run; materialize "
            "release_summary for this partition (release_job or release_checks_job) to decide again",
            metadata={"status": "none recorded in this run"},
        )
    with transient_only(), warehouse.open() as wh:
        row = read_release(wh, study, key, config.tables.releases) or {}
    status = row.get("status") or "none recorded"
    passed = bool(gate.get("passed")) and status == PUBLISHED
    guard = row.get("guard_version") or "none configured"
    metadata = dict(gate, status=status, guard_version=guard, n_held=int(row.get("n_held") or 0))
    if not passed and status == AWAITING_AUDIT:
        return dg.AssetCheckResult(
            passed=False,
            severity=dg.AssetCheckSeverity.WARN,
            description=f"awaiting audit: {study}/{key} passed its checks and is not published until audit "
            "rounds cover its new content (`tide release audit plan`, review, `tide release audit record`), then "
            "run release_checks_job; researchers keep the version they see",
            metadata=metadata,
        )
    if passed:
        description = str(gate.get("statement") or "release gate passed")
    elif gate.get("passed"):  # the gate alone passed, but the recorded decision did not (a check, E920/E921)
        description = f"release {study}/{key} is {status}: {row.get('gate_reasons') or ''}"[:500]
    else:
        description = f"release blocked: {gate.get('reasons')}"[:500]
    return dg.AssetCheckResult(
        passed=passed, severity=dg.AssetCheckSeverity.ERROR, description=description, metadata=metadata
    )


def recorded_gate(context: dg.AssetCheckExecutionContext) -> dict[str, Any] | None:
    """The gate decision release_summary recorded for this partition in this run, or None."""
    records = context.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=release_summary.key, asset_partitions=[context.partition_key]), limit=1
    ).records
    if not records or records[0].run_id != context.run.run_id or records[0].asset_materialization is None:
        return None
    md = records[0].asset_materialization.metadata
    gate = {k[len(GATE_METADATA_PREFIX) :]: v.value for k, v in md.items() if k.startswith(GATE_METADATA_PREFIX)}
    return gate or None


CHECKS = [rows_accounted, offsets_in_text, no_surface_survives, known_phi_survives, versions_recorded, release_gate]
