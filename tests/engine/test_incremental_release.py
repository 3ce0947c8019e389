"""Nightly anonymization runs do work proportional to what changed.

A study of 40 notes in 4 chunks of 10 is released once.  Each test then changes one thing (or
nothing) and runs anonymization again.  A chunk is *kept* (counted from its committed rows, never
anonymized again) only when its release digest (key, settings, notes, quarantines, span cache) and
its committed rows are unchanged; every other chunk is released.  Whatever was kept, the candidate
equals a from-scratch release under the same key (the three tables, stamps aside), carries one
``released_at`` stamp, its totals equal a full run's, and the release decision accepts it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import shutil
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from forked_child import run_forked

import release_study
from release_helpers import audit_every_frame, fixed_key
from tide_core.anonymize.engine import Anonymizer
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.chunk_progress import ChunkProgress
from tide_core.config import TideConfig
from tide_core.engine.ledger import committed_chunks, interrupted_chunks
from tide_core.io.open import open_warehouse
from tide_core.release import lifecycle
from tide_core.runner import AnonymizationReport, anonymize_study, recognize_study
from tide_core.spans import Note
from tide_core.store.release_content import content_fingerprint, row_hash
from tide_core.store.span_cache import SpanCache

S, K = "big", "k1"
CONFIG = TideConfig.preset("rules")
CHUNK = 10
N = 4 * CHUNK
ALL = [0, 1, 2, 3]
TABLES = ("tide_deid_notes", "tide_released_spans", "tide_quarantine")


@dataclass
class Run:
    report: AnonymizationReport
    worked: list[int]  # chunks this run anonymized
    kept: list[int]  # chunks it kept from their committed rows


def _wh(root: Path) -> Any:
    return open_warehouse(f"duckdb:{root / 'wh.duckdb'}")


def run(root: Path, config: TideConfig = CONFIG, executor: str | None = None) -> Run:
    """Anonymize (S, K) of the site at ``root`` in chunks of CHUNK; which chunks were worked and kept."""
    seen: list[ChunkProgress] = []
    if executor is not None:
        config = dataclasses.replace(config, executor=executor)
    with _wh(root) as wh:
        report = anonymize_study(
            wh, S, K, FileKeyProvider(root / "keys"), config, progress=False, chunk_rows=CHUNK, on_chunk=seen.append
        )
    return Run(report, sorted(p.chunk for p in seen if not p.resumed), sorted(p.chunk for p in seen if p.resumed))


def candidate(root: Path) -> dict[str, list[str]]:
    """The candidate's three tables of (S, K), every column but the stamps, as sorted JSON rows."""
    drop = {"released_at", "quarantined_at"}
    with _wh(root) as wh:
        return {
            name: sorted(
                json.dumps({k: v for k, v in r.items() if k not in drop}, sort_keys=True, default=str)
                for r in wh.read_table(name, where={"study": S, "key": K}).to_pylist()
            )
            for name in TABLES
        }


def stamps(root: Path) -> set[Any]:
    with _wh(root) as wh:
        return set(wh.read_table("tide_deid_notes", ["released_at"], {"study": S, "key": K}).column(0).to_pylist())


def fingerprint(root: Path) -> str:
    with _wh(root) as wh:
        return content_fingerprint(
            wh.read_table("tide_deid_notes", ["row_hash"], {"study": S, "key": K}).column(0).to_pylist()
        )


def totals(r: AnonymizationReport) -> tuple[Any, ...]:
    """Everything a run reports but its time and what it kept."""
    return (
        r.fingerprint,
        r.anonymizer,
        r.n_rows,
        r.n_released,
        r.n_quarantined,
        r.quarantined_by_code,
        r.n_spans,
        r.spans_by_label,
        r.operators,
        r.n_chunks,
    )


def scratch(root: Path, config: TideConfig = CONFIG) -> tuple[dict[str, list[str]], Run]:
    """The same site released from scratch: the candidate and ledger of (S, K) removed first."""
    fresh = root / "scratch"
    fresh.mkdir()
    shutil.copy(root / "wh.duckdb", fresh / "wh.duckdb")
    shutil.copytree(root / "keys", fresh / "keys")
    with _wh(fresh) as wh:
        for name in (*TABLES, "tide_runs"):
            wh.delete(name, {"study": S, "key": K})
    full = run(fresh, config)
    assert full.kept == []
    return candidate(fresh), full


