"""Asset checks guarding every release partition (blocking: a failure stops release_summary).

Each check is a partitioned asset check over (study, key) that calls a plain function in
``tide_core.release.checks``, so it can also be run on its own against an existing partition
(job ``release_checks_job``) to catch edits made after release.  A failing check also takes
the release out of researchers' views at once (``tide_releases.status = 'blocked'``): a
blocking check only stops what runs after it, and the release may have been published before.

The release decision itself is the check ``release_gate`` of ``release_summary``, reported by that
asset's own step (tide_etl/status.py).
"""

import warnings
from collections.abc import Callable
from typing import Any

import dagster as dg

from tide_core.release import checks as rc
from tide_core.release.known_phi_check import known_phi_survives as _known_phi_survives
from tide_core.release.lifecycle import BLOCKED, set_status
from tide_core.release.outcome import CheckOutcome
from tide_etl.assets import deidentified_notes
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


CHECKS = [rows_accounted, offsets_in_text, no_surface_survives, known_phi_survives, versions_recorded]
