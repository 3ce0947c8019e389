"""Drift monitor and residual-PHI screen on synthetic notes, the real regex recognizer and
releases made by the real keyed anonymizer (with some PHI deliberately left in)."""

from __future__ import annotations

import json
import random

import pytest

from tide_core.assurance.drift import assert_no_phi, check_drift, freeze_reference, load_reference, save_reference
from tide_core.assurance.drift_components import COMPONENT_NAMES
from tide_core.assurance.screen import screen_released
from tide_core.errors import ConfigError, InputError
from tide_core.evaluation.gold_io import GoldDoc
from tide_core.recognizers.regex_recognizer import RegexRecognizer
from tide_core.spans import AnonymizedNote, Note

_ANON: list = []


def release(doc: GoldDoc, leak_labels=()) -> AnonymizedNote:
    """Release a note with the real keyed anonymizer, leaving ``leak_labels`` spans in as residual PHI."""
    if not _ANON:
        from tide_core.anonymize.engine import Anonymizer
        from tide_core.anonymize.keys import keyring_for_tests

        _ANON.append(Anonymizer(keyring_for_tests("assurance-test", "k1", "seed-1")))
    return _ANON[0].anonymize(doc.to_note(), [s for s in doc.spans if s.label not in leak_labels])


@pytest.fixture(scope="module")
def regex():
    r = RegexRecognizer()
    r.load()
    return r


_CACHE: dict = {}


def _inputs(docs, regex, leak_labels=()):
    """Recognizer spans on the input text and the screen of the release (cached per note)."""
    for d in docs:
        if (d.note_id, "spans") not in _CACHE:
            _CACHE[(d.note_id, "spans")] = regex.recognize(d.to_note())
        key = (d.note_id, "screen", tuple(leak_labels))
        if key not in _CACHE:
            res = screen_released([release(d, leak_labels)], [regex])
            _CACHE[key] = res.per_note_hits.get(d.note_id, {})
    notes = [d.to_note() for d in docs]
    spans = {d.note_id: _CACHE[(d.note_id, "spans")] for d in docs}
    residual = {d.note_id: _CACHE[(d.note_id, "screen", tuple(leak_labels))] for d in docs}
    return notes, spans, residual


@pytest.fixture(scope="module")
def corpora():
    from tide_core.synth import generate_training_corpus

    return generate_training_corpus(300, seed=21), generate_training_corpus(200, seed=22)


@pytest.fixture(scope="module")
def reference(corpora, regex):
    ref_docs, _ = corpora
    notes, spans, residual = _inputs(ref_docs, regex)
    return freeze_reference(
        notes,
        spans,
        residual,
        pseudo_batch_size=100,
        recognizer_fingerprint=regex.fingerprint(),
        screen_fingerprint=regex.fingerprint(),
    )


def test_reference_is_calibrated_and_holds_no_phi(reference, corpora, tmp_path):
    ref_docs, _ = corpora
    assert set(reference["components"]) == set(COMPONENT_NAMES) and len(COMPONENT_NAMES) == 15
    for c in reference["components"].values():
        assert c["watch"] >= c["default_watch"] and c["drift"] >= c["default_drift"]
        assert c["drift"] >= 2 * c["watch"] - 1e-12 or c["drift"] == c["default_drift"]
        if c["noise_p95"] is not None and c["noise_p95"] > c["default_watch"]:
            assert c["watch"] == c["noise_p95"]
    assert reference["calibration"]["n_splits"] == 40
    blob = json.dumps(reference)
    # (surfaces made of digits only can coincide with a count, so only those with letters are checked)
    surfaces = {
        d.text[s.start : s.end]
        for d in ref_docs
        for s in d.spans
        if s.length >= 4 and any(ch.isalpha() for ch in d.text[s.start : s.end])
    }
    assert len(surfaces) > 100 and not [x for x in surfaces if x in blob]
    assert not [d.note_id for d in ref_docs if d.note_id in blob]
    assert not [d.patient_id for d in ref_docs if d.patient_id in blob]
    path = save_reference(reference, tmp_path / "ref.json")
    assert load_reference(path) == json.loads(json.dumps(reference))
    tampered = dict(reference, name="x" * 100)
    with pytest.raises(InputError) as exc:
        assert_no_phi(tampered)
    assert exc.value.code == "E752"
    with pytest.raises(InputError):
        assert_no_phi(dict(reference, samples=["Some note text"]))


def test_batch_drawn_from_the_reference_is_stable(reference, corpora, regex):
    ref_docs, _ = corpora
    picked = random.Random(5).sample(ref_docs, 100)
    notes, spans, residual = _inputs(picked, regex)
    res = check_drift(
        reference,
        notes,
        spans,
        residual,
        recognizer_fingerprint=regex.fingerprint(),
        screen_fingerprint=regex.fingerprint(),
    )
    assert res.band == "stable", [(c.name, c.band, c.value, c.watch) for c in res.components if c.band != "stable"]
    assert res.n_measured == 15 and not res.low_confidence and res.new_categories == {}
    assert all(c.score < 50 for c in res.components)


