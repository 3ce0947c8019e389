"""Versioned releases on BigQuery (the emulator): a release of several chunks publishes, a
blocked re-release leaves researchers the published version, rollback moves them back.

On BigQuery the researcher store is the dataset itself (tables ``tide_published_*`` and the views
``released_notes`` / ``released_versions``, to be granted as authorized views); publish and
rollback are one multi-statement transaction each.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import release_study
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.config import TideConfig
from tide_core.release import evidence, lifecycle, publish
from tide_core.runner import anonymize_study, recognize_study
from tide_core.store.tables import SPANS

try:
    import bqemulator  # noqa: F401
    import google.cloud.bigquery  # noqa: F401
    from test_bigquery_warehouse import _open, emulator  # pytest fixture
except ImportError as exc:  # pragma: no cover - depends on the environment
    _NO_EMULATOR = f"BigQuery emulator not available: {exc}"

    @pytest.fixture(scope="module")
    def emulator():
        pytest.skip(_NO_EMULATOR)


S, K = "big", "k1"
N_NOTES, N_PATIENTS, CHUNK, N_NEW = 60, 12, 20, 5  # three chunks
CONFIG = TideConfig.preset("rules")


def _audit(wh) -> None:
    for p in evidence.plan_audit(wh, CONFIG.tables, S, K):
        evidence.record_round(wh, CONFIG.tables, S, K, p.frame_id, p.sample_size, 0, reviewer="test")


def test_versioned_release_on_bigquery(emulator, tmp_path):
    keys = FileKeyProvider(tmp_path / "keys")
    keys.create(S, K)
    wh = _open(emulator, "releases")
    try:
        release_study.write(wh, N_NOTES, N_PATIENTS)
        recognize_study(wh, S, CONFIG, progress=False, chunk_rows=CHUNK)
        report = anonymize_study(wh, S, K, keys, CONFIG, progress=False, chunk_rows=CHUNK)
        assert report.n_chunks == 3
        assert lifecycle.decide(wh, CONFIG, S, K)["status"] == "awaiting_audit"
        assert publish.researcher_rows(wh, S, K) == []
        _audit(wh)
        row = lifecycle.decide(wh, CONFIG, S, K)
        assert (row["status"], row["published_version"]) == ("published", "v1")
        v1 = sorted((r["note_ref"], r["text"]) for r in publish.researcher_rows(wh, S, K))
        assert len(v1) == N_NOTES
        # a recognizer change leaks the patients' MRNs: blocked; researchers keep v1
        spans = wh.read_table("tide_spans").to_pylist()
        wh.replace_table("tide_spans", pa.Table.from_pylist([s for s in spans if s["label"] != "ID"], schema=SPANS))
        anonymize_study(wh, S, K, keys, CONFIG, progress=False, chunk_rows=CHUNK)
        row = lifecycle.decide(wh, CONFIG, S, K)
        assert row["status"] == "blocked" and row["published_version"] == "v1"
        assert "known_phi_survives" in row["gate_reasons"]
        assert sorted((r["note_ref"], r["text"]) for r in publish.researcher_rows(wh, S, K)) == v1
        # new notes, audited: v2; rollback: v1 again
        wh.replace_table("tide_spans", pa.Table.from_pylist(spans, schema=SPANS))
        wh.append("notes", pa.Table.from_pylist(release_study.notes(N_NEW, N_PATIENTS, seed=2, start=N_NOTES)))
        recognize_study(wh, S, CONFIG, progress=False, chunk_rows=CHUNK)
        anonymize_study(wh, S, K, keys, CONFIG, progress=False, chunk_rows=CHUNK)
        _audit(wh)
        assert lifecycle.decide(wh, CONFIG, S, K)["published_version"] == "v2"
        assert len(publish.researcher_rows(wh, S, K)) == N_NOTES + N_NEW
        assert lifecycle.rollback(wh, CONFIG.tables, S, K)["published_version"] == "v1"
        assert sorted((r["note_ref"], r["text"]) for r in publish.researcher_rows(wh, S, K)) == v1
    finally:
        wh.close()