def notes(root: Path) -> list[dict[str, Any]]:
    with _wh(root) as wh:
        return wh.read_table("notes").to_pylist()


def rewrite(root: Path, name: str, rows: list[dict[str, Any]], recognize: bool = False) -> None:
    with _wh(root) as wh:
        wh.replace_table(name, pa.Table.from_pylist(rows, schema=wh.read_table(name).schema))
        if recognize:
            recognize_study(wh, S, CONFIG, progress=False)


def change_note(root: Path, i: int) -> None:
    """Note ``i`` (chunk ``i // CHUNK``) gets new text, and is recognized again."""
    rows = notes(root)
    rows[i] = dict(rows[i], text=rows[i]["text"].replace("Stable.", "Stable, afebrile."))
    rewrite(root, "notes", rows, recognize=True)


def make_site(root: Path, executor: str | None = None) -> Path:
    """A recognized study of N notes at ``root``, released once (every chunk worked)."""
    with _wh(root) as wh:
        release_study.write(wh, N, 12)
        recognize_study(wh, S, CONFIG, progress=False)
    fixed_key(FileKeyProvider(root / "keys"), S, K)
    first = run(root, executor=executor)
    assert first.worked == ALL and first.report.n_chunks_kept == 0
    return root


def tamper_text(root: Path, i: int) -> None:
    """Released text of note ``i`` edited in the candidate (its row hash left as it was)."""
    target = notes(root)[i]["note_id"]
    with _wh(root) as wh:
        rows = wh.read_table("tide_deid_notes").to_pylist()
    rewrite(root, "tide_deid_notes", _tamper_text(rows, target))


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_site(tmp_path_factory.mktemp("incremental"))


@pytest.fixture
def site(base: Path, tmp_path: Path) -> Path:
    shutil.copy(base / "wh.duckdb", tmp_path / "wh.duckdb")
    shutil.copytree(base / "keys", tmp_path / "keys")
    return tmp_path


def test_an_unchanged_study_keeps_every_chunk_restamped_with_the_same_content(site: Path):
    before, fp, old = candidate(site), fingerprint(site), stamps(site)
    again = run(site)
    assert again.worked == [] and again.kept == ALL
    assert (again.report.n_chunks, again.report.n_chunks_kept) == (4, 4)
    assert candidate(site) == before and fingerprint(site) == fp
    new = stamps(site)
    assert len(new) == 1 and new != old  # one stamp: this run's
    with _wh(site) as wh:
        runs = wh.read_table("tide_runs", where={"study": S, "key": K}).to_pylist()
    last = max((r for r in runs if r["stage"] == "anonymization"), key=lambda r: r["finished_at"])
    assert (last["n_cached"], last["n_chunks"], last["n_released"]) == (4, 4, again.report.n_released)
    assert new == {last["started_at"]}
    kept_rows = [r for r in runs if r["stage"] == "anonymization.chunk" and r["run_id"] == last["run_id"]]
    assert sorted(r["chunk"] for r in kept_rows) == ALL and {r["n_cached"] for r in kept_rows} == {1}
    want, full = scratch(site)
    assert want == before and totals(again.report) == totals(full.report)


def _text_changed(root: Path, mp: pytest.MonkeyPatch) -> tuple[list[int], TideConfig]:
    change_note(root, CHUNK + 5)
    return [1], CONFIG


def _note_added(root: Path, mp: pytest.MonkeyPatch) -> tuple[list[int], TideConfig]:
    rewrite(root, "notes", notes(root) + release_study.notes(1, 12, start=N), recognize=True)
    return [4], CONFIG  # a fifth chunk; the four others are as they were


def _note_deleted_from_the_last_chunk(root: Path, mp: pytest.MonkeyPatch) -> tuple[list[int], TideConfig]:
    rewrite(root, "notes", [r for i, r in enumerate(notes(root)) if i != 3 * CHUNK + 5])
    return [3], CONFIG


def _note_deleted_from_a_middle_chunk(root: Path, mp: pytest.MonkeyPatch) -> tuple[list[int], TideConfig]:
    rewrite(root, "notes", [r for i, r in enumerate(notes(root)) if i != CHUNK + 5])
    return [1, 2, 3], CONFIG  # chunks are consecutive rows: the later chunks' boundaries shift


