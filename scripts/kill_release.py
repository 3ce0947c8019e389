"""Kill release runs at random points of the write and publish phases; count what researchers see.

    .venv/bin/python scripts/kill_release.py --kills 50 [--seed 16] [--dir OUT]

Two DuckDB warehouses, one (study, key) release each, both published with audits recorded:

* **clean** -- every re-release is correct.  The warehouse carries over from kill to kill (a
  kill lands on whatever the previous kill and rerun left).  After a kill the gated view
  ``released_notes`` (sql/views, rendered for DuckDB) must show either nothing or one whole
  verified release: the rows of exactly the ``released_at`` stamp ``tide_releases`` published,
  as many as it counted, with the content of the verified release.
* **leak** -- restored before each kill to "published, then a recognizer miss": every re-release
  leaks a patient name and its checks fail.  After a kill the view shows the previous published
  release whole, or nothing; never the leaking rows, never part of a release.

A zygote process imports Dagster and TIDE once and forks one child per run; the child executes
``release_job`` in process (the same definitions ``dagster dev`` serves, on a SQLite Dagster
instance) and is SIGKILLed at a random moment of a phase: the parent polls the run's event log
until the phase's first step starts, then waits a random part of the phase's length (measured in
a calibration run).  Half the kills aim at the write phase (``deidentified_notes`` and its
checks), half at the publish phase (``release_summary`` and the gate).  The phase a kill
actually hit is read back from the run's event log.  After a kill a rerun must complete: the
clean release is published again, the leaking one blocked.  A leaking re-release never reaches
``release_summary`` (its surface check fails), so its kills aim at the write phase.

Prints one line per kill and a summary; exit status 1 if any kill left a half or unchecked
release visible or a rerun did not complete.  ``tests/test_kill_release.py`` runs a few kills.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
S, K = "s", "k"
NAME = "Stonebridge"
BASE = {"study": S, "site": "site1", "source": "ehr", "note_type": "progress"}
NOTES = [
    dict(
        BASE,
        note_id=f"n{i}",
        patient_id=f"p{i % 3}",
        note_date=f"2021-03-{1 + i % 28:02d}",
        text=(
            f"Maria {NAME} seen 03/04/2021 for follow-up. Maria {NAME} is stable."
            if i == 0
            else f"Note {i}: call 617-555-01{i % 100:02d} re: Robert Ashdown, seen on 2021-03-{1 + i % 28:02d}."
        ),
    )
    for i in range(40)
]
PATIENTS = [
    {"patient_id": "p0", "first_name": "Maria", "last_name": NAME},
    {"patient_id": "p1", "first_name": "Robert", "last_name": "Ashdown"},
    {"patient_id": "p2", "first_name": "Robert", "last_name": "Ashdown"},
]

# The child: build the definitions once (in the zygote), fork per run, execute release_job.
ZYGOTE = r"""
import os, sys, warnings
warnings.filterwarnings("ignore")
import dagster as dg
from tide_etl import build_defs
from tide_etl.partitions import release_key
from tide_etl.resources import KeyProviderResource, ReleaseGateResource, TideConfigResource, WarehouseResource
import tide_core.runner, tide_core.release.lifecycle, tide_core.release.checks  # first-use imports, paid once

def job_for(root):
    return build_defs({
        "warehouse": WarehouseResource(url=f"duckdb:{root}/wh.duckdb"),
        "tide_config": TideConfigResource(preset="rules"),
        "key_provider": KeyProviderResource(key_dir=f"{root}/keys"),
        "gate": ReleaseGateResource(),
    }).resolve_job_def("release_job")

JOBS = {}
print("ready", flush=True)
for line in sys.stdin:
    root, home = line.split()
    job = JOBS.get(root) or JOBS.setdefault(root, job_for(root))
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            with dg.DagsterInstance.from_config(home) as instance:
                r = job.execute_in_process(
                    partition_key=release_key("s", "k"), instance=instance, raise_on_error=False
                )
                code = 0 if r.success else 3
        finally:
            os._exit(code)
    print(f"pid {pid}", flush=True)
    _, status = os.waitpid(pid, 0)
    print(f"dead {pid} {status}", flush=True)
