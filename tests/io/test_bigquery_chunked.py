"""Chunked runs on the BigQuery API emulator: streaming reads, warehouse-side anti-join, resume after SIGKILL."""

# ruff: noqa: F811 - the tests take the imported ``emulator`` fixture as a parameter

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest

pytest.importorskip("google.cloud.bigquery")
pytest.importorskip("bqemulator")

from test_bigquery_warehouse import PROJECT, _open, emulator  # noqa: F401 - the emulator fixture

from tide_core.cli.cmd_demo import load_demo
from tide_core.config import TideConfig
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.runner import recognize_study

CONFIG = TideConfig.preset("rules")
N = 20
CHUNK = 6


def _rows() -> tuple[list[dict], list[dict]]:
    with DuckDBWarehouse() as wh:
        load_demo(wh, seed=7)
        notes = wh.read_table("notes").to_pylist()[:N]
        patients = wh.read_table("patients").to_pylist()
    notes = [{"study": "s1", **r} for r in notes] + [{"study": "s1", **notes[4]}]  # an exact duplicate
    return notes, patients


def _load(wh, notes: list[dict], patients: list[dict]) -> None:
    wh.replace_table("notes", pa.Table.from_pylist(notes))
    wh.replace_table("patients", pa.Table.from_pylist(patients))


def _spans(wh) -> list[tuple]:
    rows = wh.read_table("tide_spans", ["note_id", "start", "end", "label"], where={"study": "s1"}).to_pylist()
    return sorted((r["note_id"], r["start"], r["end"], r["label"]) for r in rows)


def test_streaming_primitives(emulator):
    wh = _open(emulator, "stream")
    try:
        wh.replace_table(
            "t", pa.table({"study": ["s"] * 5 + ["x"], "note_id": [" a", "b", "a", "c", "d", "z"], "v": list(range(6))})
        )
        batches = list(wh.iter_batches("t", ["note_id", "v"], {"study": "s"}, batch_rows=2))
        assert all(b.num_rows <= 2 for b in batches)
        assert sorted(v for b in batches for v in b.column("v").to_pylist()) == [0, 1, 2, 3, 4]
        assert wh.duplicate_values("t", "note_id", {"study": "s"}) == ["a"]
        wh.replace_table("cache", pa.table({"study": ["s", "s", "s", "x"], "note_id": ["a", "q", None, "q"]}))
        assert wh.delete_absent("cache", {"study": "s"}, "note_id", "t", "note_id", {"study": "s"}) == 1
        left = wh.read_table("cache").to_pylist()
        assert sorted((r["study"], r["note_id"] or "") for r in left) == [("s", ""), ("s", "a"), ("x", "q")]
    finally:
        wh.close()


_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    import google.cloud.bigquery.client as bq_client
    bq_client._GENERIC_CONTENT_TYPE = "application/octet-stream"  # the emulator's upload quirk (test only)
    from tide_core.config import TideConfig
    from tide_core.io.bigquery_warehouse import BigQueryWarehouse
    from tide_core.runner import recognize_study

    rest, grpc, url = sys.argv[1:4]
    wh = BigQueryWarehouse.from_url(url, api_endpoint=rest, storage_endpoint=grpc, anonymous=True)

    def hook(p):
        if p.chunk + 1 == 2:
            os.kill(os.getpid(), signal.SIGKILL)

    recognize_study(wh, "s1", TideConfig.preset("rules"), progress=False, chunk_rows=6, on_chunk=hook)
    """
)


def test_recognition_resumes_after_sigkill_on_bigquery(emulator, tmp_path: Path):
    notes, patients = _rows()
    with DuckDBWarehouse() as ref:  # the same study in one chunk on DuckDB: the expected cache
        _load(ref, notes, patients)
        expected_report = recognize_study(ref, "s1", CONFIG, progress=False, chunk_rows=10_000)
        expected = _spans(ref)
    wh = _open(emulator, "resume")
    try:
        _load(wh, notes, patients)
        script = tmp_path / "child.py"
        script.write_text(_CHILD)
        proc = subprocess.run(
            [sys.executable, str(script), emulator["rest"], emulator["grpc"], f"bigquery:{PROJECT}.resume"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
        committed = wh.count("tide_recognized_notes", {"study": "s1"})
        assert 0 < committed <= 2 * CHUNK
        assert wh.count("tide_runs", {"stage": "recognition.chunk"}) == 2
        report = recognize_study(wh, "s1", CONFIG, progress=False, chunk_rows=CHUNK)
        assert report.n_cached == committed and report.n_recognized == expected_report.n_valid - committed
        assert _spans(wh) == expected  # no duplicate, no missing span
        ids = wh.read_table("tide_recognized_notes", ["note_id"], where={"study": "s1"}).column("note_id").to_pylist()
        assert len(ids) == len(set(ids)) == expected_report.n_valid
    finally:
        wh.close()
