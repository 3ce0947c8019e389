"""Gold JSONL reader/writer: round trip and clear, line-numbered errors."""

from __future__ import annotations

import json

import pytest

from tide_core.errors import InputError
from tide_core.evaluation.gold_io import GoldDoc, read_gold, write_gold
from tide_core.spans import Span


def _doc() -> GoldDoc:
    text = "Pt Jane Roe seen 3/4/2021, MRN 12345678."
    spans = (Span("n1", 3, 11, "PATIENT"), Span("n1", 17, 25, "DATE"), Span("n1", 31, 39, "ID"))
    return GoldDoc(
        "n1",
        "p1",
        text,
        spans,
        {"note_date": "2021-03-04", "note_type": "progress_note", "source": "test", "site": "s", "templates": ["x"]},
    )


def test_round_trip(tmp_path):
    doc = _doc()
    path = tmp_path / "gold.jsonl"
    assert write_gold(path, [doc, doc]) == 2
    back = read_gold(path)
    assert len(back) == 2
    assert back[0].text == doc.text
    assert [(s.start, s.end, s.label) for s in back[0].spans] == [(3, 11, "PATIENT"), (17, 25, "DATE"), (31, 39, "ID")]
    assert back[0].text[back[0].spans[0].start : back[0].spans[0].end] == "Jane Roe"
    assert back[0].metadata["templates"] == ["x"]
    assert back[0].to_dict() == doc.to_dict()


def test_to_note_keeps_only_note_metadata():
    note = _doc().to_note()
    assert note.note_id == "n1" and note.patient_id == "p1"
    assert set(note.metadata) == {"note_date", "note_type", "source", "site"}
    assert note.metadata["note_date"] == "2021-03-04"


def test_spans_sorted_on_read(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text(
        json.dumps(
            {
                "note_id": "a",
                "patient_id": "p",
                "text": "abc def",
                "spans": [{"start": 4, "end": 7, "label": "DATE"}, {"start": 0, "end": 3, "label": "AGE"}],
                "metadata": {},
            }
        )
        + "\n\n"
    )
    (doc,) = read_gold(path)
    assert [s.start for s in doc.spans] == [0, 4]


@pytest.mark.parametrize(
    "bad, fragment",
    [
        ("{not json", "invalid JSON"),
        (
            json.dumps({"note_id": "a", "text": "abc", "spans": [{"start": 0, "end": 9, "label": "DATE"}]}),
            "outside the text",
        ),
        (
            json.dumps({"note_id": "a", "text": "abc", "spans": [{"start": 2, "end": 1, "label": "DATE"}]}),
            "outside the text",
        ),
        (
            json.dumps({"note_id": "a", "text": "abc", "spans": [{"start": 0, "end": 2, "label": "NAME"}]}),
            "unknown label",
        ),
        (
            json.dumps({"note_id": "a", "text": "abc", "spans": [{"start": 0, "label": "DATE"}]}),
            "lacks start/end/label",
        ),
        (json.dumps({"note_id": "a", "spans": []}), "missing key 'text'"),
        (json.dumps([1, 2]), "not a JSON object"),
    ],
)
def test_bad_lines_name_the_line(tmp_path, bad, fragment):
    good = json.dumps(_doc().to_dict())
    path = tmp_path / "bad.jsonl"
    path.write_text(good + "\n" + bad + "\n")
    with pytest.raises(InputError) as exc:
        read_gold(path)
    assert exc.value.code == "E610"
    assert "line 2" in str(exc.value)
    assert fragment in str(exc.value)
    assert "Jane" not in str(exc.value)  # never echo note text


def test_missing_file(tmp_path):
    with pytest.raises(InputError) as exc:
        read_gold(tmp_path / "nope.jsonl")
    assert exc.value.code == "E611"


def test_write_rejects_span_past_text(tmp_path):
    doc = GoldDoc("n", "p", "short", (Span("n", 0, 20, "DATE"),), {})
    with pytest.raises(InputError):
        write_gold(tmp_path / "x.jsonl", [doc])
