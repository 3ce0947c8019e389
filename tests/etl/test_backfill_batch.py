"""Many small (study, key) cells in one launched run: ``release_batch_job``, in process on DuckDB.

Two studies of the same short notes, both recognized; study ``t`` misses a second mention of a
patient's name (a reviewer "reject"), so every release of ``t`` leaks and is blocked, while the
releases of ``s`` await their audit.  One batch over three keys must release each cell on its own
(a blocked cell does not stop or hide the others), record each cell as its own run with its own
partition status and checks, skip the cell without a key secret, report every cell and fail at the
end because cells were blocked.

``python -m tests.test_backfill_batch N`` measures N cells through ``dagster dev`` (as
tests/etl/test_ui_backfill.py launches a UI backfill): one run per cell, then one batch run.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pytest
from dagster._core.definitions.reconstruct import ReconstructableJob, ReconstructableRepository
from dagster._core.storage.partition_status_cache import AssetPartitionStatus

from tests.release_helpers import fixed_key
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.config import TideConfig
from tide_core.io.open import open_warehouse
from tide_core.store.span_cache import SpanCache
from tide_etl.partitions import release_key, release_partitions

warnings.filterwarnings("ignore", category=dg.BetaWarning)
warnings.filterwarnings("ignore", category=dg.PreviewWarning)

NAME = "Stonebridge"
KEYS = ["k1", "k2", "k3"]


def _notes(study: str) -> list[dict]:
    base = {"study": study, "site": "site1", "source": "ehr", "note_type": "progress"}
    return [
        dict(
            base,
            note_id="a",
            patient_id="p1",
            note_date="2021-03-04",
            text=f"Maria {NAME} seen. Maria {NAME} is stable.",
        ),
        dict(base, note_id="b", patient_id="p2", note_date="2021-03-05", text="Call 617-555-0100 re: Robert Ashdown."),
    ]


PATIENTS = [
    {"patient_id": "p1", "first_name": "Maria", "last_name": NAME},
    {"patient_id": "p2", "first_name": "Robert", "last_name": "Ashdown"},
]


@pytest.fixture
def batch_env(tmp_path: Path, monkeypatch):
    """The warehouse and keys, and the code location as Dagster loads it (``tide_etl:tide_location``,
    configured from the environment), run on a real instance: the batch op reaches ``release_job``
    through the loaded repository, as a launched run does."""
    from tide_core.engine.study_input import read_study_input
    from tide_core.runner import recognize_study
    from tide_etl import definitions

    config = TideConfig.preset("rules")
    url = f"duckdb:{tmp_path / 'wh.duckdb'}"
    with open_warehouse(url) as wh:
        wh.replace_table("notes", pa.Table.from_pylist(_notes("s") + _notes("t")))
        wh.replace_table("patients", pa.Table.from_pylist(PATIENTS))
        for study in ("s", "t"):
            recognize_study(wh, study, config, progress=False)
        cache = SpanCache(wh, config.tables)  # study t: a recognizer miss of the repeated name
        note = next(n for n in read_study_input(wh, "t", config).notes if n.note_id == "a")
        second = max((s for s in cache.spans("t", ["a"])["a"] if s.label == "PATIENT"), key=lambda s: s.start)
        cache.add_review("t", note, second.start, second.end, second.label, "reject")
    keys = FileKeyProvider(tmp_path / "keys")
    for study, key in [("s", "k1"), ("s", "k2"), ("s", "k3"), ("t", "k1"), ("t", "k2")]:  # no secret for t/k3
        fixed_key(keys, study, key)
    for name, value in (("TIDE_WAREHOUSE", url), ("TIDE_KEY_DIR", str(tmp_path / "keys")), ("TIDE_PRESET", "rules")):
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("TIDE_CONFIG", raising=False)
    monkeypatch.setattr(definitions, "_DEFS", None)  # load the location from this environment
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("study", ["s", "t"])
        instance.add_dynamic_partitions("key", KEYS)
        yield instance, url


def run_batch(instance: dg.DagsterInstance, cells_config: dict):
    job = ReconstructableJob(ReconstructableRepository.for_module("tide_etl", "tide_location"), "release_batch_job")
    return dg.execute_job(job, instance=instance, run_config={"ops": {"release_cells": {"config": cells_config}}})


def test_one_batch_releases_each_cell_on_its_own(batch_env):
    instance, url = batch_env
    r = run_batch(instance, {"keys": KEYS})
    assert not r.success  # cells of t were blocked: the batch fails, at the end
    failure = next(e for e in r.all_events if e.event_type_value == "STEP_FAILURE")
    md = {k: v.value for k, v in failure.step_failure_data.user_failure_data.metadata.items()}
    cells = md["cells"]
    assert {c: o["status"] for c, o in cells.items()} == {
        "s/k1": "awaiting_audit",
        "s/k2": "awaiting_audit",
        "s/k3": "awaiting_audit",
        "t/k1": "blocked",
        "t/k2": "blocked",
    }
    assert md["skipped"] == ["t/k3: no key secret"] and md["n_cells"] == 5
    assert md["by_status"] == {"awaiting_audit": 3, "blocked": 2}
    assert NAME not in str(md) and "Maria" not in str(md)

    # each cell is its own run in the instance, tagged with the batch, with its own partition status
    runs = instance.get_runs(filters=dg.RunsFilter(tags={"tide/batch": r.run_id}))
    assert sorted(run.tags["dagster/partition"] for run in runs) == sorted(
        str(release_key(*c.split("/"))) for c in cells
    )
    assert {cells[c]["run_id"] for c in cells} == {run.run_id for run in runs}
    keys = [str(release_key(*c.split("/"))) for c in sorted(cells)]
    status = instance.get_status_by_partition(dg.AssetKey("release_summary"), keys, release_partitions)
    assert status == {str(release_key("s", k)): AssetPartitionStatus.MATERIALIZED for k in KEYS} | {
        str(release_key("t", k)): AssetPartitionStatus.FAILED for k in ("k1", "k2")
    }
    with open_warehouse(url) as wh:
        rows = {(x["study"], x["key"]): x["status"] for x in wh.read_table("tide_releases").to_pylist()}
    assert rows == {tuple(c.split("/")): o["status"] for c, o in cells.items()}


def test_a_batch_of_good_cells_succeeds_and_reports_them(batch_env):
    instance, _ = batch_env
    r = run_batch(instance, {"keys": ["k1", "k2"], "studies": ["s", "nope"]})
    assert r.success
    out = next(e for e in r.all_events if e.event_type_value == "STEP_OUTPUT")
    md = {k: v.value for k, v in out.event_specific_data.metadata.items()}
    assert {c: o["status"] for c, o in md["cells"].items()} == {"s/k1": "awaiting_audit", "s/k2": "awaiting_audit"}
    assert md["skipped"] == ["nope: not a study partition"]


# -- measurement through `dagster dev` (not collected: run this file as a script) ---------------------


def measure(n_cells: int) -> dict:  # pragma: no cover - a benchmark, run by hand
    """N key cells of one small study through `dagster dev`: a UI asset backfill (one run per
    cell), then one release_batch_job run of the same cells; wall time from launch to the end."""
    import json
    import os
    import shutil
    import signal
    import subprocess
    import sys
    import tempfile
    import time

    from test_dagster_dev import ROOT, _free_port
    from test_ui_backfill import LAUNCH, NOTES, PATIENTS, STATUS, S, _graphql

    from tide_core.runner import recognize_study

    tmp = Path(tempfile.mkdtemp(prefix="tide-batch-"))
    home = tmp / "home"
    home.mkdir()
    keys = [f"k{i:03d}" for i in range(2 * n_cells)]
    with open_warehouse(f"duckdb:{tmp / 'wh.duckdb'}") as wh:
        wh.replace_table("notes", pa.Table.from_pylist(NOTES))
        wh.replace_table("patients", pa.Table.from_pylist(PATIENTS))
        recognize_study(wh, S, TideConfig.preset("rules"), progress=False)
    provider = FileKeyProvider(tmp / "keys")
    for k in keys:
        fixed_key(provider, S, k)
    shutil.copy(ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(home)) as instance:
        instance.add_dynamic_partitions("study", [S])
        instance.add_dynamic_partitions("key", keys)
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "TIDE_WAREHOUSE": f"duckdb:{tmp / 'wh.duckdb'}",
        "TIDE_KEY_DIR": str(tmp / "keys"),
        "TIDE_PRESET": "rules",
        "DAGSTER_DISABLE_TELEMETRY": "1",
    }
    port = _free_port()
    exe = shutil.which("dagster", path=str(Path(sys.executable).parent))
    proc = subprocess.Popen(
        [exe, "dev", "-w", str(ROOT / "dagster_home" / "workspace.yaml"), "-h", "127.0.0.1", "-p", str(port)],
        cwd=ROOT,
        env=env,
        stdout=open(tmp / "dev.log", "w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    out: dict = {"n_cells": n_cells}
    try:
        while True:
            try:
                if _graphql(base, "{ assetNodes { id } }", {})["assetNodes"]:
                    break
            except Exception:  # not serving yet
                time.sleep(0.5)
        params = {
            "assetSelection": [{"path": [p]} for p in ("deidentified_notes", "release_summary")],
            "partitionNames": [f"{k}|{S}" for k in keys[:n_cells]],
            "fromFailure": False,
            "tags": [],
        }
        t0 = time.time()
        launched = _graphql(base, LAUNCH, {"params": params})["launchPartitionBackfill"]
        bid = launched["backfillId"]
        while _graphql(base, STATUS, {"id": bid})["partitionBackfillOrError"]["status"] == "REQUESTED":
            time.sleep(0.5)
        out["backfill_s"] = round(time.time() - t0, 1)
        with dg.DagsterInstance.from_config(str(home)) as instance:
            out["backfill_runs"] = len(instance.get_runs(filters=dg.RunsFilter(tags={"dagster/backfill": bid})))
        launch_run = """mutation L($p: ExecutionParams!) { launchRun(executionParams: $p) { __typename
            ... on LaunchRunSuccess { run { runId } } ... on PythonError { message } } }"""
        selector = {
            "repositoryLocationName": "tide_etl",
            "repositoryName": "__repository__",
            "jobName": "release_batch_job",
        }
        run_config = {"ops": {"release_cells": {"config": {"keys": keys[n_cells:]}}}}
        t0 = time.time()
        res = _graphql(base, launch_run, {"p": {"selector": selector, "runConfigData": json.dumps(run_config)}})
        run_id = res["launchRun"]["run"]["runId"]
        with dg.DagsterInstance.from_config(str(home)) as instance:
            while not instance.get_run_by_id(run_id).is_finished:
                time.sleep(0.5)
            out["batch_s"] = round(time.time() - t0, 1)
            out["batch_status"] = instance.get_run_by_id(run_id).status.value
            out["batch_cell_runs"] = len(instance.get_runs(filters=dg.RunsFilter(tags={"tide/batch": run_id})))
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(60)
    with open_warehouse(f"duckdb:{tmp / 'wh.duckdb'}") as wh:
        out["statuses"] = sorted({r["status"] for r in wh.read_table("tide_releases").to_pylist()})
        out["n_release_rows"] = wh.count("tide_releases")
    return out


if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    print(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 12))
