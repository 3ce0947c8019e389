"""The researcher views as assets: ``released_notes`` and ``released_versions`` (release -> views).

What is actually released is what researchers read: the views of the researcher store
(tide_core/release/publish.py), over the version each (study, key) points at.  They are
materialized, per (study, key) partition, when ``release_summary`` publishes (a new version, or
the same content confirmed by a re-release); a release that is blocked or awaits audit leaves
them as they were -- researchers keep the version they see -- so their freshness says how long
ago what researchers read was last confirmed.  ``rollback_job`` reports them too (the pointer
moved back).  Metadata is the version, counts, a fingerprint and a time: never a row.
"""

from collections.abc import Iterator
from typing import Any

import dagster as dg

from tide_core.release import publish
from tide_core.release.lifecycle import PUBLISHED, read_release
from tide_etl.assets import RELEASE, release_summary
from tide_etl.partitions import release_partitions, split_release_key
from tide_etl.resources import TideConfigResource, WarehouseResource
from tide_etl.retry import ONE_PARTITION_PER_RUN, POOL, TRANSIENT_RETRY, transient_only

RELEASED_NOTES = dg.AssetKey("released_notes")
RELEASED_VERSIONS = dg.AssetKey("released_versions")
VIEW_KEYS = (RELEASED_NOTES, RELEASED_VERSIONS)


def view_metadata(pointer: dict[str, Any], n_rows: int) -> dict[dg.AssetKey, dict[str, Any]]:
    """Per view, the metadata of one (study, key): the version researchers read and its size."""
    common = {
        "published_version": str(pointer["version"]),
        "content_fingerprint": str(pointer["content_fingerprint"]),
        "published_at": dg.MetadataValue.timestamp(pointer["published_at"]),
    }
    return {
        RELEASED_NOTES: {**common, "dagster/row_count": int(n_rows)},
        RELEASED_VERSIONS: {**common, "n_notes": int(pointer["n_notes"] or 0), "dagster/row_count": 1},
    }


def researcher_view_rows(wh: Any, study: str, key: str) -> int:
    """Rows of ``released_notes`` a researcher reads for (study, key), counted through the view."""
    rows = publish.researcher_rows(wh, study, key, "count(*) AS n")
    return int(rows[0]["n"]) if rows else 0


@dg.multi_asset(
    name="researcher_views",
    specs=[
        dg.AssetSpec(
            RELEASED_NOTES,
            deps=[release_summary],
            skippable=True,
            group_name=RELEASE,
            description="The view researchers read (researcher store): the published version of each "
            "(study, key), researcher columns only. Materialized when a release publishes.",
        ),
        dg.AssetSpec(
            RELEASED_VERSIONS,
            deps=[release_summary],
            skippable=True,
            group_name=RELEASE,
            description="Which version of each (study, key) researchers read, its size and when it was "
            "published (researcher store). Materialized when a release publishes.",
        ),
    ],
    partitions_def=release_partitions,
    pool=POOL,
    retry_policy=TRANSIENT_RETRY,
    backfill_policy=ONE_PARTITION_PER_RUN,
)
def researcher_views(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, tide_config: TideConfigResource
) -> Iterator[dg.MaterializeResult]:
    study, key = split_release_key(context.partition_key)
    config = tide_config.build()
    with transient_only(), warehouse.open() as wh:
        row = read_release(wh, study, key, config.tables.releases) or {}
        pointer = publish.published_version(wh, config.tables, study, key)
        fresh = (
            row.get("status") == PUBLISHED
            and pointer is not None
            and pointer["content_fingerprint"] == row.get("content_fingerprint")
        )
        n_rows = researcher_view_rows(wh, study, key) if fresh else 0
    if not fresh or pointer is None:
        context.log.info(
            f"release {study}/{key} is {row.get('status') or 'not decided'}: nothing newly published; researchers "
            f"keep version {(pointer or {}).get('version') or 'none'}"
        )
        return
    for asset_key, metadata in view_metadata(pointer, n_rows).items():
        yield dg.MaterializeResult(asset_key=asset_key, metadata=metadata)
