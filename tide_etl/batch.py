"""``release_batch_job``: release many small (study, key) cells in one launched run.

A UI or asset backfill starts one run process per (study, key) partition; on a small cell the
process start-up and code-location load dominate (about 10 s per run on 2 cores for about 4 s of
work).  This job is launched once and releases each cell of its list in that process, one after
another, as an in-process run of ``release_job`` on the same instance: each cell is still its own
run (anonymize, the blocking checks, decide and publish, the researcher views), decided and
published atomically on its own, with its own partition status, asset checks and run record
(tagged ``tide/batch``), exactly as a backfill run would record it.  A failed or blocked cell does
not stop or hide the others; the batch reports every cell's status (counts and ids) and fails at
the end when any cell did not end ``published`` or ``awaiting_audit``.  Alerts: each failed cell
run is reported on its own (a blocked cell by its ``release_blocked`` alert, another failure as
``run_failed``); the batch run's own failure is reported only when some bad cell has no failed run
of its own to report it (``tide/batch_cells_reported``).

Why not ``BackfillPolicy.multi_run(N)`` on the release assets: in Dagster 1.13 a run over several
partitions of a partitioned asset check records the check without a partition (one evaluation for
the whole range), and one failing blocking check would stop ``release_summary`` for every cell of
the run -- the per-cell decision the release lifecycle depends on would be lost.

Run it from the Launchpad with ``ops: {release_cells: {config: {keys: [K], studies: []}}}``
(``studies`` empty: every study partition).  The op claims no pool slot itself: the steps of each
cell's run claim ``tide_warehouse`` as every release step does.
"""

import dagster as dg

from tide_core.release.lifecycle import read_release
from tide_etl.partitions import KEY, STUDY, release_key
from tide_etl.resources import KeyProviderResource, TideConfigResource, WarehouseResource

#: the tag every cell run of a batch carries: the batch run's id
BATCH_TAG = "tide/batch"
#: set on a failed batch run whose every bad cell is a failed cell run of its own (the count of them):
#: those runs' alerts report the batch's failure (tide_etl.alerts)
CELLS_REPORTED_TAG = "tide/batch_cells_reported"
#: decisions that end a cell well (awaiting audit is the normal state of new content)
GOOD = ("published", "awaiting_audit")


class ReleaseBatchConfig(dg.Config):
    """The cells: every study of ``studies`` (empty: every study partition) x every key of ``keys``
    whose key secret exists (cells without one are listed as skipped, as the release sensor does)."""

    keys: list[str]
    studies: list[str] = []


def batch_cells(
    instance: dg.DagsterInstance, config: ReleaseBatchConfig, key_provider: KeyProviderResource
) -> tuple[list[tuple[str, str]], list[str]]:
    """(cells to release, in study then key order; cells skipped, with why)."""
    studies = instance.get_dynamic_partitions(STUDY)
    keys = set(instance.get_dynamic_partitions(KEY))
    chosen = [s for s in studies if not config.studies or s in config.studies]
    skipped = [f"{s}: not a study partition" for s in config.studies if s not in studies]
    skipped += [f"{k}: not a key partition" for k in config.keys if k not in keys]
    provider = key_provider.provider()
    cells: list[tuple[str, str]] = []
    for study in chosen:
        for key in config.keys:
            if key not in keys:
                continue
            if provider.has(study, key):
                cells.append((study, key))
            else:
                skipped.append(f"{study}/{key}: no key secret")
    return cells, skipped


@dg.op(description="Release each (study, key) cell of the list as its own in-process run of release_job.")
def release_cells(
    context: dg.OpExecutionContext,
    config: ReleaseBatchConfig,
    key_provider: KeyProviderResource,
    warehouse: WarehouseResource,
    tide_config: TideConfigResource,
) -> dg.Output[None]:
    cells, skipped = batch_cells(context.instance, config, key_provider)
    releases = tide_config.build().tables.releases
    job = context.repository_def.get_job("release_job")
    outcome: dict[str, dict[str, str]] = {}
    for i, (study, key) in enumerate(cells, 1):
        result = job.execute_in_process(
            partition_key=release_key(study, key),
            instance=context.instance,
            raise_on_error=False,
            tags={BATCH_TAG: context.run_id, "tide/trigger": "release-batch"},
        )
        with warehouse.open() as wh:  # the cell's decision as tide_releases records it (pending: it stopped early)
            status = str((read_release(wh, study, key, releases) or {}).get("status") or "no release row")
        outcome[f"{study}/{key}"] = {
            "status": status,
            "run": "success" if result.success else "failure",
            "run_id": result.run_id,
        }
        context.log.info(f"cell {i}/{len(cells)} {study}/{key}: {status} (run {result.run_id})")
    counts: dict[str, int] = {}
    for cell in outcome.values():
        counts[cell["status"]] = counts.get(cell["status"], 0) + 1
    metadata: dict[str, dg.MetadataValue] = {
        "n_cells": dg.MetadataValue.int(len(cells)),
        "by_status": dg.MetadataValue.json(counts),
        "cells": dg.MetadataValue.json(outcome),
        "skipped": dg.MetadataValue.json(skipped),
    }
    bad = sorted(c for c, o in outcome.items() if o["status"] not in GOOD or o["run"] == "failure")
    if bad and all(outcome[c]["run"] == "failure" for c in bad):
        # every bad cell's own failed run is its alert (release_blocked or run_failed): the alert
        # sensor checks this count against the failed cell runs and does not report the batch again
        context.instance.add_run_tags(context.run_id, {CELLS_REPORTED_TAG: str(len(bad))})
    if bad:
        raise dg.Failure(
            description=f"{len(bad)} of {len(cells)} cells did not end published or awaiting audit "
            f"(or their run failed): "
            f"{', '.join(bad[:20])}{' ...' if len(bad) > 20 else ''} (each cell's run says why)",
            metadata=metadata,
            allow_retries=False,
        )
    return dg.Output(None, metadata=metadata)


@dg.job(
    tags={"tide/stage": "release"},
    description="Release many (study, key) cells in one launched run: each cell is its own in-process run of "
    "release_job (own decision, partition status and checks); fails at the end if any cell did not end "
    "published or awaiting audit.",
)
def release_batch_job() -> None:
    release_cells()
