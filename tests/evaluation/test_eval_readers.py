"""BRAT and i2b2 readers, label crosswalks, and `tide eval` end to end on files written here."""

from __future__ import annotations

import json

import pytest

from tide_core.errors import ConfigError, InputError
from tide_core.evaluation.brat import read_brat
from tide_core.evaluation.crosswalk import i2b2_crosswalk, load_crosswalk
from tide_core.evaluation.gold_io import write_gold
from tide_core.evaluation.i2b2 import read_i2b2
from tide_core.evaluation.jsonl_reader import read_jsonl_docs

BRAT_TEXT = "Seen by Dr. Ana Ruiz on 3/4/2021.\r\nPatient: Mark Lee, lives in Boston MA.\n"


def _write_brat(folder):
    folder.mkdir()
    (folder / "doc1.txt").write_bytes(BRAT_TEXT.encode("utf-8"))
    t = BRAT_TEXT
    a, b = t.index("Ana Ruiz"), t.index("3/4/2021")
    m, bo, ma = t.index("Mark"), t.index("Boston"), t.index("MA.")
    ann = (
        "\n".join(
            [
                f"T1\tDOCTOR {a} {a + 8}\tAna Ruiz",
                f"T2\tDATE {b} {b + 8}\t3/4/2021",
                f"T3\tPATIENT {m} {m + 4};{m + 5} {m + 8}\tMark Lee",  # discontinuous (two fragments)
                f"T4\tCITY {bo} {bo + 6}\tBostn",  # TEXT column disagrees
                f"T5\tSTATE {ma} {ma + 2}\tMA",
                "R1\tLives_in Arg1:T3 Arg2:T4",
                "A1\tNegated T2",
                "#1\tAnnotatorNotes T1\tchecked",
            ]
        )
        + "\n"
    )
    (folder / "doc1.ann").write_text(ann, encoding="utf-8")
    return a, b, m, bo, ma


def test_brat_reader_keeps_offsets_and_flags_discontinuous_and_mismatch(tmp_path):
    a, b, m, bo, ma = _write_brat(tmp_path / "brat")
    xw = i2b2_crosswalk()
    loaded = read_brat(tmp_path / "brat", xw)
    doc = loaded.docs[0]
    assert doc.note_id == "doc1" and "\r\n" in doc.text  # no newline translation
    got = [(s.start, s.end, s.label) for s in doc.spans]
    assert (a, a + 8, "DOCTOR") in got and (b, b + 8, "DATE") in got
    assert (m, m + 4, "PATIENT") in got and (m + 5, m + 8, "PATIENT") in got  # split policy
    assert (bo, bo + 6, "LOCATION") in got and (ma, ma + 2, "LOCATION") in got
    counts = loaded.issue_counts()
    assert counts == {"discontinuous": 1, "offset_mismatch": 1}
    assert all("Bost" not in i.detail and "Mark" not in i.detail for i in loaded.issues)
    hull = read_brat(tmp_path / "brat", i2b2_crosswalk(), discontinuous="hull").docs[0]
    assert (m, m + 8, "PATIENT") in [(s.start, s.end, s.label) for s in hull.spans]
    skip = read_brat(tmp_path / "brat", i2b2_crosswalk(), discontinuous="skip").docs[0]
    assert not [s for s in skip.spans if s.label == "PATIENT"]


def test_brat_unknown_label_is_an_error_not_a_silent_drop(tmp_path):
    _write_brat(tmp_path / "brat")
    with pytest.raises(InputError) as exc:
        read_brat(tmp_path / "brat")  # identity crosswalk: CITY/STATE are not TIDE labels
    assert exc.value.code == "E701" and "crosswalk" in exc.value.hint


I2B2_TEXT = (
    "Record date: 2069-04-07\n\nMr. Gary Stone is a 64 yo male, a carpenter, seen in room 4B at "
    "Lakeside Hospital by Dr. Ellen Park (pager 555-1234).\n"
)


