"""Recognition on Ray workers that read their own chunk from a shard and stage its cache rows:
the span cache equals the local path's (bad rows, duplicates, known-PHI rows per chunk), the
driver reads no note text, a stopped run resumes exactly its uncommitted chunks, and a shard a
worker cannot read stops the run named.  One local Ray session (2 CPUs) for the module."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest

from tide_core.chunk_progress import ChunkProgress
from tide_core.cli.cmd_demo import load_demo
from tide_core.config import TideConfig
from tide_core.errors import TideError
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.runner import recognize_study
from warehouse_probes import NotesReads, ShardVanishes, Without

pytest.importorskip("ray")

CHUNK = 11
TIMESTAMPS = ("created_at", "recognized_at", "quarantined_at", "started_at", "finished_at")
CACHE = ("tide_spans", "tide_recognized_notes", "tide_quarantine")


@pytest.fixture(scope="module")
def ray_session(local_ray):
    return local_ray


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    """The demo corpus plus duplicated, conflicting, id-less and empty rows."""
    db = tmp_path_factory.mktemp("shards") / "study.duckdb"
    with DuckDBWarehouse(db) as wh:
        load_demo(wh, seed=11)
        rows = wh.read_table("notes").to_pylist()[:80]
        rows += [
            dict(rows[0]),  # exact duplicate (E608)
            dict(rows[30], text=rows[30]["text"] + " (amended)"),  # conflicting duplicate (E607)
            dict(rows[2], note_id=None),  # no id (E601)
            dict(rows[3], note_id="empty-1", text="   "),  # empty text (E604)
        ]
        wh.replace_table("notes", pa.Table.from_pylist(rows, schema=wh.read_table("notes").schema))
    return db


def _copy(study: Path, tmp_path: Path, name: str) -> Path:
    db = tmp_path / f"{name}.duckdb"
    shutil.copy(study, db)
    return db


def _cache(wh: DuckDBWarehouse) -> dict[str, list[tuple]]:
    out = {}
    for name in CACHE:
        rows = wh.read_table(name).to_pylist()
        out[name] = sorted(tuple(sorted((k, repr(v)) for k, v in r.items() if k not in TIMESTAMPS)) for r in rows)
    return out


def test_workers_recognize_their_own_shards_into_the_cache_the_local_path_writes(ray_session, study, tmp_path):
    out = {}
    for how in ("local", "shards", "driver-read"):
        db = _copy(study, tmp_path, how)
        config = replace(TideConfig.preset("rules"), executor="local" if how == "local" else "ray")
        seen: list[ChunkProgress] = []
        with NotesReads(db) as inner:
            wh = Without(inner, "iter_refs", "export_rows") if how == "driver-read" else inner
            report = recognize_study(wh, "s1", config, progress=False, chunk_rows=CHUNK, on_chunk=seen.append)
            out[how] = (
                report.fingerprint,
                report.n_rows,
                report.n_valid,
                report.n_quarantined,
                report.n_recognized,
                report.n_spans,
                report.spans_by_label,
                _cache(inner),
            )
            reads = inner.notes_reads
            progress_rows = inner.count("tide_runs", {"stage": "recognition.chunk"})
        assert sorted(p.chunk for p in seen) == list(range(9)) and progress_rows == 9  # 84 rows by 11, duplicates
        if how == "shards":
            assert reads == [("note_id", "patient_id")]  # the text went from DuckDB to the workers' shards
        else:
            assert None in reads
    assert out["shards"] == out["local"] == out["driver-read"]
    assert out["shards"][4] == 79 and out["shards"][5] > 300
    known = [r for r in out["shards"][7]["tide_spans"] if "tide.known_phi" in dict(r)["recognizer"]]
    assert len(known) > 100  # the chunk's known-PHI rows reached the workers
    assert not (tmp_path / "shards.duckdb.staging").exists()


def test_a_stopped_sharded_run_resumes_only_its_uncommitted_chunks(ray_session, study, tmp_path):
    class StopError(Exception):
        pass

    committed: list[ChunkProgress] = []

    def stop_after_four(p: ChunkProgress) -> None:
        committed.append(p)
        if len(committed) == 4:
            raise StopError

    config = replace(TideConfig.preset("rules"), executor="ray")
    db = _copy(study, tmp_path, "stopped")
    with DuckDBWarehouse(db) as wh:
        with pytest.raises(StopError):
            recognize_study(wh, "s1", config, progress=False, chunk_rows=CHUNK, on_chunk=stop_after_four)
        assert wh.count("tide_runs", {"stage": "recognition.chunk"}) == 4
        report = recognize_study(wh, "s1", config, progress=False, chunk_rows=CHUNK)
        assert report.n_cached == sum(p.n_notes for p in committed)  # committed notes are not recognized again
        assert report.n_cached + report.n_recognized == report.n_valid == 79
        got = _cache(wh)
    with DuckDBWarehouse(_copy(study, tmp_path, "whole")) as wh:
        recognize_study(wh, "s1", TideConfig.preset("rules"), progress=False, chunk_rows=CHUNK)
        assert got == _cache(wh)
    assert not (tmp_path / "stopped.duckdb.staging").exists()


def test_a_shard_its_worker_cannot_read_stops_the_recognition_named(ray_session, study, tmp_path):
    config = replace(TideConfig.preset("rules"), executor="ray")
    with ShardVanishes(_copy(study, tmp_path, "vanish")) as wh:
        with pytest.raises(TideError) as e:
            recognize_study(wh, "s1", config, progress=False, chunk_rows=CHUNK)
        assert e.value.code == "E376" and "recognition of study s1: chunk 3/9 failed" in " ".join(e.value.__notes__)
        ids = wh.read_table("notes", ["note_id"]).column("note_id").to_pylist()[2 * CHUNK : 3 * CHUNK]
        assert wh.count("tide_recognized_notes", {"note_id": ids}) == 0  # nothing of chunk 3


def test_a_recognition_worker_killed_mid_run_is_restarted_and_the_cache_is_complete(ray_session, study, tmp_path):
    """SIGKILL one shard-recognition actor's process after the first commit: Ray restarts it and
    re-runs its chunk from the shard; every note is in the cache once, as in a local run."""
    from ray_probes import KillOneActor
    from tide_core.execution.ray_recognize_shards import ShardRecognizeStage

    with DuckDBWarehouse(_copy(study, tmp_path, "want")) as wh:
        recognize_study(wh, "s1", TideConfig.preset("rules"), progress=False, chunk_rows=CHUNK)
        want = _cache(wh)
    kill_one = KillOneActor(ray_session, ShardRecognizeStage)

    config = replace(TideConfig.preset("rules"), executor="ray")
    with DuckDBWarehouse(_copy(study, tmp_path, "killed")) as wh:
        report = recognize_study(wh, "s1", config, progress=False, chunk_rows=CHUNK, on_chunk=kill_one)
        assert kill_one.killed and report.n_recognized == 79 and report.n_failed == 0
        assert _cache(wh) == want
        ids = wh.read_table("tide_recognized_notes", ["note_id"]).column("note_id").to_pylist()
        assert len(ids) == len(set(ids)) == 79  # one entry per recognized note, none twice
    assert not (tmp_path / "killed.duckdb.staging").exists()
