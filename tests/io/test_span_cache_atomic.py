"""Span-cache commits are atomic: the spans and recognized-notes rows of one commit land together.

* DuckDB, failure: a commit whose recognized-notes insert fails (a real CHECK constraint) leaves
  the spans of the previous commit, not the new ones.
* DuckDB, crash: a subprocess commits span-cache batches in a loop and is SIGKILLed at random
  moments, 50 times; after each kill no recognized-notes entry lacks its spans and no span lacks
  its entry (0 torn commits), and every commit the writer reported survived.
* BigQuery (the bqemulator the warehouse tests use): a multi-table replace whose last insert
  fails leaves every table as it was.
"""

from __future__ import annotations

import importlib.util
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest

from tide_core.errors import WarehouseError
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.io.warehouse import PartitionWrite
from tide_core.spans import Note, Span
from tide_core.store import tables
from tide_core.store.span_cache import SpanCache

STUDY = "s"
N_NOTES, N_SPANS = 40, 8  # 40 recognized-notes rows and 320 span rows per commit

# A zygote imports TIDE once and forks one writer per kill (a fresh interpreter per kill would
# spend most of the test importing pyarrow).  Each writer opens the DuckDB file itself and
# commits span-cache batches in a loop until it is SIGKILLed.
ZYGOTE = r"""
import os, sys
from tide_core.store.span_cache import SpanCache
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.spans import Note, Span

def batch(i):
    # every commit replaces the study with new note ids: a torn commit cannot hide
    notes = [Note(f"c{i}_n{j}", "p", "x" * (10 * n_spans)) for j in range(n_notes)]
    spans = {n.note_id: [Span(n.note_id, 10 * k, 10 * k + 5, "ID", 1.0, "r@1") for k in range(n_spans)] for n in notes}
    return notes, spans, {n.note_id: ("ok", None) for n in notes}


path, n_notes, n_spans = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
warm = DuckDBWarehouse(":memory:")  # first-use costs paid once, before forking; closed again
SpanCache(warm).store("s", "warm", *batch(0), keep=set())
warm.close()
for line in sys.stdin:
    i = int(line)
    pid = os.fork()
    if pid == 0:
        try:
            cache = SpanCache(DuckDBWarehouse(path))
            while True:
                cache.store("s", f"fp{i}", *batch(i), keep=set())
                os.write(1, f"commit {i}\n".encode())
                i += 1
        finally:
            os._exit(1)
    print(f"pid {pid}", flush=True)
    os.waitpid(pid, 0)
    print(f"dead {pid}", flush=True)
"""


def _batch(i: int) -> tuple[list[Note], dict, dict]:
    """The rows one writer commit holds (the zygote builds the same)."""
    notes = [Note(f"c{i}_n{j}", "p", "x" * (10 * N_SPANS)) for j in range(N_NOTES)]
    spans = {n.note_id: [Span(n.note_id, 10 * k, 10 * k + 5, "ID", 1.0, "r@1") for k in range(N_SPANS)] for n in notes}
    return notes, spans, {n.note_id: ("ok", None) for n in notes}


def check_commit(wh) -> tuple[int | None, list[str]]:
    """The commit number the study holds, and what is torn about it (empty: consistent)."""
    problems = []
    if not wh.table_exists("tide_recognized_notes"):
        return None, ([] if not wh.table_exists("tide_spans") else ["spans without recognized-notes table"])
    entries = wh.read_table("tide_recognized_notes", where={"study": STUDY}).to_pylist()
    spans = wh.read_table("tide_spans", ["note_id", "fingerprint"], where={"study": STUDY}).to_pylist()
    per_note: dict[str, int] = {}
    for r in spans:
        per_note[r["note_id"]] = per_note.get(r["note_id"], 0) + 1
    ids = {e["note_id"] for e in entries}
    lacking = [e["note_id"] for e in entries if per_note.get(e["note_id"], 0) != e["n_spans"]]
    if lacking:
        problems.append(f"{len(lacking)} recognized-notes entries lack their spans")
    orphans = set(per_note) - ids
    if orphans:
        problems.append(f"{len(orphans)} notes have spans but no recognized-notes entry")
    fps = {e["fingerprint"] for e in entries} | {r["fingerprint"] for r in spans}
    if len(fps) > 1:
        problems.append(f"rows of {len(fps)} commits mixed")
    if len(entries) != N_NOTES:
        problems.append(f"{len(entries)} entries, expected {N_NOTES}")
    commit = int(next(iter(fps))[2:]) if len(fps) == 1 else None
    return commit, problems


def test_failed_commit_leaves_the_previous_one(tmp_path):
    wh = DuckDBWarehouse(tmp_path / "c.duckdb")
    cols = ", ".join(f'"{f.name}" {_duck(f.type)}' for f in tables.RECOGNIZED_NOTES)
    # a real constraint the second table of the commit violates, after the spans were written
    wh.sql(f"CREATE TABLE tide_recognized_notes ({cols}, CHECK (status <> 'boom'))")
    cache = SpanCache(wh)
    cache.store(STUDY, "fp0", *_batch(0), keep=set())
    assert check_commit(wh) == (0, [])
    notes, spans, statuses = _batch(1)
    statuses[notes[-1].note_id] = ("boom", "E999")
    with pytest.raises(Exception, match="(?i)constraint"):
        cache.store(STUDY, "fp1", notes, spans, statuses, keep=set())
    assert check_commit(wh) == (0, [])  # the spans of commit 1 were rolled back with it
    assert wh.count("tide_spans", {"study": STUDY}) == N_NOTES * N_SPANS
    cache.store(STUDY, "fp2", *_batch(2), keep=set())
    assert check_commit(wh) == (2, [])
    wh.close()