def _write_i2b2(path):
    t = I2B2_TEXT

    def at(s, shift=0):
        i = t.index(s) + shift
        return f'start="{i}" end="{i + len(s)}" text="{s}"'

    tags = [
        f'<DATE id="P0" {at("2069-04-07")} TYPE="DATE" comment="" />',
        f'<NAME id="P1" {at("Gary Stone")} TYPE="PATIENT" comment="" />',
        f'<AGE id="P2" {at("64")} TYPE="AGE" comment="" />',
        f'<PROFESSION id="P3" {at("carpenter")} TYPE="PROFESSION" comment="" />',
        f'<LOCATION id="P4" {at("4B")} TYPE="ROOM" comment="" />',
        f'<LOCATION id="P5" {at("Lakeside Hospital", shift=2)} TYPE="HOSPITAL" comment="" />',  # off by 2
        f'<NAME id="P6" {at("Ellen Park")} TYPE="DOCTOR" comment="" />',
        '<CONTACT id="P7" start="5" end="13" text="555-1234" TYPE="PHONE" comment="" />',  # unfixable
    ]
    xml = (
        '<?xml version="1.0" encoding="UTF-8" ?>\n<deIdi2b2>\n<TEXT><![CDATA['
        + t
        + "]]></TEXT>\n<TAGS>\n"
        + "\n".join(tags)
        + "\n</TAGS>\n</deIdi2b2>\n"
    )
    path.write_text(xml, encoding="utf-8")


def test_i2b2_reader_verifies_offsets_and_applies_crosswalk(tmp_path):
    folder = tmp_path / "i2b2"
    folder.mkdir()
    _write_i2b2(folder / "110-02.xml")
    loaded = read_i2b2(folder)
    doc = loaded.docs[0]
    assert doc.note_id == "110-02" and doc.patient_id == "110" and doc.text == I2B2_TEXT
    by_label = {s.label: doc.text[s.start : s.end] for s in doc.spans}
    assert by_label["PATIENT"] == "Gary Stone" and by_label["DOCTOR"] == "Ellen Park"
    assert by_label["HOSPITAL"] == "Lakeside Hospital"  # relocated by -2
    assert by_label["AGE"] == "64" and by_label["DATE"] == "2069-04-07"
    assert "OTHER" not in by_label and len([s for s in doc.spans if s.label == "LOCATION"]) == 0
    issues = {i.code: i for i in loaded.issues}
    assert "-2 chars" in issues["offset_relocated"].detail
    assert issues["offset_mismatch"].start == 5 and "555" not in issues["offset_mismatch"].detail
    assert loaded.excluded_labels == {"PROFESSION/PROFESSION": 1, "LOCATION/ROOM": 1}
    with pytest.raises(InputError) as exc:
        read_i2b2(folder, strict=True)
    assert exc.value.code == "E711" and "Lakeside" not in str(exc.value)


def test_crosswalk_files_csv_and_json(tmp_path):
    csv_path = tmp_path / "xw.csv"
    csv_path.write_text(
        "source,target\nNAME/PATIENT,PATIENT\nNAME/DOCTOR,DOCTOR\nPROFESSION,\nLOCATION,LOCATION\n", encoding="utf-8"
    )
    xw = load_crosswalk(csv_path)
    assert xw.lookup("NAME", "DOCTOR") == "DOCTOR" and xw.lookup("PROFESSION", "PROFESSION") is None
    assert xw.lookup("LOCATION", "CITY") == "LOCATION"  # falls back to the category
    json_path = tmp_path / "xw.json"
    json_path.write_text(json.dumps({"name": "paper", "map": {"ORGANIZATION": None, "NAME": "PATIENT"}}))
    xj = load_crosswalk(json_path)
    assert xj.name == "paper" and xj.lookup("LOCATION", "ORGANIZATION") is None
    with pytest.raises(ConfigError):
        load_crosswalk(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"map": {"NAME": "PERSON"}}))
    with pytest.raises(ConfigError) as exc:
        load_crosswalk(bad)
    assert exc.value.code == "E700"