"""

PHASES = {
    "deidentified_notes": "write",
    "release_summary": "publish",
    "release_summary_release_gate": "gate",
}


@dataclass
class KillReport:
    kills: int = 0
    landed: int = 0  # the child was still running when the SIGKILL came
    by_phase: Counter[str] = field(default_factory=Counter)
    by_scenario: Counter[str] = field(default_factory=Counter)
    half_visible: int = 0
    unchecked_visible: int = 0
    leaks_visible: int = 0
    reruns: int = 0
    reruns_failed: int = 0
    visible_after_kill: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not (self.half_visible or self.unchecked_visible or self.leaks_visible or self.reruns_failed)

    def summary(self) -> str:
        return (
            f"release kill test: {self.kills} SIGKILLs, {self.landed} landed in a running release "
            f"({dict(self.by_scenario)}; phase hit: {dict(self.by_phase)}); "
            f"visible after kill: {dict(self.visible_after_kill)}; half releases visible: {self.half_visible}, "
            f"unchecked visible: {self.unchecked_visible}, leaks visible: {self.leaks_visible}, "
            f"reruns completed: {self.reruns - self.reruns_failed}/{self.reruns}; {self.seconds:.0f} s"
        )


def _resources(root: Path) -> dict[str, Any]:
    from tide_etl.resources import KeyProviderResource, ReleaseGateResource, TideConfigResource, WarehouseResource

    return {
        "warehouse": WarehouseResource(url=f"duckdb:{root / 'wh.duckdb'}"),
        "tide_config": TideConfigResource(preset="rules"),
        "key_provider": KeyProviderResource(key_dir=str(root / "keys")),
        "gate": ReleaseGateResource(),
    }


def _run_in_process(root: Path, job: str = "release_job") -> bool:
    import dagster as dg

    from tide_etl import build_defs
    from tide_etl.partitions import release_key

    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("study", [S])
        instance.add_dynamic_partitions("key", [K])
        r = (
            build_defs(_resources(root))
            .resolve_job_def(job)
            .execute_in_process(partition_key=release_key(S, K), instance=instance, raise_on_error=False)
        )
        return bool(r.success)


def _record_audits(root: Path) -> None:
    from tide_core.assurance.audit_table import TABLE_NAME, AuditRecord, records_to_table
    from tide_core.config import TideConfig
    from tide_core.io.open import open_warehouse
    from tide_core.release.checks import release_buckets

    with open_warehouse(f"duckdb:{root / 'wh.duckdb'}") as wh:
        buckets = release_buckets(wh, TideConfig.preset("rules"), S, K)
        recs = [AuditRecord.create(S, K, b, 500, 0, reviewer="kill-test") for b in buckets]
        wh.replace_partition(TABLE_NAME, records_to_table(recs), {"study": S, "key": K})


def _miss_a_mention(root: Path) -> None:
    """A recognizer miss: the second mention of the patient's name is no longer a span."""
    from tide_core.cache.span_cache import SpanCache
    from tide_core.config import TideConfig
    from tide_core.io.open import open_warehouse
    from tide_core.runner import read_study_input

    config = TideConfig.preset("rules")
    with open_warehouse(f"duckdb:{root / 'wh.duckdb'}") as wh:
        cache = SpanCache(wh, config.tables)
        note = next(n for n in read_study_input(wh, S, config).notes if n.note_id == "n0")
        second = max((s for s in cache.spans(S, ["n0"])["n0"] if s.label == "PATIENT"), key=lambda s: s.start)
        cache.add_review(S, note, second.start, second.end, second.label, "reject")


