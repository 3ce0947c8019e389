"""SIGKILL release runs at random points of every phase; judge what researchers see after each kill.

    .venv/bin/python scripts/kill_release.py --kills 60 --seed 1 [--scenarios dagster,cli] [--no-rollback]

The study: 1,200 short notes of 100 patients (``tests/release_study.py``), released in chunks of
300 (four chunks, five or six as notes are added), rules preset, DuckDB.  A base warehouse is
recognized once; each scenario works on its own copy, which carries over from kill to kill (a
kill lands on whatever the previous kill, rerun and content change left).  Nothing is published
at the start.

Scenarios (alternating; ``--scenarios`` picks):

* **dagster** -- ``release_job`` executed in process (the definitions ``dagster dev`` serves, on a
  SQLite Dagster instance) in a child forked from a zygote that imported Dagster and TIDE once
  (``deidentified_notes`` takes the default chunk size, set to 300 in the zygote).  The child is
  SIGKILLed at a random moment of a phase: Dagster's start-up, anonymization (its chunk loop),
  the blocking checks, ``release_summary`` (guard, checks, gate, publish), or the researcher
  store commit inside it.  The harness polls the run's event log (for the store: the child's
  open files) until the phase begins, then waits a random part of the phase's length (measured
  by a calibration run on a separate copy).
* **cli** -- ``tide run --stage anonymize --chunk-rows 300``, ``tide release publish`` and
  ``tide release rollback`` as subprocesses of the ``tide`` entry point, SIGKILLed the same way:
  in start-up, in the work with the warehouse open (the chunk loop; verification and gate; the
  rollback's reads), or with the researcher store open.

The phase a kill hit is read back: the run's event log (the step), the DuckDB files the process
had open at the kill (``store``: the researcher store open; ``after-store``: it was open and is
closed again -- the commit is done or abandoned, the history and release row are being
written), the anonymization chunks committed, and whether the view moved (the kill landed after
the commit).  A kill aimed at the publish commit first writes the candidate (``tide run``) and
records audit rounds for it, so the killed process publishes a new version.

Between kills the content changes at random: notes are added (their spans are cached: the base
recognizes the later notes up front; a new version is due once they are audited), the cached
spans of a patient's first name are removed (a recognizer miss: the re-release leaks the name
and must be blocked) or restored, or nothing changes (a rerun is a no-op).

After every kill the researcher file is opened read-only and ``released_notes`` read for the
(study, key).  Violations:

* ``empty`` -- nothing visible though a version was published;
* ``mixed`` -- more than one version label;
* ``partial`` / ``unverified`` -- a version's rows are not exactly the rows read right after the
  run that published it (a subset / other rows); a version first seen after a kill must be the
  complete candidate, and the rerun's ``decide`` must confirm it;
* ``moved`` -- the view shows another version though the killed process had not reached its
  publish (a rollback may move it to its target only);
* ``stale_claim`` -- ``tide_releases`` says ``published`` with a version the view does not show;
* ``rerun_failed`` -- the rerun did not end as the content warrants;
* ``rollback_half_recorded`` -- after a killed rollback (redone with ``--to`` if its commit had not
  happened) ``tide_release_versions`` lacks its withdraw/rollback records or ``tide_releases``
  does not say ``rolled_back`` to the version researchers see.

After most kills a rerun runs to completion (the others land on what the kill left; a rollback
is always settled): ``release_job`` (dagster), or ``tide run`` + ``tide release publish`` (cli,
the same ``main`` in the harness's process).  It must end blocked while the name leaks or the
content was withdrawn by a rollback, otherwise published: at once, or after audit rounds are
recorded for the content no round covers (``evidence.plan_audit`` + ``evidence.record_round``,
0 leaks) and the release decided again (``release_checks_job`` / ``tide release publish``).

Prints one line per kill and summary tables; exit status 1 on any violation.
``tests/release/test_kill_release.py`` runs 4 kills of each scenario on a smaller study.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # release_study: the synthetic study

S, K = "big", "k"
N_PATIENTS, GROW = 100, 20  # patients; notes a "grow" change appends


@dataclass
class Study:
    """The study's size: notes at the start, notes per chunk, notes recognized up front for grows."""

    notes: int = 1200
    chunk: int = 300
    pool: int = 600


STUDY = Study()
LEAKER = "p1"  # whose first-name spans a "leak" change removes

# -- the Dagster child: definitions built once (in the zygote), one fork per run --------------------

ZYGOTE = r"""
import json, os, sys, warnings
warnings.filterwarnings("ignore")
import dagster as dg
import tide_core.engine.study_chunks as study_chunks
from tide_etl import build_defs
from tide_etl.partitions import release_key
from tide_etl.resources import KeyProviderResource, ReleaseGateResource, TideConfigResource, WarehouseResource
import tide_core.runner, tide_core.release.lifecycle, tide_core.release.checks, tide_core.release.publish  # paid once

STUDY, KEY, CHUNK = sys.argv[1], sys.argv[2], int(sys.argv[3])
study_chunks.DEFAULT_CHUNK_ROWS = CHUNK  # deidentified_notes anonymizes in chunks of the default size

def defs_for(root):
    return build_defs({
        "warehouse": WarehouseResource(url=f"duckdb:{root}/wh.duckdb"),
        "tide_config": TideConfigResource(preset="rules"),
        "key_provider": KeyProviderResource(key_dir=f"{root}/keys"),
        "gate": ReleaseGateResource(),
    })

DEFS = {}
print("ready", flush=True)
for line in sys.stdin:
    root, home, job_name, run_id = line.split()
    defs = DEFS.get(root) or DEFS.setdefault(root, defs_for(root))
    job = defs.resolve_job_def(job_name)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            with dg.DagsterInstance.from_config(home) as instance:
                r = job.execute_in_process(
                    partition_key=release_key(STUDY, KEY), instance=instance, raise_on_error=False, run_id=run_id
                )
                failed = sorted(
                    f"{e.check_name}:{e.severity.value}" for e in r.get_asset_check_evaluations() if not e.passed
                )
                with open(os.path.join(root, "run.json"), "w") as f:
                    json.dump({"success": r.success, "failed_checks": failed}, f)
                code = 0
        finally:
            os._exit(code)
    print(f"pid {pid}", flush=True)
    _, status = os.waitpid(pid, 0)
    print(f"dead {pid} {status}", flush=True)
"""

