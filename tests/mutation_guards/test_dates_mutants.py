"""A month-and-year date is never released unchanged, whatever the patient's offset.

Offsets are 3..180 days; about one patient in fifteen has one under half a month, which a
month-precision date could round to no shift at all ("March 2021" released as written).  These
tests use the public surface only (``shift_date``, ``date_offset_days`` and the engine), for
2,000 patients and every month-year format the engine reads.
"""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from tide_core.anonymize import dates as dates_module
from tide_core.anonymize.dates import (
    anonymize_date,
    date_offset_days,
    generalise_year,
    parse_date,
    shift_date,
    shift_note_date,
    shifted_date,
)
from tide_core.anonymize.engine import Anonymizer
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.errors import AnonymizationError
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


# --- the written form of a shifted date, the partial-date rules, the year range and the coded errors --
# (written against the survivors of a mutation run of tide_core/anonymize/dates.py, docs/results/mutation.md)
POS = next(p for p in PATIENTS if date_offset_days(KR, p) > 0)
NEG = next(p for p in PATIENTS if date_offset_days(KR, p) < 0)
ORDINALS = (
    "1st 2nd 3rd 4th 5th 6th 7th 8th 9th 10th 11th 12th 13th 14th 15th 16th 17th 18th 19th 20th "
    "21st 22nd 23rd 24th 25th 26th 27th 28th 29th 30th 31st"
).split()


def _coded_date_error(call, code: str, *names: str) -> AnonymizationError:
    """``call`` raises ``code`` with a message and a hint; the hint names each of ``names`` (case-sensitively)."""
    with pytest.raises(AnonymizationError) as e:
        call()
    err = e.value
    assert err.code == code, str(err)
    assert isinstance(err.message, str) and err.message
    assert isinstance(err.hint, str) and err.hint, f"{code} has no hint"
    for name in names:
        assert name in err.hint, (name, err.hint)
    return err


def test_every_day_of_the_month_is_written_with_its_own_ordinal():
    lower, upper = parse_date("March 4th, 2021"), parse_date("MARCH 4TH, 2021")
    for day, ordinal in enumerate(ORDINALS, start=1):
        assert lower.render(date(2021, 5, day)) == f"May {ordinal}, 2021"
        assert upper.render(date(2021, 5, day)) == f"MAY {ordinal.upper()}, 2021"
    assert parse_date("the 4th of March").render(date(2000, 5, 22)) == "the 22nd of May"


def test_may_is_an_abbreviation_only_before_a_dash_slash_dot_or_digit():
    assert parse_date("09-May-2021").render(date(2021, 3, 9)) == "09-Mar-2021"
    assert parse_date("09-MAY-2021").render(date(2021, 9, 9)) == "09-SEP-2021"
    assert parse_date("May 9, 2021").render(date(2021, 3, 9)) == "March 9, 2021"
    assert parse_date("May 9, 2021").render(date(2021, 5, 9)) == "May 9, 2021"


def test_sept_is_kept_for_september_only():
    assert parse_date("Sept 4, 2021").render(date(2021, 9, 14)) == "Sept 14, 2021"
    assert parse_date("sept 4, 2021").render(date(2021, 9, 14)) == "sept 14, 2021"
    assert parse_date("Sept 4, 2021").render(date(2021, 10, 14)) == "Oct 14, 2021"
    assert parse_date("Mar 4, 2021").render(date(2021, 9, 14)) == "Sep 14, 2021"
    assert parse_date("March 4, 2021").render(date(2021, 9, 14)) == "September 14, 2021"


def test_a_numeric_date_is_padded_only_when_none_of_its_parts_has_one_digit():
    new = date(2021, 5, 6)
    assert parse_date("03/04/2021").render(new) == "05/06/2021"
    assert parse_date("3/04/2021").render(new) == "5/6/2021"  # a one-digit month
    assert parse_date("03/4/2021").render(new) == "5/6/2021"  # a one-digit day
    assert parse_date("12/14/2021").render(new) == "05/06/2021"  # two digits each: padded


def test_a_named_month_pads_the_day_only_when_it_was_written_with_a_leading_zero():
    new = date(2021, 5, 6)
    assert parse_date("March 05, 2021").render(new) == "May 06, 2021"
    assert parse_date("March 15, 2021").render(new) == "May 6, 2021"
    assert parse_date("March 5, 2021").render(new) == "May 6, 2021"