def test_prediction_jsonl_with_external_labels_and_scores(tmp_path):
    p = tmp_path / "pred.jsonl"
    p.write_text(
        json.dumps(
            {
                "note_id": "a",
                "text": "Call 555-1234 or Bob",
                "spans": [
                    {"start": 5, "end": 13, "label": "CONTACT", "type": "PHONE", "score": 0.7, "recognizer": "x@2"},
                    {"start": 17, "end": 20, "label": "NAME", "type": "DOCTOR"},
                    {"start": 17, "end": 40, "label": "NAME", "type": "DOCTOR"},
                ],
            }
        )
        + "\n"
    )
    loaded = read_jsonl_docs(p, i2b2_crosswalk())
    spans = loaded.docs[0].spans
    assert [(s.label, s.score, s.recognizer) for s in spans] == [("PHONE", 0.7, "x@2"), ("DOCTOR", 1.0, "pred@0")]
    assert loaded.issue_counts() == {"out_of_range": 1}
    with pytest.raises(InputError):
        read_jsonl_docs(p)  # external labels without a crosswalk


def test_tide_eval_cli_writes_reports(tmp_path, capsys):
    from test_eval_metrics import corpus, pred_span, with_spans

    from tide_core.cli.main import main

    gold = corpus(40, seed=9)
    write_gold(tmp_path / "gold.jsonl", gold)
    pred_a = [with_spans(d, [pred_span(s) for s in d.spans if s.label != "PHONE"]) for d in gold]
    write_gold(tmp_path / "a.jsonl", pred_a)
    write_gold(tmp_path / "b.jsonl", [with_spans(d, [pred_span(s) for s in d.spans]) for d in gold])
    ext = corpus(30, seed=10)
    write_gold(tmp_path / "ext.jsonl", ext)
    write_gold(
        tmp_path / "ext_pred.jsonl",
        [with_spans(d, [pred_span(s) for s in d.spans if s.label not in ("PHONE", "ID")]) for d in ext],
    )
    out = tmp_path / "report"
    rc = main(
        [
            "eval",
            "--gold",
            str(tmp_path / "gold.jsonl"),
            "--pred",
            str(tmp_path / "a.jsonl"),
            "--pred-b",
            str(tmp_path / "b.jsonl"),
            "--out",
            str(out),
            "--resamples",
            "500",
            "--external-gold",
            str(tmp_path / "ext.jsonl"),
            "--external-pred",
            str(tmp_path / "ext_pred.jsonl"),
        ]
    )
    assert rc == 0
    md = capsys.readouterr().out
    assert "| PHONE | 40 | 0 | 0 | 0 | 40 |" in md and "Paired bootstrap test" in md and "Recall drop" in md
    report = json.loads((out / "eval_report.json").read_text())
    assert report["systems"][0]["category"]["PHONE"]["recall"] == 0.0
    assert report["systems"][1]["overall"]["micro_recall"] == 1.0
    assert report["recall_drop"]["drop"] == pytest.approx(
        report["recall_drop"]["within_category_recall"] + report["recall_drop"]["category_mix"]
    )
    png = (out / "recall_by_category.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    texts = [d.text for d in gold]
    blob = (out / "eval_report.json").read_text() + (out / "eval_report.md").read_text()
    assert not any(d.text[s.start : s.end] in blob for d in gold for s in d.spans if s.length > 3)
    assert texts


def test_tide_eval_cli_i2b2_format(tmp_path, capsys):
    from tide_core.cli.main import main

    folder = tmp_path / "i2b2"
    folder.mkdir()
    _write_i2b2(folder / "110-02.xml")
    t = I2B2_TEXT
    i = t.index("Gary Stone")
    (tmp_path / "pred.jsonl").write_text(
        json.dumps({"note_id": "110-02", "spans": [{"start": i, "end": i + 10, "label": "PATIENT"}]}) + "\n"
    )
    rc = main(
        ["eval", "--gold", str(folder), "--format", "i2b2", "--pred", str(tmp_path / "pred.jsonl"), "--resamples", "0"]
    )
    out = capsys.readouterr()
    assert rc == 0 and "| PATIENT | 1 | 1 | 1 | 0 | 0 |" in out.out
    assert "offset_relocated" in out.err and "label crosswalk: i2b2-2014" in out.out
