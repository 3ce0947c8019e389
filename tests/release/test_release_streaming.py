"""The release path reads a study chunk by chunk: checks, decision and publish never hold it whole.

A study of 60 notes is verified with chunks of 10 rows and published in batches of 7 rows; every
read of note text (source or released) is spied on.  The outcomes equal those of one big chunk,
every released text is read once per pass, and a publish that fails half-way changes nothing
researchers can see (the batches are written inside one commit).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

import release_study
from release_helpers import audit_every_frame, fixed_key, researchers_see
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.config import TideConfig
from tide_core.engine import study_chunks
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.io.open import open_warehouse
from tide_core.release import evidence, lifecycle, publish, scan
from tide_core.runner import anonymize_study, recognize_study
from tide_core.store.release_content import row_hash

S, K = "big", "k1"
N_NOTES, N_PATIENTS = 60, 12
CONFIG = TideConfig.preset("rules")
DEID = CONFIG.tables.deid_notes


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("streaming")
    provider = FileKeyProvider(root / "keys")
    fixed_key(provider, S, K)
    with open_warehouse(f"duckdb:{root / 'wh.duckdb'}") as wh:
        release_study.write(wh, N_NOTES, N_PATIENTS)
        recognize_study(wh, S, CONFIG, progress=False)
        anonymize_study(wh, S, K, provider, CONFIG, progress=False)
    return root


@pytest.fixture
def wh(base: Path, tmp_path: Path) -> Iterator[DuckDBWarehouse]:
    db = tmp_path / "wh.duckdb"
    db.write_bytes((base / "wh.duckdb").read_bytes())
    w = DuckDBWarehouse(db)
    try:
        yield w
    finally:
        w.close()


def _counts(outcomes: dict) -> dict:
    """Outcomes without ``scan/`` metadata (chunks reused and scanned: a property of the pass)."""
    return {
        n: (o.passed, o.description, {k: v for k, v in o.metadata.items() if not k.startswith("scan/")})
        for n, o in outcomes.items()
    }


class Reads:
    """Every read of a table's text column: (table, rows returned)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.log: list[tuple[str, int]] = []
        read, stream = DuckDBWarehouse.read_table, DuckDBWarehouse.iter_batches

        def read_table(wh, name, columns=None, where=None):  # type: ignore[no-untyped-def]
            t = read(wh, name, columns, where)
            if columns is None or "text" in columns:
                self.log.append((name, t.num_rows))
            return t

        def iter_batches(wh, name, columns=None, where=None, batch_rows=1000):  # type: ignore[no-untyped-def]
            for b in stream(wh, name, columns, where, batch_rows):
                if columns is None or "text" in columns:
                    self.log.append((name, b.num_rows))
                yield b

        monkeypatch.setattr(DuckDBWarehouse, "read_table", read_table)
        monkeypatch.setattr(DuckDBWarehouse, "iter_batches", iter_batches)

    def of(self, name: str) -> list[int]:
        return [n for t, n in self.log if t == name]


def test_the_checks_read_the_study_a_chunk_at_a_time_and_agree_with_one_chunk(wh, monkeypatch):
    whole = lifecycle.verify_release(wh, CONFIG, S, K)
    assert all(o.passed for o in whole.values()), {n: o.description for n, o in whole.items()}
    monkeypatch.setattr(study_chunks, "DEFAULT_CHUNK_ROWS", 10)
    reads = Reads(monkeypatch)
    chunked = lifecycle.verify_release(wh, CONFIG, S, K)
    # same verdicts and the same counts, chunk by chunk (but for how many chunks the pass scanned)
    assert _counts(chunked) == _counts(whole)
    assert whole["no_surface_survives"].metadata["n_surfaces_checked"] > N_NOTES
    notes, released = reads.of("notes"), reads.of(DEID)
    assert max(notes) <= 10 and sum(notes) == N_NOTES  # the source once, ten rows at a time
    # every released text once, for the one shared pass of all text-reading checks
    assert max(released) <= 10 and sum(released) == N_NOTES


def test_each_check_alone_streams_too(wh, monkeypatch):
    monkeypatch.setattr(study_chunks, "DEFAULT_CHUNK_ROWS", 10)
    reads = Reads(monkeypatch)
    for name, fn in lifecycle.CHECKS.items():
        assert fn(wh, CONFIG, S, K).passed, name
    assert max(reads.of("notes")) <= 10 and max(reads.of(DEID)) <= 10


def test_a_leak_in_a_later_chunk_is_found(wh, monkeypatch):
    """Chunking must not lose a note: the last chunk's released note names its patient again."""
    monkeypatch.setattr(study_chunks, "DEFAULT_CHUNK_ROWS", 10)
    note = release_study.notes(N_NOTES, N_PATIENTS)[-1]
    nid = note["note_id"]
    patient = next(p for p in release_study.patients(N_PATIENTS) if p["patient_id"] == note["patient_id"])
    row = wh.read_table(DEID, where={"study": S, "key": K, "note_id": [nid]}).to_pylist()[0]
    # the patient's name after the note, with a consistent hash (as if anonymized so)
    row["text"] += f" Seen with {patient['first_name']} {patient['last_name']}."
    row["row_hash"] = row_hash(S, K, row)
    wh.replace_partition(DEID, pa.Table.from_pylist([row], schema=wh.read_table(DEID).schema), {"note_id": [nid]})
    out = lifecycle.verify_release(wh, CONFIG, S, K)
    assert not out["no_surface_survives"].passed and not out["known_phi_survives"].passed
    assert out["rows_accounted"].passed and out["offsets_in_text"].passed