BLOCKING = ("rows_accounted", "offsets_in_text", "no_surface_survives", "known_phi_survives", "versions_recorded")
#: The step that computes the blocking checks (one multi-asset check, tide_etl/checks.py).
CHECKS_STEP = "release_checks"


class Zygote:
    """A process that imported Dagster and TIDE once and forks one child per run."""

    def __init__(self, log_path: Path) -> None:
        self.log = open(log_path, "a")  # the runs' Dagster logs (counts and codes, no note text)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", ZYGOTE, S, K, str(STUDY.chunk)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            bufsize=1,
            # TIDE from this checkout, after whatever PYTHONPATH names first (a patched copy, say)
            env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(ROOT)]))},
            cwd=log_path.parent,
        )
        self.ready = False  # it imports while the caller prepares the warehouses

    def start(self, root: Path, home: Path, job: str, run_id: str) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if not self.ready:
            word = self.proc.stdout.readline().strip()
            assert word == "ready", f"zygote did not start: {word!r} (see its log)"
            self.ready = True
        (root / "run.json").unlink(missing_ok=True)
        self.proc.stdin.write(f"{root} {home} {job} {run_id}\n")
        self.proc.stdin.flush()
        word, pid = self.proc.stdout.readline().split()
        assert word == "pid"
        return int(pid)

    def wait(self) -> int:
        assert self.proc.stdout is not None
        words = self.proc.stdout.readline().split()
        assert words and words[0] == "dead", words
        return int(words[2])

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)
        self.log.close()


# -- what a process has open, what researchers see, what the warehouse holds -------------------------


def open_files(pid: int) -> set[str]:
    """Base names of the DuckDB files ``pid`` has open now (empty once it has ended)."""
    names = set()
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.endswith(".duckdb"):
                    names.add(os.path.basename(target))
    return names


WH, STORE = "wh.duckdb", "wh.released.duckdb"


Content = tuple[tuple[str, str], ...]


def _ro(path: Path) -> Any:
    import duckdb

    return duckdb.connect(str(path), read_only=True)


def researcher_view(root: Path) -> tuple[set[str], Content, int]:
    """What a researcher reads from ``released_notes`` for (S, K): version labels, (note_ref, text)
    rows sorted, and the row count (the researcher file opened read-only)."""
    import duckdb

    path = root / STORE
    if not path.exists():
        return set(), (), 0
    with _ro(path) as con:
        try:
            rows = con.execute(
                "SELECT version, note_ref, text FROM released_notes WHERE study = ? AND key = ?", [S, K]
            ).fetchall()
        except duckdb.CatalogException:  # the store's views are not created yet: nothing published
            return set(), (), 0
    return {r[0] for r in rows}, tuple(sorted((r[1], r[2]) for r in rows)), len(rows)


def candidate(root: Path) -> Content:
    """The candidate's researcher rows (note_ref, text), one per released note."""
    with _ro(root / WH) as con:
        if not _has(con, "tide_deid_notes"):
            return ()
        rows = con.execute("SELECT note_ref, text FROM tide_deid_notes WHERE study = ? AND key = ?", [S, K]).fetchall()
    return tuple(sorted(set(rows)))


def _has(con: Any, table: str) -> bool:
    return bool(
        con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [table]).fetchone()[0]
    )


def release_row(root: Path) -> dict[str, Any] | None:
    with _ro(root / WH) as con:
        if not _has(con, "tide_releases"):
            return None
        rows = con.execute(
            "SELECT status, published_version, gate_reasons FROM tide_releases WHERE study = ? AND key = ?", [S, K]
        ).fetchall()
    return dict(zip(("status", "published_version", "gate_reasons"), rows[0], strict=True)) if rows else None


def history(root: Path) -> list[tuple[str, str, str]]:
    """(action, version, content fingerprint) of every publish, rollback and withdrawal, oldest first."""
    with _ro(root / WH) as con:
        if not _has(con, "tide_release_versions"):
            return []
        return con.execute(
            "SELECT action, version, content_fingerprint FROM tide_release_versions WHERE study = ? AND key = ? "
            "ORDER BY decided_at",
            [S, K],
        ).fetchall()


