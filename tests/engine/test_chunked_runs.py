"""Chunked study runs on DuckDB: same outputs as one big chunk, bounded reads, and resume after SIGKILL.

The kill tests run the runner in a child process (forked from the test) that is SIGKILLed (no
cleanup, no atexit, no rollback of anything committed), then rerun it and compare every table
with an uninterrupted run.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pyarrow as pa
import pytest
from forked_child import run_forked

from tide_core.anonymize.keys import FileKeyProvider
from tide_core.chunk_progress import ChunkProgress
from tide_core.cli.cmd_demo import load_demo
from tide_core.config import TideConfig
from tide_core.execution import dispatch
from tide_core.io.open import open_warehouse
from tide_core.runner import anonymize_study, recognize_study

N_NOTES = 36
CHUNK = 8
CONFIG = TideConfig.preset("rules")
TIMESTAMPS = ("released_at", "quarantined_at", "created_at", "recognized_at")
OUTPUTS = ("tide_spans", "tide_recognized_notes", "tide_deid_notes", "tide_released_spans", "tide_quarantine")


def _study(path: Path) -> None:
    """A small study with every kind of row: valid, duplicated, conflicting, no id, empty text."""
    wh = open_warehouse(f"duckdb:{path}")
    try:
        load_demo(wh, seed=7)
        rows = wh.read_table("notes").to_pylist()[:N_NOTES]
        rows += [
            dict(rows[0]),  # exact duplicate, in another chunk (E608)
            dict(rows[9], text=rows[9]["text"] + " (amended)"),  # conflicting duplicate (E607)
            dict(rows[2], note_id=None),  # no id (E601)
            dict(rows[3], note_id="empty-1", text="   "),  # empty text (E604)
        ]
        wh.replace_table("notes", pa.Table.from_pylist(rows, schema=wh.read_table("notes").schema))
    finally:
        wh.close()


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    """The study's warehouse file, written once; each test runs on its own copy."""
    path = tmp_path_factory.mktemp("study") / "study.duckdb"
    _study(path)
    return path


@pytest.fixture(scope="module")
def recognized(study, tmp_path_factory) -> Path:
    """The study recognized in chunks of CHUNK (before an anonymization run), written once."""
    path = tmp_path_factory.mktemp("recognized") / "recognized.duckdb"
    shutil.copy(study, path)
    wh = open_warehouse(f"duckdb:{path}")
    try:
        recognize_study(wh, "s1", CONFIG, progress=False, chunk_rows=CHUNK)
    finally:
        wh.close()
    return path


def _snapshot(path: Path) -> dict[str, list[tuple]]:
    wh = open_warehouse(f"duckdb:{path}")
    try:
        out = {}
        for name in OUTPUTS:
            rows = wh.read_table(name).to_pylist() if wh.table_exists(name) else []
            out[name] = sorted(tuple(sorted((k, repr(v)) for k, v in r.items() if k not in TIMESTAMPS)) for r in rows)
        return out
    finally:
        wh.close()


def _keys(root: Path) -> FileKeyProvider:
    keys = FileKeyProvider(root / "keys")
    if not keys.has("s1", "k1"):
        keys.create("s1", "k1")
    return keys


@pytest.fixture(scope="module")
def reference(study, tmp_path_factory) -> tuple[Path, dict[str, list[tuple]]]:
    """One uninterrupted run in a single chunk: what every chunked or resumed run must equal."""
    root = tmp_path_factory.mktemp("chunked")
    db = root / "ref.duckdb"
    shutil.copy(study, db)
    wh = open_warehouse(f"duckdb:{db}")
    try:
        recognize_study(wh, "s1", CONFIG, progress=False, chunk_rows=10_000)
        anonymize_study(wh, "s1", "k1", _keys(root), CONFIG, progress=False, chunk_rows=10_000)
    finally:
        wh.close()
    return root, _snapshot(db)


