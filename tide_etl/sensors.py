"""Sensors: new studies and keys become partitions; a finished recognition triggers releases.

- ``tide_partitions_sensor`` adds a ``study`` partition for every study found in the source
  schema (``tide_studies.study``, else distinct ``notes.study``) and a ``key`` partition for
  every key version the key provider holds a secret for (directory providers can list them;
  environment-variable keys must be added with ``tide-etl partitions add-key``).
- ``release_after_recognition`` requests release runs for each key of a study, only for the
  (study, key) cells whose secret exists, after the study's recognition run succeeds.
"""

import dagster as dg

from tide_etl.alerts import tide_alerts
from tide_etl.discovery import discover_keys, keys_for_study, study_discovery
from tide_etl.jobs import recognition_job, release_job
from tide_etl.partitions import KEY, STUDY, release_key
from tide_etl.resources import TICK_LOCK_WAIT_S, KeyProviderResource, TideConfigResource, WarehouseResource


def partition_requests(
    instance,
    warehouse: WarehouseResource,
    tide_config: TideConfigResource,
    key_provider: KeyProviderResource,
    log=None,  # a Dagster log manager: the census of left-out study values (counts only)
) -> tuple[list[str], list[str]]:
    tables = tide_config.build().tables
    with warehouse.open(lock_wait_s=TICK_LOCK_WAIT_S) as wh:
        studies, census = study_discovery(wh, tables.notes, default_study=tide_config.default_study)
    if log is not None:
        for line in census.warnings(tables.notes):
            log.warning(f"study discovery: {line}")
    keys = discover_keys(key_provider.provider())
    new_studies = sorted(set(studies) - set(instance.get_dynamic_partitions(STUDY)))
    new_keys = sorted(set(keys) - set(instance.get_dynamic_partitions(KEY)))
    return new_studies, new_keys


@dg.sensor(
    minimum_interval_seconds=300,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="Adds study partitions for studies in the source schema and key partitions for key "
    "versions with secrets; asks for recognition of each new study.",
    job=recognition_job,
)
def tide_partitions_sensor(
    context: dg.SensorEvaluationContext,
    warehouse: WarehouseResource,
    tide_config: TideConfigResource,
    key_provider: KeyProviderResource,
):
    new_studies, new_keys = partition_requests(context.instance, warehouse, tide_config, key_provider, context.log)
    if not new_studies and not new_keys:
        return dg.SkipReason("no new studies or keys")
    requests = []
    if new_studies:
        requests.append(dg.AddDynamicPartitionsRequest(STUDY, new_studies))
    if new_keys:
        requests.append(dg.AddDynamicPartitionsRequest(KEY, new_keys))
    runs = [
        dg.RunRequest(partition_key=s, run_key=f"new-study-{s}", tags={"tide/trigger": "new-study"})
        for s in new_studies
    ]
    context.log.info(f"adding {len(new_studies)} studies and {len(new_keys)} keys")
    return dg.SensorResult(run_requests=runs, dynamic_partitions_requests=requests)


def release_requests(instance, study: str, key_provider: KeyProviderResource, run_id: str) -> list[dg.RunRequest]:
    provider = key_provider.provider()
    keys = keys_for_study(provider, study, instance.get_dynamic_partitions(KEY))
    return [
        dg.RunRequest(
            partition_key=release_key(study, k),
            run_key=f"release-{run_id}-{k}",
            tags={"tide/trigger": "recognition-succeeded"},
        )
        for k in keys
    ]


@dg.run_status_sensor(
    run_status=dg.DagsterRunStatus.SUCCESS,
    monitored_jobs=[recognition_job],
    request_job=release_job,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="After a study's recognition succeeds, release each of its (study, key) cells that has a key secret.",
)
def release_after_recognition(context: dg.RunStatusSensorContext, key_provider: KeyProviderResource):
    study = context.dagster_run.tags.get("dagster/partition")
    if not study:
        return dg.SkipReason("recognition run had no study partition")
    requests = release_requests(context.instance, study, key_provider, context.dagster_run.run_id)
    return requests or dg.SkipReason(f"no key partition has a secret for study {study}")


SENSORS = [tide_partitions_sensor, release_after_recognition, tide_alerts]