def chunks_committed(root: Path) -> tuple[int, int]:
    """(chunks the candidate's unfinished anonymization run committed, chunks of the study)."""
    with _ro(root / WH) as con:
        (notes,) = con.execute("SELECT count(*) FROM notes WHERE study = ?", [S]).fetchone()
        if not _has(con, "tide_runs"):
            return 0, -(-notes // STUDY.chunk)
        rows = con.execute(
            "SELECT stage, started_at, finished_at FROM tide_runs WHERE study = ? AND key = ? "
            "AND stage IN ('anonymization', 'anonymization.chunk')",
            [S, K],
        ).fetchall()
    finished = [r[2] for r in rows if r[0] == "anonymization" and r[2] is not None]
    since = max(finished) if finished else None
    chunks = [r for r in rows if r[0] != "anonymization" and (since is None or r[1] > since)]
    return len(chunks), -(-notes // STUDY.chunk)


# -- the study, content changes and audits (in the harness's process; no run is alive then) ---------


def _config() -> Any:
    from tide_core.config import TideConfig

    return TideConfig.preset("rules")


def later_notes() -> list[dict[str, Any]]:
    """The notes that arrive later, GROW at a time (the base recognizes them once, up front)."""
    import release_study

    return release_study.notes(STUDY.pool, N_PATIENTS, seed=7, start=STUDY.notes)


def prepare_base(base: Path) -> None:
    """1,200 notes and their patients, recognized in chunks of 300, and a key.  The notes that
    arrive later are recognized with them (their spans cached, as the nightly recognition run
    would), then left out of the notes table until a "grow" change appends them."""
    import pyarrow as pa

    import release_study
    from tide_core.anonymize.keys import FileKeyProvider
    from tide_core.io.open import open_warehouse
    from tide_core.runner import recognize_study

    base.mkdir(parents=True, exist_ok=True)
    first = release_study.notes(STUDY.notes, N_PATIENTS)
    with open_warehouse(f"duckdb:{base / WH}") as wh:
        wh.replace_table("notes", pa.Table.from_pylist(first + later_notes()))
        wh.replace_table("patients", pa.Table.from_pylist(release_study.patients(N_PATIENTS)))
        recognize_study(wh, S, _config(), progress=False, chunk_rows=STUDY.chunk)
        wh.replace_table("notes", pa.Table.from_pylist(first))
    FileKeyProvider(base / "keys").create(S, K)


def copy_base(base: Path, root: Path) -> None:
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    shutil.copy(base / WH, root / WH)
    shutil.copytree(base / "keys", root / "keys")


def grow(root: Path, start: int) -> None:
    """A nightly increment: the next GROW notes (from ``start``), their spans already cached
    (past the pool: recognized now, cache misses only)."""
    import pyarrow as pa

    import release_study
    from tide_core.io.open import open_warehouse
    from tide_core.runner import recognize_study

    i = start - STUDY.notes
    new = later_notes()[i : i + GROW] if i + GROW <= STUDY.pool else release_study.notes(GROW, N_PATIENTS, 7, start)
    with open_warehouse(f"duckdb:{root / WH}") as wh:
        wh.append("notes", pa.Table.from_pylist(new))
        if i + GROW > STUDY.pool:
            recognize_study(wh, S, _config(), progress=False, chunk_rows=STUDY.chunk)


SPAN_KEY = 'note_id = ? AND start = ? AND "end" = ?'


def leak(root: Path) -> list[tuple[Any, ...]]:
    """A recognizer miss: remove the cached spans of LEAKER's first name; returns them."""
    import duckdb

    import release_study

    first = next(p["first_name"] for p in release_study.patients(N_PATIENTS) if p["patient_id"] == LEAKER)
    with duckdb.connect(str(root / WH)) as con:
        cols = [d[0] for d in con.execute("SELECT * FROM tide_spans LIMIT 0").description]
        rows = con.execute(
            "SELECT s.* FROM tide_spans s JOIN notes n ON n.note_id = s.note_id AND n.study = s.study "
            'WHERE n.patient_id = ? AND substr(n.text, s.start + 1, s."end" - s.start) LIKE ?',
            [LEAKER, f"{first}%"],
        ).fetchall()
        assert rows, "the study should have recognized the patient's first name"
        i = {c: cols.index(c) for c in ("note_id", "start", "end")}
        for r in rows:
            con.execute(f"DELETE FROM tide_spans WHERE {SPAN_KEY}", [r[i["note_id"]], r[i["start"]], r[i["end"]]])
    return rows


def heal(root: Path, rows: list[tuple[Any, ...]]) -> None:
    """The recognizer finds the name again: the removed spans are back."""
    import duckdb

    with duckdb.connect(str(root / WH)) as con:
        con.executemany(f"INSERT INTO tide_spans VALUES ({', '.join('?' * len(rows[0]))})", rows)


def audit(root: Path) -> int:
    """A reviewer audits the content no round covers: every frame's sample, no leak found."""
    from tide_core.io.open import open_warehouse
    from tide_core.release import evidence

    names = _config().tables
    with open_warehouse(f"duckdb:{root / WH}") as wh:
        plans = evidence.plan_audit(wh, names, S, K)
        for p in plans:
            evidence.record_round(wh, names, S, K, p.frame_id, p.sample_size, 0, reviewer="kill-loop")
    return len(plans)


# -- the CLI ------------------------------------------------------------------------------------------


def tide_command() -> list[str]:
    """The ``tide`` entry point of this interpreter's environment (or ``python -m``)."""
    exe = Path(sys.executable).parent / "tide"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "tide_core.cli.main"]


def cli_args(root: Path, command: str, *extra: str) -> list[str]:
    wh = ["--warehouse", f"duckdb:{root / WH}", "--study", S, "--key", K]
    if command == "run":
        return ["run", *wh, "--stage", "anonymize", "--preset", "rules", "--chunk-rows", str(STUDY.chunk),
                "--no-progress", "--key-dir", str(root / "keys"), *extra]  # fmt: skip
    if command == "publish":
        return ["release", "publish", *wh, "--preset", "rules", *extra]
    return ["release", command, *wh, *extra]


def cli_in_process(root: Path, command: str, *extra: str) -> int:
    """A command run to completion in this process (the same ``main`` the entry point calls)."""
    from tide_core.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        return int(main(cli_args(root, command, *extra)))


# -- the report -------------------------------------------------------------------------------------

VIOLATIONS = (
    "empty",
    "partial",
    "mixed",
    "unverified",
    "moved",
    "stale_claim",
    "rerun_failed",
    "rollback_half_recorded",
)


@dataclass
class Report:
    kills: int = 0
    landed: int = 0  # the process was still running when the SIGKILL came
    by_phase: Counter[tuple[str, str]] = field(default_factory=Counter)  # (scenario, phase hit)
    committed: Counter[tuple[str, str]] = field(default_factory=Counter)  # ... the view moved: after a commit
    seen: Counter[str] = field(default_factory=Counter)  # what the view showed after a kill
    violations: Counter[str] = field(default_factory=Counter)
    reruns: Counter[tuple[str, str]] = field(default_factory=Counter)  # (scenario, outcome) of reruns
    changes: Counter[str] = field(default_factory=Counter)
    versions: dict[str, int] = field(default_factory=dict)  # scenario -> versions published
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    calibration: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not sum(self.violations.values())

    def table(self) -> str:
        order = {p: i for i, p in enumerate(PHASE_ORDER)}
        phases = sorted(self.by_phase, key=lambda sp: (sp[0], [order.get(w, 99) for w in sp[1].split()]))
        lines = ["| scenario | phase hit | kills | of which after the commit (view moved) |", "|---|---|---:|---:|"]
        lines += [f"| {s} | {p} | {self.by_phase[(s, p)]} | {self.committed[(s, p)]} |" for s, p in phases]
        for sc in sorted({s for s, _ in self.by_phase}):
            n = sum(v for (s, _), v in self.by_phase.items() if s == sc)
            c = sum(v for (s, _), v in self.committed.items() if s == sc)
            lines.append(f"| {sc} | **all** | **{n}** | **{c}** |")
        lines += ["", "| rerun after a kill | outcome | count |", "|---|---|---:|"]
        lines += [f"| {s} | {o} | {n} |" for (s, o), n in sorted(self.reruns.items()) if n]
        lines += ["", "| violation | count |", "|---|---:|"]
        lines += [f"| {v} | {self.violations[v]} |" for v in VIOLATIONS]
        return "\n".join(lines)

    def summary(self) -> str:
        failed = sum(n for (_, o), n in self.reruns.items() if o in VIOLATIONS)
        done = sum(n for (_, o), n in self.reruns.items() if not o.startswith("(")) - failed
        return (
            f"release kill loop: {self.kills} SIGKILLs ({self.landed} landed in a running process, "
            f"{sum(self.committed.values())} after a publish or rollback commit); view after a kill: "
            f"{dict(self.seen)}; content changes: {dict(self.changes)}; versions published: {self.versions}; "
            f"reruns: {done} completed, {failed} failed; violations: {sum(self.violations.values())} "
            f"{dict(+self.violations)}; {self.seconds:.0f} s"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kills": self.kills,
            "landed": self.landed,
            "by_phase": {f"{s} {p}": n for (s, p), n in sorted(self.by_phase.items())},
            "after_commit": {f"{s} {p}": n for (s, p), n in sorted(self.committed.items()) if n},
            "view_after_kill": dict(self.seen),
            "violations": {v: self.violations[v] for v in VIOLATIONS},
            "reruns": {f"{s} {o}": n for (s, o), n in sorted(self.reruns.items()) if n},
            "changes": dict(self.changes),
            "versions": self.versions,
            "calibration": self.calibration,
            "seconds": round(self.seconds, 1),
            "problems": self.problems,
        }


#: the order of phases in the table (cli phases are "<command> <phase>")
PHASE_ORDER = (
    "run",
    "publish",
    "rollback",
    "startup",
    "anonymize",
    "check",
    "verify",
    "release_summary:verify",
    "prepare",
    "store",
    "release_summary:store",
    "after-store",
    "release_summary:after-store",
    "between-steps",
    "release_gate",
    "exiting",
    "finished",
)


# -- a scenario: one warehouse, its history, the oracle ---------------------------------------------


@dataclass
class Kill:
    """What one kill did and saw."""

    aim: str
    delay: float = 0.0
    phase: str = "finished"
    detail: str = ""
    landed: bool = False
    before: str | None = None  # the version researchers saw when the process started
    launched: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
    may_publish: bool = False  # the process reached the code that publishes (or ended)
    rollback_to: str | None = None  # the version a killed rollback moves the view to
    committed: bool = False  # the view moved: the kill landed after the process's commit
    must_settle: bool = False  # a rerun has to follow this kill


class Watch:
    """The DuckDB files a process has open, sampled every few milliseconds while the harness waits."""

    def __init__(self, pid: int, alive: Callable[[], bool]) -> None:
        self.pid, self.alive = pid, alive
        self.ever: set[str] = set()
        self.last: set[str] = set()

    def sample(self) -> set[str]:
        self.last = open_files(self.pid)
        self.ever |= self.last
        return self.last

    def until_open(self, name: str, timeout: float = 120.0) -> bool:
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if name in self.sample():
                return True
            if not self.alive():
                return False
            time.sleep(0.002)
        return False

    def sleep(self, seconds: float) -> None:
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            self.sample()
            time.sleep(min(0.003, max(0.0, deadline - time.perf_counter())))

    def kill(self) -> None:
        """SIGKILL, right after a last look at its open files."""
        self.sample()
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    def phase(self, work: str) -> str:
        """Where the process stood: start-up (no file opened yet), ``work`` (the warehouse open),
        store (the researcher store open), after-store (it was open and is closed again), exiting."""
        if STORE in self.last:
            return "store"
        if STORE in self.ever:
            return "after-store"
        if WH in self.last:
            return work
        return "exiting" if WH in self.ever else "startup"


class Scenario:
    name = ""

    def __init__(self, root: Path, rng: random.Random, report: Report, log: Callable[[str], None]) -> None:
        self.root, self.rng, self.report, self.log = root, rng, report, log
        self.snapshots: dict[str, Content] = {}  # version -> rows, read right after the run that published it
        self.provisional: dict[str, Content] = {}  # versions first seen after a kill, not yet confirmed
        self.current: str | None = None  # the version researchers must see (None: nothing published)
        self.leaked: list[tuple[Any, ...]] | None = None  # removed spans while the name leaks
        self.withdrawn: set[Content] = set()
        self.next_note = STUDY.notes
        self.dirty = True  # the candidate is not a complete run over the current input (none yet)
        self.settled = True  # the last kill was followed by a complete rerun

    def content_of(self, version: str | None) -> Content | None:
        return None if version is None else self.snapshots.get(version, self.provisional.get(version))

    # the oracle ------------------------------------------------------------------------------------
    def judge(self, kill: Kill) -> list[str]:
        """Classify the view after a kill; violations as 'kind: detail'."""
        labels, rows, n = researcher_view(self.root)
        row = release_row(self.root)
        problems: list[str] = []
        if not labels:
            shown = "nothing"
            if self.current is not None:
                problems.append(f"empty: nothing visible though {self.current} was published")
        elif len(labels) > 1:
            shown = "+".join(sorted(labels))
            problems.append(f"mixed: {len(labels)} versions visible ({shown})")
        else:
            (v,) = labels
            shown = f"{v} ({n} notes)"
            known = self.content_of(v)
            if n != len(set(rows)):
                problems.append(f"partial: {n} rows but {len(set(rows))} distinct")
            if known is not None and rows != known:
                kind = "partial" if set(rows) < set(known) else "unverified"
                problems.append(f"{kind}: {v} shows {n} rows, {len(known)} when it was published")
            if v != self.current:
                # only the killed process's own commit may move the view: a rollback to its target,
                # a publish to its complete candidate (a new version, or an earlier label of it)
                if v == kill.rollback_to:
                    pass
                elif not kill.may_publish:
                    problems.append(f"moved: the view shows {v}, researchers were shown {self.current}")
                elif known is None or rows == known:
                    cand = candidate(self.root)
                    if rows != cand:
                        kind = "partial" if set(rows) < set(cand) else "unverified"
                        problems.append(f"{kind}: {v} shows {n} rows, not the {len(cand)} of the candidate")
                if known is None:
                    self.provisional[v] = rows
                kill.committed = True
                self.current = v
        if row is not None and row["status"] == "published":
            visible = next(iter(labels)) if len(labels) == 1 else None
            if row["published_version"] != visible:
                problems.append(f"stale_claim: tide_releases says published {row['published_version']}, view {visible}")
        self.report.seen["nothing" if not labels else "one version" if len(labels) == 1 else "mixed"] += 1
        kill.detail = (kill.detail + f" -> view {shown}").strip()
        return problems

    def confirm_published(self) -> tuple[str | None, str]:
        """After a complete publish: the view is one version, equal to the candidate; snapshot it."""
        labels, rows, n = researcher_view(self.root)
        row = release_row(self.root) or {}
        if len(labels) != 1 or n != len(rows):
            return None, f"published but the view shows {sorted(labels)}"
        (v,) = labels
        if row.get("published_version") != v:
            return None, f"tide_releases says {row.get('published_version')}, the view {v}"
        if rows != candidate(self.root):
            return None, f"{v} is not the candidate"
        known = self.content_of(v)
        if known is not None and known != rows:
            return None, f"{v} changed: {len(known)} rows then, {n} now"
        self.provisional.pop(v, None)
        self.snapshots[v] = rows
        before, self.current = self.current, v
        return v, "published " + (f"{v} (new)" if v != before else f"{v} (no-op)")

    def check_kept(self) -> str | None:
        """After a rerun that did not publish: researchers still see the current version."""
        labels, rows, _ = researcher_view(self.root)
        if self.current is None:
            return None if not labels else f"shows {sorted(labels)} though nothing was published"
        if labels != {self.current} or rows != self.content_of(self.current):
            return f"shows {sorted(labels)}, not {self.current}"
        return None

    # content changes ---------------------------------------------------------------------------------
    def change(self, publishing: bool) -> str:
        """Change the content at random: add notes (a new version is due once audited), remove a
        patient's first-name spans (the re-release leaks: blocked), restore them, or nothing.
        Before a kill aimed at the publish commit (``publishing``) the change makes content that
        can publish: the spans restored, or (mostly) notes added."""
        r = self.rng.random()
        withdrawn = self.current is not None and candidate(self.root) in self.withdrawn
        if self.leaked is not None:
            what = "heal" if publishing or r < 0.6 else ("grow" if r < 0.8 else "none")
        elif publishing:
            what = "grow" if withdrawn or r < 0.75 else "none"
        elif withdrawn:
            what = "grow" if r < 0.7 else "none"
        else:
            what = "grow" if r < 0.35 else ("leak" if r < 0.6 else "none")
        if what == "grow":
            grow(self.root, self.next_note)
            self.next_note += GROW
        elif what == "leak":
            self.leaked = leak(self.root)
        elif what == "heal":
            assert self.leaked is not None
            heal(self.root, self.leaked)
            self.leaked = None
        self.dirty = self.dirty or what != "none"
        self.report.changes[what] += 1
        return what

    def should_block(self) -> bool:
        """The release must be blocked: the name leaks, or the content was withdrawn by a rollback
        (and is not what researchers see: publishing what they see is a no-op)."""
        content = candidate(self.root)
        return self.leaked is not None or (content in self.withdrawn and content != self.content_of(self.current))

    def prepare_publish(self) -> str:
        """Before a kill aimed at the publish commit: the candidate written (``tide run`` in the
        harness) and its content no round covers audited, so that the killed run publishes."""
        done = []
        if self.dirty:
            code = cli_in_process(self.root, "run")
            assert code == 0, f"tide run exited {code}"
            self.dirty = False
            done.append("run")
        if not self.should_block() and audit(self.root):
            done.append("audit")
        return "+".join(done)

    # one kill --------------------------------------------------------------------------------------
    def kill_once(self, i: int, rerun: bool) -> None:
        command, aim = self.choose()
        publishing = (command, aim) in PUBLISHING
        what = self.change(publishing) if self.settled else "(on the last kill)"
        kill = self.launch_and_kill(command, aim)
        problems = self.judge(kill)
        self.report.kills += 1
        self.report.landed += kill.landed
        self.report.by_phase[(self.name, kill.phase)] += 1
        self.report.committed[(self.name, kill.phase)] += kill.committed
        outcome = "-"
        rerun = rerun or kill.must_settle
        if rerun:
            outcome, failure = self.rerun(kill)
            self.report.reruns[(self.name, failure or rerun_kind(outcome))] += 1
            self.report.reruns[(self.name, "(of which audit rounds recorded first)")] += "via audit" in outcome
            if failure:
                problems.append(f"{failure}: {outcome}")
        self.settled = rerun
        for p in problems:
            self.report.violations[p.split(":")[0]] += 1
            self.report.problems.append(f"kill {i} ({self.name}, {kill.phase}): {p}")
        self.log(
            f"kill {i:3d} {self.name:7s} change {what:5s} aim {kill.aim:16s} +{kill.delay:4.2f}s "
            f"hit {kill.phase:22s} {kill.detail}{' (after the commit)' if kill.committed else ''}; rerun: {outcome}"
            + (f"  VIOLATION {'; '.join(problems)}" if problems else "")
        )

    def choose(self) -> tuple[str, str]:
        """The command to kill and the phase to aim at."""
        raise NotImplementedError

    def launch_and_kill(self, command: str, aim: str) -> Kill:
        raise NotImplementedError

    def rerun(self, kill: Kill) -> tuple[str, str | None]:
        """Run to completion; (what happened, the violation kind if it did not end as warranted)."""
        raise NotImplementedError

    def finish(self) -> None:
        """At the end: no version seen only after a kill may be left unconfirmed."""
        for v in self.provisional:
            self.report.violations["unverified"] += 1
            self.report.problems.append(f"{self.name}: {v} was seen after a kill and never confirmed by decide")
        self.report.versions[self.name] = len(self.snapshots)


#: (command, aim) of the kills aimed at the publish commit
PUBLISHING = {("release_job", "release_summary"), ("release_job", "store"), ("publish", "verify"), ("publish", "store")}


def rerun_kind(outcome: str) -> str:
    if outcome.startswith("published"):
        return "published a new version" if "(new)" in outcome else "published, no change (no-op)"
    if outcome.startswith("blocked"):
        return "blocked (" + ("withdrawn content" if "E935" in outcome else "leak: a check failed") + ")"
    return "rollback completed"


# -- dagster -----------------------------------------------------------------------------------------


def event_log(home: Path, run_id: str) -> list[tuple[str, str | None, float]]:
    """(event type, step key, timestamp) of a run, from its SQLite event log (read-only)."""
    path = home / "history" / "runs" / f"{run_id}.db"
    if not path.exists():
        return []
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)) as con:
            rows = con.execute("SELECT dagster_event_type, step_key, timestamp FROM event_logs ORDER BY id").fetchall()
    except sqlite3.Error:
        return []
    return [(kind, step, _ts(ts)) for kind, step, ts in rows if kind is not None]


