"""Release-scale benchmark: peak memory and time of Dagster's ``release_job`` as a study grows.

``python -m benchmarks.release_scale`` builds synthetic studies of each size (the demo
corpus's notes copied under new note and patient ids, as :mod:`benchmarks.scale` does), fills
their span cache beforehand (not measured): ``tide run --stage recognize --preset rules`` on the
first copy of the corpus, whose spans every other copy (the same texts under other ids) then
receives by a SQL join, so a 200,000-note cache takes seconds to build instead of a quarter of an
hour (``--recognize-all`` recognizes every note instead). Then it executes ``release_job`` for the
(study, key) partition **in process** in a child Python (Dagster's ``execute_in_process`` on an
ephemeral instance, DuckDB warehouse, rules preset): anonymization, the blocking checks, the
release decision and the researcher store's commit. From outside it measures the child's peak RSS
(``wait4``) and wall time, and the child reports the release status and the rows researchers see.

A first release has no audit evidence, so it ends ``awaiting_audit`` (nothing is published);
``--audit`` records a clean census audit of every frame after the first run and runs
``release_checks_job``, so the second measured run decides and **publishes** the whole study.

The bounds to meet (issue 32): peak RSS ratio largest / smallest <= 1.3 for 10x the notes, and
seconds per note within 10 %. Sizes default to 20,000 and 200,000 notes; ``--sizes 2000,20000`` on
a small machine. Results are printed as a table and written as JSON (``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from benchmarks.scale import KEY, STUDY, _cli, build_study
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.engine.study_chunks import DEFAULT_CHUNK_ROWS

#: The measured child: release_job (then, with --audit, an audit and release_checks_job) in process.
CHILD = r"""
import json, sys, warnings
import dagster as dg
warnings.filterwarnings("ignore", category=dg.BetaWarning)
warnings.filterwarnings("ignore", category=dg.PreviewWarning)
from tide_etl import build_defs
from tide_etl.partitions import release_key
from tide_etl.resources import KeyProviderResource, ReleaseGateResource, TideConfigResource, WarehouseResource
db, key_dir, study, key, job = sys.argv[1:6]
url = f"duckdb:{db}"
defs = build_defs({
    "warehouse": WarehouseResource(url=url),
    "tide_config": TideConfigResource(preset="rules"),
    "key_provider": KeyProviderResource(key_dir=key_dir),
    "gate": ReleaseGateResource(),
})
instance = dg.DagsterInstance.ephemeral()
instance.add_dynamic_partitions("study", [study])
instance.add_dynamic_partitions("key", [key])
result = defs.resolve_job_def(job).execute_in_process(
    partition_key=release_key(study, key), instance=instance, raise_on_error=False
)
from tide_core.io.open import open_warehouse
from tide_core.release.lifecycle import read_release
with open_warehouse(url) as wh:
    row = read_release(wh, study, key) or {}
print(json.dumps({"success": result.success, "status": row.get("status"), "n_released": row.get("n_released"),
                  "published_version": row.get("published_version")}))
"""


@dataclass
class ReleaseRun:
    n_notes: int
    job: str
    wall_s: float
    peak_rss_mib: float
    returncode: int
    status: str | None
    n_released: int | None
    published_version: str | None
    s_per_1k_notes: float
    #: CPU seconds (user + system) of the child and its children: unlike wall time, barely moved
    #: by other processes sharing the cores.
    cpu_s: float = 0.0
    cpu_s_per_1k_notes: float = 0.0
    load_avg_start: float = 0.0
    load_avg_end: float = 0.0


@dataclass
class ReleaseScaleReport:
    sizes: list[int]
    runs: list[ReleaseRun] = field(default_factory=list)
    rss_ratio: float | None = None
    time_per_note_ratio: float | None = None
    cpu_per_note_ratio: float | None = None
    cpu_count: int = os.cpu_count() or 1
    load_avg_start: float = field(default_factory=lambda: os.getloadavg()[0])


#: The note id prefix of the corpus's first copy (:func:`benchmarks.scale.build_study`).
FIRST_COPY = "n000000-"


def _replicated_cache(db: Path, key_dir: Path) -> None:
    """Recognize the first copy of the corpus, then copy its spans to every other copy of each note."""
    with duckdb.connect(str(db)) as con:
        con.execute(f"CREATE OR REPLACE TABLE notes_first AS SELECT * FROM notes WHERE note_id LIKE '{FIRST_COPY}%'")
    _recognize(db, key_dir, ["--notes-table", "notes_first"])
    same = f"'{FIRST_COPY}' || substr(n.note_id, {len(FIRST_COPY) + 1})"
    with duckdb.connect(str(db)) as con:
        con.execute(
            "INSERT INTO tide_spans SELECT s.* REPLACE (n.note_id AS note_id) FROM notes n "
            f"JOIN tide_spans s ON s.study = n.study AND s.note_id = {same} WHERE n.note_id NOT LIKE '{FIRST_COPY}%'"
        )
        con.execute(
            "INSERT INTO tide_recognized_notes SELECT r.* REPLACE (n.note_id AS note_id, "
            "CAST(n.patient_id AS VARCHAR) AS patient_id) FROM notes n JOIN tide_recognized_notes r "
            f"ON r.study = n.study AND r.note_id = {same} WHERE n.note_id NOT LIKE '{FIRST_COPY}%'"
        )
        con.execute("DROP TABLE notes_first")
        con.execute("CHECKPOINT")


def _recognize(db: Path, key_dir: Path, extra: list[str] | None = None) -> None:
    cmd = _cli(db, key_dir, DEFAULT_CHUNK_ROWS, ["--stage", "recognize", *(extra or [])])
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def _audit(db: Path) -> None:
    """A clean census audit of every frame (the bench's stand-in for reviewers)."""
    code = (
        "import sys\n"
        "from tide_core.store.tables import TableNames\n"
        "from tide_core.io.open import open_warehouse\n"
        "from tide_core.release import evidence\n"
        "with open_warehouse(f'duckdb:{sys.argv[1]}') as wh:\n"
        "    for p in evidence.plan_audit(wh, TableNames(), sys.argv[2], sys.argv[3]):\n"
        "        evidence.record_round(wh, TableNames(), sys.argv[2], sys.argv[3], p.frame_id, p.sample_size, 0,"
        " reviewer='bench')\n"
    )
    subprocess.run([sys.executable, "-c", code, str(db), STUDY, KEY], check=True)


def run_job(db: Path, key_dir: Path, n_notes: int, job: str) -> ReleaseRun:
    """Execute ``job`` in process in a child; its peak RSS and wall time from outside."""
    load_start = os.getloadavg()[0]
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(db), str(key_dir), STUDY, KEY, job],
            stdout=out,
            stderr=subprocess.DEVNULL,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        lines = [ln for ln in out.read().splitlines() if ln.startswith("{")]
    rc = os.waitstatus_to_exitcode(status)
    info: dict[str, Any] = json.loads(lines[-1]) if lines else {}
    cpu = usage.ru_utime + usage.ru_stime
    return ReleaseRun(
        n_notes,
        job,
        wall,
        usage.ru_maxrss / 1024.0,
        rc,
        info.get("status"),
        info.get("n_released"),
        info.get("published_version"),
        1000.0 * wall / n_notes,
        cpu,
        1000.0 * cpu / n_notes,
        load_start,
        os.getloadavg()[0],
    )


