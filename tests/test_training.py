"""Training: BIO alignment, a tiny BERT trained in seconds that really learns, the model card, CLI."""
from __future__ import annotations

import json
import random

import pytest

from tide_core.evaluation.gold_io import GoldDoc, write_gold
from tide_core.spans import Span
from template_gold import template_corpus
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
    cfg = TrainConfig(from_config="tiny", window=64, overlap=8, batch_size=16, lr=3e-3, epochs=12,
                      warmup_ratio=0.05, seed=1, num_threads=1, progress=False)
    res = train_token_classifier(simple_corpus(120, seed=1), out, cfg, corpus={"source": "test", "seed": 1},
                                 dev_docs=simple_corpus(30, seed=2))
    return res


def test_align_tags_bio_from_char_spans():
    from transformers import AutoTokenizer

    from tide_core.models import pretrained_encoder_dir

    tok = AutoTokenizer.from_pretrained(str(pretrained_encoder_dir()), local_files_only=True)
    text = "Dr. Alice Brown saw MRN 12345678 today"
    enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
    tags = tag_names("BIO")
    idx = {t: i for i, t in enumerate(tags)}
    spans = [Span("n", 4, 15, "DOCTOR"), Span("n", 24, 32, "ID")]
    got = [tags[t] for t in align_tags(enc["offset_mapping"], spans, idx)]
    pieces = tok.convert_ids_to_tokens(enc["input_ids"])
    named = dict(zip(pieces, got))
    assert named["dr"] == "O" and named["."] == "O"           # titles are not part of the span
    assert named["alice"] == "B-DOCTOR" and named["brown"] == "I-DOCTOR"
    id_tags = [g for p, g, (a, b) in zip(pieces, got, enc["offset_mapping"]) if 24 <= a < 32]
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
    assert all(doc.text[s.start:s.end].strip() == doc.text[s.start:s.end] for s in spans)


def test_training_is_seeded(tmp_path):
    from tide_core.training.trainer import TrainConfig, train_token_classifier

    docs = simple_corpus(20, seed=5)
    cfg = TrainConfig(from_config="tiny", window=32, overlap=4, batch_size=8, lr=1e-3, max_steps=6,
                      epochs=1, seed=3, num_threads=1, progress=False, dev_fraction=0)
    a = train_token_classifier(docs, tmp_path / "a", cfg)
    b = train_token_classifier(docs, tmp_path / "b", cfg)
    assert a.final_loss == b.final_loss
    assert (tmp_path / "a" / "model.safetensors").read_bytes() == (tmp_path / "b" / "model.safetensors").read_bytes()


def test_cli_train_recognizer_on_gold_jsonl(tmp_path, capsys):
    from tide_core.cli import cmd_train_recognizer
    import argparse

    gold = tmp_path / "gold.jsonl"
    write_gold(gold, simple_corpus(20, seed=7))
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    cmd_train_recognizer.register(sub)
    args = parser.parse_args(["train-recognizer", "--gold", str(gold), "--from-config", "tiny",
                              "--output", str(tmp_path / "m"), "--max-steps", "5", "--window", "64",
                              "--no-progress", "--threads", "1"])
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["steps"] == 5 and out["output_dir"] == str(tmp_path / "m")
    assert (tmp_path / "m" / "tide_model.json").is_file()


def test_default_model_missing_gives_config_error(tmp_path, monkeypatch):
    from tide_core.errors import ConfigError
    from tide_core.models import default_model_dir

    monkeypatch.setenv("TIDE_MODEL_DIR", str(tmp_path / "nothing"))
    with pytest.raises(ConfigError) as exc:
        default_model_dir()
    assert "tide train-recognizer --default" in str(exc.value)