def _reviewer_decision(root: Path, mp: pytest.MonkeyPatch) -> tuple[list[int], TideConfig]:
    row = notes(root)[2 * CHUNK + 5]
    start = row["text"].index("Stable")
    with _wh(root) as wh:
        note = Note(row["note_id"], row["patient_id"], row["text"])
        SpanCache(wh, CONFIG.tables).add_review(S, note, start, start + len("Stable"), "OTHER", "add", "qa")
    return [2], CONFIG


def _cache_entry_removed(root: Path, mp: pytest.MonkeyPatch) -> tuple[list[int], TideConfig]:
    with _wh(root) as wh:  # the span cache no longer vouches for a note of chunk 3: quarantined (E401)
        wh.delete("tide_recognized_notes", {"study": S, "note_id": [notes(root)[3 * CHUNK + 5]["note_id"]]})
    return [3], CONFIG


def _input_quarantine(root: Path, mp: pytest.MonkeyPatch) -> tuple[list[int], TideConfig]:
    rows = notes(root)
    rows[5] = dict(rows[5], text="   ")  # an empty note: quarantined on input (E604)
    rewrite(root, "notes", rows, recognize=True)
    return [0], CONFIG


def _key_rotated(root: Path, mp: pytest.MonkeyPatch) -> tuple[list[int], TideConfig]:
    fixed_key(FileKeyProvider(root / "keys"), S, K, salt="rotated")
    return ALL, CONFIG


def _new_anonymizer(root: Path, mp: pytest.MonkeyPatch) -> tuple[list[int], TideConfig]:
    mp.setattr(Anonymizer, "VERSION", "tide.anonymizer@999")
    return ALL, CONFIG


def _new_metadata_policy(root: Path, mp: pytest.MonkeyPatch) -> tuple[list[int], TideConfig]:
    return ALL, CONFIG.with_metadata_vocabulary({"site": ["north", "south"]})