def _ts(value: Any) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    t = dt.datetime.fromisoformat(str(value))
    return (t if t.tzinfo else t.replace(tzinfo=dt.UTC)).timestamp()  # Dagster stores UTC


def step_phase(events: list[tuple[str, str | None, float]]) -> tuple[str, str]:
    """(phase, step) the run was in: the step started and not ended, else where it stood."""
    started = [s or "" for k, s, _ in events if k == "STEP_START"]
    ended = {s for k, s, _ in events if k in ("STEP_SUCCESS", "STEP_FAILURE", "STEP_SKIPPED")}
    running = [s for s in started if s not in ended]
    if not started:
        return "startup", ""
    if not running:
        done = any(k in ("PIPELINE_SUCCESS", "PIPELINE_FAILURE") for k, _, _ in events)
        return ("finished" if done else "between-steps"), ""
    step = running[-1]
    if step == "deidentified_notes":
        return "anonymize", step
    if step == "release_summary":
        return "release_summary", step
    if step.endswith("release_gate"):
        return "release_gate", step
    return "check", step


class DagsterScenario(Scenario):
    name = "dagster"

    def __init__(self, zygote: Zygote, windows: dict[str, float], *args: Any) -> None:
        super().__init__(*args)
        self.zygote, self.windows = zygote, windows
        self.home = dagster_home(self.root)

    def start(self, job: str = "release_job") -> tuple[int, str]:
        run_id = str(uuid.uuid4())
        return self.zygote.start(self.root, self.home, job, run_id), run_id

    def run(self, job: str = "release_job") -> dict[str, Any]:
        self.start(job)
        status = self.zygote.wait()
        out = self.root / "run.json"
        result = json.loads(out.read_text()) if out.exists() else {"success": False, "failed_checks": []}
        result["exit"] = status
        return result

    def wait_for_step(self, run_id: str, watch: Watch, prefix: str, timeout: float = 120.0) -> bool:
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if any(k == "STEP_START" and (s or "").startswith(prefix) for k, s, _ in event_log(self.home, run_id)):
                return True
            if not watch.alive():
                return False
            watch.sleep(0.01)
        return False

    def choose(self) -> tuple[str, str]:
        r = self.rng.random()
        if self.leaked is not None and not self.settled:  # its checks fail: release_summary never runs
            return "release_job", "startup" if r < 0.05 else ("anonymize" if r < 0.6 else "checks")
        aims = ((0.05, "startup"), (0.3, "anonymize"), (0.55, "checks"), (0.75, "release_summary"))
        return "release_job", next((a for p, a in aims if r < p), "store")

    def launch_and_kill(self, command: str, aim: str) -> Kill:
        if self.leaked is not None and aim in ("release_summary", "store"):
            aim = "checks"
        prep = self.prepare_publish() if aim in ("release_summary", "store") else ""
        kill = Kill(aim + (f" ({prep})" if prep else ""), before=self.current)
        pid, run_id = self.start()
        watch = Watch(pid, lambda: _alive(pid))
        if aim == "startup":
            kill.delay = self.rng.uniform(0.0, self.windows["startup"])
        elif aim == "anonymize":
            self.wait_for_step(run_id, watch, "deidentified_notes")
            kill.delay = self.rng.uniform(0.0, self.windows["anonymize"])
        elif aim == "checks":  # the blocking checks' one step (release_checks), at a random point
            self.wait_for_step(run_id, watch, CHECKS_STEP)
            kill.delay = self.rng.uniform(0.0, self.windows["checks"])
        elif aim == "release_summary":
            self.wait_for_step(run_id, watch, "release_summary")
            kill.delay = self.rng.uniform(0.0, self.windows["summary"])
        else:
            watch.until_open(STORE)
            kill.delay = self.rng.uniform(0.0, self.windows["store"])
        watch.sleep(kill.delay)
        watch.kill()
        status = self.zygote.wait()
        kill.landed = os.WIFSIGNALED(status)
        events = event_log(self.home, run_id)
        phase, step = step_phase(events)
        if not kill.landed:
            phase = "finished"
        elif phase == "anonymize":
            done, n = chunks_committed(self.root)
            kill.detail = f"chunk {min(done + 1, n)}/{n}" if done < n else f"after {n}/{n} chunks"
        elif phase == "check":
            kill.detail = step.removeprefix("deidentified_notes_")
        elif phase == "release_summary":
            where = watch.phase("verify")
            phase = f"release_summary:{where if where in ('store', 'after-store') else 'verify'}"
        self.dirty = self.dirty or phase in ("startup", "anonymize")
        kill.phase = phase
        kill.may_publish = not kill.landed or any(k == "STEP_START" and s == "release_summary" for k, s, _ in events)
        return kill

    def rerun(self, kill: Kill) -> tuple[str, str | None]:
        block = self.should_block()
        res = self.run()
        row = release_row(self.root) or {}
        failed = [c.split(":")[0] for c in res["failed_checks"] if c.endswith(":ERROR")]
        self.dirty = False
        if block:
            # a blocking check fails (release_summary is skipped: the row stays pending), or decide blocks
            blocking = sorted(set(failed) & set(BLOCKING))
            kept = self.check_kept()
            ok = (row.get("status") == "pending" and bool(blocking)) or row.get("status") == "blocked"
            if not ok or kept:
                return f"expected blocked, got {row.get('status')} checks {res['failed_checks']} {kept or ''}", (
                    "rerun_failed"
                )
            return "blocked (" + ",".join(blocking or [row.get("gate_reasons") or ""]) + ")", None
        via = ""
        if row.get("status") == "awaiting_audit":
            audit(self.root)
            res = self.run("release_checks_job")
            row = release_row(self.root) or {}
            via = " via audit"
        if row.get("status") != "published":
            return f"expected published, got {row.get('status')}: {row.get('gate_reasons')} {res}", "rerun_failed"
        v, what = self.confirm_published()
        return (what + via, None) if v else (what, "rerun_failed")


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, killed or ended and not yet reaped, is not running)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def dagster_home(root: Path) -> Path:
    """The scenario's SQLite Dagster instance, with the (study, key) partitions."""
    import dagster as dg

    home = root / "dagster_home"
    if not home.exists():
        home.mkdir()
        with dg.DagsterInstance.from_config(str(home)) as instance:
            instance.add_dynamic_partitions("study", [S])
            instance.add_dynamic_partitions("key", [K])
    return home


