"""The one Dagster code location of TIDE: ``tide_etl.defs`` (``dagster dev -m tide_etl``).

``defs`` is built on first access (when Dagster loads the code location), not at import: the
resources bind their settings to ``dg.EnvVar`` then (tide_etl/resources.py), and the catalog
metadata is computed from the same resolved resources the runs use.

Every run executes in one process (``in_process_executor``), on DuckDB and BigQuery alike: the
warehouse resource then lives for the whole run, so the run reads its source partition once
(``WarehouseResource.source_reads``).  Parallelism comes from Ray inside recognition and from
several partitions' runs at once (the ``tide_warehouse`` pool: 1 slot on a DuckDB file, more on
BigQuery).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

import dagster as dg

from tide_core.config import TideConfig
from tide_core.errors import ConfigError
from tide_etl.assets import ASSETS
from tide_etl.catalog import annotate, catalog_context
from tide_etl.checks import CHECKS
from tide_etl.jobs import JOBS
from tide_etl.resources import ReleaseGateResource, TideConfigResource, WarehouseResource, default_resources, resolved
from tide_etl.schedules import NIGHTLY_CRON, nightly_schedule
from tide_etl.sensors import SENSORS
from tide_etl.views import researcher_views

log = logging.getLogger("tide.etl")

#: The executor of every TIDE job and of backfills launched from the asset graph.
EXECUTOR = dg.in_process_executor


def build_defs(resources: Mapping[str, Any] | None = None, nightly_cron: str = NIGHTLY_CRON) -> dg.Definitions:
    """Definitions with the given resources (tests), else :func:`default_resources`."""
    res = dict(resources) if resources else default_resources()
    warehouse = resolved(res.get("warehouse") or WarehouseResource())
    gate = resolved(res.get("gate") or ReleaseGateResource()).policy()
    try:
        context = catalog_context(warehouse.url, resolved(res.get("tide_config") or TideConfigResource()).build(), gate)
    except ConfigError as exc:
        if exc.code != "E361":
            raise
        # No trained default model yet: the location still loads (the UI, the rules preset, keys,
        # partitions); every run that needs the model stops with E361 and its fix.
        log.warning("%s (%s): runs that recognize with the default model will fail until then", exc.message, exc.hint)
        context = catalog_context(warehouse.url, TideConfig.preset("rules"), gate, missing_model=True)
    assets = annotate([*ASSETS, researcher_views], context)
    return dg.Definitions(
        assets=assets,
        asset_checks=CHECKS,
        jobs=JOBS,
        schedules=[nightly_schedule(nightly_cron)],
        sensors=SENSORS,
        resources=res,
        executor=EXECUTOR,
    )


def load_defs() -> dg.Definitions:
    """The code location's definitions: resources from the environment (``dg.EnvVar``) and the
    nightly cron from ``TIDE_NIGHTLY_CRON``, read now -- when Dagster loads the location."""
    return build_defs(default_resources(), os.environ.get("TIDE_NIGHTLY_CRON") or NIGHTLY_CRON)


_DEFS: dg.Definitions | None = None


def __getattr__(name: str) -> Any:
    """``tide_etl.definitions.defs``: built on first access (PEP 562), then kept."""
    global _DEFS
    if name == "defs":
        if _DEFS is None:
            _DEFS = load_defs()
        return _DEFS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
