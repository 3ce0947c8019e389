"""Jobs: one partition per run (Ray gives the parallelism inside it).

A run covers one partitions definition, so the graph runs as two jobs: recognition per study,
then release per (study, key).  ``release_checks_job`` re-verifies a release without
re-anonymizing it.
"""

from __future__ import annotations

import dagster as dg

from tide_etl.assets import deidentified_notes, release_summary
from tide_etl.resources import default_warehouse_url

#: dagster_home/dagster.yaml limits concurrent runs per warehouse kind (one DuckDB writer).
WAREHOUSE_TAG = {"tide/warehouse": default_warehouse_url().partition(":")[0]}

recognition_job = dg.define_asset_job(
    "recognition_job",
    selection=dg.AssetSelection.groups("recognition"),
    tags={"tide/stage": "recognition", **WAREHOUSE_TAG},
    description="Validate a study's notes and fill its span cache (recognizes cache misses only).",
)

release_job = dg.define_asset_job(
    "release_job",
    selection=dg.AssetSelection.groups("release"),
    tags={"tide/stage": "release", **WAREHOUSE_TAG},
    description="Anonymize one (study, key) from cached spans, check it, and record the release decision.",
)

# A checks-only selection cannot carry the partitions (Dagster 1.13 infers them from assets), so the
# job also re-materializes release_summary: cheap (counts only), and it refreshes the release
# decision -- which is what re-verifying a release after audits are recorded should do.
release_checks_job = dg.define_asset_job(
    "release_checks_job",
    selection=dg.AssetSelection.checks_for_assets(deidentified_notes) | dg.AssetSelection.assets(release_summary),
    tags={"tide/stage": "checks", **WAREHOUSE_TAG},
    description="Re-verify an existing (study, key) release without re-anonymizing: the release checks, "
    "then release_summary and the gate (e.g. after audit rounds are recorded).",
)

JOBS = [recognition_job, release_job, release_checks_job]
