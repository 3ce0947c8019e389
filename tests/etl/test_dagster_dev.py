"""`dagster dev` serves the code location: UI page and GraphQL list TIDE's assets and jobs.

Uses this repository's dagster_home/dagster.yaml and workspace.yaml (copied into a temporary
DAGSTER_HOME), so an invalid instance setting or workspace fails here.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, data: bytes | None = None, timeout: float = 5.0) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"} if data else {})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return resp.status, resp.read()


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_definitions_load_through_dagster_cli(tmp_path):
    """`dagster definitions validate` loads the workspace the way the daemon and webserver do."""
    exe = shutil.which("dagster", path=str(Path(sys.executable).parent))
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path), "TIDE_WAREHOUSE": f"duckdb:{tmp_path / 'wh.duckdb'}"}
    shutil.copy(ROOT / "dagster_home" / "dagster.yaml", tmp_path / "dagster.yaml")
    out = subprocess.run(
        [exe, "definitions", "validate", "-w", str(ROOT / "dagster_home" / "workspace.yaml")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]


def test_dagster_dev_serves_ui_and_graphql(tmp_path):
    exe = shutil.which("dagster", path=str(Path(sys.executable).parent))
    assert exe, "dagster CLI not installed in this environment"
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    port = _free_port()
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "TIDE_WAREHOUSE": f"duckdb:{tmp_path / 'wh.duckdb'}",
        "TIDE_KEY_DIR": str(tmp_path / "keys"),
        "DAGSTER_DISABLE_TELEMETRY": "1",
    }
    log = open(tmp_path / "dagster_dev.log", "w")
    proc = subprocess.Popen(
        [exe, "dev", "-w", str(ROOT / "dagster_home" / "workspace.yaml"), "-h", "127.0.0.1", "-p", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=lambda: (
            signal.signal(signal.SIGINT, signal.SIG_DFL),
            signal.signal(signal.SIGTERM, signal.SIG_DFL),
        ),
    )
    base = f"http://127.0.0.1:{port}"
    t0 = time.time()
    try:
        query = json.dumps(
            {
                "query": "{ assetNodes { assetKey { path } } "
                "repositoriesOrError { ... on RepositoryConnection { nodes { name "
                "jobs { name } schedules { name } sensors { name } } } } }"
            }
        ).encode()
        data = None
        while time.time() - t0 < 120:
            if proc.poll() is not None:
                break
            try:
                status, body = _get(f"{base}/graphql", query)
                data = json.loads(body)["data"]
                if data["assetNodes"]:
                    break
            except Exception:
                pass
            time.sleep(1)
        assert data and data["assetNodes"], (tmp_path / "dagster_dev.log").read_text()[-3000:]
        assets = {"/".join(n["assetKey"]["path"]) for n in data["assetNodes"]}
        assert assets == {
            "source_notes",
            "recognized_spans",
            "deidentified_notes",
            "release_summary",
            "released_notes",
            "released_versions",
        }
        repo = data["repositoriesOrError"]["nodes"][0]
        assert {"recognition_job", "release_job", "release_checks_job"} <= {j["name"] for j in repo["jobs"]}
        assert [s["name"] for s in repo["schedules"]] == ["nightly_release_schedule"]
        sensors = {"tide_partitions_sensor", "release_after_recognition", "tide_alerts"}
        assert {s["name"] for s in repo["sensors"]} == sensors
        status, page = _get(f"{base}/")
        assert status == 200 and b"<html" in page.lower()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        log.close()
    # stopping `dagster dev` stops everything it started: nothing serves the port any more
    deadline = time.time() + 30
    while _port_open(port) and time.time() < deadline:
        time.sleep(0.5)
    assert not _port_open(port), "the Dagster webserver outlived `dagster dev`"
