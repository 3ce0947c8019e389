"""The PHI Guard's hold on the release path streams the study chunk by chunk, with the whole-study result.

A real study (the rules preset recognizes and anonymizes 35 short notes on a DuckDB file) is held
by a real ``GuardModel`` with hand-set weights ("zorblax" is certain PHI to it, "quibbet" scores
0.62; messages have a frozen threshold of 0.7): the flagged notes sit in three different chunks of
7 rows, one "quibbet" note is a message (kept) and one flagged note lost its source row after
anonymization (released, owned by no chunk: still screened).  The streamed hold
(``lifecycle._guard`` -> ``stream_guard``) must leave the same tables and the same ``HoldReport``
as the whole-study pass (``apply_guard`` with every source text) on a copy of the same file, and
must never read more than one chunk of released text at a time.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from test_phi_guard_hold import STRONG, WEAK, planted_guard

import release_study
from tests.release_helpers import fixed_key
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.assurance.guard_hold import apply_guard
from tide_core.config import TideConfig
from tide_core.engine import study_chunks
from tide_core.engine.study_chunks import iter_chunks, open_source
from tide_core.engine.study_input import read_study_input
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.release import lifecycle
from tide_core.release.guard_stream import stream_guard
from tide_core.runner import anonymize_study, recognize_study

S, K = "big", "k1"
CHUNK = 7
N_NOTES = 35
STRONG_AT = (1, 16, 30)  # chunks 0, 2 and 4
WEAK_EHR, WEAK_MSG = 22, 23  # chunk 3: an ehr note (held at 0.5) and a message (kept: 0.62 < 0.7)
ORPHAN = 9  # chunk 1: flagged, and its source row is deleted after anonymization
GUARD = planted_guard()


class CountingWarehouse(DuckDBWarehouse):
    """A DuckDB warehouse that records how many released rows with their text each read returned."""

    text_reads: list[int]

    def read_table(self, name, columns=None, where=None):
        out = super().read_table(name, columns, where)
        if name == "tide_deid_notes" and (columns is None or "text" in columns):
            self.text_reads.append(out.num_rows)
        return out

    def iter_batches(self, name, columns=None, where=None, batch_rows=1000):
        for batch in super().iter_batches(name, columns, where, batch_rows):
            if name == "tide_deid_notes" and (columns is None or "text" in columns):
                self.text_reads.append(batch.num_rows)
            yield batch


def _notes() -> list[dict]:
    notes = release_study.notes(N_NOTES, 6, seed=4)
    for i, n in enumerate(notes):
        n["source"] = "messages" if i % 2 else "ehr"
        if i in STRONG_AT or i == ORPHAN:
            n["text"] += f" Seen {STRONG} today."
        if i in (WEAK_EHR, WEAK_MSG):
            n["text"] += f" Call {WEAK} back."
    return notes


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> tuple[Path, TideConfig]:
    """The anonymized study on a DuckDB file (the candidate before any hold) and its config."""
    root = tmp_path_factory.mktemp("guard_stream")
    guard_dir = GUARD.save(root / "guard")
    config = dataclasses.replace(
        TideConfig.preset("rules"),
        guard_dir=str(guard_dir),
        guard_thresholds={"messages": 0.7},
        metadata_vocabulary={"source": ("ehr", "messages")},  # released as they are (else withheld)
    )
    keys = FileKeyProvider(root / "keys")
    fixed_key(keys, S, K)
    path = root / "wh.duckdb"
    with DuckDBWarehouse(str(path)) as wh:
        notes = _notes()
        wh.replace_table("notes", pa.Table.from_pylist(notes))
        wh.replace_table("patients", pa.Table.from_pylist(release_study.patients(6)))
        recognize_study(wh, S, config, progress=False, chunk_rows=CHUNK)
        anonymize_study(wh, S, K, keys, config, progress=False, chunk_rows=CHUNK)
        kept = [n for n in wh.read_table("notes").to_pylist() if n["note_id"] != notes[ORPHAN]["note_id"]]
        wh.replace_table("notes", pa.Table.from_pylist(kept))
    return path, config


def _copy(study, tmp_path: Path, name: str, cls=DuckDBWarehouse) -> DuckDBWarehouse:
    src, _ = study
    dst = tmp_path / f"{name}.duckdb"
    shutil.copy(src, dst)
    return cls(str(dst))


def _whole_study(wh: DuckDBWarehouse, config: TideConfig):
    """The whole-study pass: every valid source note in memory, one batch."""
    notes = {n.note_id: n for n in read_study_input(wh, S, config).notes}
    return apply_guard(
        wh,
        config,
        S,
        K,
        GUARD,
        {i: n.text for i, n in notes.items()},
        {i: n.patient_id for i, n in notes.items()},
    )


def _state(wh: DuckDBWarehouse) -> dict[str, list]:
    """Every table the hold writes, order-free, without its clock columns."""
    out = {}
    for name, drop in (
        ("tide_deid_notes", ()),
        ("tide_released_spans", ()),
        ("tide_quarantine", ("quarantined_at",)),
        ("tide_guard_scores", ("scored_at",)),
    ):
        rows = [{k: v for k, v in r.items() if k not in drop} for r in wh.read_table(name).to_pylist()]
        out[name] = sorted(rows, key=lambda r: sorted((k, str(v)) for k, v in r.items()))
    return out


def test_the_streamed_hold_equals_the_whole_study_hold(study, tmp_path, monkeypatch):
    _, config = study
    monkeypatch.setattr(study_chunks, "DEFAULT_CHUNK_ROWS", CHUNK)  # the release path's chunk size
    notes = _notes()
    flagged = {notes[i]["note_id"] for i in (*STRONG_AT, ORPHAN, WEAK_EHR)}
    with _copy(study, tmp_path, "streamed") as a, _copy(study, tmp_path, "whole") as b:
        src = open_source(a, S, config)
        chunk_of = {nid: c.index for c in iter_chunks(src) for nid in c.owned_ids}
        assert src.n_chunks == 5 and notes[ORPHAN]["note_id"] not in chunk_of
        assert len({chunk_of[notes[i]["note_id"]] for i in (*STRONG_AT, WEAK_EHR)}) == 4  # held in 4 chunks

        streamed = lifecycle._guard(a, config, S, K)
        whole = _whole_study(b, config)
        assert streamed == whole
        assert streamed is not None and streamed.n_scored == N_NOTES and streamed.n_newly_held == len(flagged)
        assert streamed.thresholds == {"ehr": GUARD.threshold, "messages": 0.7}
        assert streamed.held_by_source == {"ehr": 3, "messages": 2}
        assert _state(a) == _state(b)
        scores = a.read_table("tide_guard_scores").to_pylist()
        assert {r["note_id"] for r in scores if r["held"]} == flagged
        assert sorted(r["rank"] for r in scores if r["held"]) == list(range(1, len(flagged) + 1))
        assert flagged.isdisjoint(r["note_id"] for r in a.read_table("tide_deid_notes").to_pylist())
        assert notes[WEAK_MSG]["note_id"] not in flagged  # a message under its frozen 0.7

        again_a, again_b = lifecycle._guard(a, config, S, K), _whole_study(b, config)  # holds stand
        assert again_a == again_b and again_a is not None
        assert again_a.n_newly_held == 0 and again_a.n_held == len(flagged)
        assert _state(a) == _state(b)


def test_the_streamed_hold_reads_one_chunk_of_released_text_at_a_time(study, tmp_path):
    _, config = study
    with _copy(study, tmp_path, "counted", CountingWarehouse) as wh:
        wh.text_reads = []
        report = stream_guard(wh, config, S, K, GUARD, chunk_rows=CHUNK)
        assert report.n_scored == N_NOTES
        # one read of each chunk's released notes (at most CHUNK rows), then the released row no
        # chunk owns (its source row is gone): the 34 source rows make chunks of 7, 7, 7, 7 and 6
        chunk_reads, orphan_pass = wh.text_reads[:5], wh.text_reads[5:]
        assert chunk_reads == [CHUNK] * 4 + [CHUNK - 1]
        assert orphan_pass == [1]  # found by id, then read alone
        assert max(chunk_reads) <= CHUNK
