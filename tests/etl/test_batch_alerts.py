"""Alerts of a ``release_batch_job`` run: one alert per event, to a real webhook on 127.0.0.1.

One batch run (the code location as Dagster loads it, a real instance, DuckDB) releases two cells
of one key: ``t/k1`` leaks (a reviewer rejected a repeated name) and is decided ``blocked``;
``s/k1`` has a key secret that is refused (one repeated byte, E114), so its run fails.  Each cell
is its own failed run and the batch run fails at the end.  The ``tide_alerts`` sensor must send
exactly one ``release_blocked`` (naming the blocked cell's run), one ``run_failed`` (the failed
cell's run), no ``run_failed`` for the blocked cell's run, none for the batch run (its failure is
those two), and nothing again at the next tick.
"""

from __future__ import annotations

import dagster as dg
from test_alerts import Receiver
from test_backfill_batch import batch_env, run_batch  # noqa: F401 - pytest fixture

from tide_etl import alerts
from tide_etl.batch import BATCH_TAG, CELLS_REPORTED_TAG
from tide_etl.partitions import release_key
from tide_etl.resources import TideConfigResource, WarehouseResource


def _tick(instance, url: str, hook: str, cursor: str | None) -> tuple[str, str | None]:
    with dg.build_sensor_context(instance=instance, cursor=cursor) as context:
        result = alerts.evaluate(
            context, WarehouseResource(url=url), TideConfigResource(preset="rules"), {"TIDE_ALERT_WEBHOOK_URL": hook}
        )
        return str(result.skip_message), context.cursor


def test_a_batch_with_a_blocked_and_a_failed_cell_gives_one_alert_per_event(batch_env, tmp_path):  # noqa: F811
    instance, url = batch_env
    (tmp_path / "keys" / "s" / "k1.key").write_text("00" * 32 + "\n")  # refused: E114
    batch = run_batch(instance, {"keys": ["k1"]})
    assert not batch.success
    cells = {
        r.tags["dagster/partition"]: r for r in instance.get_runs(filters=dg.RunsFilter(tags={BATCH_TAG: batch.run_id}))
    }
    blocked, failed = cells[str(release_key("t", "k1"))], cells[str(release_key("s", "k1"))]
    assert {r.status for r in cells.values()} == {dg.DagsterRunStatus.FAILURE} and len(cells) == 2
    assert instance.get_run_by_id(batch.run_id).tags[CELLS_REPORTED_TAG] == "2"

    receiver = Receiver()
    try:
        message, cursor = _tick(instance, url, receiver.url, None)
        assert "2 alert deliveries made, 0 pending" in message, message
        got = sorted((p["kind"], p["run_id"], p["study"], p["key"]) for p in receiver.payloads())
        assert got == [
            ("release_blocked", blocked.run_id, "t", "k1"),
            ("run_failed", failed.run_id, "s", "k1"),
        ]
        failed_alert = next(p for p in receiver.payloads() if p["kind"] == "run_failed")
        assert "E114" in failed_alert["codes"] and failed_alert["job"] == "release_job"
        message, _ = _tick(instance, url, receiver.url, cursor)  # nothing new, nothing again
        assert len(receiver.requests) == 2 and "0 alert deliveries made" in message, message
    finally:
        receiver.close()


def test_a_batch_whose_bad_cell_did_not_fail_its_run_is_reported_itself(batch_env):  # noqa: F811
    """Fail closed: a tag whose count the failed cell runs do not match reports the batch run."""
    instance, url = batch_env
    batch = run_batch(instance, {"keys": ["k1"], "studies": ["t"]})
    assert not batch.success
    record = instance.get_run_records(dg.RunsFilter(run_ids=[batch.run_id]))[0]
    assert alerts.batches_reported_by_cells(instance, [record]) == {f"run:{batch.run_id}"}
    instance.add_run_tags(batch.run_id, {CELLS_REPORTED_TAG: "2"})  # one failed cell run, not two
    record = instance.get_run_records(dg.RunsFilter(run_ids=[batch.run_id]))[0]
    assert alerts.batches_reported_by_cells(instance, [record]) == set()