def test_chunked_run_equals_one_chunk_and_reports_progress(reference, study, tmp_path):
    root, expected = reference
    db = tmp_path / "c.duckdb"
    shutil.copy(study, db)
    seen: list[ChunkProgress] = []
    wh = open_warehouse(f"duckdb:{db}")
    try:
        rec = recognize_study(wh, "s1", CONFIG, progress=False, chunk_rows=CHUNK, on_chunk=seen.append)
        anon = anonymize_study(
            wh, "s1", "k1", _keys(root), CONFIG, progress=False, chunk_rows=CHUNK, on_chunk=seen.append
        )
        chunk_rows = wh.read_table("tide_runs", where={"study": "s1", "stage": "recognition.chunk"}).to_pylist()
        # every input row ends released or quarantined, in the tables (not only in the report)
        released = wh.count("tide_deid_notes", {"study": "s1", "key": "k1"})
        codes = wh.read_table("tide_quarantine", ["code"], where={"study": "s1", "key": "k1"}).column("code")
        assert released + len(codes) == N_NOTES + 4
        assert {"E601", "E604", "E607", "E608"} <= set(codes.to_pylist())  # the id-less row included
        run = wh.read_table("tide_runs", where={"study": "s1", "stage": "recognition"}).to_pylist()
    finally:
        wh.close()
    assert _snapshot(db) == expected
    n_rows = N_NOTES + 4
    assert rec.n_rows == anon.n_rows == n_rows
    assert anon.n_released + anon.n_quarantined == n_rows
    rec_progress = [p for p in seen if p.stage == "recognition"]
    n_chunks = -(-n_rows // CHUNK) + 1  # the rows of duplicated ids are decided in one last chunk
    assert [p.chunk for p in rec_progress] == list(range(n_chunks))
    assert {p.n_chunks for p in seen} == {n_chunks}
    assert rec_progress[-1].n_done_rows == n_rows and not any(p.resumed for p in seen)
    assert sorted(r["chunk"] for r in chunk_rows) == list(range(n_chunks))  # tide_runs records chunk progress
    assert len(run) == 1 and run[0]["n_chunks"] == n_chunks and run[0]["chunk"] is None


def test_chunk_reads_only_its_patients(study, tmp_path):
    """Known-PHI matching reads the patients of the chunk's notes, not the whole table."""
    from tide_core.engine import recognizer_setup as runner

    db = tmp_path / "p.duckdb"
    shutil.copy(study, db)
    wh = open_warehouse(f"duckdb:{db}")
    reads: list[int] = []
    original = runner._patient_rows_for

    def counting(wh_, table, ids, everyone):
        rows = original(wh_, table, ids, everyone)
        reads.append(len(rows))
        return rows

    runner._patient_rows_for = counting
    try:
        n_patients = wh.count("patients")
        recognize_study(wh, "s1", CONFIG, progress=False, chunk_rows=CHUNK)
    finally:
        runner._patient_rows_for = original
        wh.close()
    assert reads and max(reads) < n_patients and sum(reads) >= 1


def _child(db: Path, keys: Path, stage: str, when: str, n: int) -> None:
    """The killed run, in a forked child: dies by SIGKILL inside chunk ``n``'s recognition, after
    ``n`` chunks committed (``mid``), or right after chunk ``n``'s commit (``after``)."""
    calls = []
    if when == "mid":
        real = dispatch.recognize_notes

        def dying(*a, **k):  # type: ignore[no-untyped-def]
            calls.append(1)
            if len(calls) == n + 1:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(*a, **k)

        dispatch.recognize_notes = dying  # the child's own copy of the module: the parent is untouched

    def hook(p: ChunkProgress) -> None:
        if when == "after" and p.chunk + 1 == n:
            os.kill(os.getpid(), signal.SIGKILL)

    wh = open_warehouse(f"duckdb:{db}")
    if stage == "recognize":
        recognize_study(wh, "s1", CONFIG, progress=False, chunk_rows=CHUNK, on_chunk=hook)
    else:
        anonymize_study(wh, "s1", "k1", FileKeyProvider(keys), CONFIG, progress=False, chunk_rows=CHUNK, on_chunk=hook)


def _killed(tmp_path: Path, db: Path, keys: Path, stage: str, when: str, n: int) -> None:
    """Run :func:`_child` in a child process (forked: no interpreter start-up, the recognizers this
    process loaded already) that must end by SIGKILL: no cleanup, no atexit, no rollback."""
    status = run_forked(lambda: _child(db, keys, stage, when, n))
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, status


@pytest.mark.parametrize("when", ["mid", "after"])
def test_recognition_resumes_after_sigkill(reference, study, tmp_path, when):
    root, expected = reference
    db = tmp_path / "k.duckdb"
    shutil.copy(study, db)
    _killed(tmp_path, db, root / "keys", "recognize", when, 2)
    wh = open_warehouse(f"duckdb:{db}")
    try:
        committed = wh.count("tide_recognized_notes", {"study": "s1"})
        assert wh.count("tide_runs", {"stage": "recognition"}) == 0  # the killed run never finished
        assert wh.count("tide_runs", {"stage": "recognition.chunk"}) == 2
        assert 0 < committed <= 2 * CHUNK
        seen: list[ChunkProgress] = []
        rec = recognize_study(wh, "s1", CONFIG, progress=False, chunk_rows=CHUNK, on_chunk=seen.append)
        assert rec.n_cached == committed  # committed chunks are not recognized again
        assert rec.n_recognized == rec.n_valid - committed
        assert [p.n_worked for p in seen[:2]] == [0, 0]
        anonymize_study(wh, "s1", "k1", _keys(root), CONFIG, progress=False, chunk_rows=CHUNK)
    finally:
        wh.close()
    assert _snapshot(db) == expected  # no duplicate and no missing row


def test_anonymization_resumes_after_sigkill(reference, recognized, tmp_path):
    root, expected = reference
    db = tmp_path / "a.duckdb"
    shutil.copy(recognized, db)
    _killed(tmp_path, db, root / "keys", "anonymize", "after", 3)
    wh = open_warehouse(f"duckdb:{db}")
    try:
        assert wh.count("tide_runs", {"stage": "anonymization.chunk"}) == 3
        seen: list[ChunkProgress] = []
        anon = anonymize_study(
            wh, "s1", "k1", _keys(root), CONFIG, progress=False, chunk_rows=CHUNK, on_chunk=seen.append
        )
        assert [p.resumed for p in seen[:4]] == [True, True, True, False]
        assert anon.n_released + anon.n_quarantined == N_NOTES + 4
        # nothing changed since the finished run: the next run keeps every chunk (anonymizes none)
        seen.clear()
        again = anonymize_study(
            wh, "s1", "k1", _keys(root), CONFIG, progress=False, chunk_rows=CHUNK, on_chunk=seen.append
        )
        assert all(p.resumed for p in seen) and again.n_released == anon.n_released
    finally:
        wh.close()
    assert _snapshot(db) == expected


def test_changed_chunk_is_not_resumed(reference, recognized, tmp_path):
    """A chunk whose input changed since the interrupted run is anonymized again (never a stale release)."""
    root, _ = reference
    db = tmp_path / "ch.duckdb"
    shutil.copy(recognized, db)
    _killed(tmp_path, db, root / "keys", "anonymize", "after", 2)
    wh = open_warehouse(f"duckdb:{db}")
    try:
        first = wh.read_table("notes").to_pylist()[1]["note_id"]  # row 0 is duplicated: decided last
        wh.sql("UPDATE notes SET note_type = 'changed' WHERE note_id = ?", [first])
        seen: list[ChunkProgress] = []
        anonymize_study(wh, "s1", "k1", _keys(root), CONFIG, progress=False, chunk_rows=CHUNK, on_chunk=seen.append)
        assert [p.resumed for p in seen[:2]] == [False, True]
    finally:
        wh.close()


def test_notes_that_left_the_source_leave_the_cache_and_release(reference, recognized, tmp_path):
    root, _ = reference
    db = tmp_path / "gone.duckdb"
    shutil.copy(recognized, db)
    wh = open_warehouse(f"duckdb:{db}")
    try:
        anonymize_study(wh, "s1", "k1", _keys(root), CONFIG, progress=False, chunk_rows=CHUNK)
        gone = wh.read_table("notes").to_pylist()[5]["note_id"]
        wh.sql("DELETE FROM notes WHERE note_id = ?", [gone])
        recognize_study(wh, "s1", CONFIG, progress=False, chunk_rows=CHUNK)
        anonymize_study(wh, "s1", "k1", _keys(root), CONFIG, progress=False, chunk_rows=CHUNK)
        for name in OUTPUTS:
            assert wh.count(name, {"note_id": gone}) == 0, name
        assert os.path.exists(db)
    finally:
        wh.close()


def test_connection_reopened_between_chunks_changes_nothing(reference, study, tmp_path, monkeypatch):
    """A DuckDB connection reopened every REFRESH_EVERY_CHUNKS committed chunks (to hand back the
    memory DuckDB keeps for the file) neither loses nor repeats a chunk: outputs equal the reference."""
    import tide_core.engine.chunk_run as runner_mod

    root, expected = reference
    monkeypatch.setattr(runner_mod, "REFRESH_EVERY_CHUNKS", 2)
    db = tmp_path / "r.duckdb"
    shutil.copy(study, db)
    wh = open_warehouse(f"duckdb:{db}")
    reopened: list[object] = []
    real_refresh = wh.refresh

    def counting_refresh() -> bool:
        reopened.append(wh._con)
        return real_refresh()

    wh.refresh = counting_refresh
    try:
        recognize_study(wh, "s1", CONFIG, progress=False, chunk_rows=CHUNK)
        n_recognition = len(reopened)
        anonymize_study(wh, "s1", "k1", _keys(root), CONFIG, progress=False, chunk_rows=CHUNK)
    finally:
        wh.close()
    n_chunks = -(-(N_NOTES + 4) // CHUNK) + 1
    assert n_recognition == n_chunks // 2 and len(reopened) == 2 * (n_chunks // 2)
    assert len({id(c) for c in reopened}) == len(reopened)  # a new connection each time
    assert _snapshot(db) == expected
