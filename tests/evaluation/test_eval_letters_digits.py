"""Share of gold PHI letters and digits no prediction covers: hand-counted answers, `tide eval`
output and the quality bench table."""

from __future__ import annotations

import json

import pytest

from benchmarks.corpora import BenchCorpus
from benchmarks.quality import _summary, _targets, format_report, score
from tide_core.cli.main import main
from tide_core.evaluation.characters import character_metrics
from tide_core.evaluation.gold_io import GoldDoc
from tide_core.spans import Span

# n1: PATIENT "Zoë Smith" (9 chars, 8 letters), ID "AB-12" (5 chars, 4 alnum),
#     LOCATION "12 Oak St, Boston" (17 chars, 13 alnum)
T1 = "Pt Zoë Smith, MRN AB-12, at 12 Oak St, Boston."
# n2: ID "٣٤٥-٦" (Arabic-Indic digits: 5 chars, 4 digits); DATE "3 March" (7 chars, 6 alnum)
T2 = "Ref ٣٤٥-٦ on 3 March."


def _at(text: str, surface: str) -> tuple[int, int]:
    i = text.index(surface)
    return i, i + len(surface)


def _sp(nid: str, text: str, surface: str, label: str) -> Span:
    return Span(nid, *_at(text, surface), label)


def _gold() -> list[GoldDoc]:
    return [
        GoldDoc(
            "n1",
            "p",
            T1,
            (
                _sp("n1", T1, "Zoë Smith", "PATIENT"),
                _sp("n1", T1, "AB-12", "ID"),
                _sp("n1", T1, "12 Oak St, Boston", "LOCATION"),
            ),
        ),
        GoldDoc("n2", "p", T2, (_sp("n2", T2, "٣٤٥-٦", "ID"), _sp("n2", T2, "3 March", "DATE"))),
    ]


def _pred() -> dict[str, list[Span]]:
    return {
        "n1": [
            _sp("n1", T1, "Zoë", "PATIENT"),  # "Smith" left: 5 letters, 6 characters
            _sp("n1", T1, "AB", "ID"),  # "12" left: 2 digits, 3 characters
            _sp("n1", T1, "12 Oak St", "LOCATION"),  # split address: ", " left, no letter or digit
            _sp("n1", T1, "Boston", "LOCATION"),
        ],
        "n2": [Span("n2", *_at(T2, "March"), "DATE")],  # "3 " left: 1 digit, 2 characters; ID all left
    }


def test_known_answers_overall_and_per_category():
    m = character_metrics(_gold(), _pred())
    # characters (as before): PATIENT 6/9, ID 3+5=8/10, LOCATION 2/17, DATE 2/7
    assert (m.gold_chars["PATIENT"], m.uncovered_chars["PATIENT"]) == (9, 6)
    assert (m.gold_chars["ID"], m.uncovered_chars["ID"]) == (10, 8)
    assert (m.gold_chars["LOCATION"], m.uncovered_chars["LOCATION"]) == (17, 2)
    # letters and digits only
    assert (m.gold_alnum["PATIENT"], m.uncovered_alnum["PATIENT"]) == (8, 5)
    assert (m.gold_alnum["ID"], m.uncovered_alnum["ID"]) == (8, 6)  # 4 ASCII + 4 Arabic-Indic digits
    assert (m.gold_alnum["LOCATION"], m.uncovered_alnum["LOCATION"]) == (13, 0)
    assert (m.gold_alnum["DATE"], m.uncovered_alnum["DATE"]) == (6, 1)
    assert m.gold_alnum["PHONE"] == 0 and m.alnum_uncovered_share("PHONE") is None
    assert m.alnum_uncovered_share("PATIENT") == pytest.approx(5 / 8)
    assert m.alnum_uncovered_share("LOCATION") == 0.0
    assert m.uncovered_share("LOCATION") == pytest.approx(2 / 17)
    assert (m.total_gold_alnum, m.total_uncovered_alnum) == (35, 12)
    assert m.alnum_uncovered_share() == pytest.approx(12 / 35)
    d = m.to_dict()
    assert d["overall"]["alnum_uncovered_share"] == pytest.approx(12 / 35)
    assert d["category"]["ID"]["uncovered_alnum"] == 6 and d["category"]["ID"]["gold_alnum"] == 8


