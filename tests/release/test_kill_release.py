"""SIGKILLed release runs never leave researchers an empty, mixed or partial view, and a rerun
completes (``scripts/kill_release.py``; its full run and table are in docs/results/kill_loop.md).

- the oracle (``Scenario.judge``) on a hand-made researcher store: it sees an empty view after a
  publish, two versions at once, a version missing rows, a view moved by a process that could
  not publish, and a release row claiming a version the view does not show;
- a small loop: 4 kills of ``release_job`` (Dagster, in process) and 4 of ``tide run`` /
  ``tide release publish`` (CLI subprocesses) on a study of 240 notes in chunks of 60, with
  content changes between kills (and ``tide release rollback`` among the CLI runs): no
  violation, every rerun completes;
- ``TIDE_KILL_FAULT=1``: the same loop against a copy of tide_core whose publish commits its
  writes one by one (pointer first, a pause between): the loop must report violations.
"""

from __future__ import annotations

import importlib.util
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import duckdb
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kill_release", ROOT / "scripts" / "kill_release.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["kill_release"] = mod
    spec.loader.exec_module(mod)
    return mod


V1 = [(f"r{i}", f"note {i}") for i in range(4)]
V2 = [*V1, ("r4", "note 4")]


def _site(root: Path, view: list[tuple[str, str, str]], candidate: list[tuple[str, str]], row: tuple | None) -> None:
    """A warehouse (candidate, release row) and a researcher file whose released_notes shows ``view``."""
    root.mkdir(parents=True, exist_ok=True)
    for name in ("wh.duckdb", "wh.released.duckdb"):
        (root / name).unlink(missing_ok=True)
    with duckdb.connect(str(root / "wh.duckdb")) as con:
        con.execute("CREATE TABLE tide_deid_notes (study VARCHAR, key VARCHAR, note_ref VARCHAR, text VARCHAR)")
        for r in candidate:
            con.execute("INSERT INTO tide_deid_notes VALUES ('big', 'k', ?, ?)", list(r))
        con.execute(
            "CREATE TABLE tide_releases (study VARCHAR, key VARCHAR, status VARCHAR, published_version VARCHAR, "
            "gate_reasons VARCHAR)"
        )
        if row is not None:
            con.execute("INSERT INTO tide_releases VALUES ('big', 'k', ?, ?, '')", list(row))
    with duckdb.connect(str(root / "wh.released.duckdb")) as con:
        con.execute("CREATE TABLE rows (study VARCHAR, key VARCHAR, version VARCHAR, note_ref VARCHAR, text VARCHAR)")
        for r in view:
            con.execute("INSERT INTO rows VALUES ('big', 'k', ?, ?, ?)", list(r))
        con.execute("CREATE VIEW released_notes AS SELECT * FROM rows")


def _judge(kr: ModuleType, root: Path, view, candidate, row=("published", "v1"), **kill) -> list[str]:
    _site(root, view, candidate, row)
    sc = kr.Scenario(root, random.Random(0), kr.Report(), lambda _: None)
    sc.snapshots = {"v1": tuple(sorted(V1))}
    sc.current = "v1"
    problems = sc.judge(kr.Kill("test", **kill))
    return sorted({p.split(":")[0] for p in problems})


def test_the_oracle_sees_empty_mixed_partial_moved_and_stale_views(tmp_path: Path):
    kr = _script()
    v1 = [("v1", *r) for r in V1]
    v2 = [("v2", *r) for r in V2]
    assert _judge(kr, tmp_path, v1, V1) == []
    assert _judge(kr, tmp_path, [], V1, ("pending", "v1")) == ["empty"]
    assert _judge(kr, tmp_path, v1[:2] + v2[2:], V2, ("pending", "v1")) == ["mixed"]
    assert _judge(kr, tmp_path, v1[:3], V1) == ["partial"]
    assert _judge(kr, tmp_path, [("v1", r, t + " changed") for r, t in V1], V1) == ["unverified"]
    # the view moved to the complete candidate: only a process that reached its publish may do that
    assert _judge(kr, tmp_path, v2, V2, ("pending", "v1")) == ["moved"]
    assert _judge(kr, tmp_path, v2, V2, ("pending", "v1"), may_publish=True) == []
    assert _judge(kr, tmp_path, v2[:4], V2, ("pending", "v1"), may_publish=True) == ["partial"]
    assert _judge(kr, tmp_path, v1, V1, ("published", "v2")) == ["stale_claim"]


def test_killed_release_runs_leave_researchers_one_whole_version(tmp_path: Path):
    kr = _script()
    lines: list[str] = []
    t0 = time.perf_counter()
    report = kr.run_kills(8, seed=3, workdir=tmp_path, rollbacks=True, log=lines.append, notes=240, chunk=60)
    print("\n".join(lines), f"\n{report.table()}\n{report.summary()} ({time.perf_counter() - t0:.0f} s)")
    assert report.kills == 8 and report.landed >= 5
    assert sum(n for (s, _), n in report.by_phase.items() if s == "dagster") == 4
    assert sum(n for (s, _), n in report.by_phase.items() if s == "cli") == 4
    assert report.ok, report.problems
    assert sum(report.versions.values()) >= 2  # each scenario published at least once


def _non_atomic_publish(overlay: Path) -> None:
    """A copy of tide_core whose publish commits pointer, members and content one at a time."""
    shutil.copytree(ROOT / "tide_core", overlay / "tide_core", ignore=shutil.ignore_patterns("__pycache__"))
    path = overlay / "tide_core" / "release" / "publish.py"
    text = path.read_text()
    one_commit = "        rs.replace_partitions(writes)  # the one commit researchers can observe\n"
    assert text.count(one_commit) == 1
    path.write_text(
        text.replace(
            one_commit,
            "        import time  # FAULT: one commit per write, the pointer first\n"
            "        for w in reversed(writes):\n"
            "            rs.replace_partitions([w])\n"
            "            time.sleep(0.3)\n",
        )
    )


@pytest.mark.skipif(os.environ.get("TIDE_KILL_FAULT") != "1", reason="fault injection: set TIDE_KILL_FAULT=1")
def test_the_loop_catches_a_publish_that_is_not_one_commit(tmp_path: Path):
    _non_atomic_publish(tmp_path / "overlay")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "overlay")}
    argv = [sys.executable, str(ROOT / "scripts" / "kill_release.py"), "--kills", "24", "--seed", "5"]
    argv += ["--scenarios", "cli,dagster", "--notes", "600", "--chunk-rows", "150", "--no-rollback"]
    out = subprocess.run([*argv, "--dir", str(tmp_path / "work")], env=env, capture_output=True, text=True)
    print(out.stdout[-6000:], out.stderr[-3000:])
    assert "FAULT" in (tmp_path / "overlay" / "tide_core" / "release" / "publish.py").read_text()
    assert out.returncode == 1 and "VIOLATION" in out.stdout


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q", "-s"]))
