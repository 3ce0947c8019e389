"""Anonymization on Ray workers that stage their own tables: the released rows equal the local
path's, a rerun resumes every committed chunk, and a chunk a worker cannot stage stops the run,
named, with nothing of it published.  One local Ray session (2 CPUs) for the module."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from tide_core.anonymize.keys import FileKeyProvider
from tide_core.chunk_progress import ChunkProgress
from tide_core.cli.cmd_demo import load_demo
from tide_core.config import TideConfig
from tide_core.errors import TideError
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.io.staging import ENV_STAGING_DIR
from tide_core.runner import anonymize_study, recognize_study
from tide_core.spans import Note
from tide_core.store.span_cache import SpanCache
from warehouse_probes import NotesReads, ShardVanishes, Without

pytest.importorskip("ray")

N_NOTES = 54  # the first demo notes
CHUNK = 6
N_CHUNKS = 9  # several in flight on two actors


@pytest.fixture(scope="module")
def ray_session(local_ray):
    return local_ray


@pytest.fixture(scope="module")
def recognized(tmp_path_factory) -> tuple[Path, FileKeyProvider]:
    root = tmp_path_factory.mktemp("release")
    keys = FileKeyProvider(root / "keys")
    keys.create("s1", "k1")
    db = root / "recognized.duckdb"
    with DuckDBWarehouse(db) as wh:
        load_demo(wh, seed=7)
        wh.replace_table("notes", wh.read_table("notes").slice(0, N_NOTES))
        recognize_study(wh, "s1", TideConfig.preset("rules"), progress=False, chunk_rows=CHUNK)
    return db, keys


def _copy(recognized, tmp_path: Path, name: str) -> Path:
    db = tmp_path / f"{name}.duckdb"
    shutil.copy(recognized[0], db)
    return db


def _released(wh: DuckDBWarehouse) -> dict[str, list[tuple]]:
    drop = {"released_at", "quarantined_at"}
    out = {}
    for name in ("tide_deid_notes", "tide_released_spans", "tide_quarantine"):
        rows = wh.read_table(name, where={"study": "s1", "key": "k1"}).to_pylist()
        out[name] = sorted(tuple((k, str(v)) for k, v in r.items() if k not in drop) for r in rows)
    return out


def _release(recognized, db: Path, executor: str):
    """Anonymize ``db`` (a copy of the recognized study): the report's numbers and the released
    rows, the chunks reported and the chunks' progress rows."""
    config = replace(TideConfig.preset("rules"), executor=executor)
    seen: list[ChunkProgress] = []
    with DuckDBWarehouse(db) as wh:
        report = anonymize_study(
            wh, "s1", "k1", recognized[1], config, progress=False, chunk_rows=CHUNK, on_chunk=seen.append
        )
        out = (report.n_released, report.n_quarantined, report.spans_by_label, _released(wh))
        chunk_rows = wh.read_table("tide_runs", ["chunk"], where={"stage": "anonymization.chunk"}).to_pylist()
    return out, seen, chunk_rows


@pytest.fixture(scope="module")
def local_release(recognized, tmp_path_factory):
    """The local path's release of the recognized study, made once for the module."""
    return _release(recognized, _copy(recognized, tmp_path_factory.mktemp("local"), "local"), "local")


def test_workers_release_exactly_what_the_local_path_releases_and_a_rerun_resumes(
    ray_session, recognized, local_release, tmp_path
):
    out = {"local": local_release[0]}
    ray_run = _release(recognized, _copy(recognized, tmp_path, "ray"), "ray")
    out["ray"] = ray_run[0]
    for _, seen, chunk_rows in (local_release, ray_run):
        assert sorted(p.chunk for p in seen) == list(range(N_CHUNKS)) and not any(p.resumed for p in seen)
        assert sorted(r["chunk"] for r in chunk_rows) == list(range(N_CHUNKS))
    assert out["ray"][0] == out["local"][0] == N_NOTES
    assert out["ray"][1:] == out["local"][1:]
    assert len(out["ray"][3]["tide_released_spans"]) > 300
    assert not (tmp_path / "ray.duckdb.staging").exists()  # every staged file was published or removed


class _StopError(Exception):
    pass