def calibrate_dagster(zygote: Zygote, root: Path) -> dict[str, float]:
    """Phase lengths (seconds) of a release_job run that publishes, on a copy (the candidate
    written and audited first, in the harness)."""
    sc = DagsterScenario(zygote, {}, root, random.Random(0), Report(), lambda _: None)
    assert cli_in_process(root, "run") == 0
    audit(root)
    pid, run_id = sc.start()
    t0 = time.time()
    watch = Watch(pid, lambda: _alive(pid))
    store_at = time.time() if watch.until_open(STORE) else None
    zygote.wait()
    events = event_log(sc.home, run_id)
    start = {s: ts for k, s, ts in events if k == "STEP_START"}
    end = max(ts for _, _, ts in events)
    summary_done = next(ts for k, s, ts in events if k == "STEP_SUCCESS" and s == "release_summary")
    checks = start[CHECKS_STEP]
    assert (release_row(root) or {}).get("status") == "published", "the calibration run did not publish"
    return {
        "startup": start["deidentified_notes"] - t0,
        "anonymize": checks - start["deidentified_notes"],
        "checks": start["release_summary"] - checks,
        "summary": end - start["release_summary"],
        "store": max(0.05, summary_done - store_at) if store_at else 0.2,
        "run": end - t0,
    }