def prepare(root: Path) -> None:
    """A recognized study, a key, and a published release (audits recorded, re-verified)."""
    import pyarrow as pa

    from tide_core.anonymize.keys import FileKeyProvider
    from tide_core.config import TideConfig
    from tide_core.io.open import open_warehouse
    from tide_core.runner import recognize_study

    root.mkdir(parents=True, exist_ok=True)
    with open_warehouse(f"duckdb:{root / 'wh.duckdb'}") as wh:
        wh.replace_table("notes", pa.Table.from_pylist(NOTES))
        wh.replace_table("patients", pa.Table.from_pylist(PATIENTS))
        recognize_study(wh, S, TideConfig.preset("rules"), progress=False)
    FileKeyProvider(root / "keys").create(S, K)
    _run_in_process(root)
    _record_audits(root)
    if not _run_in_process(root, "release_checks_job"):
        raise SystemExit(f"could not publish the first release in {root}")


def visible(root: Path) -> tuple[list[dict[str, Any]], dict[str, Any] | None, list[dict[str, Any]]]:
    """What researchers see of (S, K), the tide_releases row, and every tide_deid_notes row."""
    from tide_core.io.open import open_warehouse
    from tide_etl.sql_files import SQL_DIR, run_duckdb

    with open_warehouse(f"duckdb:{root / 'wh.duckdb'}") as wh:
        for f in sorted((SQL_DIR / "views").glob("*.sql")):
            run_duckdb(wh, f)
        seen = wh.sql("SELECT * FROM released_notes WHERE study = ? AND key = ?", [S, K]).to_pylist()
        rows = wh.read_table("tide_releases", where={"study": S, "key": K}).to_pylist()
        deid = wh.read_table("tide_deid_notes", ["note_ref", "text", "released_at"], where={"study": S, "key": K})
        return seen, (rows[0] if rows else None), deid.to_pylist()


def _content(rows: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return sorted((r["note_ref"], r["text"]) for r in rows)


def judge(
    seen: list[dict[str, Any]], row: dict[str, Any] | None, verified: list[list[tuple[str, str]]]
) -> tuple[str, list[str]]:
    """Classify what is visible after a kill: ``none`` or ``whole``; problems otherwise."""
    problems: list[str] = []
    if not seen:
        return "none", problems
    if any(NAME.casefold() in (r["text"] or "").casefold() for r in seen):
        problems.append("leak")
    if row is None or row["status"] != "published" or not row["gate_passed"]:
        problems.append("unchecked: rows visible without a published, gated release row")
    stamps = {r["released_at"] for r in seen}
    if row is not None and (stamps != {row["released_at"]} or len(seen) != row["n_released"]):
        problems.append(f"half: {len(seen)} rows of {len(stamps)} stamps visible, {row['n_released']} published")
    if _content(seen) not in verified:
        problems.append("unchecked: the visible rows are not a release whose checks passed")
    return "whole", problems


class Zygote:
    def __init__(self, log_path: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.log = open(log_path, "w")  # the runs' Dagster logs (counts and codes only, no note text)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", ZYGOTE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            bufsize=1,
            env=env,
            cwd=ROOT,
        )
        self.ready = False  # its imports run while the caller prepares the warehouses

    def start(self, root: Path, home: Path) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if not self.ready:
            assert self.proc.stdout.readline().strip() == "ready"
            self.ready = True
        self.proc.stdin.write(f"{root} {home}\n")
        self.proc.stdin.flush()
        word, pid = self.proc.stdout.readline().split()
        assert word == "pid"
        return int(pid)

    def wait(self) -> int:
        assert self.proc.stdout is not None
        words = self.proc.stdout.readline().split()
        assert words[0] == "dead", words
        return int(words[2])

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)
        self.log.close()


def _n_runs(home: Path) -> int:
    import dagster as dg

    with dg.DagsterInstance.from_config(str(home)) as instance:
        return len(instance.get_run_ids())


