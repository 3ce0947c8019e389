"""HFTokenClassifierRecognizer: stages, batching, decoding, label maps, fingerprints, errors.

The model is a randomly initialised tiny BERT saved with the real MiniLM tokenizer: its
predictions are arbitrary but deterministic, which is all the stage contracts need.  Decoding is
tested on hand-written tag sequences; learning is tested in test_training.py.
"""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from tide_core.errors import ConfigError
from tide_core.spans import Note
from tide_core.text.tag_decoding import TagInfo, decode, detect_scheme, parse_tag
from tide_core.training.tags import tag_names


def _save_tiny(path, tags, seed=0):
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForTokenClassification

    from tide_core.model_location import pretrained_encoder_dir

    tok = AutoTokenizer.from_pretrained(str(pretrained_encoder_dir()), local_files_only=True)
    torch.manual_seed(seed)
    cfg = BertConfig(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        num_labels=len(tags),
        id2label={i: t for i, t in enumerate(tags)},
        label2id={t: i for i, t in enumerate(tags)},
    )
    model = BertForTokenClassification(cfg)
    with torch.no_grad():  # bias towards entity tags so spans actually appear
        model.classifier.bias[1:] += 1.5
    model.save_pretrained(str(path))
    tok.save_pretrained(str(path))
    return path


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return _save_tiny(tmp_path_factory.mktemp("hf") / "m", tag_names("BIO"))


@pytest.fixture(scope="module")
def rec(model_dir):
    from tide_core.recognizers.hf_token_classifier import HFTokenClassifierRecognizer

    r = HFTokenClassifierRecognizer(model_dir, window=64, overlap=10, batch_size=4)
    r.load()
    return r


LONG = (
    "Patient Maria Garcia (MRN 12345678) was seen by Dr. Alice Brown on 03/04/2021 at "
    "St. Mary's Medical Center, 1234 Oak Street, Springfield. "
) * 12


def test_recognize_many_equals_the_three_stages(rec):
    notes = [Note("a", "p", LONG), Note("b", "p", "short note, no phi"), Note("c", "p", "")]
    direct = rec.recognize_many(notes)
    staged = []
    for n in notes:
        ws = rec.make_windows(n)
        staged.append(rec.assemble(n, ws, rec.predict(ws)))
    assert direct == staged
    assert direct[2] == []
    assert len(rec.make_windows(notes[0])) > 5  # really windowed
    for n, spans in zip(notes, direct, strict=True):
        for s in spans:
            assert 0 <= s.start < s.end <= len(n.text)
            assert n.text[s.start : s.end] == n.text[s.start : s.end].strip()
            assert s.recognizer == "tide.hf@1" and 0.0 < s.score <= 1.0


def test_batching_and_order_do_not_change_predictions(rec, model_dir):
    from tide_core.recognizers.hf_token_classifier import HFTokenClassifierRecognizer

    ws = rec.make_windows(Note("a", "p", LONG)) + rec.make_windows(Note("b", "p", LONG[:200]))
    p4 = rec.predict(ws)
    other = HFTokenClassifierRecognizer(model_dir, window=64, overlap=10, batch_size=1)
    p1 = other.predict(list(reversed(ws)))[::-1]
    assert [(p.note_id, p.index) for p in p4] == [(w.note_id, w.index) for w in ws]
    for a, b in zip(p4, p1, strict=True):
        assert np.array_equal(a.tag_ids, b.tag_ids)
        assert np.allclose(a.probs, b.probs, atol=1e-5)


def test_windows_and_predictions_pickle(rec):
    n = Note("a", "p", LONG)
    ws = rec.make_windows(n)
    preds = rec.predict(ws)
    ws2, preds2 = pickle.loads(pickle.dumps(ws)), pickle.loads(pickle.dumps(preds))
    assert rec.assemble(n, ws2, preds2) == rec.assemble(n, ws, preds)
    r2 = pickle.loads(pickle.dumps(rec))  # model dropped, reloaded lazily
    assert r2._model is None and r2.recognize(n) == rec.recognize(n)


def test_window_size_does_not_move_spans_much(model_dir):
    """Same model, whole-note window vs small windows: the stitched token tags are identical
    wherever a token has the same context on both sides, so most spans survive exactly."""
    from tide_core.recognizers.hf_token_classifier import HFTokenClassifierRecognizer

    n = Note("a", "p", LONG[:600])
    big = HFTokenClassifierRecognizer(model_dir, window=512).recognize(n)
    small = HFTokenClassifierRecognizer(model_dir, window=64, overlap=20).recognize(n)
    assert big and small
    same = len(set((s.start, s.end, s.label) for s in big) & set((s.start, s.end, s.label) for s in small))
    assert same >= 0.3 * len(big)


