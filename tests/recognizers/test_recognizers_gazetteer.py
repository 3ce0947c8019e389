"""Gazetteer: word-bounded, case-insensitive, longest match; CSV validation; fingerprint tracks contents."""

from __future__ import annotations

import pickle

import pytest

from tide_core.errors import ConfigError
from tide_core.recognizers.gazetteer import AhoMatcher, GazetteerRecognizer
from tide_core.spans import Note

CSV = """term,label
St. Mary's,HOSPITAL
St. Mary's Medical Center,HOSPITAL
Mercy,HOSPITAL
Cardiology Clinic B,HOSPITAL
Acme Corp,OTHER
XQ-,ID
"""


@pytest.fixture
def gaz_csv(tmp_path):
    p = tmp_path / "gaz.csv"
    p.write_text(CSV, encoding="utf-8")
    return p


def found(rec, text, entities=None):
    return [(r.entity_type, text[r.start : r.end]) for r in rec.analyze(text, entities)]


def test_longest_match_case_insensitive_word_bounded(gaz_csv):
    rec = GazetteerRecognizer(gaz_csv)
    text = "Sent from ST. MARY'S MEDICAL CENTER to Mercy; not Mercyhurst or unmercy. Works at acme corp."
    assert found(rec, text) == [
        ("HOSPITAL", "ST. MARY'S MEDICAL CENTER"),
        ("HOSPITAL", "Mercy"),
        ("OTHER", "acme corp"),
    ]
    assert found(rec, "seen at St. Mary's today") == [("HOSPITAL", "St. Mary's")]
    # a term ending in punctuation matches right before a word character
    assert found(rec, "code XQ-12") == [("ID", "XQ-")]
    assert found(rec, "Mercy", ["OTHER"]) == []


def test_recognize_offsets_are_exact(gaz_csv):
    rec = GazetteerRecognizer(gaz_csv)
    note = Note("n1", "p1", "İİ Mercy and cardiology clinic b.")  # İ lowercases to 2 chars: offsets must hold
    spans = rec.recognize(note)
    assert [(note.text[s.start : s.end], s.label) for s in spans] == [
        ("Mercy", "HOSPITAL"),
        ("cardiology clinic b", "HOSPITAL"),
    ]
    assert all(s.recognizer == "tide.gazetteer@1" and s.score == 0.9 for s in spans)


def test_fingerprint_changes_with_csv_contents(tmp_path, gaz_csv):
    a = GazetteerRecognizer(gaz_csv).fingerprint()
    other = tmp_path / "other.csv"
    other.write_text(CSV, encoding="utf-8")
    assert GazetteerRecognizer(other).fingerprint() == a  # same contents, other path
    other.write_text(CSV + "Hope House,HOSPITAL\n", encoding="utf-8")
    assert GazetteerRecognizer(other).fingerprint() != a
    assert "csv_sha256" in GazetteerRecognizer(other).config()


@pytest.mark.parametrize(
    "content,code,needle",
    [
        ("name,kind\nMercy,HOSPITAL\n", "E212", "header"),
        ("term,label\nMercy,CLINIC\n", "E214", "row 2"),
        ("term,label\nMercy,HOSPITAL\n,HOSPITAL\n", "E213", "row 3"),
        ("term,label\nMercy,HOSPITAL\nmercy,OTHER\n", "E216", "row 3"),
        ("term,label,score\nMercy,HOSPITAL,2\n", "E215", "row 2"),
        ("term,label\nSt. Mary's, North,HOSPITAL\n", "E213", "row 2"),
    ],
)
def test_malformed_csv_errors_name_the_row(tmp_path, content, code, needle):
    p = tmp_path / "bad.csv"
    p.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        GazetteerRecognizer(p)
    assert e.value.code == code and needle in str(e.value) and e.value.hint


def test_missing_csv(tmp_path):
    with pytest.raises(ConfigError) as e:
        GazetteerRecognizer(tmp_path / "nope.csv")
    assert e.value.code == "E210" and "term,label" in e.value.hint


def test_comments_blank_lines_and_scores(tmp_path):
    p = tmp_path / "g.csv"
    p.write_text("term,label,score\n# facilities\n\nMercy,HOSPITAL,0.7\n", encoding="utf-8")
    [r] = GazetteerRecognizer(p).analyze("at Mercy")
    assert r.score == 0.7


def test_matcher_pickles_and_rebuilds():
    m = AhoMatcher()
    m.add("john smith", "A")
    m.add("Smith", "B")
    clone = pickle.loads(pickle.dumps(m))
    hits = clone.find("Dr John Smith, smithers")
    assert [(h.start, h.end, h.payload) for h in hits] == [(3, 13, ("A",))]
    assert len(clone.find_all("John Smith")) == 2
