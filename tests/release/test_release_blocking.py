"""Every blocking check, and the row-hash seal, holds a re-release; researchers keep v1.

A small study is published as v1 (audited).  Then the candidate is tampered with in one way per
test -- each way breaks exactly one guarantee -- and the release is decided again: it must be
``blocked`` for that reason, and the researchers' view must still be v1, unchanged.  Removing a
check from ``lifecycle.CHECKS`` (or the hash verification) makes its test fail.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

import release_study
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.config import TideConfig
from tide_core.io.open import open_warehouse
from tide_core.release import evidence, lifecycle, publish
from tide_core.runner import anonymize_study, recognize_study
from tide_core.store.release_content import row_hash

S, K = "big", "k1"
CONFIG = TideConfig.preset("rules")


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("blocking")
    with open_warehouse(f"duckdb:{root / 'wh.duckdb'}") as wh:
        release_study.write(wh, 60, 12, seed=2)
        wh.replace_table(  # one known value no note mentions (so only the known-PHI check can see it)
            "patients",
            pa.Table.from_pylist(
                [dict(p, email=f"zed.quist{i}@example.org") for i, p in enumerate(release_study.patients(12))]
            ),
        )
        recognize_study(wh, S, CONFIG, progress=False)
        FileKeyProvider(root / "keys").create(S, K)
        anonymize_study(wh, S, K, FileKeyProvider(root / "keys"), CONFIG, progress=False, chunk_rows=20)
        for p in evidence.plan_audit(wh, CONFIG.tables, S, K):
            evidence.record_round(wh, CONFIG.tables, S, K, p.frame_id, p.sample_size, 0, reviewer="test")
        assert lifecycle.decide(wh, CONFIG, S, K)["status"] == "published"
    return root


def _rows(wh, table: str) -> list[dict]:
    return wh.read_table(table).to_pylist()


def _rewrite(wh, table: str, rows: list[dict]) -> None:
    wh.replace_table(table, pa.Table.from_pylist(rows, schema=wh.read_table(table).schema))


def _reseal(rows: list[dict]) -> list[dict]:
    """Recompute the row hashes (a tamper that also forges the seal: only the checks can catch it)."""
    return [dict(r, row_hash=row_hash(S, K, r)) for r in rows]


def both_released_and_quarantined(wh) -> None:
    q = _rows(wh, "tide_quarantine")
    first = _rows(wh, "tide_deid_notes")[0]
    row = {"study": S, "key": K, "note_id": first["note_id"], "code": "E604", "stage": "input", "reason": "test"}
    q.append(
        {**(q[0] if q else {}), **row, "patient_id": None, "row_number": 1, "quarantined_at": first["released_at"]}
    )
    _rewrite(wh, "tide_quarantine", q)


def offsets_outside_the_text(wh) -> None:
    spans = _rows(wh, "tide_released_spans")
    spans[0]["out_end"] = 10**6
    _rewrite(wh, "tide_released_spans", spans)


def original_text_released(wh) -> None:
    src = {r["note_id"]: r["text"] for r in _rows(wh, "notes")}
    deid = _rows(wh, "tide_deid_notes")
    deid[0]["text"] = src[deid[0]["note_id"]]
    _rewrite(wh, "tide_deid_notes", _reseal(deid))


def known_value_in_the_text(wh) -> None:
    pid = {r["note_id"]: r["patient_id"] for r in _rows(wh, "notes")}
    email = {r["patient_id"]: r["email"] for r in _rows(wh, "patients")}
    deid = _rows(wh, "tide_deid_notes")
    deid[0]["text"] += f" Write to {email[pid[deid[0]['note_id']]]}."
    _rewrite(wh, "tide_deid_notes", _reseal(deid))


def no_anonymizer_version(wh) -> None:
    deid = _rows(wh, "tide_deid_notes")
    deid[0]["anonymizer"] = ""
    _rewrite(wh, "tide_deid_notes", _reseal(deid))


def edited_without_a_new_seal(wh) -> None:
    deid = _rows(wh, "tide_deid_notes")
    deid[0]["text"] = deid[0]["text"].replace("Stable", "Unstable")
    _rewrite(wh, "tide_deid_notes", deid)


CASES: dict[str, tuple[Callable, str]] = {
    "rows_accounted": (both_released_and_quarantined, "check rows_accounted failed"),
    "offsets_in_text": (offsets_outside_the_text, "check offsets_in_text failed"),
    "no_surface_survives": (original_text_released, "check no_surface_survives failed"),
    "known_phi_survives": (known_value_in_the_text, "check known_phi_survives failed"),
    "versions_recorded": (no_anonymizer_version, "check versions_recorded failed"),
    "row hash": (edited_without_a_new_seal, "[E937]"),
}


def test_every_blocking_check_has_a_case():
    assert set(lifecycle.CHECKS) | {"row hash"} == set(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_tampered_candidate_is_held_and_researchers_keep_v1(case: str, base: Path, tmp_path: Path):
    shutil.copy(base / "wh.duckdb", tmp_path / "wh.duckdb")
    shutil.copy(base / "wh.released.duckdb", tmp_path / "wh.released.duckdb")
    tamper, reason = CASES[case]
    with open_warehouse(f"duckdb:{tmp_path / 'wh.duckdb'}") as wh:
        v1 = sorted(map(str, publish.researcher_rows(wh, S, K)))
        assert len(v1) == 60
        tamper(wh)
        row = lifecycle.decide(wh, CONFIG, S, K)
        assert row["status"] == "blocked" and reason in row["gate_reasons"], row["gate_reasons"]
        assert row["published_version"] == "v1"
        assert sorted(map(str, publish.researcher_rows(wh, S, K))) == v1