def test_decode_bio_io_and_whitespace():
    text = "Dr. Alice Brown  and Bob Lee on 2021-03-04"
    #       0123456789012345678901234567890123456789012
    offs = [(0, 2), (2, 3), (4, 9), (10, 15), (17, 20), (21, 24), (25, 28), (29, 31), (32, 42)]
    words = list(range(len(offs)))
    o_tag, b_tag, i_tag = TagInfo("O", None), (lambda lab: TagInfo("B", lab)), (lambda lab: TagInfo("I", lab))
    tags = [
        o_tag,
        o_tag,
        b_tag("DOCTOR"),
        i_tag("DOCTOR"),
        o_tag,
        b_tag("PATIENT"),
        i_tag("PATIENT"),
        o_tag,
        b_tag("DATE"),
    ]
    probs = [0.9, 0.9, 0.8, 0.6, 0.9, 0.7, 0.9, 0.9, 1.0]
    got = decode(tags, probs, offs, words, text, "BIO")
    assert [(text[d.start : d.end], d.label) for d in got] == [
        ("Alice Brown", "DOCTOR"),
        ("Bob Lee", "PATIENT"),
        ("2021-03-04", "DATE"),
    ]
    assert got[0].score == pytest.approx(0.7)
    # two adjacent B- entities stay apart in BIO, merge in IO
    tags2 = [o_tag, o_tag, b_tag("DOCTOR"), b_tag("DOCTOR"), o_tag, o_tag, o_tag, o_tag, o_tag]
    assert len(decode(tags2, probs, offs, words, text, "BIO")) == 2
    assert len(decode(tags2, probs, offs, words, text, "IO")) == 1
    # lenient BIO: I- without B- starts an entity
    tags3 = [o_tag, o_tag, i_tag("DOCTOR"), i_tag("DOCTOR"), o_tag, o_tag, o_tag, o_tag, o_tag]
    assert [(d.start, d.end) for d in decode(tags3, probs, offs, words, text, "BIO")] == [(4, 15)]


def test_decode_subword_continuation_inherits_its_word():
    text = "Smithson 12345678"
    offs = [(0, 3), (3, 8), (9, 12), (12, 17)]
    words = [0, 0, 1, 1]
    o_tag, b_tag = TagInfo("O", None), TagInfo("B", "PATIENT")
    got = decode([b_tag, o_tag, TagInfo("B", "ID"), o_tag], [1, 1, 1, 1], offs, words, text, "BIO")
    assert [(text[d.start : d.end], d.label) for d in got] == [("Smithson", "PATIENT"), ("12345678", "ID")]


def test_parse_tag_and_scheme():
    assert parse_tag("B-PATIENT") == ("B", "PATIENT")
    assert parse_tag("I_PER") == ("I", "PER")
    assert parse_tag("S-LOC") == ("B", "LOC") and parse_tag("E-LOC") == ("I", "LOC")
    assert parse_tag("O") == ("O", None) and parse_tag("DATE") == ("I", "DATE")
    assert detect_scheme(["O", "B-X", "I-X"]) == "BIO" and detect_scheme(["O", "DATE", "AGE"]) == "IO"


