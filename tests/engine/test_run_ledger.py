"""The run ledger (``tide_core.engine.ledger``): keyword rows in ``tide_runs`` on a real DuckDB.

A finished run's row keeps every count it was given (unset counts are null, recognizers a JSON
list); a chunk row is ``<stage>.chunk`` with its index, the run's chunk count and its input rows;
``interrupted_chunks`` lists the chunks committed since the last finished run of the stage only.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

from tide_core.config import TideConfig
from tide_core.engine.ledger import RunRow, chunk_row, interrupted_chunks, progress_write, record_run
from tide_core.engine.study_chunks import ChunkInfo
from tide_core.io.open import open_warehouse

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
        wh.replace_partitions([progress_write(CONFIG, row)])
        wh.replace_partitions([progress_write(CONFIG, row)])  # a retried commit replaces its own row
        assert len(_runs(wh)) == 1
        assert interrupted_chunks(wh, CONFIG, "s", "k", "anonymization") == {1: ("d1", T0)}
        assert interrupted_chunks(wh, CONFIG, "s", "other", "anonymization") == {}
        record_run(wh, CONFIG, RunRow("s", "k", "anonymization", T0, "r1", n_in=120))  # the run finished
        assert interrupted_chunks(wh, CONFIG, "s", "k", "anonymization") == {}
    finally:
        wh.close()
