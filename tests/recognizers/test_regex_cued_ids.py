"""Cued identifiers the regex layer used to miss: numbers with a slash after a file/case/application
cue, SSN-shaped numbers in spaced groups after an ID cue, and record numbers with letters of other
scripts.  Checked through the whole rules preset (resolution included), with near-miss negatives
(dates, ratios, scores, lab values, phones) that must stay untouched."""

from __future__ import annotations

import pytest

from tide_core.config import rules_specs
from tide_core.engine.recognition import recognize_notes
from tide_core.recognizers.registry import create
from tide_core.spans import Note


@pytest.fixture(scope="module")
def rules():
    recs = [create(s) for s in rules_specs() if s["name"] != "tide.known_phi"]
    for r in recs:
        r.load()
    return recs


def _spans(rules, text: str) -> list[tuple[str, str]]:
    batch = recognize_notes([Note("n", "p", text, {})], rules)
    return [(text[s.start : s.end], s.label) for s in batch.spans.get("n", [])]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Application no. 30326/03 was lodged in 2003.", "30326/03"),
        ("See case file 27/159587 for the history.", "27/159587"),
        ("Application No 017023/22 refers.", "017023/22"),
        ("Claim #: 4471920/1 was paid.", "4471920/1"),
        ("Reference 541 01 3173 was sent.", "541 01 3173"),
        ("Employee ID 601 86 9020; SSN on file.", "601 86 9020"),
        ("SSN: 123 45 6789.", "123 45 6789"),
        ("Medical record number: ΩΨ123456.", "ΩΨ123456"),
        ("MRN: ДЖ-123456 reviewed.", "ДЖ-123456"),
        ("Patient ID: 12345ÄB.", "12345ÄB"),
        ("MRN: 山田-12345 reviewed.", "山田-12345"),
    ],
)
def test_cued_identifier_is_one_id_span(rules, text, value):
    assert (value, "ID") in _spans(rules, text)


@pytest.mark.parametrize(
    "text",
    [
        "no 3/12 pain today",
        "Strength 4/5, no 1/10 pain.",
        "BP no 140/90; ref 120/80.",
        "platelets 150000/uL, no 20000/uL drop",
        "number 12/2021 visits",
        "Case 2/5 strength in the left arm.",
        "no 120 80 90 mmHg",
        "The ID 2 days ago was normal.",
    ],
)
def test_dates_ratios_and_values_after_a_cue_are_no_id(rules, text):
    assert not [v for v, lab in _spans(rules, text) if lab == "ID"]


def test_a_spaced_phone_after_ref_stays_a_phone(rules):
    assert _spans(rules, "Ref 555 123 4567 called back.") == [("555 123 4567", "PHONE")]