def test_fresh_batch_from_the_same_generator_does_not_drift(reference, corpora, regex):
    # a new sample of the same distribution: nothing reaches drift; a component may touch its watch
    # level by chance (watch = the 95th percentile of self-split noise, so ~5% per component)
    _, batch_docs = corpora
    notes, spans, residual = _inputs(batch_docs[:100], regex)
    res = check_drift(
        reference,
        notes,
        spans,
        residual,
        recognizer_fingerprint=regex.fingerprint(),
        screen_fingerprint=regex.fingerprint(),
    )
    assert res.band in ("stable", "watch") and res.n_measured == 15
    assert sum(c.band == "watch" for c in res.components) <= 3
    assert max(c.score for c in res.components) < 75


def test_changed_note_type_mix_drifts(reference, corpora, regex):
    _, batch_docs = corpora
    top = sorted({d.metadata["note_type"] for d in batch_docs})[:2]
    picked = [d for d in batch_docs if d.metadata["note_type"] in top]
    assert len(picked) >= 30
    notes, spans, residual = _inputs(picked, regex)
    res = check_drift(reference, notes, spans, residual)
    assert res.component("note_type_mix").band == "drift"
    assert res.lenses["mix"] == "drift" and res.band == "drift"
    assert res.worst.band == "drift"


def test_changed_text_shape_drifts(reference, corpora, regex):
    _, batch_docs = corpora
    shouted = [
        GoldDoc(d.note_id, d.patient_id, d.text.upper() + "\n" + d.text.upper(), d.spans, d.metadata)
        for d in batch_docs[:100]
    ]
    notes = [d.to_note() for d in shouted]
    res = check_drift(reference, notes)
    assert res.component("uppercase_ratio").band == "drift"
    assert res.component("length").band == "drift"
    assert res.lenses["text"] == "drift" and res.band == "drift"
    # no spans and no screen given: those lenses are unknown, never stable
    assert res.lenses["output"] == "unknown" and res.lenses["residual"] == "unknown"
    assert res.n_measured == 9
    assert res.component("spans_per_1k").reason == "no recognizer spans given"


def test_missing_inputs_are_unknown_not_stable(reference, corpora):
    _, batch_docs = corpora
    res = check_drift(reference, [d.to_note() for d in batch_docs[:20]])
    assert res.low_confidence and res.n_docs == 20
    assert res.band in ("unknown", "watch", "drift") and res.band != "stable"


def test_recognizer_change_asks_for_rebaseline(reference, corpora, regex):
    _, batch_docs = corpora
    notes, spans, residual = _inputs(batch_docs[:100], regex)
    res = check_drift(
        reference,
        notes,
        spans,
        residual,
        recognizer_fingerprint="other-model-v2",
        screen_fingerprint=regex.fingerprint(),
    )
    assert res.lenses["output"] == "unknown"
    assert "re-baseline" in res.component("confidence").reason


def test_residual_leaks_drift_the_output_screen_lens(reference, corpora, regex):
    _, batch_docs = corpora
    notes, spans, residual = _inputs(batch_docs[:100], regex, leak_labels=("PHONE", "EMAIL"))
    res = check_drift(reference, notes, spans, residual)
    rate = res.component("residual_note_rate")
    assert rate.band == "drift" and rate.extra["p_value"] < 0.01
    assert res.component("residual_label_rise").band == "drift"
    assert res.lenses["text"] != "drift" and res.band == "drift"


def test_screen_counts_residual_phi_by_label_and_ignores_surrogates(corpora, regex):
    _, docs = corpora
    docs = docs[:60]
    clean = screen_released([release(d) for d in docs], [regex])
    leaky_docs = [release(d, leak_labels=("PHONE",)) if i % 4 == 0 else release(d) for i, d in enumerate(docs)]
    leaky = screen_released(leaky_docs, [regex])
    with_phone = [d.note_id for i, d in enumerate(docs) if i % 4 == 0 and any(s.label == "PHONE" for s in d.spans)]
    assert set(with_phone) <= set(leaky.flagged_note_ids)
    assert leaky.hits_by_label.get("PHONE", 0) - clean.hits_by_label.get("PHONE", 0) >= len(with_phone)
    assert clean.n_hits_ignored_as_surrogate > 0
    # without surrogate awareness every surrogate phone/date counts as a hit
    naive = screen_released([Note(a.note_id, a.patient_id, a.text) for a in leaky_docs], [regex], surrogate_aware=False)
    assert naive.n_flagged >= leaky.n_flagged and naive.hits_by_label["DATE"] > leaky.hits_by_label.get("DATE", 0)
    # the result carries counts and ids only
    blob = json.dumps(leaky.to_dict())
    phones = {d.text[s.start : s.end] for d in docs for s in d.spans if s.label == "PHONE"}
    assert not [p for p in phones if p in blob]
    with pytest.raises(ConfigError) as exc:
        screen_released([Note("n1", "p", "call 555-123-4567")], [regex])
    assert exc.value.code == "E746"
    assert screen_released(
        [Note("n1", "p", "call 555-123-4567")], lambda n: regex.recognize(n), surrogate_aware=False
    ).flagged_note_ids == ["n1"]


