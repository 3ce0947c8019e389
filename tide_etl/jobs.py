"""Jobs: one partition per run (Ray gives the parallelism inside it).

A run covers one partitions definition, so the graph runs as two jobs: recognition per study,
then release per (study, key).  ``release_checks_job`` re-runs only the checks of a release.
"""
from __future__ import annotations

import os
import warnings

import dagster as dg

from tide_etl.assets import deidentified_notes, release_summary
from tide_etl.partitions import release_partitions
from tide_etl.resources import default_warehouse_url

#: dagster_home/dagster.yaml limits concurrent runs per warehouse kind (one DuckDB writer).
WAREHOUSE_TAG = {"tide/warehouse": default_warehouse_url().partition(":")[0]}

recognition_job = dg.define_asset_job(
    "recognition_job", selection=dg.AssetSelection.groups("recognition"),
    tags={"tide/stage": "recognition", **WAREHOUSE_TAG},
    description="Validate a study's notes and fill its span cache (recognizes cache misses only).")

release_job = dg.define_asset_job(
    "release_job", selection=dg.AssetSelection.groups("release"),
    tags={"tide/stage": "release", **WAREHOUSE_TAG},
    description="Anonymize one (study, key) from cached spans, check it, and record the release decision.")

warnings.filterwarnings("ignore", message="Parameter `partitions_def` of function `define_asset_job`")
release_checks_job = dg.define_asset_job(
    "release_checks_job",
    selection=dg.AssetSelection.checks_for_assets(deidentified_notes, release_summary),
    partitions_def=release_partitions,   # a checks-only selection has no asset to infer it from
    tags={"tide/stage": "checks", **WAREHOUSE_TAG},
    description="Re-run the release checks and the gate on an existing (study, key) release.")

JOBS = [recognition_job, release_job, release_checks_job]
