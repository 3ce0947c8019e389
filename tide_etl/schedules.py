"""Nightly: recognize every study with new notes; the release sensor then re-releases its keys.

The schedule asks for recognition runs only: release runs of (study, key) start when the study's
recognition run succeeds (``release_after_recognition`` in sensors.py), so a release never reads
a span cache that is still being written.
"""

from __future__ import annotations

import dagster as dg

from tide_etl.discovery import unprocessed_note_ids
from tide_etl.jobs import recognition_job
from tide_etl.partitions import STUDY
from tide_etl.resources import TICK_LOCK_WAIT_S, TideConfigResource, WarehouseResource

#: The default cron of the nightly schedule (UTC); ``build_defs(nightly_cron=...)`` sets another.
NIGHTLY_CRON = "0 2 * * *"


def studies_with_new_notes(
    instance: dg.DagsterInstance, warehouse: WarehouseResource, tide_config: TideConfigResource
) -> dict[str, int]:
    tables = tide_config.build().tables
    out: dict[str, int] = {}
    with warehouse.open(lock_wait_s=TICK_LOCK_WAIT_S) as wh:
        for study in instance.get_dynamic_partitions(STUDY):
            n = len(unprocessed_note_ids(wh, study, tables))
            if n:
                out[study] = n
    return out


def nightly_release_requests(
    context: dg.ScheduleEvaluationContext, warehouse: WarehouseResource, tide_config: TideConfigResource
) -> dg.SkipReason | list[dg.RunRequest]:
    new = studies_with_new_notes(context.instance, warehouse, tide_config)
    if not new:
        return dg.SkipReason("no study has new notes")
    date = context.scheduled_execution_time.strftime("%Y-%m-%d") if context.scheduled_execution_time else "now"
    return [
        dg.RunRequest(
            partition_key=study,
            run_key=f"nightly-{date}-{study}",
            tags={"tide/trigger": "nightly", "tide/new_notes": str(n)},
        )
        for study, n in sorted(new.items())
    ]


def nightly_schedule(cron: str = NIGHTLY_CRON) -> dg.ScheduleDefinition:
    """The nightly schedule at ``cron`` (UTC), switched off until an operator turns it on."""

    @dg.schedule(
        name="nightly_release_schedule",
        job=recognition_job,
        cron_schedule=cron,
        execution_timezone="UTC",
        default_status=dg.DefaultScheduleStatus.STOPPED,
        description="Nightly: recognition for each study partition with notes not yet processed; "
        "release_after_recognition then releases every (study, key) with a key secret.",
    )
    def nightly_release_schedule(
        context: dg.ScheduleEvaluationContext, warehouse: WarehouseResource, tide_config: TideConfigResource
    ) -> dg.SkipReason | list[dg.RunRequest]:
        return nightly_release_requests(context, warehouse, tide_config)

    return nightly_release_schedule


nightly_release_schedule = nightly_schedule()
SCHEDULES = [nightly_release_schedule]