def test_overlapping_gold_spans_count_once_overall_and_in_each_category():
    text = "Seen at Mercy Boston today."
    gold = [GoldDoc("n", "p", text, (_sp("n", text, "Mercy Boston", "HOSPITAL"), _sp("n", text, "Boston", "LOCATION")))]
    m = character_metrics(gold, {"n": [_sp("n", text, "Mercy", "HOSPITAL")]})
    assert (m.gold_alnum["HOSPITAL"], m.uncovered_alnum["HOSPITAL"]) == (11, 6)
    assert (m.gold_alnum["LOCATION"], m.uncovered_alnum["LOCATION"]) == (6, 6)
    assert (m.total_gold_alnum, m.total_uncovered_alnum) == (11, 6)
    # a prediction of another label covers them all the same (the reader sees no letter)
    m = character_metrics(gold, {"n": [_sp("n", text, "Mercy Boston", "OTHER")]})
    assert m.uncovered_alnum["HOSPITAL"] == m.uncovered_alnum["LOCATION"] == m.total_uncovered_alnum == 0


def test_tide_eval_prints_and_writes_letters_digits_per_category(tmp_path, capsys):
    def row(nid: str, text: str, spans: list[Span]) -> str:
        return json.dumps(
            {"note_id": nid, "text": text, "spans": [{"start": s.start, "end": s.end, "label": s.label} for s in spans]}
        )

    gold = tmp_path / "gold.jsonl"
    gold.write_text("\n".join(row(d.note_id, d.text, list(d.spans)) for d in _gold()) + "\n", encoding="utf-8")
    texts = {"n1": T1, "n2": T2}
    pred = tmp_path / "pred.jsonl"
    pred.write_text("\n".join(row(k, texts[k], v) for k, v in _pred().items()) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["eval", "--gold", str(gold), "--pred", str(pred), "--resamples", "0", "--out", str(out)]) == 0
    md = capsys.readouterr().out
    assert "letters and digits left uncovered: **0.343** (12 of 35)" in md
    assert "| PATIENT | 9 | 0.667 | 8 | 0.625 |" in md
    assert "| LOCATION | 17 | 0.118 | 13 | 0.000 |" in md
    assert "| ID | 10 | 0.800 | 8 | 0.750 |" in md
    rep = json.loads((out / "eval_report.json").read_text())
    ch = rep["systems"][0]["characters"]
    assert ch["overall"]["uncovered_alnum"] == 12 and ch["category"]["DATE"]["uncovered_alnum"] == 1


def test_quality_bench_table_reports_letters_digits_overall_and_per_category():
    corpus = BenchCorpus("hand", 0, _gold())
    full = score(corpus, _pred())
    summary = _summary("full", full)
    assert summary["alnum_uncovered_share"] == pytest.approx(12 / 35)
    # worst category by letters/digits is ID (6 of 8); by characters it is ID too (8 of 10)
    assert summary["worst_alnum_category"] == "ID" and summary["worst_alnum_uncovered"] == pytest.approx(0.75)
    res = {
        "corpus": "hand",
        "seed": 0,
        "n_notes": 2,
        "n_gold_spans": corpus.n_spans,
        "n_chars": len(T1) + len(T2),
        "seconds": {},
        "full": full,
        "summary": summary,
        "ablation": [summary, {**summary, "system": "full - x", "alnum_uncovered_share": 0.5}],
        "targets": _targets(summary),
    }
    text = format_report({"seed": 0, "include_model": False, "corpora": [res]})
    assert "PHI letters/digits uncovered" in text
    assert "| 34.29% | ID 75.00% |" in text  # overall, then worst category (letters/digits)
    # per category cell: span recall / chars uncovered / letters+digits uncovered / verbatim
    assert "| LOCATION | 0.000 / 11.76% / 0.00% /   -   |" in text
    assert "| PATIENT | 0.000 / 66.67% / 62.50% /   -   |" in text
    assert "| full - x | " in text and "| 50.00% |" in text