def _last_run_phase(home: Path, runs_before: int) -> str:
    """The phase the newest run of ``home`` was in when it died (from its event log)."""
    import dagster as dg

    with dg.DagsterInstance.from_config(str(home)) as instance:
        if len(instance.get_run_ids()) == runs_before:
            return "before-run"
        runs = instance.get_runs(limit=1)
        started, done = [], set()
        for entry in instance.all_logs(runs[0].run_id):
            e = entry.dagster_event
            if e is None:
                continue
            if e.event_type_value == "STEP_START":
                started.append(e.step_key)
            elif e.event_type_value in ("STEP_SUCCESS", "STEP_FAILURE", "STEP_SKIPPED"):
                done.add(e.step_key)
        running = [s for s in started if s not in done]
        if not started:
            return "before-steps"
        if not running:
            return "between-steps" if len(done) < 7 else "after-steps"
        step = running[-1]
        return PHASES.get(step, "check")


def _home(root: Path) -> Path:
    """The run's SQLite Dagster instance (its event log says where a kill landed)."""
    import dagster as dg

    home = root / "dagster_home"
    if not home.exists():
        home.mkdir()
        with dg.DagsterInstance.from_config(str(home)) as instance:
            instance.add_dynamic_partitions("study", [S])
            instance.add_dynamic_partitions("key", [K])
    return home


def calibrate(zygote: Zygote, root: Path) -> tuple[float, float]:
    """Seconds of the write phase (deidentified_notes and its checks) and of the publish phase
    (release_summary and the gate check), from one whole run's event log."""
    import dagster as dg

    home = _home(root)
    zygote.start(root, home)
    zygote.wait()
    with dg.DagsterInstance.from_config(str(home)) as instance:
        run = instance.get_runs(limit=1)[0]
        times: dict[str, float] = {}
        last = 0.0
        for entry in instance.all_logs(run.run_id):
            e = entry.dagster_event
            if e is not None and e.event_type_value == "STEP_START":
                times[e.step_key] = entry.timestamp
            last = entry.timestamp
    return times["release_summary"] - times["deidentified_notes"], last - times["release_summary"]


def wait_for_step(home: Path, runs_before: int, step: str, pid: int, timeout: float = 120.0) -> bool:
    """Poll the run's event log until ``step`` has started (False if the child ended first)."""
    import dagster as dg

    deadline = time.perf_counter() + timeout
    with dg.DagsterInstance.from_config(str(home)) as instance:
        run_id = None
        while time.perf_counter() < deadline:
            if run_id is None:
                if len(instance.get_run_ids()) > runs_before:
                    run_id = instance.get_runs(limit=1)[0].run_id
            else:
                for entry in instance.all_logs(run_id):
                    e = entry.dagster_event
                    if e is not None and e.event_type_value == "STEP_START" and e.step_key == step:
                        return True
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return False
            time.sleep(0.02)
    return False


