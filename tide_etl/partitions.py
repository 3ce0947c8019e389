"""Partitions: recognition runs per study; anonymization and release per (study, key).

Both dimensions are dynamic: a study or a key version is added as data, not code (``tide-etl
partitions add-study S``, the UI, or the ``tide_partitions_sensor``).  Dagster orders the
dimensions of a multi-partition key alphabetically, so key strings read ``key|study``.
"""

from __future__ import annotations

import warnings

import dagster as dg

from tide_core.anonymize.keys import check_name

STUDY = "study"
KEY = "key"

study_partitions = dg.DynamicPartitionsDefinition(name=STUDY)
key_partitions = dg.DynamicPartitionsDefinition(name=KEY)
release_partitions = dg.MultiPartitionsDefinition({STUDY: study_partitions, KEY: key_partitions})

#: deidentified_notes[study, key] depends on recognized_spans[study] (every key of the study).
with warnings.catch_warnings():  # beta in 1.13; pinned version, behaviour covered by tests
    warnings.simplefilter("ignore", dg.BetaWarning)
    study_of_release = dg.MultiToSingleDimensionPartitionMapping(partition_dimension_name=STUDY)


def release_key(study: str, key: str) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({STUDY: study, KEY: key})


def split_release_key(partition_key) -> tuple[str, str]:
    """(study, key) of a release partition key (a MultiPartitionKey or its ``key|study`` string)."""
    if isinstance(partition_key, dg.MultiPartitionKey):
        dims = partition_key.keys_by_dimension
        return dims[STUDY], dims[KEY]
    key, _, study = str(partition_key).partition("|")
    return study, key


def add_studies(instance: dg.DagsterInstance, studies) -> list[str]:
    """Add the studies that are not yet partitions; return those added."""

    new = sorted({check_name("study", s) for s in studies} - set(instance.get_dynamic_partitions(STUDY)))
    if new:
        instance.add_dynamic_partitions(STUDY, new)
    return new


def add_keys(instance: dg.DagsterInstance, keys) -> list[str]:

    new = sorted({check_name("key", k) for k in keys} - set(instance.get_dynamic_partitions(KEY)))
    if new:
        instance.add_dynamic_partitions(KEY, new)
    return new
