"""A multi-partition backfill launched the way the UI launches it, against `dagster dev` on DuckDB.

The Dagster UI's "Materialize" on a selection of the asset graph with several partitions calls
the GraphQL mutation ``launchPartitionBackfill`` with ``assetSelection`` and ``partitionNames``:
an *asset backfill* (no job, no TIDE run tags).  The daemon started by `dagster dev` turns it into
runs, the queued run coordinator launches them in their own processes, and the instance is this
repository's ``dagster_home/dagster.yaml``.  Every run must succeed with every step done in one
attempt: the ``tide_warehouse`` pool (1 slot) staggers their steps, and a step that opens the
DuckDB file while another run holds it waits for the lock instead of failing.

Kept small: one study of three notes recognized beforehand with the ``rules`` preset, two key
partitions.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pytest
from test_dagster_dev import ROOT, _free_port, _get, _port_open

from tide_core.anonymize.keys import FileKeyProvider
from tide_core.config import TideConfig
from tide_core.io.open import open_warehouse

warnings.filterwarnings("ignore", category=dg.BetaWarning)
warnings.filterwarnings("ignore", category=dg.PreviewWarning)

S = "s"
KEYS = ["k1", "k2"]  # two runs at once contend for the file and the pool slot
BASE = {"study": S, "site": "site1", "source": "ehr", "note_type": "progress"}
NOTES = [
    dict(BASE, note_id="a", patient_id="p1", note_date="2021-03-04", text="Maria Stonebridge seen 03/04/2021, stable."),
    dict(BASE, note_id="b", patient_id="p2", note_date="2021-03-05", text="Call 617-555-0100 re: Robert Ashdown."),
    dict(BASE, note_id="c", patient_id="p2", note_date="2021-03-06", text="Robert Ashdown seen, no change."),
]
PATIENTS = [
    {"patient_id": "p1", "first_name": "Maria", "last_name": "Stonebridge"},
    {"patient_id": "p2", "first_name": "Robert", "last_name": "Ashdown"},
]

LAUNCH = """
mutation Launch($params: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $params) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on PythonError { message }
    ... on InvalidSubsetError { message }
  }
}
"""
STATUS = """
query Status($id: String!) {
  partitionBackfillOrError(backfillId: $id) {
    __typename
    ... on PartitionBackfill { status }
  }
}
"""


def _graphql(base: str, query: str, variables: dict) -> dict:
    _, body = _get(f"{base}/graphql", json.dumps({"query": query, "variables": variables}).encode(), timeout=30)
    out = json.loads(body)
    assert "errors" not in out, out["errors"]
    return out["data"]


def _prepare(tmp_path: Path, home: Path) -> None:
    """A recognized study, two key secrets and the partitions, before `dagster dev` starts."""
    from tide_core.runner import recognize_study

    with open_warehouse(f"duckdb:{tmp_path / 'wh.duckdb'}") as wh:
        wh.replace_table("notes", pa.Table.from_pylist(NOTES))
        wh.replace_table("patients", pa.Table.from_pylist(PATIENTS))
        recognize_study(wh, S, TideConfig.preset("rules"), progress=False)
    keys = FileKeyProvider(tmp_path / "keys")
    for k in KEYS:
        keys.create(S, k)
    shutil.copy(ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(home)) as instance:
        instance.add_dynamic_partitions("study", [S])
        instance.add_dynamic_partitions("key", KEYS)


def _step_intervals(home: Path, backfill_id: str) -> tuple[dict[str, str], list[tuple[float, float, str, str, str]]]:
    """Per run of the backfill: its status, and (start, end, run, step, how it ended) of every step
    attempt (a step up for retry ends an attempt; the retry is another)."""
    with dg.DagsterInstance.from_config(str(home)) as instance:
        runs = instance.get_runs(filters=dg.RunsFilter(tags={"dagster/backfill": backfill_id}))
        status = {r.run_id: r.status.value for r in runs}
        intervals = []
        for r in runs:
            starts: dict[str, float] = {}
            for entry in instance.all_logs(r.run_id):
                e = entry.dagster_event
                if e is None:
                    continue
                if e.event_type_value in ("STEP_START", "STEP_RESTARTED"):
                    starts[e.step_key] = entry.timestamp
                elif e.event_type_value in ("STEP_SUCCESS", "STEP_FAILURE", "STEP_UP_FOR_RETRY"):
                    intervals.append((starts[e.step_key], entry.timestamp, r.run_id, e.step_key, e.event_type_value))
    return status, intervals


def _diagnosis(home: Path, backfill_id: str | None, log_path: Path) -> str:
    """What a stalled backfill was doing: each run's status and its last step events, the pool's
    slots, and the end of the `dagster dev` log (test data only: no PHI)."""
    lines = []
    try:
        with dg.DagsterInstance.from_config(str(home)) as instance:
            runs = instance.get_runs(filters=dg.RunsFilter(tags={"dagster/backfill": backfill_id or ""}))
            for r in runs:
                logs = instance.all_logs(r.run_id)
                partition = r.tags.get("dagster/asset_partition_range_start")
                lines.append(f"run {r.run_id[:8]} {partition} {r.status.value}, {len(logs)} events; the last:")
                for e in logs[-10:]:  # event types, steps and messages (test data only)
                    kind = e.dagster_event.event_type_value if e.dagster_event is not None else "LOG"
                    lines.append(f"  {e.timestamp:.1f} {kind} {e.step_key} {(e.user_message or '')[:200]}")
            lines.append(f"pools: {instance.event_log_storage.get_concurrency_info('tide_warehouse')}")
    except Exception as exc:  # diagnosis only
        lines.append(f"(no run diagnosis: {type(exc).__name__}: {exc})")
    lines.append(log_path.read_text()[-4000:])
    return "\n".join(lines)


@pytest.mark.timeout(900)  # 2 xdist workers on 2 slow CI cores: dagster dev + 3 run processes
def test_a_ui_backfill_of_two_release_partitions_on_duckdb(tmp_path: Path):
    exe = shutil.which("dagster", path=str(Path(sys.executable).parent))
    assert exe, "dagster CLI not installed in this environment"
    home = tmp_path / "home"
    home.mkdir()
    _prepare(tmp_path, home)
    port = _free_port()
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "TIDE_WAREHOUSE": f"duckdb:{tmp_path / 'wh.duckdb'}",
        "TIDE_KEY_DIR": str(tmp_path / "keys"),
        "TIDE_PRESET": "rules",
        "DAGSTER_DISABLE_TELEMETRY": "1",
    }
    log_path = tmp_path / "dagster_dev.log"
    log = open(log_path, "w")
    proc = subprocess.Popen(
        [exe, "dev", "-w", str(ROOT / "dagster_home" / "workspace.yaml"), "-h", "127.0.0.1", "-p", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    backfill_id = None
    try:
        t0 = time.time()
        while True:  # the webserver answers once the code location is loaded
            assert proc.poll() is None and time.time() - t0 < 240, log_path.read_text()[-3000:]
            try:
                if _graphql(base, "{ assetNodes { id } }", {})["assetNodes"]:
                    break
            except Exception:
                pass
            time.sleep(0.25)
        params = {  # what the UI sends for "Materialize" on two assets with two partitions chosen
            "assetSelection": [{"path": ["deidentified_notes"]}, {"path": ["release_summary"]}],
            "partitionNames": [f"{k}|{S}" for k in KEYS],
            "fromFailure": False,
            "tags": [],
        }
        launched = _graphql(base, LAUNCH, {"params": params})["launchPartitionBackfill"]
        assert launched["__typename"] == "LaunchBackfillSuccess", launched
        backfill_id = launched["backfillId"]
        status = None
        t_launch = time.time()
        while time.time() - t_launch < 600:
            status = _graphql(base, STATUS, {"id": backfill_id})["partitionBackfillOrError"]["status"]
            if status not in ("REQUESTED",):
                break
            assert proc.poll() is None, log_path.read_text()[-3000:]
            time.sleep(0.5)
        if status not in ("COMPLETED", "COMPLETED_SUCCESS"):  # a string, so pytest prints all of it
            pytest.fail(
                f"backfill {status} after {time.time() - t_launch:.0f} s\n{_diagnosis(home, backfill_id, log_path)}"
            )
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)  # dagster dev stops its services on SIGTERM; what is still up after 10 s is killed
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        log.close()
    deadline = time.time() + 30
    while _port_open(port) and time.time() < deadline:
        time.sleep(0.5)

    runs, intervals = _step_intervals(home, backfill_id)
    assert len(runs) == len(KEYS) and set(runs.values()) == {"SUCCESS"}, runs
    # one attempt per step, per run: deidentified_notes, its 5 blocking checks (one step) and release_summary (which
    # reports the release_gate check in its own step); none failed or was retried on the DuckDB file's
    # lock (the one-slot pool staggers the runs, and a step that opens the file while another run holds
    # it waits)
    assert len(intervals) == len(KEYS) * 3, sorted((i[3], i[4]) for i in intervals)
    assert {i[4] for i in intervals} == {"STEP_SUCCESS"}, sorted((i[3], i[4]) for i in intervals)
    with open_warehouse(f"duckdb:{tmp_path / 'wh.duckdb'}") as wh:
        status = {r["key"]: r["status"] for r in wh.read_table("tide_releases").to_pylist()}
        assert wh.count("tide_deid_notes", {"study": S}) == len(KEYS) * len(NOTES)
    assert status == {k: "awaiting_audit" for k in KEYS}