@pytest.mark.parametrize(
    "text,day_first",
    [("13/03/2021", True), ("25/12/2021", True), ("12/12/2021", False), ("03/13/2021", False), ("12/25/2021", False)],
)
def test_a_numeric_date_is_day_first_exactly_when_its_first_number_cannot_be_a_month(text, day_first):
    a, b, y = (int(x) for x in text.split("/"))
    parsed = parse_date(text)
    assert (parsed.year, parsed.month, parsed.day) == ((y, b, a) if day_first else (y, a, b))


@pytest.mark.parametrize("bad", ["13/2021", "2021-13", "0/2021", "13/13/2021", "25/13/2021"])
def test_a_month_that_does_not_exist_is_e411(bad):
    err = _coded_date_error(lambda: shift_date(KR, POS, bad), "E411", "on_unparseable_date", "docs/anonymizer.md")
    assert bad not in str(err)


def test_unparseable_spans_are_coded_with_a_hint_naming_the_policy():
    _coded_date_error(lambda: shift_date(KR, POS, "yesterday"), "E410", "on_unparseable_date", "docs/anonymizer.md")
    _coded_date_error(lambda: shift_date(KR, POS, "02/30/2021"), "E411", "on_unparseable_date")


@pytest.mark.parametrize("year,decade", [("1000", "1000s"), ("1009", "1000s"), ("2999", "2990s"), ("'07", "'00s")])
def test_a_year_alone_inside_1000_to_2999_is_generalised_to_its_decade(year, decade):
    assert shift_date(KR, POS, year) == decade
    assert anonymize_date(KR, NEG, f" {year} ") == (f" {decade} ", "date.decade")


@pytest.mark.parametrize("year", ["0999", "3000"])
def test_a_year_alone_outside_1000_to_2999_is_e411(year):
    _coded_date_error(lambda: shift_date(KR, POS, year), "E411")


def test_the_year_branch_of_shifted_date_moves_one_year_in_the_offsets_direction():
    parsed = parse_date("2019")
    for offset in (3, 45, 180):
        assert shifted_date(parsed, offset) == date(2020, 1, 1)
        assert shifted_date(parsed, -offset) == date(2018, 1, 1)
    with pytest.raises(ValueError):
        generalise_year(parse_date("March 2021"), "March 2021")


