"""Character-level privacy metrics, split matching and the coarse label set, on hand-built docs."""

from __future__ import annotations

import json

import pytest

from tide_core.cli.main import main
from tide_core.errors import ConfigError
from tide_core.evaluation.characters import character_metrics, clinical_terms_removed
from tide_core.evaluation.crosswalk import Crosswalk, load_crosswalk
from tide_core.evaluation.evaluate import evaluate
from tide_core.evaluation.gold_io import GoldDoc
from tide_core.evaluation.matching import match_document
from tide_core.spans import Span


def _at(text: str, surface: str, start_from: int = 0) -> tuple[int, int]:
    i = text.index(surface, start_from)
    return i, i + len(surface)


def _doc(note_id: str, text: str, spans: list[tuple[str, str]], metadata: dict | None = None) -> GoldDoc:
    return GoldDoc(note_id, "p", text, tuple(Span(note_id, *_at(text, s), lab) for s, lab in spans), metadata or {})


def _sp(note_id: str, text: str, surface: str, label: str) -> Span:
    return Span(note_id, *_at(text, surface), label)


# ------------------------------------------------------------------------------ character metrics

T1 = "Pt John Smith seen 03/04/2020 by Dr Ann Lee."
T2 = "Moved to Boston last year."


@pytest.fixture()
def hand_built():
    gold = [
        _doc("n1", T1, [("John Smith", "PATIENT"), ("03/04/2020", "DATE"), ("Ann Lee", "DOCTOR")]),
        _doc("n2", T2, [("Boston", "LOCATION")]),
    ]
    pred = {
        "n1": [
            _sp("n1", T1, "John", "PATIENT"),
            _sp("n1", T1, "John", "PATIENT"),  # duplicate: counted once
            _sp("n1", T1, "03/04/2020", "ID"),  # covered, wrong label
            _sp("n1", T1, "Dr Ann Lee", "DOCTOR"),  # 3 chars outside gold
            _sp("n1", T1, "seen", "OTHER"),
        ]
    }  # false positive
    return gold, pred  # n2: nothing predicted


def test_character_metrics_known_answers(hand_built):
    gold, pred = hand_built
    m = character_metrics(gold, pred)
    # uncovered: " Smith" (6 chars, the space counts) in PATIENT, all of "Boston" (6) in LOCATION
    assert (m.gold_chars["PATIENT"], m.uncovered_chars["PATIENT"], m.same_label_chars["PATIENT"]) == (10, 6, 4)
    assert m.uncovered_share("PATIENT") == pytest.approx(0.6)
    assert (m.gold_chars["DATE"], m.uncovered_chars["DATE"], m.same_label_chars["DATE"]) == (10, 0, 0)
    assert m.uncovered_share("DATE") == 0.0 and m.same_label_share("DATE") == 0.0
    assert (m.gold_chars["DOCTOR"], m.uncovered_chars["DOCTOR"], m.same_label_chars["DOCTOR"]) == (7, 0, 7)
    assert m.uncovered_share("LOCATION") == 1.0
    assert m.uncovered_share("EMAIL") is None and m.char_precision("EMAIL") is None
    assert (m.total_gold_chars, m.total_uncovered_chars, m.total_same_label_chars) == (33, 12, 11)
    assert m.uncovered_share() == pytest.approx(12 / 33)
    assert m.covered_share() == pytest.approx(21 / 33)
    # precision: predicted union 4 + 10 + 10 + 4 = 28 characters, 4 + 10 + 7 inside gold
    assert (m.total_pred_chars, m.total_pred_in_gold_chars) == (28, 21)
    assert m.char_precision() == pytest.approx(0.75)
    assert m.char_precision("PATIENT") == 1.0 and m.char_precision("ID") == 1.0
    assert m.char_precision("DOCTOR") == pytest.approx(0.7) and m.char_precision("OTHER") == 0.0
    d = m.to_dict()
    assert d["overall"]["uncovered_chars"] == 12 and d["category"]["DOCTOR"]["char_precision"] == pytest.approx(0.7)
    json.dumps(d)
    # the same numbers come through evaluate() and the JSON report
    rep = evaluate(gold, pred, n_resamples=0).to_dict()["systems"][0]
    assert rep["characters"]["overall"] == d["overall"]
    assert "clinical_terms_removed" not in rep  # no document lists clinical_terms