def test_a_ray_run_stopped_after_some_chunks_resumes_exactly_those(ray_session, recognized, tmp_path):
    config = replace(TideConfig.preset("rules"), executor="ray")
    committed: list[int] = []

    def stop_after_five(p: ChunkProgress) -> None:
        committed.append(p.chunk)
        if len(committed) == 5:
            raise _StopError

    db = _copy(recognized, tmp_path, "stopped")
    with DuckDBWarehouse(db) as wh:
        with pytest.raises(_StopError):
            anonymize_study(
                wh, "s1", "k1", recognized[1], config, progress=False, chunk_rows=CHUNK, on_chunk=stop_after_five
            )
        assert wh.count("tide_runs", {"stage": "anonymization.chunk"}) == 5
        seen: list[ChunkProgress] = []
        anonymize_study(wh, "s1", "k1", recognized[1], config, progress=False, chunk_rows=CHUNK, on_chunk=seen.append)
        assert sorted(p.chunk for p in seen if p.resumed) == sorted(committed)
        assert sorted(p.chunk for p in seen) == list(range(N_CHUNKS))
        assert wh.count("tide_deid_notes", {"study": "s1", "key": "k1"}) == N_NOTES
    assert not (tmp_path / "stopped.duckdb.staging").exists()


def _stopped_and_nothing_published(wh, e, code: str) -> None:
    assert e.value.code == code
    notes = " ".join(getattr(e.value, "__notes__", []))
    assert "anonymization of study s1: chunk" in notes and f"/{N_CHUNKS} failed" in notes
    assert not wh.table_exists("tide_deid_notes") or wh.count("tide_deid_notes") == 0
    assert wh.count("tide_runs", {"stage": "anonymization.chunk"}) == 0


def test_a_chunk_its_worker_cannot_stage_stops_the_run_named_and_publishes_nothing(
    ray_session, recognized, tmp_path, monkeypatch
):
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("")
    monkeypatch.setenv(ENV_STAGING_DIR, str(blocker))  # the workers' staging directory cannot exist
    db = _copy(recognized, tmp_path, "blocked")
    config = replace(TideConfig.preset("rules"), executor="ray")
    with DuckDBWarehouse(db) as inner:
        wh = Without(inner, "iter_refs", "export_rows")  # the driver reads; the worker fails to stage
        with pytest.raises(TideError) as e:
            anonymize_study(wh, "s1", "k1", recognized[1], config, progress=False, chunk_rows=CHUNK)
        _stopped_and_nothing_published(inner, e, "E371")
    with DuckDBWarehouse(db) as wh:  # with shards, the driver's export is what fails first
        with pytest.raises(TideError) as e:
            anonymize_study(wh, "s1", "k1", recognized[1], config, progress=False, chunk_rows=CHUNK)
        _stopped_and_nothing_published(wh, e, "E329")
        assert f"chunk 1/{N_CHUNKS} failed" in " ".join(e.value.__notes__)


def _chunk_ids(wh: DuckDBWarehouse, index: int) -> list[str]:
    ids = wh.read_table("notes", ["note_id"]).column("note_id").to_pylist()
    return ids[index * CHUNK : (index + 1) * CHUNK]


def test_a_shard_its_worker_cannot_read_stops_the_run_named_and_a_rerun_completes(ray_session, recognized, tmp_path):
    db = _copy(recognized, tmp_path, "vanish")
    config = replace(TideConfig.preset("rules"), executor="ray")
    with ShardVanishes(db) as wh:
        with pytest.raises(TideError) as e:
            anonymize_study(wh, "s1", "k1", recognized[1], config, progress=False, chunk_rows=CHUNK)
        assert e.value.code == "E376" and f"chunk 3/{N_CHUNKS} failed" in " ".join(e.value.__notes__)
        assert wh.count("tide_deid_notes", {"note_id": _chunk_ids(wh, 2)}) == 0  # nothing of chunk 3
    with DuckDBWarehouse(db) as wh:
        report = anonymize_study(wh, "s1", "k1", recognized[1], config, progress=False, chunk_rows=CHUNK)
        assert report.n_released == N_NOTES and wh.count("tide_deid_notes", {"study": "s1", "key": "k1"}) == N_NOTES
    assert not (tmp_path / "vanish.duckdb.staging").exists()


