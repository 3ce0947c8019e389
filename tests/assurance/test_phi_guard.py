"""PHI Guard: a token model independent of the recognizers, document scores, release set and dial."""

from __future__ import annotations

import json
import random
import secrets

import numpy as np
import pytest

from benchmarks.corpora import load_corpus
from tide_core.anonymize.engine import Anonymizer
from tide_core.anonymize.keys import KeyRing
from tide_core.assurance.guard_model import DocumentScores, GuardModel, tokens
from tide_core.assurance.guard_release import decide, dial
from tide_core.assurance.guard_train import released_with_leaks, train_guard
from tide_core.errors import ConfigError
from tide_core.synth.compose import generate_mixed_training_corpus


@pytest.fixture(scope="module")
def guard():
    return train_guard(generate_mixed_training_corpus(160, seed=3), seed=3, epochs=6)


@pytest.fixture(scope="module")
def heldout():
    return load_corpus("oog-clinical", 30, seed=5).gold  # a generator the guard never saw


def test_phi_tokens_score_higher_than_other_tokens_out_of_generator(guard, heldout):
    phi, other = [], []
    for doc in heldout:
        p, spans = guard.token_probabilities(doc.text)
        for prob, (s, e) in zip(p, spans, strict=True):
            (phi if any(g.start < e and s < g.end for g in doc.spans) else other).append(prob)
    assert np.mean(phi) > np.mean(other) + 0.2


def test_masked_score_ignores_surrogates_and_sees_what_was_left(guard, heldout):
    anonymizer = Anonymizer(KeyRing("t", "guard", secrets.token_bytes(32)))
    rng = random.Random(0)
    clean, leaking = [], []
    for doc in heldout:
        full = released_with_leaks(doc, anonymizer, rng, 0.0)
        some = released_with_leaks(doc, anonymizer, rng, 0.3)
        if full and some and some[2]:
            clean.append(guard.masked_score(full[0], full[1]))
            leaking.append(guard.masked_score(some[0], some[1]))
    assert len(leaking) >= 20 and np.mean(leaking) > np.mean(clean)
    # the same released texts scored without their surrogate ranges look riskier
    blind, aware = [], []
    for doc in heldout:
        text, surrogates, _ = released_with_leaks(doc, anonymizer, rng, 0.0)
        blind.append(guard.masked_score(text, []))
        aware.append(guard.masked_score(text, surrogates))
    assert all(b >= a for b, a in zip(blind, aware, strict=True)) and np.mean(blind) > np.mean(aware)


def test_document_scores_carry_version_and_threshold(guard, heldout):
    s = guard.with_threshold(0.7).score("n1", heldout[0].text, heldout[0].text, [])
    assert s.version == guard.version and s.version.startswith("tide.guard@1+") and s.threshold == 0.7
    assert 0 <= s.raw <= 1 and s.richness > 0 and s.flagged == (s.masked >= 0.7)
    assert "text" not in json.dumps(s.to_dict())


def test_save_load_round_trip_and_tamper_check(guard, tmp_path):
    guard.save(tmp_path)
    again = GuardModel.load(tmp_path)
    assert again.version == guard.version and again.threshold == guard.threshold
    text = "Seen by Dr. Okonkwo at Riverside on 3/4."
    assert np.allclose(again.token_probabilities(text)[0], guard.token_probabilities(text)[0], atol=1e-6)
    card = json.loads((tmp_path / "guard.json").read_text())
    card["intercept"] += 1.0  # a changed model under the old version string
    (tmp_path / "guard.json").write_text(json.dumps(card))
    with pytest.raises(ConfigError) as e:
        GuardModel.load(tmp_path)
    assert e.value.code == "E762"
    with pytest.raises(ConfigError) as e:
        GuardModel.load(tmp_path / "missing")
    assert e.value.code == "E760"


def _scores(values, version="tide.guard@1+x", threshold=0.5):
    return [DocumentScores(nid, 0.0, 0.0, v, version, threshold) for nid, v in values.items()]


def test_release_set_and_review_pile_riskiest_first():
    d = decide(_scores({"a": 0.2, "b": 0.9, "c": 0.6, "d": 0.5}))
    assert d.release_set == ("a",)
    assert d.review_pile == ("b", "c", "d")  # riskiest first; the threshold itself holds
    assert d.hold_rate == 0.75 and "0.9" not in json.dumps(d.review_pile)


def test_per_source_thresholds():
    scores = _scores({"a": 0.6, "b": 0.6})
    d = decide(scores, sources={"a": "portal", "b": "notes"}, thresholds={"portal": 0.8})
    assert d.release_set == ("a",) and d.review_pile == ("b",)


def test_one_decision_needs_one_guard_version():
    mixed = _scores({"a": 0.1}) + _scores({"b": 0.1}, version="tide.guard@1+y")
    with pytest.raises(ConfigError) as e:
        decide(mixed)
    assert e.value.code == "E763"


def test_dial_trades_catch_against_hold():
    masked = {"l1": 0.95, "l2": 0.6, "c1": 0.7, "c2": 0.1}
    rows = dial(masked, {"l1": True, "l2": True}, thresholds=(0.5, 0.8, 0.99))
    assert rows == [(0.5, 1.0, 0.5), (0.8, 0.5, 0.0), (0.99, 0.0, 0.0)]


def test_tokens_keep_joined_values_whole():
    text = "MRN 00-12-34, O'Brien-Smith"
    assert [text[s:e] for s, e in tokens(text)] == ["MRN", "00-12-34", ",", "O'Brien-Smith"]


def test_negative_zero_weights_keep_one_version_through_save_and_load(tmp_path):
    from tide_core.assurance.guard_model import N_FEATURES

    coef = np.zeros(N_FEATURES, dtype=np.float32)
    coef[3], coef[5] = -0.0, 0.25  # a sparse save drops zeros of either sign
    model = GuardModel(coef, -1.5, 0.9)
    model.save(tmp_path)
    assert GuardModel.load(tmp_path).version == model.version