CHANGES: dict[str, Callable[[Path, pytest.MonkeyPatch], tuple[list[int], TideConfig]]] = {
    "text_changed": _text_changed,
    "note_added": _note_added,
    "note_deleted_last_chunk": _note_deleted_from_the_last_chunk,
    "note_deleted_middle_chunk": _note_deleted_from_a_middle_chunk,
    "reviewer_decision": _reviewer_decision,
    "cache_entry_removed": _cache_entry_removed,
    "input_quarantine": _input_quarantine,
    "key_rotated": _key_rotated,
    "anonymizer_version": _new_anonymizer,
    "metadata_policy": _new_metadata_policy,
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_change_releases_exactly_the_affected_chunks(site: Path, change: str, monkeypatch: pytest.MonkeyPatch):
    worked, config = CHANGES[change](site, monkeypatch)
    again = run(site, config)
    n_chunks = again.report.n_chunks
    assert again.worked == worked and again.kept == [i for i in range(n_chunks) if i not in worked]
    assert again.report.n_chunks_kept == n_chunks - len(worked)
    want, full = scratch(site, config)
    assert candidate(site) == want and totals(again.report) == totals(full.report)
    assert len(stamps(site)) == 1
    ids = {r["note_id"] for r in notes(site)}
    with _wh(site) as wh:  # a deleted note left the candidate
        for name in TABLES:
            assert set(wh.read_table(name, ["note_id"], {"study": S, "key": K}).column(0).to_pylist()) <= ids


def _tamper_text(rows: list[dict[str, Any]], target: str) -> list[dict[str, Any]]:
    return [dict(r, text=r["text"] + " Maria Stonebridge") if r["note_id"] == target else r for r in rows]


def _quarantine_row(note_id: str) -> dict[str, Any]:
    return {
        "study": S,
        "key": K,
        "note_id": note_id,
        "patient_id": "p0",
        "stage": "anonymization",
        "code": "E604",
        "reason": f"note {note_id} is empty",
        "row_number": 2 * CHUNK + 5,
        "quarantined_at": dt.datetime.now(dt.UTC),
    }


TAMPERS: dict[str, tuple[str, Callable[[list[dict[str, Any]], str], list[dict[str, Any]]]]] = {
    "text_edited": ("tide_deid_notes", _tamper_text),
    "text_edited_and_resealed": (
        "tide_deid_notes",
        lambda rows, t: [dict(r, row_hash=row_hash(S, K, r)) for r in _tamper_text(rows, t)],
    ),
    "released_row_deleted": ("tide_deid_notes", lambda rows, t: [r for r in rows if r["note_id"] != t]),
    "released_span_deleted": (
        "tide_released_spans",
        lambda rows, t: [r for r in rows if r["note_id"] != t or r["label"] != "DATE"],
    ),
    "span_label_edited": (
        "tide_released_spans",
        lambda rows, t: [dict(r, label="OTHER") if r["note_id"] == t else r for r in rows],
    ),
    "quarantine_row_added": ("tide_quarantine", lambda rows, t: [*rows, _quarantine_row(t)]),
}


@pytest.mark.parametrize("tamper", sorted(TAMPERS))
def test_released_rows_edited_or_deleted_are_released_again(site: Path, tamper: str):
    name, edit = TAMPERS[tamper]
    before = candidate(site)
    target = notes(site)[2 * CHUNK + 5]["note_id"]  # chunk 2
    with _wh(site) as wh:
        rows = wh.read_table(name).to_pylist()
    rewrite(site, name, edit(rows, target))
    assert candidate(site) != before
    again = run(site)
    assert again.worked == [2] and again.kept == [0, 1, 3]
    assert candidate(site) == before and len(stamps(site)) == 1


def _killed_after_chunk_1(root: Path) -> int:
    """Anonymize (S, K) in a child process (forked: no interpreter start-up) that is SIGKILLed right
    after chunk 2 of 4 commits: nothing cleaned up.  The child's wait status."""

    def hook(p: ChunkProgress) -> None:
        if p.chunk == 1:
            os.kill(os.getpid(), signal.SIGKILL)

    def work() -> None:
        with _wh(root) as wh:
            anonymize_study(
                wh, S, K, FileKeyProvider(root / "keys"), CONFIG, progress=False, chunk_rows=CHUNK, on_chunk=hook
            )

    return run_forked(work)


def test_a_run_killed_midway_is_refused_then_its_rerun_equals_a_release_from_scratch(site: Path):
    with _wh(site) as wh:
        audit_every_frame(wh, CONFIG, S, K)
        assert lifecycle.decide(wh, CONFIG, S, K)["status"] == "published"
    change_note(site, 5)  # chunk 0: worked by the killed run; chunk 1 kept (restamped) by it
    change_note(site, 2 * CHUNK + 5)  # chunk 2: never reached by the killed run
    status = _killed_after_chunk_1(site)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, status
    assert len(stamps(site)) == 2  # chunks 0-1 carry the killed run's stamp, 2-3 the first run's
    with _wh(site) as wh:
        assert sorted(interrupted_chunks(wh, CONFIG, S, K, "anonymization")) == [0, 1]
        row = lifecycle.decide(wh, CONFIG, S, K)
    assert row["status"] == "blocked" and "E920" in row["gate_reasons"]
    again = run(site)
    assert again.worked == [2] and again.kept == [0, 1, 3]
    want, full = scratch(site)
    assert candidate(site) == want and totals(again.report) == totals(full.report)
    assert len(stamps(site)) == 1
    with _wh(site) as wh:
        assert interrupted_chunks(wh, CONFIG, S, K, "anonymization") == {}
        audit_every_frame(wh, CONFIG, S, K)
        row = lifecycle.decide(wh, CONFIG, S, K)
    assert row["status"] == "published", row["gate_reasons"]


def test_the_release_decision_accepts_a_candidate_with_kept_chunks(site: Path):
    with _wh(site) as wh:
        audit_every_frame(wh, CONFIG, S, K)
        assert lifecycle.decide(wh, CONFIG, S, K)["published_version"] == "v1"
    change_note(site, CHUNK + 5)
    again = run(site)
    assert again.worked == [1] and again.kept == [0, 2, 3]
    with _wh(site) as wh:
        audit_every_frame(wh, CONFIG, S, K)  # the changed note is new content: audited on its own
        row = lifecycle.decide(wh, CONFIG, S, K)
    assert (row["status"], row["published_version"]) == ("published", "v2"), row["gate_reasons"]


def test_the_ledger_names_each_chunks_latest_commit(site: Path):
    change_note(site, CHUNK + 5)
    run(site)
    with _wh(site) as wh:
        done = committed_chunks(wh, CONFIG, S, K)
        runs = wh.read_table("tide_runs", where={"stage": "anonymization"}).to_pylist()
    last = max(runs, key=lambda r: r["finished_at"])
    assert sorted(done) == ALL and {c.started for c in done.values()} == {last["started_at"]}
    assert all(len(c.digest) == 32 and len(c.rows) == 32 for c in done.values())