def test_a_warehouse_that_cannot_publish_staged_tables_is_released_in_the_driver(recognized, tmp_path, caplog):
    db = _copy(recognized, tmp_path, "plain")
    config = replace(TideConfig.preset("rules"), executor="ray")
    with DuckDBWarehouse(db) as inner:
        wh = Without(inner, "staging_target", "publish")
        with caplog.at_level("WARNING", logger="tide.runner"):
            report = anonymize_study(wh, "s1", "k1", recognized[1], config, progress=False, chunk_rows=CHUNK)
        assert report.n_released == N_NOTES and inner.count("tide_deid_notes") == N_NOTES
    assert any("anonymizing in the driver" in r.getMessage() for r in caplog.records)
    assert not (tmp_path / "plain.duckdb.staging").exists()


def test_a_release_worker_killed_mid_run_is_restarted_and_the_release_is_complete(
    ray_session, recognized, local_release, tmp_path
):
    """SIGKILL one release actor's process after the first commit: Ray restarts it and re-runs its
    chunk; every note is released exactly once and equals the local release."""
    from ray_probes import KillOneActor
    from tide_core.execution.ray_release import ReleaseStage

    want = local_release[0][3]  # the local release
    kill_one = KillOneActor(ray_session, ReleaseStage)

    db = _copy(recognized, tmp_path, "killed")
    config = replace(TideConfig.preset("rules"), executor="ray")
    with DuckDBWarehouse(db) as wh:
        anonymize_study(wh, "s1", "k1", recognized[1], config, progress=False, chunk_rows=CHUNK, on_chunk=kill_one)
        assert kill_one.killed
        assert _released(wh) == want
        ids = wh.read_table("tide_deid_notes", ["note_id"]).column("note_id").to_pylist()
        assert len(ids) == len(set(ids)) == N_NOTES
    assert not (tmp_path / "killed.duckdb.staging").exists()


def test_workers_read_their_own_shards_the_driver_reads_no_text_and_the_release_is_the_local_one(
    ray_session, recognized, tmp_path
):
    """A study with duplicated, conflicting, id-less and empty rows: released from shards on Ray
    it equals the local release, and the driver read nothing of the notes but their ids."""
    import pyarrow as pa

    base = _copy(recognized, tmp_path, "base")
    with DuckDBWarehouse(base) as wh:
        rows = wh.read_table("notes").to_pylist()
        rows += [
            dict(rows[0]),  # exact duplicate (E608), decided in the last chunk
            dict(rows[20], text=rows[20]["text"] + " (amended)"),  # conflicting duplicate (E607)
            dict(rows[2], note_id=None),  # no id (E601)
            dict(rows[3], note_id="empty-1", text="   "),  # empty text (E604)
        ]
        wh.replace_table("notes", pa.Table.from_pylist(rows, schema=wh.read_table("notes").schema))
        recognize_study(wh, "s1", TideConfig.preset("rules"), progress=False, chunk_rows=CHUNK)
        cache = SpanCache(wh)  # reviewer decisions travel as rows and are applied in the worker
        first, second = (Note(r["note_id"], r["patient_id"], r["text"]) for r in rows[5:7])
        rejected = cache.spans("s1", [first.note_id])[first.note_id][0]
        cache.add_review("s1", first, rejected.start, rejected.end, rejected.label, "reject", reviewer="qa")
        cache.add_review("s1", second, 0, 4, "OTHER", "add", reviewer="qa")
    out = {}
    for executor in ("local", "ray"):
        db = _copy((base,), tmp_path, executor)
        with NotesReads(db) as wh:
            config = replace(TideConfig.preset("rules"), executor=executor)
            seen: list[ChunkProgress] = []
            report = anonymize_study(
                wh, "s1", "k1", recognized[1], config, progress=False, chunk_rows=CHUNK, on_chunk=seen.append
            )
            out[executor] = (report.n_released, report.n_quarantined, report.quarantined_by_code, _released(wh))
            reads = wh.notes_reads
        assert sorted(p.chunk for p in seen) == list(range(N_CHUNKS + 2))  # 4 more rows, and the duplicates
        if executor == "local":
            assert None in reads  # the reference path reads whole rows
        else:
            assert reads == [("note_id", "patient_id")]  # the workers read the rest from their shards
    assert out["ray"] == out["local"]
    assert out["ray"][2] == {"E601": 1, "E604": 1, "E607": 2, "E608": 1}
    released = [dict(r) for r in out["ray"][3]["tide_released_spans"]]
    assert not [r for r in released if r["note_id"] == first.note_id and r["start"] == str(rejected.start)]
    assert [r for r in released if r["note_id"] == second.note_id and (r["start"], r["end"]) == ("0", "4")]
    assert not (tmp_path / "ray.duckdb.staging").exists()
