"""Short record numbers after a record-number label are IDs, never ages.

"MRN 7" and "ID: 42" used to come out of recognition as AGE (a model reads a bare 1-3 digit
number as an age, and no ID pattern took numbers under four characters).  The regex layer now
labels them ID, and resolution keeps ID over a model's AGE on the same characters.
"""

from __future__ import annotations

import pytest

from tide_core.engine.recognition import finish_note
from tide_core.recognizers import registry
from tide_core.spans import Span

REGEX = registry.create({"name": "tide.regex"})


def _recognized(text: str) -> list[tuple[str, str]]:
    return sorted((text[r.start : r.end], r.entity_type) for r in REGEX.analyze(text, None))


@pytest.mark.parametrize(
    "text,value",
    [
        ("MRN 7", "7"),
        ("MRN: 7 seen today.", "7"),
        ("MRN#88 on file", "88"),
        ("MR# 315", "315"),
        ("ID: 42", "42"),
        ("ID# 9, bed 4", "9"),
        ("Patient ID 42 was admitted.", "42"),
        ("Pt ID: 3", "3"),
        ("Member ID 17.", "17"),
        ("Account # 9", "9"),
        ("acct 12", "12"),
        ("Medical record number: 5", "5"),
        ("Record No. 85.", "85"),
        ("CSN 204", "204"),
    ],
)
def test_short_numbers_after_record_labels_are_ids(text, value):
    got = _recognized(text)
    assert (value, "ID") in got, got
    assert all(label != "AGE" for _, label in got), got


@pytest.mark.parametrize(
    "text",
    [
        "ID consult 2 days ago",
        "seen by ID 2 days ago",
        "MR 2/6 murmur",
        "MRN 7 days overdue",
        "Acct 30 mg",
    ],
)
def test_record_label_words_do_not_make_every_number_an_id(text):
    assert all(label != "ID" for _, label in _recognized(text)), _recognized(text)


def test_ages_next_to_short_ids_stay_ages():
    assert _recognized("MRN 42, 67 yo male") == [("42", "ID"), ("67", "AGE")]
    assert _recognized("MRN 7 age 45") == [("45", "AGE"), ("7", "ID")]


@pytest.mark.parametrize("text,value", [("MRN 7, follow up", "7"), ("Seen today. ID: 42. Stable.", "42")])
def test_id_beats_a_model_age_on_the_same_number_through_the_note_steps(text, value):
    i = text.index(value)
    model_age = Span("n1", i, i + len(value), "AGE", 0.99, "tide.hf@1")  # what a token classifier emitted
    regex = [Span("n1", r.start, r.end, r.entity_type, r.score, "tide.regex@1") for r in REGEX.analyze(text, None)]
    spans, record = finish_note("n1", [model_age, *regex], None, None, text)
    assert record.status == "ok"
    assert [(text[s.start : s.end], s.label) for s in spans] == [(value, "ID")]