def test_overlapping_gold_spans_count_once_overall():
    text = "Seen at Mercy Hospital Boston today."
    gold = [
        GoldDoc(
            "n",
            "p",
            text,
            (Span("n", *_at(text, "Mercy Hospital Boston"), "HOSPITAL"), Span("n", *_at(text, "Boston"), "LOCATION")),
        )
    ]
    m = character_metrics(gold, {"n": [Span("n", *_at(text, "Boston"), "LOCATION")]})
    assert m.gold_chars["HOSPITAL"] == 21 and m.gold_chars["LOCATION"] == 6
    assert m.total_gold_chars == 21 and m.total_uncovered_chars == 15
    assert m.same_label_chars["HOSPITAL"] == 0 and m.total_same_label_chars == 6


def test_character_metrics_on_the_coarse_set_merge_names():
    text = "Dr Ann Lee saw John Smith."
    gold = [_doc("n", text, [("Ann Lee", "DOCTOR"), ("John Smith", "PATIENT")])]
    pred = {"n": [_sp("n", text, "Ann Lee", "PATIENT"), _sp("n", text, "John Smith", "DOCTOR")]}
    fine = character_metrics(gold, pred)
    coarse = character_metrics(gold, pred, label_set="coarse")
    assert fine.total_same_label_chars == 0 and fine.uncovered_share() == 0.0
    assert coarse.labels == ("NAME", "DATE", "AGE", "ID", "CONTACT", "LOCATION")
    assert coarse.gold_chars["NAME"] == 17 and coarse.same_label_chars["NAME"] == 17
    assert coarse.to_dict()["label_set"] == "coarse"


def test_clinical_terms_removed_counts_overlapped_terms():
    text = "Metformin 500 mg for diabetes; John Smith; aspirin daily."
    terms = [list(_at(text, "Metformin")), list(_at(text, "diabetes")), list(_at(text, "aspirin"))]
    d1 = _doc("n1", text, [("John Smith", "PATIENT")], {"clinical_terms": terms})
    d2 = _doc("n2", "No terms listed here.", [], {})
    dia_start = _at(text, "diabetes")[0]
    asp_start = _at(text, "aspirin")[0]
    pred = {
        "n1": [
            _sp("n1", text, "John Smith", "PATIENT"),
            Span("n1", dia_start + 7, dia_start + 10, "OTHER"),  # overlaps the last char of "diabetes"
            Span("n1", asp_start - 2, asp_start, "ID"),
        ]
    }  # ends where "aspirin" starts: no overlap
    r = clinical_terms_removed([d1, d2], pred)
    assert (r.n_docs, r.n_terms, r.n_removed) == (1, 3, 1)
    assert r.share == pytest.approx(1 / 3) and r.removed_by_doc == {"n1": 1}
    rep = evaluate([d1, d2], pred, n_resamples=0).to_dict()["systems"][0]
    assert rep["clinical_terms_removed"] == {"n_docs": 1, "n_terms": 3, "n_removed": 1, "share": pytest.approx(1 / 3)}
    assert clinical_terms_removed([d2], pred).n_docs == 0


# ---------------------------------------------------------------------------------- split match

ADDR_TEXT = "Lives at 12 Oak Street, Springfield, MA 01105 Tel desk 5. Follow up."
ADDR = "12 Oak Street, Springfield, MA 01105"


def _address_case(zip_piece: str):
    gold = [_doc("a", ADDR_TEXT, [(ADDR, "LOCATION")])]
    pieces = [_sp("a", ADDR_TEXT, s, "LOCATION") for s in ("12 Oak Street", "Springfield", "MA", zip_piece)]
    return gold, {"a": pieces}


def test_split_match_counts_pieces_that_cover_the_gold_span():
    gold, pred = _address_case("01105")
    # pieces cover 13 + 11 + 2 + 5 = 31 of 36 gold characters (0.86 >= 0.8), each lies wholly inside
    m = match_document(gold[0].spans, pred["a"], 0.8, split=True)
    assert len(m.split_pairs) == 1 and len(m.split_pairs[0][1]) == 4
    assert m.split_pairs[0][2] == pytest.approx(31 / 36)
    assert m.missed() == [] and m.spurious() == []
    on = evaluate(gold, pred, n_resamples=0, split=True)
    c = on.primary.point["category"]["LOCATION"]
    assert (c["tp"], c["fp"], c["fn"]) == (1, 0, 0)
    assert on.to_dict()["split_match"] is True
    # default off: exactly the one-to-one result (one miss, four false positives)
    off = evaluate(gold, pred, n_resamples=0)
    c = off.primary.point["category"]["LOCATION"]
    assert (c["tp"], c["fp"], c["fn"]) == (0, 4, 1)
    assert match_document(gold[0].spans, pred["a"], 0.8).split_pairs == ()