# -- cli -----------------------------------------------------------------------------------------------


def history_since(root: Path, since: dt.datetime) -> list[tuple[str, str]]:
    """(action, version) recorded in tide_release_versions at or after ``since``."""
    with _ro(root / WH) as con:
        if not _has(con, "tide_release_versions"):
            return []
        return con.execute(
            "SELECT action, version FROM tide_release_versions WHERE study = ? AND key = ? AND decided_at >= ?",
            [S, K, since],
        ).fetchall()


class CliScenario(Scenario):
    name = "cli"

    def __init__(self, windows: dict[str, dict[str, float]], rollbacks: bool, *args: Any) -> None:
        super().__init__(*args)
        self.windows, self.rollbacks = windows, rollbacks
        self.log_path = self.root / "cli.log"
        self.command, self.target = "", ""

    def rollback_target(self) -> str | None:
        """The version ``tide release rollback`` (no --to) moves to: the latest publish of another
        version whose content is not withdrawn (its last publish or withdrawal was not a withdrawal)."""
        past = history(self.root)
        last = {fp: a for a, _, fp in past if a in ("publish", "withdraw")}
        earlier = [v for a, v, fp in past if a == "publish" and v != self.current and last[fp] != "withdraw"]
        if self.current is None or not earlier or self.content_of(earlier[-1]) is None:
            return None
        return earlier[-1]

    def choose(self) -> tuple[str, str]:
        r = self.rng.random()
        target = self.rollback_target() if self.rollbacks else None
        command = "rollback" if target and r < 0.2 else ("run" if r < 0.55 else "publish")
        r = self.rng.random()
        if command == "run":
            return command, "startup" if r < 0.15 else "anonymize"
        return command, "startup" if r < 0.1 else (
            "prepare" if command == "rollback" else "verify"
        ) if r < 0.4 else "store"

    def launch_and_kill(self, command: str, aim: str) -> Kill:
        target = self.rollback_target() if command == "rollback" else None
        prep = self.prepare_publish() if command == "publish" else ""
        kill = Kill(f"{command}:{aim}" + (f" ({prep})" if prep else ""), before=self.current)
        w = self.windows[command]
        with open(self.log_path, "a") as log:
            proc = subprocess.Popen([*tide_command(), *cli_args(self.root, command)], stdout=log, stderr=log, cwd=ROOT)
            watch = Watch(proc.pid, lambda: proc.poll() is None)
            if aim == "startup":
                kill.delay = self.rng.uniform(0.0, w["startup"])
            elif aim == "store":
                watch.until_open(STORE)
                kill.delay = self.rng.uniform(0.0, w["store"])
            else:
                watch.until_open(WH)
                kill.delay = self.rng.uniform(0.0, w["work"])
            watch.sleep(kill.delay)
            watch.kill()
            code = proc.wait()
        kill.landed = code == -signal.SIGKILL
        work = {"run": "anonymize", "publish": "verify", "rollback": "prepare"}[command]
        phase = watch.phase(work) if kill.landed else "finished"
        if phase == "anonymize":
            done, n = chunks_committed(self.root)
            kill.detail = f"chunk {min(done + 1, n)}/{n}" if done < n else f"after {n}/{n} chunks"
        kill.phase = f"{command} {phase}"
        self.command = command
        if command == "run" and kill.landed:
            self.dirty = True
        kill.may_publish = command == "publish" and (STORE in watch.ever or not kill.landed)
        if command == "rollback":
            assert target is not None
            self.target = kill.rollback_to = target
            kill.must_settle = True
        return kill

    def rerun(self, kill: Kill) -> tuple[str, str | None]:
        if self.command == "rollback":
            return self.rerun_rollback(kill)
        if self.dirty:
            code = cli_in_process(self.root, "run")
            if code != 0:
                return f"tide run exited {code}", "rerun_failed"
            self.dirty = False
        block = self.should_block()
        code = cli_in_process(self.root, "publish")
        row = release_row(self.root) or {}
        if block:
            kept = self.check_kept()
            if code != 1 or row.get("status") != "blocked" or kept:
                return f"expected blocked, got exit {code} {row.get('status')} {kept or ''}", "rerun_failed"
            return f"blocked ({'E935' if '[E935]' in (row.get('gate_reasons') or '') else 'check'})", None
        via = ""
        if code == 3:
            audit(self.root)
            code = cli_in_process(self.root, "publish")
            row = release_row(self.root) or {}
            via = " via audit"
        if code != 0 or row.get("status") != "published":
            return f"expected published, got exit {code} {row.get('status')}: {row.get('gate_reasons')}", (
                "rerun_failed"
            )
        v, what = self.confirm_published()
        return (what + via, None) if v else (what, "rerun_failed")

    def rerun_rollback(self, kill: Kill) -> tuple[str, str | None]:
        """Finish a killed rollback: redo it (``--to`` its target) if the view did not move; either
        way the history must then record it (withdraw + rollback) and tide_releases say so."""
        moved_from, target = kill.before, self.target
        if self.current != target:
            code = cli_in_process(self.root, "rollback", "--to", target)
            labels, rows, _ = researcher_view(self.root)
            if code != 0 or labels != {target} or rows != self.content_of(target):
                return f"tide release rollback --to {target} exited {code}; the view shows {sorted(labels)}", (
                    "rerun_failed"
                )
            self.current = target
            what = f"rolled back {moved_from} -> {target}"
        else:
            what = f"the killed rollback had committed ({moved_from} -> {target})"
        recorded = history_since(self.root, kill.launched)
        row = release_row(self.root) or {}
        gone = self.content_of(moved_from)
        if ("withdraw", moved_from) in recorded and gone is not None:
            self.withdrawn.add(gone)
        missing = [f"{a} {v}" for a, v in (("withdraw", moved_from), ("rollback", target)) if (a, v) not in recorded]
        if missing or row.get("status") != "rolled_back" or row.get("published_version") != target:
            return (
                f"{what}; tide_release_versions lacks {missing or 'nothing'}, tide_releases says "
                f"{row.get('status')} {row.get('published_version')}",
                "rollback_half_recorded",
            )
        return what, None


