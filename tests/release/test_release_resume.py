"""A resumed anonymization run redoes every committed chunk whose inputs changed meanwhile.

The resume digest of a chunk covers what decides its released rows: the key, the settings (date
policy, released metadata vocabulary, anonymizer version), the notes, the cache entries and the
effective spans (reviewer decisions applied).  Each test interrupts a run after two of four
chunks, changes one of these, resumes, and checks that no row of the first run's chunks is stale.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import release_study
from tide_core.anonymize.engine import Anonymizer
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.config import TideConfig
from tide_core.io.open import open_warehouse
from tide_core.runner import anonymize_study, recognize_study
from tide_core.spans import Note
from tide_core.store.span_cache import SpanCache

S, K = "big", "k1"
CONFIG = TideConfig.preset("rules")
CHUNK = 100


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("resume")
    with open_warehouse(f"duckdb:{root / 'wh.duckdb'}") as wh:
        release_study.write(wh, 4 * CHUNK, 30)
        recognize_study(wh, S, CONFIG, progress=False)
    FileKeyProvider(root / "keys").create(S, K)
    return root


class StopError(Exception):
    pass


def _run(root: Path, config: TideConfig = CONFIG, stop_after: int | None = None) -> None:
    def on_chunk(p):
        if stop_after is not None and p.chunk >= stop_after:
            raise StopError

    with open_warehouse(f"duckdb:{root / 'wh.duckdb'}") as wh:
        anonymize_study(
            wh, S, K, FileKeyProvider(root / "keys"), config, progress=False, chunk_rows=CHUNK, on_chunk=on_chunk
        )


@pytest.fixture
def interrupted(base: Path, tmp_path: Path) -> Path:
    shutil.copy(base / "wh.duckdb", tmp_path / "wh.duckdb")
    shutil.copytree(base / "keys", tmp_path / "keys")
    with pytest.raises(StopError):
        _run(tmp_path, stop_after=2)
    return tmp_path


def _released(root: Path) -> dict[str, dict]:
    with open_warehouse(f"duckdb:{root / 'wh.duckdb'}") as wh:
        return {r["note_id"]: r for r in wh.read_table("tide_deid_notes").to_pylist()}


def test_a_reviewer_decision_made_meanwhile_is_applied(interrupted: Path):
    first = sorted(_released(interrupted))[0]  # a note of the first (committed) chunk
    assert "Stable" in _released(interrupted)[first]["text"]
    with open_warehouse(f"duckdb:{interrupted / 'wh.duckdb'}") as wh:
        row = next(r for r in wh.read_table("notes").to_pylist() if r["note_id"] == first)
        note = Note(first, row["patient_id"], row["text"])
        start = row["text"].index("Stable")
        SpanCache(wh, CONFIG.tables).add_review(S, note, start, start + len("Stable"), "OTHER", "add", "test")
    _run(interrupted)
    released = _released(interrupted)
    assert len(released) == 4 * CHUNK and "Stable" not in released[first]["text"]


def test_a_new_anonymizer_version_redoes_the_committed_chunks(interrupted: Path, monkeypatch):
    monkeypatch.setattr(Anonymizer, "VERSION", "tide.anonymizer@999")
    _run(interrupted)
    assert {r["anonymizer"] for r in _released(interrupted).values()} == {"tide.anonymizer@999"}


def test_a_new_metadata_vocabulary_redoes_the_committed_chunks(interrupted: Path):
    assert {r["site"] for r in _released(interrupted).values()} == {"[withheld]"}
    _run(interrupted, CONFIG.with_metadata_vocabulary({"site": ["north", "south"]}))
    assert {r["site"] for r in _released(interrupted).values()} == {"north", "south"}


def test_unchanged_committed_chunks_are_kept(interrupted: Path):
    before = _released(interrupted)
    _run(interrupted)
    after = _released(interrupted)
    kept = [nid for nid in before if before[nid]["released_at"] == after[nid]["released_at"]]
    assert len(kept) == len(before) and 0 < len(before) < 4 * CHUNK  # resumed, not redone
    assert len({r["released_at"] for r in after.values()}) == 1  # and one stamp for the whole run
