"""Recognition on Ray workers that read their own chunk from a shard and stage its cache rows:
the span cache equals the local path's (bad rows, duplicates, known-PHI rows per chunk), the
driver reads no note text, a stopped run resumes exactly its uncommitted chunks, and a shard a
worker cannot read stops the run named.  One local Ray session (2 CPUs) for the module.

The module's Ray runs share one pool of recognition actors (the same rules configuration); the
local reference run is made once (``reference``) and every test compares against its cache.  The
runner through ``open_warehouse`` and a notes view on the workers run here too, on that pool."""

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
from tide_core.io.open import open_warehouse
from tide_core.runner import recognize_study
from tide_core.store.span_cache import SpanCache
from warehouse_probes import NotesReads, ShardVanishes, Without

pytest.importorskip("ray")

CHUNK = 5
N_CHUNKS = 10  # 44 rows by 5, and the duplicates' decisions
N_VALID = 39
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
        rows = wh.read_table("notes").to_pylist()[:40]
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


def _recognize(db: Path, how: str):
    """One recognition of ``db`` (``local``, ``shards`` or ``driver-read`` on Ray): the report's
    numbers and the cache, the notes reads, the chunks reported and the progress rows written."""
    config = replace(TideConfig.preset("rules"), executor="local" if how == "local" else "ray")
    seen: list[ChunkProgress] = []
    with NotesReads(db) as inner:
        wh = Without(inner, "iter_refs", "export_rows") if how == "driver-read" else inner
        report = recognize_study(wh, "s1", config, progress=False, chunk_rows=CHUNK, on_chunk=seen.append)
        out = (
            report.fingerprint,
            report.n_rows,
            report.n_valid,
            report.n_quarantined,
            report.n_recognized,
            report.n_spans,
            report.spans_by_label,
            _cache(inner),
        )
        progress_rows = inner.count("tide_runs", {"stage": "recognition.chunk"})
        return out, inner.notes_reads, sorted(p.chunk for p in seen), progress_rows


@pytest.fixture(scope="module")
def reference(study, tmp_path_factory):
    """The local path's run of the study (chunks of ``CHUNK``), made once: the database and its results."""
    db = _copy(study, tmp_path_factory.mktemp("reference"), "local")
    return db, _recognize(db, "local")


def test_workers_recognize_their_own_shards_into_the_cache_the_local_path_writes(
    ray_session, study, reference, tmp_path
):
    out = {"local": reference[1][0]}
    assert None in reference[1][1]  # the local path reads whole rows
    for how in ("driver-read", "shards"):  # the shards last: their pool serves the module's other tests
        out[how], reads, chunks, progress_rows = _recognize(_copy(study, tmp_path, how), how)
        assert chunks == list(range(N_CHUNKS)) and progress_rows == N_CHUNKS
        if how == "shards":
            assert reads == [("note_id", "patient_id")]  # the text went from DuckDB to the workers' shards
        else:
            assert None in reads
    assert reference[1][2:] == (list(range(N_CHUNKS)), N_CHUNKS)
    assert out["shards"] == out["local"] == out["driver-read"]
    assert out["shards"][4] == N_VALID and out["shards"][5] > 300
    known = [r for r in out["shards"][7]["tide_spans"] if "tide.known_phi" in dict(r)["recognizer"]]
    assert len(known) > 100, len(known)  # the chunk's known-PHI rows reached the workers
    assert not (tmp_path / "shards.duckdb.staging").exists()


def test_a_stopped_sharded_run_resumes_only_its_uncommitted_chunks(ray_session, study, reference, tmp_path):
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
        assert report.n_cached + report.n_recognized == report.n_valid == N_VALID
        assert _cache(wh) == reference[1][0][7]  # the cache of a whole local run
    assert not (tmp_path / "stopped.duckdb.staging").exists()


def test_a_shard_its_worker_cannot_read_stops_the_recognition_named(ray_session, study, tmp_path):
    config = replace(TideConfig.preset("rules"), executor="ray")
    with ShardVanishes(_copy(study, tmp_path, "vanish")) as wh:
        with pytest.raises(TideError) as e:
            recognize_study(wh, "s1", config, progress=False, chunk_rows=CHUNK)
        assert e.value.code == "E376" and f"recognition of study s1: chunk 3/{N_CHUNKS} failed" in " ".join(
            e.value.__notes__
        )
        ids = wh.read_table("notes", ["note_id"]).column("note_id").to_pylist()[2 * CHUNK : 3 * CHUNK]
        assert wh.count("tide_recognized_notes", {"note_id": ids}) == 0  # nothing of chunk 3


def test_a_recognition_worker_killed_mid_run_is_restarted_and_the_cache_is_complete(
    ray_session, study, reference, tmp_path
):
    """SIGKILL one shard-recognition actor's process after the first commit: Ray restarts it and
    re-runs its chunk from the shard; every note is in the cache once, as in a local run."""
    from ray_probes import KillOneActor
    from tide_core.execution.ray_recognize_shards import ShardRecognizeStage

    want = reference[1][0][7]  # the local run's cache
    kill_one = KillOneActor(ray_session, ShardRecognizeStage)

    config = replace(TideConfig.preset("rules"), executor="ray")
    with DuckDBWarehouse(_copy(study, tmp_path, "killed")) as wh:
        report = recognize_study(wh, "s1", config, progress=False, chunk_rows=CHUNK, on_chunk=kill_one)
        assert kill_one.killed and report.n_recognized == N_VALID and report.n_failed == 0
        assert _cache(wh) == want
        ids = wh.read_table("tide_recognized_notes", ["note_id"]).column("note_id").to_pylist()
        assert len(ids) == len(set(ids)) == N_VALID  # one entry per recognized note, none twice
    assert not (tmp_path / "killed.duckdb.staging").exists()


def test_runner_with_the_ray_executor_fills_the_same_cache(ray_session, study, reference, tmp_path):
    """`recognize_study(..., executor="ray")` on a warehouse from ``open_warehouse``, in its default
    chunks, writes the spans and the fingerprint of the local run."""
    config = replace(TideConfig.preset("rules"), executor="ray")
    wh = open_warehouse(f"duckdb:{_copy(study, tmp_path, 'runner')}")
    try:
        report = recognize_study(wh, "s1", config, progress=False)
        got = (report.fingerprint, report.n_recognized, report.n_failed, SpanCache(wh, config.tables).spans("s1"))
    finally:
        wh.close()
    with DuckDBWarehouse(reference[0]) as local:
        spans = SpanCache(local, config.tables).spans("s1")
    assert got == (reference[1][0][0], N_VALID, 0, spans) and sum(len(v) for v in spans.values()) > 100


def test_a_view_on_ray_workers(ray_session, tmp_path):
    """A DuckDB view as the notes table (``test_notes_table_errors``) is recognized on the workers."""
    from test_notes_table_errors import CONFIG, MAPPING, N, _quarantined, _raw

    with DuckDBWarehouse(tmp_path / "ray.duckdb") as wh:
        _raw(wh)
        wh.sql(f"CREATE VIEW notes AS {MAPPING}")
        rec = recognize_study(wh, "s", replace(CONFIG, executor="ray"), progress=False, chunk_rows=7)
        assert rec.n_rows == N + 2 and rec.n_recognized == N and rec.n_failed == 0
        assert _quarantined(wh) == [("e1", "E604"), ("n3", "E608")]