def _duck(t: pa.DataType) -> str:
    if pa.types.is_integer(t):
        return "BIGINT"
    if pa.types.is_timestamp(t):
        return "TIMESTAMPTZ"
    return "VARCHAR"


def test_replace_partitions_refuses_a_table_twice(tmp_path):
    wh = DuckDBWarehouse(tmp_path / "c.duckdb")
    t = tables.to_table("runs", [])
    with pytest.raises(Exception, match="E308"):
        wh.replace_partitions([PartitionWrite("x", t, {"study": "s"}), PartitionWrite("x", t, {"study": "s"})])
    wh.close()


KILLS = int(os.environ.get("TIDE_KILL_RUNS", "50"))


@pytest.mark.slow
def test_sigkill_never_tears_a_commit(tmp_path):
    """SIGKILL a span-cache writer at random moments; count torn commits (must be 0)."""
    path = tmp_path / "kill.duckdb"
    rng = random.Random(15)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    zygote = subprocess.Popen(
        [sys.executable, "-c", ZYGOTE, str(path), str(N_NOTES), str(N_SPANS)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
        env=env,
    )
    start, torn, lost, commits, mid = 0, [], 0, 0, 0
    t0 = time.perf_counter()
    try:
        for run in range(KILLS):
            zygote.stdin.write(f"{start}\n")
            zygote.stdin.flush()
            pid, reported = None, []
            while pid is None or not reported:  # the writer is in its loop: one commit done
                word, value = zygote.stdout.readline().split()
                if word == "pid":
                    pid = int(value)
                else:
                    reported.append(int(value))
            time.sleep(rng.uniform(0.0, 0.15))  # lands in the commit after the reported one, or later
            os.kill(pid, signal.SIGKILL)
            while True:
                word, value = zygote.stdout.readline().split()
                if word == "dead":
                    break
                reported.append(int(value))
            commits += len(reported)
            wh = DuckDBWarehouse(path)  # replays the write-ahead log
            try:
                commit, problems = check_commit(wh)
            finally:
                wh.close()
            if problems:
                torn.append((run, problems))
            if commit is None or commit < reported[-1]:
                lost += 1  # a commit the writer reported is gone
            elif commit > reported[-1]:
                mid += 1  # killed after COMMIT reached the log, before the writer said so
            start = (commit if commit is not None else reported[-1]) + 1
    finally:
        zygote.stdin.close()
        zygote.wait(timeout=30)
    seconds = time.perf_counter() - t0
    print(
        f"\nspan-cache kill test: {KILLS} SIGKILLs, {commits} commits reported, "
        f"{len(torn)} torn, {lost} lost, {mid} committed-but-unreported, {seconds:.1f} s"
    )
    assert torn == [] and lost == 0


# -- BigQuery (emulator) ---------------------------------------------------------------------
def _bq_module():
    spec = importlib.util.spec_from_file_location(
        "_bq_fixtures", Path(__file__).with_name("test_bigquery_warehouse.py")
    )
    mod = sys.modules.get("_bq_fixtures")
    if mod is None:
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sys.modules["_bq_fixtures"] = mod
    return mod


@pytest.fixture(scope="module")
def bq_emulator(tmp_path_factory):
    pytest.importorskip("google.cloud.bigquery")
    pytest.importorskip("bqemulator")
    yield from _bq_module().emulator.__wrapped__(tmp_path_factory)


def test_bigquery_commit_is_one_transaction(bq_emulator):
    bq = _bq_module()
    wh = bq._open(bq_emulator, "atomic")
    cache = SpanCache(wh)
    cache.store(STUDY, "fp0", *_batch(0), keep=set())
    assert check_commit(wh) == (0, [])
    cache.store(STUDY, "fp1", *_batch(1), keep=set())
    assert check_commit(wh) == (1, [])
    # a third write fails inside the transaction, after the spans and recognized-notes
    # statements ran (its predicate compares a STRING column with a number): they must roll back
    wh.replace_table("t_third", pa.table({"study": ["s", "t"]}))
    notes, spans, statuses = _batch(2)
    span_rows = [
        {"study": STUDY, "note_id": s.note_id, "start": s.start, "end": s.end, "label": s.label, "fingerprint": "fp2"}
        for v in spans.values()
        for s in v
    ]
    entry_rows = [
        {"study": STUDY, "note_id": n.note_id, "status": "ok", "n_spans": N_SPANS, "fingerprint": "fp2"} for n in notes
    ]
    with pytest.raises(WarehouseError, match="E324"):
        wh.replace_partitions(
            [
                PartitionWrite("tide_spans", tables.to_table("spans", span_rows), {"study": STUDY}),
                PartitionWrite(
                    "tide_recognized_notes", tables.to_table("recognized_notes", entry_rows), {"study": STUDY}
                ),
                PartitionWrite("t_third", pa.table({"study": pa.array([], pa.string())}), {"study": 5}),
            ]
        )
    assert check_commit(wh) == (1, [])
    listed = wh.client.list_tables(f"{wh.client.project}.atomic")
    assert not [t.table_id for t in listed if "_tide_stage_" in t.table_id]
    wh.close()