def test_split_match_refuses_a_piece_mostly_outside_the_gold_span():
    # identical except the ZIP piece runs on into the next field: 5 of its 15 characters inside
    gold, pred = _address_case("01105 Tel desk")
    m = match_document(gold[0].spans, pred["a"], 0.8, split=True)
    assert m.split_pairs == () and len(m.missed()) == 1 and len(m.spurious()) == 4


def test_split_match_needs_coverage_tau_and_the_same_label():
    gold = [_doc("a", ADDR_TEXT, [(ADDR, "LOCATION")])]
    two = [_sp("a", ADDR_TEXT, s, "LOCATION") for s in ("12 Oak Street", "Springfield")]  # 24/36 < 0.8
    assert match_document(gold[0].spans, two, 0.8, split=True).split_pairs == ()
    assert len(match_document(gold[0].spans, two, 0.6, split=True).split_pairs) == 1
    mixed = [
        _sp("a", ADDR_TEXT, s, lab)
        for s, lab in (
            ("12 Oak Street", "LOCATION"),
            ("Springfield", "HOSPITAL"),
            ("MA", "LOCATION"),
            ("01105", "LOCATION"),
        )
    ]
    assert match_document(gold[0].spans, mixed, 0.8, split=True).split_pairs == ()  # 20/36 same-label


def test_one_piece_is_not_a_split():
    # one prediction, 9 of its 17 characters inside (>= 0.5) covering 9/10 of the gold (>= tau), but
    # union overlap 9/18 < 0.8: a boundary error, not a split -- it stays a miss plus a false positive
    text = "ID 1234567890 ABCDEFGH end"
    gold = [GoldDoc("i", "p", text, (Span("i", 3, 13, "ID"),))]
    m = match_document(gold[0].spans, [Span("i", 4, 21, "ID")], 0.8, split=True)
    assert m.split_pairs == () and len(m.missed()) == 1
    m2 = match_document(gold[0].spans, [Span("i", 4, 12, "ID"), Span("i", 12, 21, "ID")], 0.8, split=True)
    assert m2.split_pairs == ()  # second piece has 1 of 9 characters inside: fails the inside rule
    m3 = match_document(gold[0].spans, [Span("i", 4, 8, "ID"), Span("i", 8, 13, "ID")], 0.8, split=True)
    assert len(m3.split_pairs) == 1  # two pieces inside covering 9/10


def test_split_match_leaves_one_to_one_matches_alone():
    text = "Call 555-123-4567 or 555-987-6543 today."
    gold = [_doc("c", text, [("555-123-4567", "PHONE"), ("555-987-6543", "PHONE")])]
    pred = {"c": [_sp("c", text, "555-123-4567", "PHONE"), _sp("c", text, "555-987-6543", "PHONE")]}
    a = evaluate(gold, pred, n_resamples=0).to_dict()["systems"][0]
    b = evaluate(gold, pred, n_resamples=0, split=True).to_dict()["systems"][0]
    assert a["category"] == b["category"] and a["overall"] == b["overall"]


# ------------------------------------------------------------------------------ coarse label set


def test_coarse_label_set_merges_labels_on_both_sides():
    text = "Dr Ann Lee saw John Smith; call 555-123-4567."
    gold = [_doc("n", text, [("Ann Lee", "DOCTOR"), ("John Smith", "PATIENT"), ("555-123-4567", "PHONE")])]
    pred = {
        "n": [
            _sp("n", text, "Ann Lee", "PATIENT"),
            _sp("n", text, "John Smith", "PATIENT"),
            _sp("n", text, "555-123-4567", "EMAIL"),
        ]
    }
    fine = evaluate(gold, pred, n_resamples=0)
    assert fine.primary.point["overall"]["tp"] == 1
    coarse = evaluate(gold, pred, n_resamples=0, label_set="coarse")
    assert coarse.labels == ("NAME", "DATE", "AGE", "ID", "CONTACT", "LOCATION")
    name, contact = coarse.primary.point["category"]["NAME"], coarse.primary.point["category"]["CONTACT"]
    assert (name["tp"], name["fp"], name["fn"]) == (2, 0, 0) and contact["tp"] == 1
    assert coarse.to_dict()["label_set"] == "coarse"


