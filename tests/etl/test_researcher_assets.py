"""The researcher views (``released_notes``, ``released_versions``) as Dagster assets downstream of
the release: lineage, materialized only when a release publishes (version and row count, counted
through the view researchers read), untouched while a release awaits audit or is blocked, and
their freshness policy evaluated by Dagster's own evaluator against the real instance.

In process on DuckDB; the study and environment are those of tests/release/test_release_lifecycle.py.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import warnings

import dagster as dg
import pytest
from dagster._core.definitions.freshness import FreshnessState
from dagster._core.definitions.freshness_evaluator import TimeWindowFreshnessPolicyEvaluator
from dagster._core.loader import LoadingContextForTest
from dagster._core.test_utils import freeze_time
from test_release_lifecycle import Env, K, S, recognized  # noqa: F401 - recognized: a fixture

from tide_etl.partitions import release_key

warnings.filterwarnings("ignore", category=dg.BetaWarning)
warnings.filterwarnings("ignore", category=dg.PreviewWarning)

NOTES = dg.AssetKey("released_notes")
VERSIONS = dg.AssetKey("released_versions")


@pytest.fixture
def env(recognized, tmp_path):  # noqa: F811 - the module fixture of tests/release/test_release_lifecycle.py
    e = Env(recognized, tmp_path)
    yield e
    e.instance.dispose()


def view_materializations(e: Env, asset: dg.AssetKey) -> list[dict]:
    records = e.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=asset, asset_partitions=[str(release_key(S, K))]), limit=10
    ).records
    return [
        {"run_id": r.run_id, **{k: v.value for k, v in r.asset_materialization.metadata.items()}}
        for r in records
        if r.asset_materialization is not None
    ]


def freshness(e: Env, asset: dg.AssetKey, at: dt.datetime | None = None) -> FreshnessState:
    node = e.defs.resolve_asset_graph().get(asset)

    async def evaluate() -> FreshnessState:
        return await TimeWindowFreshnessPolicyEvaluator().evaluate_freshness(LoadingContextForTest(e.instance), node)

    if at is None:
        return asyncio.run(evaluate())
    with freeze_time(at):
        return asyncio.run(evaluate())


def test_lineage_release_to_views_with_freshness(env: Env):
    graph = env.defs.resolve_asset_graph()
    for view in (NOTES, VERSIONS):
        node = graph.get(view)
        assert node.parent_keys == {dg.AssetKey("release_summary")}
        assert node.partitions_def == graph.get(dg.AssetKey("release_summary")).partitions_def
        policy = node.freshness_policy
        assert policy is not None and policy.fail_window.to_timedelta() == dt.timedelta(days=8)
        assert node.metadata["dagster/table_name"] == f"wh.released.main.{view.path[-1]}"
        assert node.metadata["dagster/column_schema"].columns
    assert {NOTES, VERSIONS} <= set(graph.get(dg.AssetKey("release_summary")).child_keys)
    for job in ("release_job", "release_checks_job"):
        assert {NOTES, VERSIONS} <= set(env.defs.resolve_job_def(job).asset_layer.selected_asset_keys)


def test_views_materialize_when_a_release_publishes_and_only_then(env: Env):
    r = env.run()  # awaiting audit: nothing published
    assert r.success
    assert view_materializations(env, NOTES) == [] and view_materializations(env, VERSIONS) == []
    assert freshness(env, NOTES) == FreshnessState.UNKNOWN

    seen = env.publish()  # audit + release_checks_job: v1
    notes = view_materializations(env, NOTES)
    assert len(notes) == 1
    assert notes[0]["published_version"] == "v1" and notes[0]["dagster/row_count"] == len(seen) == 2
    assert notes[0]["content_fingerprint"] == env.release_row()["content_fingerprint"]
    versions = view_materializations(env, VERSIONS)
    assert len(versions) == 1 and versions[0]["n_notes"] == 2 and versions[0]["published_version"] == "v1"
    text = " ".join(r["text"] for r in seen)
    assert not any(str(v) in text for m in (*notes, *versions) for v in m.values() if len(str(v)) > 3)

    now = dt.datetime.now(dt.UTC)
    assert freshness(env, NOTES) == FreshnessState.PASS
    assert freshness(env, NOTES, now + dt.timedelta(hours=27)) == FreshnessState.WARN
    assert freshness(env, VERSIONS, now + dt.timedelta(days=9)) == FreshnessState.FAIL

    env.add_a_note()  # new content awaits its audit: researchers keep v1, the views are not refreshed
    r = env.run()
    assert r.success and env.release_row()["status"] == "awaiting_audit"
    assert len(view_materializations(env, NOTES)) == 1
    env.audit(leaks=1)  # its audit finds a leak: blocked, the views stay as they were
    r = env.run("release_checks_job")
    assert not r.success and env.release_row()["status"] == "blocked"
    assert [m["published_version"] for m in view_materializations(env, NOTES)] == ["v1"]
    assert {e.asset_key for e in r.get_asset_materialization_events()} == set()


def test_a_rollback_reports_the_views_it_moved_back(env: Env):
    env.publish()  # v1
    env.add_a_note()
    env.run()
    env.audit()
    assert env.run("release_checks_job").success and env.release_row()["published_version"] == "v2"
    assert [m["published_version"] for m in view_materializations(env, NOTES)] == ["v2", "v1"]
    assert view_materializations(env, NOTES)[0]["dagster/row_count"] == 3
    config = {"ops": {"rollback_release": {"config": {"study": S, "key": K}}}}
    r = env.defs.resolve_job_def("rollback_job").execute_in_process(run_config=config, instance=env.instance)
    assert r.success
    latest = view_materializations(env, NOTES)[0]
    assert (latest["run_id"], latest["published_version"], latest["dagster/row_count"]) == (r.run_id, "v1", 2)
    assert view_materializations(env, VERSIONS)[0]["published_version"] == "v1"
    assert len(env.researchers_see()) == 2