def bench(sizes: list[int], workdir: Path, audit: bool, recognize_all: bool = False) -> ReleaseScaleReport:
    report = ReleaseScaleReport(sizes)
    for n in sizes:
        db = workdir / f"release_{n}.duckdb"
        for p in (db, db.with_suffix(".duckdb.wal"), db.with_name(db.stem + ".released.duckdb")):
            p.unlink(missing_ok=True)
        build_study(db, n)
        key_dir = workdir / "keys"
        keys = FileKeyProvider(key_dir)
        if not keys.has(STUDY, KEY):
            keys.create(STUDY, KEY)
        if recognize_all:
            _recognize(db, key_dir)
        else:
            _replicated_cache(db, key_dir)
        report.runs.append(run_job(db, key_dir, n, "release_job"))
        if audit:
            _audit(db)
            report.runs.append(run_job(db, key_dir, n, "release_checks_job"))
    for job in ("release_job", "release_checks_job"):
        runs = [r for r in report.runs if r.job == job]
        if len(runs) >= 2 and job == "release_job":
            small, big = runs[0], runs[-1]
            report.rss_ratio = big.peak_rss_mib / small.peak_rss_mib
            report.time_per_note_ratio = big.s_per_1k_notes / small.s_per_1k_notes
            report.cpu_per_note_ratio = big.cpu_s_per_1k_notes / max(small.cpu_s_per_1k_notes, 1e-9)
    return report


def table(report: ReleaseScaleReport) -> str:
    lines = [
        "| notes | job | status | wall s | s per 1k notes | CPU s per 1k notes | load start/end | peak RSS MiB |",
        "|---:|---|---|---:|---:|---:|---|---:|",
    ]
    for r in report.runs:
        lines.append(
            f"| {r.n_notes:,} | {r.job} | {r.status} {r.published_version or ''} | {r.wall_s:.1f} | "
            f"{r.s_per_1k_notes:.2f} | {r.cpu_s_per_1k_notes:.2f} | {r.load_avg_start:.1f}/{r.load_avg_end:.1f} | "
            f"{r.peak_rss_mib:.0f} |"
        )
    if report.rss_ratio is not None:
        lines.append("")
        lines.append(
            f"release_job, largest / smallest: peak RSS x{report.rss_ratio:.2f} (bound 1.3), "
            f"seconds per note x{report.time_per_note_ratio:.2f} (bound 1.1), "
            f"CPU seconds per note x{report.cpu_per_note_ratio or 0:.2f}; {report.cpu_count} cores, "
            f"load {report.load_avg_start:.2f} at start"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="20000,200000", help="comma-separated study sizes (notes)")
    ap.add_argument("--workdir", default=None, help="where the studies are built (default: a temporary directory)")
    ap.add_argument("--audit", action="store_true", help="audit, then run release_checks_job to publish")
    ap.add_argument("--recognize-all", action="store_true", help="recognize every note (slow) instead of copying")
    ap.add_argument("--out", default=None, help="write the results as JSON here")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    with tempfile.TemporaryDirectory(prefix="tide-release-scale-") as tmp:
        workdir = Path(args.workdir or tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        report = bench(sizes, workdir, args.audit, args.recognize_all)
    print(table(report))
    if args.out:
        Path(args.out).write_text(json.dumps(asdict(report), indent=1) + "\n")
    ok = report.rss_ratio is None or (report.rss_ratio <= 1.3 and (report.time_per_note_ratio or 0) <= 1.1)
    return 0 if ok and all(r.returncode == 0 for r in report.runs) else 1


if __name__ == "__main__":
    sys.exit(main())
