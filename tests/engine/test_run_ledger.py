"""The run ledger (``tide_core.engine.ledger``): keyword rows in ``tide_runs`` on a real DuckDB.

A finished run's row keeps every count it was given (unset counts are null, recognizers a JSON
list); a chunk row is ``<stage>.chunk`` with its index, the run's chunk count and its input rows;
``interrupted_chunks`` lists the chunks committed since the last finished run of the stage only.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import tracemalloc

from tide_core.config import TideConfig
from tide_core.engine import ledger
from tide_core.engine.ledger import RunRow, chunk_row, committed_chunks, interrupted_chunks, progress_write, record_run
from tide_core.engine.study_chunks import ChunkInfo
from tide_core.io.open import open_warehouse
from tide_core.store import tables

CONFIG = TideConfig.preset("rules")
T0 = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)


def _runs(wh):
    return wh.read_table(CONFIG.tables.runs).to_pylist()


def test_a_finished_run_row_keeps_its_keyword_counts(tmp_path):
    wh = open_warehouse(f"duckdb:{tmp_path / 'w.duckdb'}")
    try:
        row = RunRow("s", "", "recognition", T0, "r1", n_in=7, n_quarantined=2, n_recognized=5, n_cached=0)
        record_run(wh, CONFIG, dataclasses.replace(row, recognizers=["tide.regex@3"], notes_per_s=2))
        (got,) = _runs(wh)
    finally:
        wh.close()
    assert {k: got[k] for k in ("run_id", "study", "key", "stage", "n_in", "n_quarantined", "n_recognized")} == {
        "run_id": "r1",
        "study": "s",
        "key": "",
        "stage": "recognition",
        "n_in": 7,
        "n_quarantined": 2,
        "n_recognized": 5,
    }
    assert got["n_cached"] == 0 and got["n_released"] is None and got["chunk"] is None
    assert json.loads(got["recognizers"]) == ["tide.regex@3"] and got["notes_per_s"] == 2.0
    assert got["started_at"] == T0 and got["finished_at"] >= T0


def test_chunk_rows_and_interrupted_chunks(tmp_path):
    wh = open_warehouse(f"duckdb:{tmp_path / 'w.duckdb'}")
    try:
        info = ChunkInfo(1, 3, 40, 38, [], ("a", "b"))
        row = chunk_row("r1", "s", "k", "anonymization", T0, info, n_released=38, fingerprint="d1")
        assert (row.stage, row.chunk, row.n_chunks, row.n_in, row.n_released) == ("anonymization.chunk", 1, 3, 40, 38)
        assert (row.run_id, row.study, row.key, row.started_at) == ("r1", "s", "k", T0)
        before = dt.datetime.now(dt.UTC)
        wh.replace_partitions([progress_write(CONFIG, row)])
        (written,) = _runs(wh)
        assert written["run_id"] == "r1" and before <= written["finished_at"] <= dt.datetime.now(dt.UTC)
        wh.replace_partitions([progress_write(CONFIG, row)])  # a retried commit replaces its own row
        assert len(_runs(wh)) == 1
        assert interrupted_chunks(wh, CONFIG, "s", "k", "anonymization") == {1: ("d1", T0)}
        assert interrupted_chunks(wh, CONFIG, "s", "other", "anonymization") == {}
        record_run(wh, CONFIG, RunRow("s", "k", "anonymization", T0, "r1", n_in=120))  # the run finished
        assert interrupted_chunks(wh, CONFIG, "s", "k", "anonymization") == {}
    finally:
        wh.close()


def _history(n_runs: int, n_chunks: int, unfinished_from: int) -> list[dict]:
    """Ledger rows of ``n_runs`` nightly anonymization runs of ``n_chunks`` chunks each, run ``i``
    started on day ``i``; runs from ``unfinished_from`` on were interrupted after their first
    chunks.  Some chunk rows carry no fingerprint (written before rows were digested)."""
    rows = []
    for i in range(n_runs):
        start = T0 + dt.timedelta(days=i)
        done = n_chunks if i < unfinished_from else 2
        for c in range(done):
            info = ChunkInfo(c, n_chunks, 10, 10, [], ("a",))
            fp = "" if (i + c) % 7 == 0 else f"d{i}.{c}/r{i}.{c}"
            row = chunk_row(f"r{i}", "s", "k", "anonymization", start, info, fingerprint=fp, anonymizer=f"a{i}")
            rows.append(row.as_dict(start + dt.timedelta(minutes=c + 1)))
        if i < unfinished_from:
            rows.append(RunRow("s", "k", "anonymization", start, f"r{i}").as_dict(start + dt.timedelta(hours=1)))
    # rows of other studies, keys and stages, later than any: they must not count
    late = T0 + dt.timedelta(days=n_runs + 1)
    for study, key, stage in [("s2", "k", "anonymization"), ("s", "k2", "anonymization"), ("s", "k", "recognition")]:
        for c in range(n_chunks):
            info = ChunkInfo(c, n_chunks, 10, 10, [], ("a",))
            rows.append(chunk_row("x", study, key, stage, late, info, fingerprint="x/x", anonymizer="x").as_dict(late))
        rows.append(RunRow(study, key, stage, late, "x").as_dict(late))
    # the latest row of chunk 3 has no anonymizer recorded: it reads as ""
    for r in rows:
        if r["stage"] == "anonymization.chunk" and r["study"] == "s" and r["key"] == "k" and r["chunk"] == 3:
            last3 = r
    last3["anonymizer"] = None
    # a chunk row of a run that started at the very instant the last finished run ended is not "since" it
    last_finish = max(
        r["finished_at"] for r in rows if (r["study"], r["key"], r["stage"]) == ("s", "k", "anonymization")
    )
    info = ChunkInfo(5, n_chunks, 10, 10, [], ("a",))
    rows.append(chunk_row("edge", "s", "k", "anonymization", last_finish, info, fingerprint="").as_dict(T0))
    return rows


def _latest(rows: list[dict], keep) -> dict[int, dict]:
    """The brute-force answer: every row in memory, the latest by finish per chunk."""
    out: dict[int, dict] = {}
    for r in sorted(rows, key=lambda r: r["finished_at"]):
        if (r["study"], r["key"], r["stage"]) == ("s", "k", "anonymization.chunk") and keep(r):
            out[r["chunk"]] = r
    return out


def test_a_long_ledger_history_is_streamed_not_held(tmp_path, monkeypatch):
    """A year of nightly runs: ``committed_chunks`` and ``interrupted_chunks`` equal the in-memory
    answer, and their Python memory does not grow with the number of runs in the history (batches
    of 500 rows: both histories span several)."""
    monkeypatch.setattr(ledger, "LEDGER_BATCH_ROWS", 500, raising=False)
    peaks = {}
    for n_runs in (20, 200):
        wh = open_warehouse(f"duckdb:{tmp_path / f'w{n_runs}.duckdb'}")
        try:
            rows = _history(n_runs, 60, unfinished_from=n_runs - 2)
            wh.replace_table(CONFIG.tables.runs, tables.to_table("runs", rows))
            tracemalloc.start()
            done = committed_chunks(wh, CONFIG, "s", "k")
            interrupted = interrupted_chunks(wh, CONFIG, "s", "k", "anonymization")
            peaks[n_runs] = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        finally:
            wh.close()
        want = _latest(rows, lambda r: bool(r["fingerprint"]))
        assert {c: (d.digest, d.rows, d.started, d.anonymizer) for c, d in done.items()} == {
            c: (*r["fingerprint"].partition("/")[::2], r["started_at"], r["anonymizer"] or "") for c, r in want.items()
        }
        assert done[3].anonymizer == "" and len(done) == 60
        since = max(r["finished_at"] for r in rows if (r["study"], r["key"], r["stage"]) == ("s", "k", "anonymization"))
        recent = _latest(rows, lambda r, since=since: r["started_at"] > since)
        assert interrupted == {c: (r["fingerprint"], r["started_at"]) for c, r in recent.items()}
        assert sorted(interrupted) == [0, 1]  # the last two runs were cut after two chunks
    assert peaks[200] < peaks[20] + 512 * 1024, peaks  # 10x the history, not 10x the memory
