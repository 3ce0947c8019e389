"""Asset checks guarding every release partition (blocking: a failure stops release_summary).

Each check is a partitioned asset check over (study, key) that calls a plain function in
``tide_etl.release_checks``, so it can also be run on its own against an existing partition
(job ``release_checks_job``) to catch edits made after release.
"""

import warnings

import dagster as dg

from tide_etl import release_checks as rc
from tide_etl.assets import deidentified_notes, release_summary
from tide_etl.partitions import release_partitions, split_release_key
from tide_etl.resources import ReleaseGateResource, TideConfigResource, WarehouseResource

# Partitioned asset checks are a preview feature of Dagster 1.13 (pinned); tests cover them.
warnings.filterwarnings("ignore", message=".*partitions_def on an AssetCheckSpec.*")


def _result(outcome: rc.CheckOutcome, severity=dg.AssetCheckSeverity.ERROR) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        passed=outcome.passed, severity=severity, description=outcome.description, metadata=outcome.metadata
    )


def _run(fn, context, warehouse: WarehouseResource, tide_config: TideConfigResource) -> dg.AssetCheckResult:
    study, key = split_release_key(context.partition_key)
    config = tide_config.build()
    with warehouse.open() as wh:
        return _result(fn(wh, config, study, key))


@dg.asset_check(
    asset=deidentified_notes,
    partitions_def=release_partitions,
    blocking=True,
    description="rows in = de-identified + quarantined; no note in both; none released twice",
)
def rows_accounted(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource, tide_config: TideConfigResource
) -> dg.AssetCheckResult:
    return _run(rc.rows_accounted, context, warehouse, tide_config)


@dg.asset_check(
    asset=deidentified_notes,
    partitions_def=release_partitions,
    blocking=True,
    description="every released span's output offsets lie inside its released text",
)
def offsets_in_text(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource, tide_config: TideConfigResource
) -> dg.AssetCheckResult:
    return _run(rc.offsets_in_text, context, warehouse, tide_config)


@dg.asset_check(
    asset=deidentified_notes,
    partitions_def=release_partitions,
    blocking=True,
    description="no original span surface (span cache + source text) survives in the released text",
)
def no_surface_survives(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource, tide_config: TideConfigResource
) -> dg.AssetCheckResult:
    return _run(rc.no_surface_survives, context, warehouse, tide_config)


@dg.asset_check(
    asset=deidentified_notes,
    partitions_def=release_partitions,
    blocking=True,
    description="recognizer and anonymizer name@version recorded on released rows and runs",
)
def versions_recorded(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource, tide_config: TideConfigResource
) -> dg.AssetCheckResult:
    return _run(rc.versions_recorded, context, warehouse, tide_config)


@dg.asset_check(
    asset=release_summary,
    partitions_def=release_partitions,
    blocking=True,
    description="release gate: audit evidence exists for every bucket and its exact bound is "
    "below the target rate (tide_core.assurance.gate.evaluate_release on tide_audits)",
)
def release_gate(
    context: dg.AssetCheckExecutionContext,
    warehouse: WarehouseResource,
    tide_config: TideConfigResource,
    gate: ReleaseGateResource,
) -> dg.AssetCheckResult:
    study, key = split_release_key(context.partition_key)
    config = tide_config.build()
    with warehouse.open() as wh:
        return _result(rc.release_gate(wh, config, study, key, gate.policy()))


CHECKS = [rows_accounted, offsets_in_text, no_surface_survives, versions_recorded, release_gate]