def test_released_rows_no_chunk_owns_are_counted(wh, monkeypatch):
    """A released note whose source row is gone is in no chunk: the warehouse counts find it."""
    monkeypatch.setattr(study_chunks, "DEFAULT_CHUNK_ROWS", 10)
    gone = release_study.notes(N_NOTES, N_PATIENTS)[3]["note_id"]
    wh.sql(f"DELETE FROM notes WHERE note_id = '{gone}'")
    out = lifecycle.verify_release(wh, CONFIG, S, K)
    assert not out["rows_accounted"].passed
    assert out["no_surface_survives"].metadata["n_released_without_source"] == 1
    assert out["known_phi_survives"].metadata["n_notes_without_source"] == 1
    assert not out["offsets_in_text"].passed and out["offsets_in_text"].metadata["n_bad_source_offsets"] >= 1


def _store(path: Path) -> dict[str, int]:
    store = path.with_name(path.name.removesuffix(".duckdb") + ".released.duckdb")
    if not store.exists():
        return {}
    with duckdb.connect(str(store), read_only=True) as con:
        return {
            t: int(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0])  # type: ignore[index]
            for t in ("tide_published_content", "tide_published_members", "tide_published_pointer")
        }


def test_publish_reads_the_candidate_in_batches(wh, monkeypatch):
    audit_every_frame(wh, CONFIG, S, K)
    monkeypatch.setattr(publish, "PUBLISH_BATCH_ROWS", 7)
    monkeypatch.setattr(evidence, "CANDIDATE_BATCH_ROWS", 7)
    monkeypatch.setattr(study_chunks, "DEFAULT_CHUNK_ROWS", 10)
    reads = Reads(monkeypatch)
    out = lifecycle.decide(wh, CONFIG, S, K)
    assert out["status"] == "published" and out["published_version"] == "v1"
    assert len(researchers_see(wh, S, K)) == N_NOTES
    assert max(reads.of(DEID)) <= 10
    assert _store(Path(wh.path)) == {
        "tide_published_content": N_NOTES,
        "tide_published_members": N_NOTES,
        "tide_published_pointer": 1,
    }


def test_a_publish_that_fails_half_way_changes_nothing(wh, monkeypatch):
    """Batches are written inside the one commit: a failure after three of nine batches leaves the
    store exactly as it was (no content, no members, no pointer)."""
    audit_every_frame(wh, CONFIG, S, K)
    monkeypatch.setattr(publish, "PUBLISH_BATCH_ROWS", 7)
    calls = {"n": 0}
    real = publish._researcher_rows

    def failing(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 4:
            raise OSError("disk went away")
        return real(*args, **kwargs)

    before = _store(Path(wh.path))
    monkeypatch.setattr(publish, "_researcher_rows", failing)
    with pytest.raises(OSError):
        publish.publish(wh, CONFIG.tables, S, K)
    assert calls["n"] == 4
    after = _store(Path(wh.path))
    assert after.get("tide_published_content", 0) == before.get("tide_published_content", 0) == 0
    assert after.get("tide_published_members", 0) == 0 and after.get("tide_published_pointer", 0) == 0
    assert publish.published_version(wh, CONFIG.tables, S, K) is None
    monkeypatch.setattr(publish, "_researcher_rows", real)
    assert publish.publish(wh, CONFIG.tables, S, K).version == "v1"  # the rerun publishes it whole
    assert len(researchers_see(wh, S, K)) == N_NOTES


def test_a_candidate_changed_during_the_commit_is_not_published(wh, monkeypatch):
    """The hashes streamed inside the commit must be the content fingerprinted before it (E921)."""
    audit_every_frame(wh, CONFIG, S, K)
    real = publish.candidate_digest
    nid = release_study.notes(N_NOTES, N_PATIENTS)[-1]["note_id"]

    def then_edit(*args, **kwargs):  # type: ignore[no-untyped-def]
        digest = real(*args, **kwargs)
        row = wh.read_table(DEID, where={"study": S, "key": K, "note_id": [nid]}).to_pylist()[0]
        row["text"] = row["text"] + " Addendum."
        row["row_hash"] = row_hash(S, K, row)  # a valid row, just not the content that was verified
        schema = wh.read_table(DEID).schema
        wh.replace_partition(DEID, pa.Table.from_pylist([row], schema=schema), {"note_id": [nid]})
        return digest

    monkeypatch.setattr(publish, "candidate_digest", then_edit)
    with pytest.raises(Exception) as err:
        publish.publish(wh, CONFIG.tables, S, K)
    assert getattr(err.value, "code", None) == "E921"
    assert publish.published_version(wh, CONFIG.tables, S, K) is None
    assert _store(Path(wh.path)).get("tide_published_content", 0) == 0


def test_summary_counts_stream_whole_columns(wh):
    counts = scan.release_summary_counts(wh, CONFIG.tables, S, K)
    spans = wh.read_table(CONFIG.tables.released_spans, ["label"], where={"study": S, "key": K})
    assert counts.n_released == N_NOTES and counts.n_spans == spans.num_rows > 0
    assert sum(counts.spans_by_label.values()) == spans.num_rows and len(counts.stamps) == 1


def test_the_release_row_counts_match_the_tables(wh):
    row = lifecycle.decide(wh, dataclasses.replace(CONFIG), S, K)
    assert row["n_in"] == N_NOTES and row["n_released"] == N_NOTES
    assert row["n_spans"] == wh.count(CONFIG.tables.released_spans, {"study": S, "key": K})