def calibrate_cli(root: Path, log: Path, rollbacks: bool) -> dict[str, dict[str, float]]:
    """Seconds until each command opens the warehouse, its work after that, and its store window,
    on a copy: tide run; (audit) publish; (more notes, run, audit) publish, rollback."""

    def timed(command: str) -> dict[str, float]:
        with open(log, "a") as out:
            t0 = time.perf_counter()
            proc = subprocess.Popen([*tide_command(), *cli_args(root, command)], stdout=out, stderr=out, cwd=ROOT)
            t_wh = t_store = None
            while proc.poll() is None:
                files = open_files(proc.pid)
                now = time.perf_counter() - t0
                if t_wh is None and WH in files:
                    t_wh = now
                if t_store is None and STORE in files:
                    t_store = now
                time.sleep(0.002)
            end = time.perf_counter() - t0
        assert proc.returncode == 0, f"calibration: tide {command} exited {proc.returncode}"
        wh_at = t_wh if t_wh is not None else end
        return {
            "startup": wh_at,
            "work": max(0.05, (t_store or end) - wh_at),
            "store": max(0.05, end - t_store) if t_store is not None else 0.1,
        }

    out = {"run": timed("run")}
    audit(root)
    out["publish"] = timed("publish")  # v1
    if rollbacks:
        grow(root, STUDY.notes)
        assert cli_in_process(root, "run") == 0
        audit(root)
        assert cli_in_process(root, "publish") == 0  # v2
        out["rollback"] = timed("rollback")
    return out