def run_kills(kills: int, seed: int, workdir: Path, rerun_every: int = 1, log: Any = print) -> KillReport:
    """``kills`` SIGKILLs alternating clean/leak; a rerun to completion after every ``rerun_every``-th
    kill of each scenario (and after the last two), so some kills land on what a kill left."""
    rng = random.Random(seed)
    report = KillReport()
    clean, leak_base, leak = workdir / "clean", workdir / "leak_base", workdir / "leak"
    t0 = time.perf_counter()
    zygote = Zygote(workdir / "runs.log")
    try:
        prepare(clean)
        shutil.copytree(clean, leak_base)  # the same published release: two prepares differ only in the key
        verified = [_content(visible(clean)[0])]
        assert verified[0], "the first release was not published"
        leak_verified = [_content(visible(leak_base)[0])]
        _miss_a_mention(leak_base)
        write_len, publish_len = calibrate(zygote, clean)
        log(f"calibration: write phase {write_len:.2f} s, publish phase {publish_len:.2f} s")
        for i in range(kills):
            scenario = "clean" if i % 2 == 0 else "leak"
            if scenario == "leak":
                if leak.exists():
                    shutil.rmtree(leak)
                shutil.copytree(leak_base, leak, ignore=shutil.ignore_patterns("dagster_home"))
            root = clean if scenario == "clean" else leak
            home = _home(root)
            # a leaking re-release never reaches release_summary (its surface check fails): its
            # kills aim at the write phase, where its rows are written and the check blocks them
            aim = "write" if scenario == "leak" or rng.random() < 0.5 else "publish"
            delay = rng.uniform(0.0, write_len) if aim == "write" else rng.uniform(0.0, publish_len)
            runs_before = _n_runs(home)
            pid = zygote.start(root, home)
            # the kill lands ``delay`` seconds into the phase: after its first step has started
            wait_for_step(home, runs_before, "deidentified_notes" if aim == "write" else "release_summary", pid)
            time.sleep(delay)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            status = zygote.wait()
            phase = _last_run_phase(home, runs_before) if os.WIFSIGNALED(status) else "finished"
            seen, row, _ = visible(root)
            state, problems = judge(seen, row, verified if scenario == "clean" else leak_verified)
            report.kills += 1
            report.landed += bool(os.WIFSIGNALED(status))
            report.by_phase[phase] += 1
            report.by_scenario[scenario] += 1
            report.visible_after_kill[state] += 1
            for p in problems:
                report.half_visible += p.startswith("half")
                report.unchecked_visible += p.startswith("unchecked")
                report.leaks_visible += p == "leak"
            if (i // 2) % rerun_every != rerun_every - 1 and i < kills - 2:
                log(
                    f"kill {i:3d} {scenario:5s} aimed {aim:7s} at {delay:5.2f} s, hit {phase:13s} -> visible {state:5s}"
                    f"{' PROBLEMS ' + '; '.join(problems) if problems else ''}"
                )
                report.problems += [f"kill {i} ({scenario}, {phase}): {p}" for p in problems]
                continue
            # the rerun completes: published again (clean), blocked with nothing visible (leak)
            report.reruns += 1
            zygote.start(root, home)
            rerun_ok = zygote.wait() == 0
            seen2, row2, _ = visible(root)
            _, problems2 = judge(seen2, row2, verified if scenario == "clean" else leak_verified)
            if scenario == "clean":
                done = (
                    rerun_ok and row2 is not None and row2["status"] == "published" and _content(seen2) == verified[0]
                )
            else:
                done = row2 is not None and row2["status"] == "blocked" and not seen2
            if not done or problems2:
                report.reruns_failed += 1
                problems.append(f"rerun: {row2 and row2['status']} {problems2}")
            report.problems += [f"kill {i} ({scenario}, {phase}): {p}" for p in problems]
            log(
                f"kill {i:3d} {scenario:5s} aimed {aim:7s} at {delay:5.2f} s, hit {phase:13s} -> visible {state:5s}"
                f"{' PROBLEMS ' + '; '.join(problems) if problems else ''}; rerun {row2 and row2['status']}"
            )
    finally:
        zygote.close()
    report.seconds = time.perf_counter() - t0
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kills", type=int, default=50)
    p.add_argument("--seed", type=int, default=16)
    p.add_argument("--rerun-every", type=int, default=2, help="rerun to completion after every N-th kill of a scenario")
    p.add_argument("--dir", default=None, help="work directory (default: a temporary one, removed)")
    p.add_argument("--json", default=None, help="write the report here")
    args = p.parse_args(argv)
    import warnings

    warnings.filterwarnings("ignore")
    tmp = None if args.dir else tempfile.mkdtemp(prefix="tide-kill-")
    workdir = Path(args.dir or tmp)  # type: ignore[arg-type]
    try:
        report = run_kills(args.kills, args.seed, workdir, args.rerun_every)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    print(report.summary())
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "kills": report.kills,
                    "landed": report.landed,
                    "by_phase": dict(report.by_phase),
                    "by_scenario": dict(report.by_scenario),
                    "visible_after_kill": dict(report.visible_after_kill),
                    "half_visible": report.half_visible,
                    "unchecked_visible": report.unchecked_visible,
                    "leaks_visible": report.leaks_visible,
                    "reruns": report.reruns,
                    "reruns_failed": report.reruns_failed,
                    "seconds": round(report.seconds, 1),
                    "problems": report.problems,
                },
                indent=2,
            )
        )
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