def test_crosswalk_targets_coarse_labels_only_on_the_coarse_set():
    xw = Crosswalk({"PERSON": "NAME", "TELEPHONE": "CONTACT"}, label_set="coarse")
    assert xw.lookup("PERSON") == "PATIENT" and xw.lookup("TELEPHONE") == "PHONE"  # representatives
    assert xw.lookup("NAME") == "PATIENT" and xw.lookup("DOCTOR") == "DOCTOR"
    with pytest.raises(ConfigError) as exc:
        Crosswalk({"PERSON": "NAME"})
    assert exc.value.code == "E700" and "--label-set coarse" in exc.value.hint


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_cli_scores_a_name_labelled_gold_on_the_coarse_set(tmp_path, capsys):
    text = "Dr Ann Lee saw John Smith on 03/04/2020; mail js@example.org."
    spans = lambda pairs: [dict(zip(("start", "end"), _at(text, s), strict=False), label=lab) for s, lab in pairs]  # noqa: E731
    gold = _write_jsonl(
        tmp_path / "gold.jsonl",
        [
            {
                "note_id": "n1",
                "text": text,
                "spans": spans(
                    [("Ann Lee", "NAME"), ("John Smith", "NAME"), ("03/04/2020", "DATE"), ("js@example.org", "CONTACT")]
                ),
            }
        ],
    )
    pred = _write_jsonl(
        tmp_path / "pred.jsonl",
        [
            {
                "note_id": "n1",
                "text": text,
                "spans": spans(
                    [
                        ("Ann Lee", "DOCTOR"),
                        ("John Smith", "PATIENT"),
                        ("03/04/2020", "DATE"),
                        ("js@example.org", "EMAIL"),
                    ]
                ),
            }
        ],
    )
    out = tmp_path / "out"
    rc = main(["eval", "--gold", gold, "--pred", pred, "--label-set", "coarse", "--resamples", "0", "--out", str(out)])
    assert rc == 0
    rep = json.loads((out / "eval_report.json").read_text())
    assert rep["labels"] == ["NAME", "DATE", "AGE", "ID", "CONTACT", "LOCATION"] and rep["label_set"] == "coarse"
    cats = rep["systems"][0]["category"]
    assert cats["NAME"]["tp"] == 2 and cats["NAME"]["recall"] == 1.0 and cats["CONTACT"]["tp"] == 1
    assert rep["systems"][0]["characters"]["overall"]["uncovered_share"] == 0.0
    md = capsys.readouterr().out
    assert "label set: coarse" in md and "| NAME | 2 |" in md and "Character level" in md
    # a crosswalk file may target coarse labels with --label-set coarse, not without
    gold2 = _write_jsonl(
        tmp_path / "gold2.jsonl",
        [{"note_id": "n1", "text": text, "spans": spans([("Ann Lee", "PERSON"), ("John Smith", "PERSON")])}],
    )
    cw = tmp_path / "cw.json"
    cw.write_text(json.dumps({"map": {"PERSON": "NAME"}}))
    assert (
        main(
            [
                "eval",
                "--gold",
                gold2,
                "--pred",
                pred,
                "--label-set",
                "coarse",
                "--crosswalk",
                str(cw),
                "--resamples",
                "0",
                "--out",
                str(tmp_path / "o2"),
            ]
        )
        == 0
    )
    assert json.loads((tmp_path / "o2" / "eval_report.json").read_text())["systems"][0]["category"]["NAME"]["tp"] == 2
    assert load_crosswalk(str(cw), "coarse").lookup("PERSON") == "PATIENT"
    capsys.readouterr()
    assert main(["eval", "--gold", gold2, "--pred", pred, "--crosswalk", str(cw), "--resamples", "0"]) == 2
    assert "E700" in capsys.readouterr().err
    # the NAME gold cannot be read on the fine label set at all
    assert main(["eval", "--gold", gold, "--pred", pred, "--resamples", "0"]) == 2
    assert "NAME" in capsys.readouterr().err
