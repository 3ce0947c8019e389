"""Distillation: a regex teacher labels notes, a tiny student learns them, fidelity is reported."""

from __future__ import annotations

import random

import pytest

from template_gold import template_corpus
from tide_core.evaluation.gold_io import GoldDoc, write_gold

TEMPLATES = [
    "Seen on {DATE} for follow up, MRN {ID}.",
    "Call back at {PHONE} if symptoms return.",
    "Next visit {DATE}; labs drawn today.",
    "No acute distress, lungs clear.",
]


def _value(label: str, r: random.Random) -> str:
    if label == "DATE":
        return f"{r.randint(1, 12):02d}/{r.randint(1, 28):02d}/{r.randint(1990, 2024)}"
    if label == "ID":
        return str(r.randint(10_000_000, 99_999_999))
    return f"({r.randint(201, 989)}) {r.randint(201, 989)}-{r.randint(1000, 9999)}"


def corpus(n: int, seed: int) -> list[GoldDoc]:
    return template_corpus(TEMPLATES, _value, n, seed, prefix="d", sentences=(2, 4))


TEACHER = [{"name": "tide.regex"}]


@pytest.fixture(scope="module")
def distilled(tmp_path_factory):
    from tide_core.training.distill import distill
    from tide_core.training.trainer import TrainConfig

    notes = [d.to_note() for d in corpus(80, seed=1)]  # unannotated: text only
    cfg = TrainConfig(
        from_config="tiny",
        window=64,
        overlap=8,
        batch_size=16,
        lr=3e-3,
        epochs=10,
        seed=2,
        num_threads=1,
        progress=False,
        dev_fraction=0.0,
    )
    return distill(
        notes, TEACHER, tmp_path_factory.mktemp("student") / "m", cfg, gold=corpus(30, seed=2), n_resamples=300
    )


def test_teacher_labels_are_the_regex_spans():
    from tide_core.recognizers.registry import create
    from tide_core.training.distill import label_notes

    notes = [d.to_note() for d in corpus(5, seed=9)]
    labels = label_notes(notes, TEACHER)
    rec = create({"name": "tide.regex"})
    for n in notes:
        assert labels[n.note_id] == sorted(rec.recognize(n))
        assert {s.label for s in labels[n.note_id]} <= {"DATE", "ID", "PHONE"}


def test_student_learns_the_teacher(distilled):
    rep = distilled.fidelity
    assert distilled.n_silver_spans > 100
    assert rep["scored_on"] == "gold"
    agree = rep["agreement_with_teacher"]
    assert agree["micro_recall"] >= 0.8, agree
    assert rep["teacher"]["category"]["DATE"]["recall"] >= 0.9  # the regex teacher is good here
    rows = {r["label"]: r for r in rep["delta_recall"]}
    assert {"DATE", "ID", "PHONE", "micro"} <= set(rows)
    for r in rows.values():
        assert r["delta"] == pytest.approx(r["recall_b"] - r["recall_a"])  # student minus teacher
        lo, hi = r["ci"]
        assert lo <= r["delta"] + 1e-9 and r["delta"] <= hi + 1e-9
    assert rows["micro"]["delta"] > -0.2
    card = distilled.train.card
    assert card["corpus"]["source"] == "distillation" and card["corpus"]["teacher"] == TEACHER


def test_format_fidelity_lists_categories(distilled):
    from tide_core.training.fidelity import format_fidelity

    text = format_fidelity(distilled.fidelity)
    assert "DATE" in text and "micro" in text and "student vs teacher" in text


def test_cli_distill(tmp_path, capsys):
    import argparse
    import json

    from tide_core.cli import cmd_distill

    notes = tmp_path / "notes.jsonl"
    write_gold(notes, corpus(12, seed=4))
    gold = tmp_path / "gold.jsonl"
    write_gold(gold, corpus(6, seed=5))
    parser = argparse.ArgumentParser()
    cmd_distill.register(parser.add_subparsers())
    args = parser.parse_args(
        [
            "distill",
            "--notes",
            str(notes),
            "--teacher",
            json.dumps(TEACHER),
            "--gold",
            str(gold),
            "--output",
            str(tmp_path / "s"),
            "--from-config",
            "tiny",
            "--max-steps",
            "3",
            "--window",
            "64",
            "--threads",
            "1",
            "--resamples",
            "50",
            "--report",
            str(tmp_path / "r.json"),
            "--no-progress",
        ]
    )
    assert args.func(args) == 0
    assert "student:" in capsys.readouterr().out
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["n_docs"] == 6 and "delta_recall" in rep


def test_cli_distill_rejects_bad_teacher(tmp_path):
    import argparse

    from tide_core.cli import cmd_distill
    from tide_core.errors import ConfigError

    parser = argparse.ArgumentParser()
    cmd_distill.register(parser.add_subparsers())
    args = parser.parse_args(["distill", "--synthetic", "2", "--teacher", "not json", "--output", str(tmp_path)])
    with pytest.raises(ConfigError):
        args.func(args)