def test_foreign_labels_need_a_label_map(tmp_path):
    from tide_core.recognizers.hf_token_classifier import HFTokenClassifierRecognizer

    d = _save_tiny(tmp_path / "foreign", ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-MISC", "I-MISC"])
    with pytest.raises(ConfigError) as exc:
        HFTokenClassifierRecognizer(d)
    assert exc.value.code == "E313" and "PER" in str(exc.value)
    r = HFTokenClassifierRecognizer(d, label_map={"PER": "PATIENT", "LOC": "LOCATION", "MISC": None})
    spans = r.recognize(Note("x", "p", LONG[:300]))
    assert spans and {s.label for s in spans} <= {"PATIENT", "LOCATION"}
    with pytest.raises(ConfigError):
        HFTokenClassifierRecognizer(d, label_map={"PER": "NAME", "LOC": None, "MISC": None})


def test_io_scheme_model(tmp_path):
    from tide_core.recognizers.hf_token_classifier import HFTokenClassifierRecognizer

    d = _save_tiny(tmp_path / "io", tag_names("IO"))
    r = HFTokenClassifierRecognizer(d)
    assert r.config()["scheme"] == "IO"
    assert r.recognize(Note("x", "p", LONG[:300]))


def test_fingerprint_tracks_model_and_settings(model_dir, tmp_path):
    from tide_core.recognizers.hf_token_classifier import HFTokenClassifierRecognizer

    a = HFTokenClassifierRecognizer(model_dir)
    assert a.fingerprint() == HFTokenClassifierRecognizer(model_dir, batch_size=64).fingerprint()
    assert a.fingerprint() != HFTokenClassifierRecognizer(model_dir, window=256).fingerprint()
    other = _save_tiny(tmp_path / "other", tag_names("BIO"), seed=1)  # same config, other weights
    assert HFTokenClassifierRecognizer(other).config()["model_hash"] != a.config()["model_hash"]
    assert a.fingerprint() != HFTokenClassifierRecognizer(other).fingerprint()


def test_errors_are_clear(tmp_path, model_dir):
    from tide_core.recognizers.hf_token_classifier import HFTokenClassifierRecognizer

    with pytest.raises(ConfigError) as exc:
        HFTokenClassifierRecognizer(tmp_path / "missing")
    assert exc.value.code == "E311" and "train-recognizer" in exc.value.hint
    enc = tmp_path / "encoder"
    enc.mkdir()
    (enc / "config.json").write_text(json.dumps({"architectures": ["BertModel"], "model_type": "bert"}))
    with pytest.raises(ConfigError) as exc:
        HFTokenClassifierRecognizer(enc)
    assert exc.value.code == "E312"
    with pytest.raises(ConfigError):
        HFTokenClassifierRecognizer(model_dir, window=1024).load()
    with pytest.raises(ConfigError):
        HFTokenClassifierRecognizer(model_dir, scheme="BILOU")


def test_registry_builds_it(model_dir):
    from tide_core.recognizers.registry import create

    r = create({"name": "tide.hf", "model_dir": str(model_dir), "window": 128, "overlap": 16})
    assert r.qualified_name == "tide.hf@1" and r.config()["window"] == 128
    res = r.analyze("Seen by Dr. Alice Brown on 03/04/2021.")
    assert all(hasattr(x, "entity_type") for x in res)


def test_quality_benchmark_runs_end_to_end(model_dir):
    from benchmarks.quality import benchmark, format_report

    sizes = {"inhouse": 4, "oog-clinical": 4}
    r = benchmark(
        ("inhouse", "oog-clinical"), seed=3, sizes=sizes, model_dir=str(model_dir), n_resamples=50, progress=False
    )
    assert [c["corpus"] for c in r["corpora"]] == ["inhouse", "oog-clinical"]
    inhouse = r["corpora"][0]
    names = [a["system"] for a in inhouse["ablation"]]
    assert names[0].startswith("full: model + regex") and "full - model" in names and "full - places" in names
    s = inhouse["summary"]
    assert 0.0 <= s["micro_recall"] <= 1.0 and 0.0 <= s["uncovered_share"] <= 1.0
    assert 0.0 <= s["verbatim_share"] <= 1.0 and 0.0 <= s["char_precision"] <= 1.0
    assert "ci" in inhouse["full"]["span"]["overall"]
    # ablation rows are recombinations of cached spans: "full - model" equals a rules-only run
    rules = benchmark(("inhouse",), seed=3, sizes=sizes, include_model=False, n_resamples=0, progress=False)
    minus_model = next(a for a in inhouse["ablation"] if a["system"] == "full - model")
    assert minus_model["micro_recall"] == rules["corpora"][0]["summary"]["micro_recall"]
    assert minus_model["uncovered_share"] == rules["corpora"][0]["summary"]["uncovered_share"]
    text = format_report(r)
    assert "ablation on oog-clinical" in text and "PHI chars uncovered" in text and "targets on inhouse" in text


def test_decode_digit_letter_switch_is_not_inherited():
    text = "67yo"
    o_tag, b_tag = TagInfo("O", None), TagInfo("B", "AGE")
    got = decode([b_tag, o_tag], [1, 1], [(0, 2), (2, 4)], [0, 0], text, "BIO")
    assert [(text[d.start : d.end], d.label) for d in got] == [("67", "AGE")]


def test_windowing_stage_does_not_load_the_model(model_dir):
    from tide_core.recognizers.hf_token_classifier import HFTokenClassifierRecognizer

    r = HFTokenClassifierRecognizer(model_dir, window=64, overlap=10)
    ws = r.make_windows(Note("a", "p", LONG))
    assert ws and r._model is None  # CPU windowing actors stay light
    preds = HFTokenClassifierRecognizer(model_dir, window=64, overlap=10).predict(ws)
    assert r.assemble(Note("a", "p", LONG), ws, preds) == r.recognize(Note("a", "p", LONG))


def test_labels_and_min_score_filter_output(model_dir):
    from tide_core.recognizers.hf_token_classifier import HFTokenClassifierRecognizer

    n = Note("a", "p", LONG)
    every = HFTokenClassifierRecognizer(model_dir, window=64, overlap=10).recognize(n)
    some = HFTokenClassifierRecognizer(model_dir, window=64, overlap=10, labels=["PATIENT", "DATE"]).recognize(n)
    sure = HFTokenClassifierRecognizer(model_dir, window=64, overlap=10, min_score=0.2).recognize(n)
    assert some == [s for s in every if s.label in ("PATIENT", "DATE")]
    assert sure == [s for s in every if s.score >= 0.2]
    a = HFTokenClassifierRecognizer(model_dir, labels=["PATIENT"])
    assert a.fingerprint() != HFTokenClassifierRecognizer(model_dir).fingerprint()
    with pytest.raises(ConfigError):
        HFTokenClassifierRecognizer(model_dir, labels=["NAME"])


def test_default_model_spec(tmp_path, monkeypatch):
    from tide_core.model_location import DEFAULT_MODEL_OPTIONS, default_model_spec

    spec = default_model_spec(tmp_path)
    assert spec["name"] == "tide.hf" and spec["model_dir"] == str(tmp_path)
    assert spec["window"] == 512 and spec["overlap"] == 40 and spec["labels"] == DEFAULT_MODEL_OPTIONS["labels"]