def test_drift_cli_freeze_and_check(tmp_path, corpora, capsys):
    from tide_core.cli.main import main
    from tide_core.evaluation.gold_io import write_gold

    ref_docs, batch_docs = corpora
    write_gold(tmp_path / "ref.jsonl", ref_docs[:200])
    write_gold(tmp_path / "ok.jsonl", batch_docs[:100])
    first_type = sorted({x.metadata["note_type"] for x in batch_docs})[0]
    shifted = [d for d in batch_docs if d.metadata["note_type"] == first_type]
    write_gold(tmp_path / "shifted.jsonl", shifted)
    assert (
        main(
            [
                "drift",
                "freeze",
                "--notes",
                str(tmp_path / "ref.jsonl"),
                "--out",
                str(tmp_path / "ref.json"),
                "--batch-size",
                "100",
            ]
        )
        == 0
    )
    capsys.readouterr()
    rc = main(
        [
            "drift",
            "check",
            "--reference",
            str(tmp_path / "ref.json"),
            "--notes",
            str(tmp_path / "ok.jsonl"),
            "--fail-on",
            "watch",
            "--out",
            str(tmp_path / "ok.json"),
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0 and "overall: unknown" in out and "measured 9 of 15" in out
    rc = main(["drift", "check", "--reference", str(tmp_path / "ref.json"), "--notes", str(tmp_path / "shifted.jsonl")])
    assert rc == 1 and "overall: drift" in capsys.readouterr().out
    assert json.loads((tmp_path / "ok.json").read_text())["n_components"] == 15
    assert (
        main(
            [
                "drift",
                "freeze",
                "--notes",
                str(tmp_path / "ref.jsonl"),
                "--by",
                "source",
                "--out",
                str(tmp_path / "set.json"),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert (
        main(
            [
                "drift",
                "check",
                "--reference",
                str(tmp_path / "set.json"),
                "--notes",
                str(tmp_path / "ok.jsonl"),
                "--fail-on",
                "drift",
            ]
        )
        == 0
    )
    source = ref_docs[0].metadata["source"]
    assert f"source={source}: " in capsys.readouterr().out


def test_one_baseline_per_source(corpora):
    from tide_core.assurance.drift import check_drift_set, freeze_reference_set

    ref_docs, batch_docs = corpora

    def with_source(docs, source):
        return [GoldDoc(d.note_id, d.patient_id, d.text, d.spans, dict(d.metadata, source=source)) for d in docs]

    ref = (
        with_source(ref_docs[:150], "epic")
        + with_source(ref_docs[150:300], "cerner")
        + with_source(ref_docs[:5], "fax")
    )
    refset = freeze_reference_set([d.to_note() for d in ref], by="source")
    assert sorted(refset["references"]) == ["cerner", "epic"] and refset["too_small"] == {"fax": 5}
    same = with_source(batch_docs[:60], "epic") + with_source(batch_docs[60:120], "cerner")
    res = check_drift_set(refset, [d.to_note() for d in same])
    assert set(res.results) == {"epic", "cerner"} and res.unvalidated == {}
    assert all(r.component("source_mix").value == 0.0 for r in res.results.values())
    assert all(r.band != "drift" for r in res.results.values())
    # a new source never borrows the old sources' baseline
    new = same + with_source(batch_docs[120:160], "newsite")
    res2 = check_drift_set(refset, [d.to_note() for d in new])
    assert res2.unvalidated == {"newsite": 40} and res2.band != "stable"
    # a text change in one source is caught in that source only
    shouted = with_source(batch_docs[:60], "epic") + [
        GoldDoc(d.note_id, d.patient_id, d.text.upper(), d.spans, dict(d.metadata, source="cerner"))
        for d in batch_docs[60:120]
    ]
    res3 = check_drift_set(refset, [d.to_note() for d in shouted])
    assert res3.results["cerner"].component("uppercase_ratio").band == "drift"
    assert res3.results["epic"].component("uppercase_ratio").band != "drift" and res3.band == "drift"
