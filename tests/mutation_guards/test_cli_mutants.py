"""`tide guard score|plan` on a real DuckDB release: pseudonymous refs only, a stratified sample."""

from __future__ import annotations

import json

import pytest

from tide_core.anonymize.keys import FileKeyProvider
from tide_core.assurance.guard_train import train_guard
from tide_core.cli.cmd_demo import load_demo
from tide_core.cli.main import main
from tide_core.config import TideConfig
from tide_core.io.open import open_warehouse
from tide_core.runner import anonymize_study, recognize_study
from tide_core.synth.compose import generate_mixed_training_corpus


@pytest.fixture(scope="module")
def guard_dir(tmp_path_factory):
    """A real guard, trained once for both tests (its quality is not what they check)."""
    out = tmp_path_factory.mktemp("guard") / "guard"
    train_guard(generate_mixed_training_corpus(40, seed=1), seed=1, epochs=2).save(out)
    return out


def test_guard_scores_a_release_and_plans_a_stratified_audit(tmp_path, capsys, guard_dir):
    url = f"duckdb:{tmp_path / 'w.duckdb'}"
    wh = open_warehouse(url)
    corpus = load_demo(wh, seed=7, n_notes=80)  # about 20 patients: more than the plan's 12
    keys = FileKeyProvider(tmp_path / "keys")
    keys.create("demo", "k1")
    config = TideConfig.preset("rules")
    recognize_study(wh, "demo", config, progress=False)
    anonymize_study(wh, "demo", "k1", keys, config, progress=False)
    released = wh.read_table("tide_deid_notes", where={"study": "demo", "key": "k1"}).to_pylist()
    wh.close()

    scores = tmp_path / "scores.json"
    args = ["guard", "score", "--warehouse", url, "--study", "demo", "--key", "k1", "--guard-dir", str(guard_dir)]
    assert main([*args, "--out", str(scores)]) == 0
    printed = capsys.readouterr().out
    data = json.loads(scores.read_text())
    refs = {r["note_ref"] for r in released}
    assert data["n_released"] + data["n_held"] == len(released)
    assert set(data["review_pile"]) <= refs
    assert set(data["patient_richness"]) == {r["patient_ref"] for r in released}
    # nothing identifying leaves: no source note ids, no text, not on stdout either
    dumped = scores.read_text() + printed
    assert not any(r["note_id"] in data["review_pile"] for r in released)
    assert not any(n.text[:40] in dumped for n in corpus.notes)
    assert not any(ref in printed for ref in refs)

    plan_file = tmp_path / "plan.json"
    assert main(["guard", "plan", "--scores", str(scores), "--n", "12", "--out", str(plan_file)]) == 0
    plan = json.loads(plan_file.read_text())
    assert plan["total_sample"] == 12 and sum(len(v) for v in plan["sample"].values()) == 12
    assert {p for v in plan["sample"].values() for p in v} <= set(data["patient_richness"])
    assert all(0 < s["inclusion_probability"] <= 1 for s in plan["strata"])


def test_guard_score_without_a_release_is_a_coded_error(tmp_path, capsys, guard_dir):
    url = f"duckdb:{tmp_path / 'empty.duckdb'}"
    wh = open_warehouse(url)
    load_demo(wh, seed=7, n_notes=20)
    wh.close()
    args = ["guard", "score", "--warehouse", url, "--study", "demo", "--key", "k1", "--guard-dir", str(guard_dir)]
    assert main([*args, "--out", str(tmp_path / "s.json")]) != 0
    assert "E771" in capsys.readouterr().err