def test_month_year_moves_by_the_documented_number_of_whole_months():
    parsed = parse_date("March 2021")
    for p in PATIENTS[:300]:
        off = date_offset_days(KR, p)
        months = (1 if off > 0 else -1) * max(1, round(abs(off) / 30.44))
        total = 2021 * 12 + 2 + months
        want = date(total // 12, total % 12 + 1, 1)
        assert shifted_date(parsed, off) == want, (p, off)
        assert shift_date(KR, p, "03/2021") == f"{want.month:02d}/{want.year}"


def test_february_29_without_a_year_shifts_in_any_reference_year():
    for p in (POS, NEG):
        off = timedelta(days=date_offset_days(KR, p))
        in_2000 = date(2000, 2, 29) + off
        for ry in (2021, 2025, 2023, 1900, 2100, 2000, 2024):
            assert shift_date(KR, p, "2/29", ry) == f"{in_2000.month}/{in_2000.day}", ry


def test_a_month_day_date_is_shifted_inside_its_reference_year():
    """March 29 minus six weeks crosses February: 28 days in 2021, 29 in 2000 and 2024."""
    for ry in (2021, 2000, 2024):
        for off in (-42, -31, 31):
            new = date(ry, 3, 29) + timedelta(days=off)
            assert shifted_date(parse_date("3/29"), off, ry) == new
    back = [p for p in PATIENTS if -180 <= date_offset_days(KR, p) <= -29][:20]
    for p in back:
        new = date(2021, 3, 29) + timedelta(days=date_offset_days(KR, p))
        assert shift_date(KR, p, "3/29", 2021) == f"{new.month}/{new.day}", p


def test_the_first_and_last_years_are_inside_the_range_and_a_shift_out_of_them_is_e413():
    off_pos, off_neg = date_offset_days(KR, POS), date_offset_days(KR, NEG)
    assert shift_note_date(KR, POS, "1000-06-01") == (date(1000, 6, 1) + timedelta(days=off_pos)).isoformat()
    assert shift_note_date(KR, NEG, "9998-06-01") == (date(9998, 6, 1) + timedelta(days=off_neg)).isoformat()
    assert shift_date(KR, POS, "06/01/1000") == (date(1000, 6, 1) + timedelta(days=off_pos)).strftime("%m/%d/%Y")
    assert shift_date(KR, NEG, "9998-06-01") == (date(9998, 6, 1) + timedelta(days=off_neg)).isoformat()
    # a date inside the range shifted out of it, and a date outside shifted into it
    for call in (
        lambda: shift_note_date(KR, POS, "9998-12-31"),
        lambda: shift_note_date(KR, NEG, "1000-01-01"),
        lambda: shift_note_date(KR, POS, "0999-12-31"),
        lambda: shift_note_date(KR, NEG, "9999-01-01"),
        lambda: shift_date(KR, POS, "9998-12-31"),
        lambda: shift_date(KR, NEG, "01/01/1000"),
        lambda: shift_date(KR, POS, "12/31/0999"),
        lambda: shift_date(KR, POS, "December 9998"),
        lambda: shift_date(KR, NEG, "January 1000"),
    ):
        _coded_date_error(call, "E413", "NULL")


def test_a_note_date_with_a_time_of_day_is_shifted_by_its_date():
    want = shift_note_date(KR, POS, "2021-03-04")
    assert shift_note_date(KR, POS, "2021-03-04T10:00:00") == want
    assert shift_note_date(KR, POS, "2021-03-04 10:00:00+00:00") == want
    err = _coded_date_error(lambda: shift_note_date(KR, POS, "03/04/2021"), "E412", "note_date")
    assert "note_date" in err.message


def test_the_offset_is_the_documented_function_of_the_keyed_mac():
    for p in PATIENTS[:400]:
        v = KR.mac_int("date", "offset", p)
        magnitude = 3 + (v >> 1) % 178
        assert date_offset_days(KR, p) == (-magnitude if v & 1 else magnitude), p


def test_may_followed_by_a_slash_or_a_dot_is_an_abbreviation():
    assert parse_date("May/09/2021").render(date(2021, 3, 9)) == "Mar/09/2021"
    assert parse_date("May. 9, 2021").render(date(2021, 3, 9)) == "Mar. 9, 2021"


def test_a_two_digit_year_keeps_its_apostrophe():
    assert parse_date("Mar '21").render(date(2021, 5, 1)) == "May '21"
    assert parse_date("Mar '21").render(date(2020, 12, 1)) == "Dec '20"
    assert shift_date(KR, NEG, "Mar '21").startswith(("Jan '21", "Feb '21", "Dec '20", "Nov '20", "Oct '20", "Sep '20"))


def test_a_month_day_date_writes_no_year_so_its_reference_year_is_never_range_checked():
    off = timedelta(days=date_offset_days(KR, POS))
    new = date(9998, 12, 31) + off  # lands in 9999: no year is written, so nothing leaves the range
    assert shift_date(KR, POS, "12/31", 9998) == f"{new.month:02d}/{new.day:02d}"
    assert anonymize_date(KR, POS, "12/31", 9998) == (f"{new.month:02d}/{new.day:02d}", "date.shift")


@pytest.mark.parametrize(
    ("text", "kind", "parts"),
    [
        ("March 2021", "my", (2021, 3, None)),
        ("03/2021", "my", (2021, 3, None)),
        ("March 4", "md", (None, 3, 4)),
        ("4th of March", "md", (None, 3, 4)),
        ("2019", "y", (2019, None, None)),
        ("'19", "y", (2019, None, None)),
        ("March 4, 2021", "full", (2021, 3, 4)),
    ],
)
def test_a_parsed_date_reports_the_parts_not_written_as_none(text: str, kind: str, parts: tuple) -> None:
    parsed = parse_date(text)
    assert (parsed.kind, (parsed.year, parsed.month, parsed.day)) == (kind, parts)


@pytest.mark.parametrize(
    "text", [" 03/04/2020 ", "\t03/04/2020", "03/04/2020\n", "  March 4, 2021  ", " March 2021", " 2019 ", "'19 "]
)
def test_white_space_around_a_date_span_is_kept_and_only_the_date_changes(text: str) -> None:
    out, _op = anonymize_date(KR, "patient-7", text)
    core = text.strip()
    lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]
    assert out.startswith(lead) and out.endswith(trail)
    inner = out[len(lead) : len(out) - len(trail)]
    assert inner == shift_date(KR, "patient-7", core)  # the same surrogate as the bare date
    assert inner != core and core not in out


def test_a_month_word_that_names_no_month_is_a_coded_error_without_the_value() -> None:
    # U+017F (long s) matches "s" in the case-blind pattern but starts no month name
    with pytest.raises(AnonymizationError) as exc:
        dates_module._mon_index("\u017fept")
    assert exc.value.code == "E411" and "month" in str(exc.value)
    assert "\u017fept" not in str(exc.value)
    # a whole date is read in the normalised view (tide.normalize), where NFKC writes U+017F as "s"
    assert anonymize_date(KR, "patient-7", "\u017fept 4, 2021") == anonymize_date(KR, "patient-7", "sept 4, 2021")


