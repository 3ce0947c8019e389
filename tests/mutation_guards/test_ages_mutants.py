"""AGE spans: ages over 89 are released as ``90+`` (HIPAA Safe Harbor), never as written.

Every number word is checked at the 89/90 boundary (a sum of exactly 89 is kept; one more would be
aggregated), every unit at an age over 89 (years aggregate, months/weeks/days stay), and spans that
are no age raise E420.
"""

from __future__ import annotations

import pytest

from tide_core.anonymize.ages import _TENS, _UNITS, anonymize_age
from tide_core.errors import AnonymizationError


@pytest.mark.parametrize("age", ["0", "7", "42", "89", "89.0", "088"])
def test_ages_up_to_89_are_kept(age):
    assert anonymize_age(age) == (age, "age.keep")


@pytest.mark.parametrize("age", ["90", "89.5", "91", "104", "999", "090"])
def test_ages_over_89_are_90_plus(age):
    assert anonymize_age(age) == ("90+", "age.aggregate")


@pytest.mark.parametrize(
    "value,released",
    [
        ("95 y/o", "90+ y/o"),
        ("92yo", "90+yo"),
        ("95-year-old", "90+-year-old"),
        ("95 year old", "90+ year old"),
        ("93 years", "90+ years"),
        ("95 yrs.", "90+ yrs."),
        ("95 y.o.", "90+ y.o."),
        ("95y", "90+y"),
        ("100+", "90+"),
        ("100 +", "90+ +"),
        (" 95 ", " 90+ "),
    ],
)
def test_a_unit_of_years_is_kept_after_the_aggregate(value, released):
    assert anonymize_age(value) == (released, "age.aggregate")


@pytest.mark.parametrize(
    "value",
    ["95 months", "95 mo", "95 mos", "95 m/o", "95mo", "120 weeks", "120 wks", "92 days", "92 d", "92d", "95 - mo"],
)
def test_months_weeks_and_days_over_89_are_kept(value):
    assert anonymize_age(value) == (value, "age.keep")


def _words_for(n: int) -> list[str]:
    """Number words (units only) summing to ``n``."""
    by_value = {v: w for w, v in _UNITS.items()}
    out = []
    while n > 19:
        out.append("nineteen")
        n -= 19
    if n:
        out.append(by_value[n])
    return out


@pytest.mark.parametrize("word", sorted(_UNITS) + sorted(_TENS))
def test_each_number_word_has_its_value_at_the_89_boundary(word):
    value = _UNITS.get(word, _TENS.get(word))
    assert value is not None
    if value > 89:
        assert anonymize_age(word) == ("90+", "age.aggregate")
        return
    words = " ".join([word, *_words_for(89 - value)])
    assert anonymize_age(words) == (words, "age.keep"), words  # exactly 89
    more = " ".join([word, *_words_for(90 - value)])
    assert anonymize_age(more) == ("90+", "age.aggregate"), more  # exactly 90


@pytest.mark.parametrize(
    "value,released,op",
    [
        ("eighty-nine", "eighty-nine", "age.keep"),
        ("ninety-two", "90+", "age.aggregate"),
        ("Ninety Two", "90+", "age.aggregate"),
        ("eighty and nine", "eighty and nine", "age.keep"),
        ("one hundred and two", "90+", "age.aggregate"),
        ("hundred", "90+", "age.aggregate"),
        (" ninety ", " 90+ ", "age.aggregate"),
    ],
)
def test_spelled_out_ages(value, released, op):
    assert anonymize_age(value) == (released, op)


@pytest.mark.parametrize("value", ["", " ", "-", "old", "ninety-two years", "9 1", "12abc", "1234", "and"])
def test_anything_else_is_e420(value):
    with pytest.raises(AnonymizationError) as e:
        anonymize_age(value)
    assert e.value.code == "E420" and e.value.message and "docs/architecture.md" in e.value.hint
    assert len(value.strip()) < 4 or value not in str(e.value)  # the span is not quoted


def test_number_words_add_up_in_any_order():
    assert anonymize_age("ten eighty") == ("90+", "age.aggregate")  # 10 + 80, not the last word alone
    assert anonymize_age("nine eighty") == ("nine eighty", "age.keep")


@pytest.mark.parametrize("value", ["95 MONTHS", "95 Mo", "120 WKS", "92 DAYS", "92 D"])
def test_units_that_are_no_years_are_recognised_in_any_case(value):
    assert anonymize_age(value) == (value, "age.keep")


def test_the_plus_of_an_age_is_not_doubled():
    assert anonymize_age("100+.") == ("90+.", "age.aggregate")
    assert anonymize_age("95+") == ("90+", "age.aggregate")
