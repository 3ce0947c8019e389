"""The one Dagster code location of TIDE: ``tide_etl.defs`` (``dagster dev -m tide_etl``)."""

from __future__ import annotations

import dagster as dg

from tide_etl.assets import ASSETS
from tide_etl.checks import CHECKS
from tide_etl.jobs import JOBS
from tide_etl.resources import default_resources
from tide_etl.schedules import SCHEDULES
from tide_etl.sensors import SENSORS


def executor_for(resources: dict):
    """An embedded DuckDB file admits one writing process: run its steps in one process.
    BigQuery runs use the default multiprocess executor (the four checks run in parallel)."""
    wh = resources.get("warehouse")
    if wh is not None and getattr(wh, "url", "").startswith("duckdb:"):
        return dg.in_process_executor
    return dg.multiprocess_executor


def build_defs(resources: dict | None = None) -> dg.Definitions:
    """Definitions with the environment's resources, or the given ones (tests)."""
    resources = resources or default_resources()
    return dg.Definitions(
        assets=ASSETS,
        asset_checks=CHECKS,
        jobs=JOBS,
        schedules=SCHEDULES,
        sensors=SENSORS,
        resources=resources,
        executor=executor_for(resources),
    )


defs = build_defs()