@pytest.mark.parametrize(
    ("text", "decade"), [("2019", "2010s"), ("'19", "'10s"), (" 1987 ", " 1980s "), ("2000", "2000s")]
)
def test_generalise_year_writes_the_decade_in_the_year_s_style(text: str, decade: str) -> None:
    assert generalise_year(parse_date(text), text) == decade
    assert anonymize_date(KR, "patient-7", text) == (decade, "date.decade")


# Month/day dates as flowsheets and chats write them: a time after them ("5/7 1045", "mar 9 00:12")
# or a weekday before a numeric one ("Mon 5/29").  The recognizers mark these as DATE; they used
# to be unparseable here (E410), so the default policy masked them and their intervals were lost.
MONTH_DAY_WRITTEN = [
    ("5/7 1045", date(2000, 5, 7), " 1045"),
    ("3/20 00:12", date(2000, 3, 20), " 00:12"),
    ("1/1 2:12 PM", date(2000, 1, 1), " 2:12 PM"),
    ("12/28 2330", date(2000, 12, 28), " 2330"),
    ("mar 9 00:12", date(2000, 3, 9), " 00:12"),
    ("March 9 at 10:15 am", date(2000, 3, 9), " at 10:15 am"),
    ("9 March 14:05", date(2000, 3, 9), " 14:05"),
    ("Mon 5/29", date(2000, 5, 29), ""),
    ("sun 12/25", date(2000, 12, 25), ""),
    ("Mon 5/13 12:41", date(2000, 5, 13), " 12:41"),
]


@pytest.mark.parametrize(("text", "day", "time"), MONTH_DAY_WRITTEN)
def test_a_month_day_date_with_a_time_or_a_weekday_is_shifted_and_keeps_its_time(
    text: str, day: date, time: str
) -> None:
    parsed = parse_date(text)
    assert (parsed.kind, parsed.month, parsed.day) == ("md", day.month, day.day)
    for pid in PATIENTS[:40]:
        out, op = anonymize_date(KR, pid, text)
        assert op == "date.shift" and out != text
        assert out.endswith(time)  # the time of day is copied as written
        new = parse_date(out)  # the output reads back as a month/day date, shifted by the offset
        expected = day + timedelta(days=date_offset_days(KR, pid))
        assert (new.kind, new.month, new.day) == ("md", expected.month, expected.day)


def test_a_month_day_date_with_a_time_is_shifted_not_masked_by_the_engine() -> None:
    text = "Vitals 5/7 1045 and again Mon 5/13 12:41 by the nurse."
    spans = [Span("n1", 7, 15, "DATE", 1.0, "t"), Span("n1", 26, 40, "DATE", 1.0, "t")]
    out = Anonymizer(KR).anonymize(Note("n1", "patient-7", text), spans)
    assert "5/7 1045" not in out.text and "5/13" not in out.text
    assert [r.operator for r in out.spans] == ["date.shift", "date.shift"]


@pytest.mark.parametrize(
    ("text", "day", "time"), [("Feb 23 0550", (2, 23), " 0550"), ("23 Feb 0341", (2, 23), " 0341")]
)
def test_four_digits_after_a_month_and_day_that_are_no_shiftable_year_are_its_time(
    text: str, day: tuple[int, int], time: str
) -> None:
    # a flowsheet's "Feb 23 0550" is 05:50, not the year 550 (which would quarantine the whole note)
    parsed = parse_date(text)
    assert (parsed.kind, parsed.month, parsed.day) == ("md", *day)
    out, op = anonymize_date(KR, "patient-7", text)
    assert op == "date.shift" and out.endswith(time) and out != text


@pytest.mark.parametrize("text", ["0001-01-01", "Feb 23, 9999", "12/31/9999", "March 3, 0999 2021"])
def test_a_placeholder_year_with_no_time_reading_stays_unshiftable(text: str) -> None:
    with pytest.raises(AnonymizationError) as exc:
        anonymize_date(KR, "patient-7", text)
    assert exc.value.code == "E413"


@pytest.mark.parametrize("year", [1950, 1000, 2100])  # 1000: the first shiftable year, though it reads as 10:00
def test_a_real_four_digit_year_after_a_month_and_day_is_still_the_year(year: int) -> None:
    parsed = parse_date(f"Feb 23 {year}")
    assert (parsed.kind, parsed.year, parsed.month, parsed.day) == ("full", year, 2, 23)
