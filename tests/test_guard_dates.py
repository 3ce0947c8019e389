"""A month-and-year date is never released unchanged, whatever the patient's offset.

Offsets are 3..180 days; about one patient in fifteen has one under half a month, which a
month-precision date could round to no shift at all ("March 2021" released as written).  These
tests use the public surface only (``shift_date``, ``date_offset_days`` and the engine), for
2,000 patients and every month-year format the engine reads.
"""

from __future__ import annotations

import pytest

from tide_core.anonymize.dates import date_offset_days, shift_date
from tide_core.anonymize.engine import Anonymizer
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.spans import Note, Span

KR = keyring_for_tests("guard-dates", "k1", "guard-dates-seed")
PATIENTS = [f"patient-{i}" for i in range(2000)]
SMALL = [p for p in PATIENTS if abs(date_offset_days(KR, p)) <= 15]  # under half a month

MONTH_YEAR = [
    "March 2021",
    "Mar 2021",
    "MARCH 2021",
    "march 2021",
    "March, 2021",
    "Mar-2021",
    "March of 2021",
    "Mar '21",
    "Jan. 2021",
    "Dec 2020",
    "03/2021",
    "3/2021",
    "12/2020",
    "2021-03",
    "2021/03",
    "2021-12",
]


def test_the_sample_holds_small_offsets_of_both_signs():
    """Without them the tests below could not fail on a zero-month shift."""
    assert len(SMALL) >= 60
    assert any(date_offset_days(KR, p) < 0 for p in SMALL) and any(date_offset_days(KR, p) > 0 for p in SMALL)


@pytest.mark.parametrize("value", MONTH_YEAR)
def test_month_year_never_released_unchanged(value):
    unchanged = [p for p in PATIENTS if shift_date(KR, p, value, 2021).casefold() == value.casefold()]
    assert unchanged == [], f"{len(unchanged)} of {len(PATIENTS)} patients keep {value!r}"


@pytest.mark.parametrize("value", ["2021-03", "2020-12"])
def test_month_year_moves_in_the_direction_of_the_patients_offset(value):
    for p in SMALL:
        out = shift_date(KR, p, value, 2021)
        assert (out > value) == (date_offset_days(KR, p) > 0), (p, out)


def test_month_year_is_never_kept_through_the_engine():
    text = "Symptoms since March 2021, worse in 03/2021."
    spans = [Span("n1", 15, 25, "DATE"), Span("n1", 36, 43, "DATE")]
    assert [text[s.start : s.end] for s in spans] == ["March 2021", "03/2021"]
    anonymizer = Anonymizer(KR)
    for p in SMALL:
        out = anonymizer.anonymize(Note("n1", p, text, {"note_date": "2021-06-01"}), spans)
        released = [out.text[r.out_start : r.out_end] for r in out.spans]
        assert [r.operator for r in out.spans] == ["date.shift", "date.shift"]
        assert "March 2021" not in out.text and "03/2021" not in out.text, (p, released)
