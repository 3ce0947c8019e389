"""Jobs: one partition per run (Ray gives the parallelism inside it).

A run covers one partitions definition, so the graph runs as two jobs: recognition per study,
then release per (study, key).  ``release_checks_job`` re-verifies a release without
re-anonymizing it.
"""

from __future__ import annotations

import dagster as dg

from tide_etl.assets import deidentified_notes, release_summary
from tide_etl.batch import release_batch_job
from tide_etl.rollback import rollback_job
from tide_etl.views import researcher_views

# No warehouse run tag: the one-writer limit of a DuckDB file is the step pool ``tide_warehouse``
# (tide_etl/retry.py), which every asset and check claims whatever launched it -- these jobs, a
# schedule, a sensor or a backfill from the asset graph -- so it cannot disagree with the
# warehouse the resources open.  ``tide/stage`` only bounds concurrent recognition runs.

recognition_job = dg.define_asset_job(
    "recognition_job",
    selection=dg.AssetSelection.groups("recognition"),
    tags={"tide/stage": "recognition"},
    description="Validate a study's notes and fill its span cache (recognizes cache misses only).",
)

release_job = dg.define_asset_job(
    "release_job",
    selection=dg.AssetSelection.groups("release"),
    tags={"tide/stage": "release"},
    description="Anonymize one (study, key) from cached spans, check it, and record the release decision.",
)

# A checks-only selection cannot carry the partitions (Dagster 1.13 infers them from assets), so the
# job also re-materializes release_summary: cheap (counts only), and it refreshes the release
# decision -- which is what re-verifying a release after audits are recorded should do.
release_checks_job = dg.define_asset_job(
    "release_checks_job",
    selection=dg.AssetSelection.checks_for_assets(deidentified_notes)
    | dg.AssetSelection.assets(release_summary, researcher_views),
    tags={"tide/stage": "checks"},
    description="Re-verify an existing (study, key) release without re-anonymizing: the release checks, "
    "then release_summary and the gate (e.g. after audit rounds are recorded), and the researcher views "
    "when it publishes.",
)


JOBS: list[dg.JobDefinition | dg.UnresolvedAssetJobDefinition] = [
    recognition_job,
    release_job,
    release_checks_job,
    release_batch_job,
    rollback_job,
]
