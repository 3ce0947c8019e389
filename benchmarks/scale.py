"""Scale benchmark: bounded memory, steady throughput and crash resume of ``tide run`` on DuckDB.

``python -m benchmarks.scale`` builds synthetic studies (the demo corpus's notes, copied
under new note and patient ids: demo-like text, length and PHI density) and runs ``tide run
--preset rules`` on each through the CLI, in a child process, measuring from outside:

* peak RSS of the child (``wait4``), per study size, and the ratio largest / smallest;
* throughput: notes per second of the whole run, and the steady recognition rate between the
  first and the last committed chunk (from the run's chunk-progress log lines, so start-up
  time does not count);
* resume: a run of the smallest study is SIGKILLed after about half of one run's wall time,
  then rerun; total work = killed run + rerun, as a multiple of one uninterrupted run;
* with ``--ray-nodes 1,2``, a local multi-node Ray cluster (one ``ray start`` per node, one CPU
  each) runs ``--executor ray`` on the smallest study, for throughput against workers.

Results are printed and written as JSON (``--out``).  Sizes default to the issue's 20k and
200k notes; on a small machine pass ``--sizes 2000,20000`` (same 10x ratio).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from tide_core.anonymize.keys import FileKeyProvider
from tide_core.cli.cmd_demo import load_demo
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.synth import generate_demo_corpus

STUDY = "scale"
KEY = "k1"
_PROGRESS = re.compile(r"recognition \S+: chunk (\d+)/(\d+) committed, .*?; (\d+)/(\d+) rows \(\d+%\) in ([\d.]+)s")


@dataclass
class RunResult:
    n_notes: int
    wall_s: float
    peak_rss_mib: float
    returncode: int
    notes_per_s: float
    steady_recognition_notes_per_s: float | None
    killed: bool = False


@dataclass
class ScaleReport:
    sizes: list[int]
    chunk_rows: int
    runs: list[RunResult] = field(default_factory=list)
    rss_ratio: float | None = None
    throughput_ratio: float | None = None
    steady_ratio: float | None = None
    resume: dict[str, Any] | None = None
    ray: list[dict[str, Any]] = field(default_factory=list)
    cpu_count: int = os.cpu_count() or 1
    load_avg_start: float = field(default_factory=lambda: os.getloadavg()[0])


def build_study(db: Path, n_notes: int, seed: int = 7, batch: int = 5000) -> None:
    """Write ``notes`` and ``patients`` tables of ``n_notes`` demo-like notes into ``db``."""
    corpus = generate_demo_corpus(seed=seed)
    base = list(corpus.notes)
    with DuckDBWarehouse(db) as wh:
        load_demo(wh, seed=seed)  # the demo's own patients table: the template of each copy's patients
        patients = wh.read_table("patients").to_pylist()
        wh.sql('DROP TABLE IF EXISTS "notes"')
        wh.sql('DROP TABLE IF EXISTS "patients"')
        copies = (n_notes + len(base) - 1) // len(base)
        for start in range(0, copies, max(1, batch // len(base))):
            stop = min(copies, start + max(1, batch // len(base)))
            rows = [
                {
                    "study": STUDY,
                    "note_id": f"n{c:06d}-{n.note_id}",
                    "patient_id": f"{n.patient_id}-{c}",
                    "text": n.text,
                    "note_date": n.metadata.get("note_date"),
                    "note_type": n.metadata.get("note_type"),
                }
                for c in range(start, stop)
                for n in base
            ]
            rows = rows[: max(0, n_notes - start * len(base))]
            wh.append("notes", pa.Table.from_pylist(rows))
            pats = [{**p, "patient_id": f"{p['patient_id']}-{c}"} for c in range(start, stop) for p in patients]
            wh.append("patients", pa.Table.from_pylist(pats))


def _cli(db: Path, key_dir: Path, chunk_rows: int, extra: list[str]) -> list[str]:
    return [
        sys.executable,
        "-m",
        "tide_core.cli.main",
        "run",
        "--warehouse",
        f"duckdb:{db}",
        "--study",
        STUDY,
        "--key",
        KEY,
        "--preset",
        "rules",
        "--no-progress",
        "--chunk-rows",
        str(chunk_rows),
        "--key-dir",
        str(key_dir),
        *extra,
    ]


def run_cli(
    db: Path,
    key_dir: Path,
    n_notes: int,
    chunk_rows: int,
    kill_after_s: float | None = None,
    extra: Sequence[str] = (),
    env: dict[str, str] | None = None,
) -> RunResult:
    """Run ``tide run`` in a child; optionally SIGKILL it after ``kill_after_s`` seconds."""
    log_path = db.with_suffix(f".{int(time.time() * 1000)}.log")
    t0 = time.perf_counter()
    with open(log_path, "w") as log_file:
        cmd = _cli(db, key_dir, chunk_rows, list(extra))
        proc = subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT, env=env)
        killed = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if kill_after_s is not None and not killed and time.perf_counter() - t0 >= kill_after_s:
                os.kill(proc.pid, signal.SIGKILL)
                killed = True
            time.sleep(0.2)
    wall = time.perf_counter() - t0
    rc = os.waitstatus_to_exitcode(status)
    points = [(int(m.group(3)), float(m.group(5))) for m in _PROGRESS.finditer(log_path.read_text())]
    steady = None
    if len(points) >= 3 and points[-1][1] > points[0][1]:
        steady = (points[-1][0] - points[0][0]) / (points[-1][1] - points[0][1])
    if rc != 0 and not killed:
        sys.stderr.write(log_path.read_text()[-3000:])
    return RunResult(n_notes, wall, usage.ru_maxrss / 1024.0, rc, n_notes / wall if wall else 0.0, steady, killed)


def _fresh(workdir: Path, n: int, tag: str) -> tuple[Path, Path]:

    db = workdir / f"study_{n}_{tag}.duckdb"
    for p in (db, db.with_suffix(".duckdb.wal")):
        if p.exists():
            p.unlink()
    build_study(db, n)
    key_dir = workdir / "keys"
    keys = FileKeyProvider(key_dir)
    if not keys.has(STUDY, KEY):
        keys.create(STUDY, KEY)
    return db, key_dir


def ray_scaling(workdir: Path, n: int, nodes: list[int], chunk_rows: int) -> list[dict[str, Any]]:
    """Throughput of ``--executor ray`` on a local cluster of 1..N single-CPU nodes.

    Every node is a ``ray start --block`` child in a session of its own, stopped by signalling
    that session (never ``ray stop``, which would stop every Ray process on the machine).  The
    cluster listens on 127.0.0.1 only and runs without Ray's token authentication (the nodes and
    the driver are this benchmark's own children); a real cluster keeps it on (docs/ray.md).
    """
    out = []
    ray_bin = str(Path(sys.executable).with_name("ray"))
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    for k in nodes:
        port = 6390 + k
        procs: list[subprocess.Popen[bytes]] = []
        try:
            local = ["--num-cpus=1", "--node-ip-address=127.0.0.1"]
            head = [ray_bin, "start", "--head", "--block", f"--port={port}", *local, "--include-dashboard=false"]
            procs.append(subprocess.Popen(head, start_new_session=True, env=env))
            time.sleep(15)
            for _ in range(k - 1):
                worker = [ray_bin, "start", "--block", f"--address=127.0.0.1:{port}", *local]
                procs.append(subprocess.Popen(worker, start_new_session=True, env=env))
            time.sleep(10)
            db, key_dir = _fresh(workdir, n, f"ray{k}")
            ray_args = ["--executor", "ray", "--ray-address", f"127.0.0.1:{port}"]
            r = run_cli(db, key_dir, n, chunk_rows, extra=ray_args, env=env)
            out.append({"nodes": k, **asdict(r)})
        finally:
            for proc in reversed(procs):
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                    proc.wait(30)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="20000,200000", help="study sizes in notes, comma-separated")
    ap.add_argument("--chunk-rows", type=int, default=2000)
    ap.add_argument("--resume-size", type=int, default=None, help="kill/resume study size (default: smallest)")
    ap.add_argument("--no-resume", action="store_true", help="skip the kill/resume case")
    ap.add_argument("--ray-nodes", default="", help="e.g. 1,2: local Ray cluster sizes to measure (default: none)")
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--out", default="scale_bench.json")
    args = ap.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(",") if s)
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="tide_scale_"))
    workdir.mkdir(parents=True, exist_ok=True)
    report = ScaleReport(sizes, args.chunk_rows)

    def save() -> None:
        Path(args.out).write_text(json.dumps(asdict(report), indent=2))

    for n in sizes:
        db, key_dir = _fresh(workdir, n, "full")
        r = run_cli(db, key_dir, n, args.chunk_rows)
        report.runs.append(r)
        print(json.dumps(asdict(r)), flush=True)
        save()
    ok = [r for r in report.runs if r.returncode == 0]
    if len(ok) >= 2:
        lo, hi = ok[0], ok[-1]
        report.rss_ratio = hi.peak_rss_mib / lo.peak_rss_mib
        report.throughput_ratio = hi.notes_per_s / lo.notes_per_s
        if lo.steady_recognition_notes_per_s and hi.steady_recognition_notes_per_s:
            report.steady_ratio = hi.steady_recognition_notes_per_s / lo.steady_recognition_notes_per_s
    if not args.no_resume and ok:
        n = args.resume_size or sizes[0]
        one = next((r for r in ok if r.n_notes == n), None)
        if one is not None:
            db, key_dir = _fresh(workdir, n, "resume")
            killed = run_cli(db, key_dir, n, args.chunk_rows, kill_after_s=0.5 * one.wall_s)
            rerun = run_cli(db, key_dir, n, args.chunk_rows)
            report.resume = {
                "n_notes": n,
                "one_run_s": one.wall_s,
                "killed_after_s": killed.wall_s,
                "killed": killed.killed,
                "rerun_s": rerun.wall_s,
                "rerun_rc": rerun.returncode,
                "total_work_ratio": (killed.wall_s + rerun.wall_s) / one.wall_s,
            }
            save()
    if args.ray_nodes:
        report.ray = ray_scaling(workdir, sizes[0], [int(k) for k in args.ray_nodes.split(",")], args.chunk_rows)
    save()
    print(json.dumps(asdict(report), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