# -- the loop ----------------------------------------------------------------------------------------


def run_kills(
    kills: int,
    seed: int,
    workdir: Path,
    scenarios: tuple[str, ...] = ("dagster", "cli"),
    settle: float = 0.8,
    rollbacks: bool = True,
    log: Callable[[str], None] = print,
    notes: int = 1200,
    chunk: int = 300,
) -> Report:
    """``kills`` SIGKILLs split between ``scenarios``; after a kill a rerun runs to completion with
    probability ``settle`` (always after a rollback and a scenario's last kill), else the next kill
    lands on what it left.  ``rollbacks``: the cli scenario also kills ``tide release rollback``.
    The study: ``notes`` notes in chunks of ``chunk``."""
    import warnings

    warnings.filterwarnings("ignore")
    STUDY.notes, STUDY.chunk, STUDY.pool = notes, chunk, max(GROW, kills * GROW // 2)
    rng = random.Random(seed)
    report = Report()
    t0 = time.perf_counter()
    out = log
    log = lambda line: out(f"[{time.perf_counter() - t0:5.0f}s] {line}")  # noqa: E731
    workdir.mkdir(parents=True, exist_ok=True)
    zygote = Zygote(workdir / "dagster-runs.log") if "dagster" in scenarios else None
    try:
        base = workdir / "base"
        prepare_base(base)
        log(f"base warehouse: {notes} notes recognized (and {STUDY.pool} that arrive later), chunks of {chunk}")
        active: list[Scenario] = []
        for name in scenarios:
            calib = workdir / f"calibrate-{name}"
            copy_base(base, calib)
            if name == "dagster":
                assert zygote is not None
                windows: Any = calibrate_dagster(zygote, calib)
            else:
                windows = calibrate_cli(calib, workdir / "cli-calibration.log", rollbacks)
            report.calibration[name] = (
                windows if name == "dagster" else {f"{c}.{k}": v for c, w in windows.items() for k, v in w.items()}
            )
            shutil.rmtree(calib, ignore_errors=True)
            log(f"calibration {name}: " + ", ".join(f"{k} {v:.2f}s" for k, v in report.calibration[name].items()))
            root = workdir / name
            copy_base(base, root)
            args = (root, random.Random(rng.random()), report, log)
            active.append(
                DagsterScenario(zygote, windows, *args) if name == "dagster" else CliScenario(windows, rollbacks, *args)
            )
        per = Counter(scenarios[i % len(scenarios)] for i in range(kills))
        count: Counter[str] = Counter()
        for i in range(kills):
            sc = active[i % len(active)]
            count[sc.name] += 1
            last = count[sc.name] == per[sc.name]
            sc.kill_once(i, rerun=last or rng.random() < settle)
        for sc in active:
            sc.finish()
    finally:
        if zygote is not None:
            zygote.close()
    report.seconds = time.perf_counter() - t0
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--kills", type=int, default=60)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--scenarios", default="dagster,cli", help="comma-separated: dagster, cli (default both)")
    p.add_argument("--settle", type=float, default=0.8, help="chance of a complete rerun after a kill (default 0.8)")
    p.add_argument("--notes", type=int, default=1200, help="notes in the study at the start (default 1200)")
    p.add_argument("--chunk-rows", type=int, default=300, help="notes per chunk (default 300)")
    p.add_argument("--no-rollback", action="store_true", help="the cli scenario does not kill tide release rollback")
    p.add_argument("--dir", default=None, help="work directory (default: a temporary one, removed)")
    p.add_argument("--json", default=None, help="write the report here")
    args = p.parse_args(argv)
    scenarios = tuple(s.strip() for s in args.scenarios.split(",") if s.strip())
    if not scenarios or set(scenarios) - {"dagster", "cli"}:
        p.error("--scenarios takes dagster and/or cli")
    tmp = None if args.dir else tempfile.mkdtemp(prefix="tide-kill-")
    workdir = Path(args.dir or tmp)  # type: ignore[arg-type]
    try:
        report = run_kills(
            args.kills,
            args.seed,
            workdir,
            scenarios,
            args.settle,
            not args.no_rollback,
            notes=args.notes,
            chunk=args.chunk_rows,
        )
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    print()
    print(report.table())
    print()
    print(report.summary())
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_json(), indent=2) + "\n")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
