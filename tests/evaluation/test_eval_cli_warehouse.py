"""``tide eval --warehouse URL --study S``: score the span cache of a real ``tide run`` (rules preset)."""

from __future__ import annotations

import json

import duckdb
import pytest

from tide_core.cli.cmd_demo import load_demo
from tide_core.cli.main import main
from tide_core.evaluation.evaluate import evaluate
from tide_core.evaluation.gold_io import read_gold, write_gold
from tide_core.evaluation.loading import load_cached_predictions
from tide_core.io.open import open_warehouse
from tide_core.store.span_cache import SpanCache


@pytest.fixture(scope="module")
def recognized(tmp_path_factory):
    """The demo notes in a DuckDB file, recognized by `tide run --stage recognize --preset rules`."""
    d = tmp_path_factory.mktemp("evalwh")
    db, gold = d / "demo.duckdb", d / "gold.jsonl"
    wh = open_warehouse(f"duckdb:{db}")
    try:
        load_demo(wh, seed=7, gold_out=str(gold))
    finally:
        wh.close()
    rc = main(
        [
            "run",
            "--warehouse",
            f"duckdb:{db}",
            "--study",
            "demo",
            "--key",
            "k1",
            "--stage",
            "recognize",
            "--preset",
            "rules",
            "--no-progress",
        ]
    )
    assert rc == 0
    return d, f"duckdb:{db}", gold


def test_eval_reads_the_span_cache(recognized, capsys):
    d, url, gold = recognized
    out = d / "out"
    rc = main(
        ["eval", "--gold", str(gold), "--warehouse", url, "--study", "demo", "--resamples", "50", "--out", str(out)]
    )
    assert rc == 0
    md = capsys.readouterr().out
    rep = json.loads((out / "eval_report.json").read_text())
    gold_docs = read_gold(gold)
    assert rep["span_cache"]["n_recognized"] == len(gold_docs) and rep["span_cache"]["n_failed"] == 0
    assert rep["span_cache"]["n_text_checked"] == len(gold_docs)
    assert rep["pairing"]["A"]["gold_without_pred"] == 0
    # the same numbers as scoring the cached spans by hand (the route `tide demo` prints)
    wh = open_warehouse(url)
    try:
        spans = SpanCache(wh).spans("demo")
    finally:
        wh.close()
    by_hand = evaluate(gold_docs, spans, n_resamples=0).primary.point
    sys_a = rep["systems"][0]
    assert sys_a["overall"]["tp"] == by_hand["overall"]["tp"] > 0
    assert sys_a["overall"]["fn"] == by_hand["overall"]["fn"] and sys_a["overall"]["fp"] == by_hand["overall"]["fp"]
    ch = sys_a["characters"]["overall"]
    assert ch["gold_chars"] == sys_a["overall"]["char_gold"]
    assert ch["uncovered_share"] == pytest.approx(1 - sys_a["overall"]["char_recall"])
    assert 0.0 < ch["char_precision"] <= 1.0
    assert "Character level (privacy view)" in md and "uncovered share" in md


def test_a_recognized_note_without_spans_predicts_nothing(recognized, tmp_path):
    d, url, gold = recognized
    db = tmp_path / "copy.duckdb"
    db.write_bytes((d / "demo.duckdb").read_bytes())
    gold_docs = read_gold(gold)
    victim = next(g for g in gold_docs if g.spans)
    con = duckdb.connect(str(db))
    con.execute("DELETE FROM tide_spans WHERE study = 'demo' AND note_id = ?", [victim.note_id])
    con.close()
    cached = load_cached_predictions(f"duckdb:{db}", "demo", gold=gold_docs)
    assert cached.spans[victim.note_id] == [] and len(cached.spans) == len(gold_docs)
    rep = evaluate(gold_docs, cached.spans, n_resamples=0)
    assert rep.pairing["A"]["gold_without_pred"] == 0
    per_doc_fn = rep.primary.table.fn[rep.primary.table.note_ids.index(victim.note_id)].sum()
    assert per_doc_fn == len(victim.spans)


def test_eval_warehouse_errors(recognized, tmp_path, capsys):
    d, url, gold = recognized

    def err(*argv):
        capsys.readouterr()
        assert main(["eval", "--gold", str(gold), "--resamples", "0", *argv]) == 2
        return capsys.readouterr().err

    assert "E720" in err()  # neither --pred nor --warehouse
    pred = tmp_path / "p.jsonl"
    pred.write_text("")
    assert "E720" in err("--pred", str(pred), "--warehouse", url, "--study", "demo")  # both
    assert "E720" in err("--warehouse", url)  # no --study
    assert "E722" in err("--warehouse", url, "--study", "nope")  # nothing recognized
    assert "E721" in err("--warehouse", f"duckdb:{tmp_path / 'missing.duckdb'}", "--study", "demo")
    assert not (tmp_path / "missing.duckdb").exists()
    # a gold whose text differs from the recognized note is refused: offsets would point elsewhere
    docs = read_gold(gold)
    first = docs[0]
    docs[0] = type(first)(first.note_id, first.patient_id, first.text + " ", first.spans, first.metadata)
    changed = tmp_path / "changed.jsonl"
    write_gold(changed, docs)
    capsys.readouterr()
    assert main(["eval", "--gold", str(changed), "--warehouse", url, "--study", "demo", "--resamples", "0"]) == 2
    assert "E716" in capsys.readouterr().err
