"""``rollback_job``: point researchers back at an earlier published version of one release.

The same code as ``tide release rollback`` (tide_core.release.lifecycle.rollback): one commit
moves the researchers' pointer; the content rolled back from is withdrawn.  Run it from the
Launchpad with ``ops: {rollback_release: {config: {study: ..., key: ..., to_version: null}}}``.
(No ``from __future__ import annotations`` here: Dagster reads the config class's annotations.)
"""

import dagster as dg

from tide_core.release import lifecycle, publish
from tide_core.store.tables import TableNames
from tide_etl.partitions import release_key
from tide_etl.resources import WarehouseResource
from tide_etl.views import researcher_view_rows, view_metadata


class RollbackConfig(dg.Config):
    """Which release to roll back, and to which published version (default: the one before)."""

    study: str
    key: str
    to_version: str | None = None


@dg.op(description="Point researchers back at an earlier published version of one (study, key).")
def rollback_release(context: dg.OpExecutionContext, config: RollbackConfig, warehouse: WarehouseResource) -> None:
    names = TableNames()
    with warehouse.open() as wh:
        row = lifecycle.rollback(wh, names, config.study, config.key, config.to_version, f"dagster:{context.run_id}")
        pointer = publish.published_version(wh, names, config.study, config.key)
        n_rows = researcher_view_rows(wh, config.study, config.key)
    context.log.info(f"release {config.study}/{config.key}: researchers now see {row['published_version']}")
    if pointer is not None:  # what researchers read changed: the views' partition says so
        partition = str(release_key(config.study, config.key))
        for asset_key, metadata in view_metadata(pointer, n_rows).items():
            context.log_event(dg.AssetMaterialization(asset_key=asset_key, partition=partition, metadata=metadata))


@dg.job(
    description="Roll a release back: researchers see an earlier published version again (one commit); "
    "the content rolled back from is withdrawn and not published again without an override."
)
def rollback_job() -> None:
    rollback_release()
