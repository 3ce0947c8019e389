"""Dates: keyed per-patient offsets, same-format output, partial-date rule, fail-closed parsing."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tide_core.anonymize.dates import DEFAULT_REFERENCE_YEAR, date_offset_days, parse_date, shift_date, shift_note_date
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.errors import AnonymizationError

KA = keyring_for_tests("study1", "k1", "dates-a")
KB = keyring_for_tests("study1", "k2", "dates-b")


def _patient_with(sign: int) -> tuple[str, int]:
    for i in range(1000):
        off = date_offset_days(KA, f"p{i}")
        if (off > 0) == (sign > 0):
            return f"p{i}", off
    raise AssertionError("no patient with that sign")


def test_offsets_are_keyed_in_range_both_signs_and_change_with_the_key():
    offs = [date_offset_days(KA, f"p{i}") for i in range(3000)]
    assert all(3 <= abs(o) <= 180 for o in offs)
    assert min(offs) < -170 and max(offs) > 170  # the whole range is used
    assert 0.4 < sum(o > 0 for o in offs) / len(offs) < 0.6
    assert offs == [date_offset_days(KA, f"p{i}") for i in range(3000)]
    other = [date_offset_days(KB, f"p{i}") for i in range(3000)]
    assert sum(a != b for a, b in zip(offs, other, strict=True)) / len(offs) > 0.98  # 1/356 coincide by chance


MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
D = date(2021, 3, 4)
FULL_FORMATS = [
    ("3/4/2021", lambda d: f"{d.month}/{d.day}/{d.year}"),
    ("03/04/21", lambda d: f"{d.month:02d}/{d.day:02d}/{d.year % 100:02d}"),
    ("03-04-2021", lambda d: f"{d.month:02d}-{d.day:02d}-{d.year}"),
    ("2021-03-04", lambda d: d.isoformat()),
    ("2021/03/04", lambda d: f"{d.year}/{d.month:02d}/{d.day:02d}"),
    ("20210304", lambda d: d.strftime("%Y%m%d")),
    ("2021-03-04T14:30:00Z", lambda d: d.isoformat() + "T14:30:00Z"),
    ("03/04/2021 14:30", lambda d: f"{d.month:02d}/{d.day:02d}/{d.year} 14:30"),
    ("3/4/2021 at 2:30 PM", lambda d: f"{d.month}/{d.day}/{d.year} at 2:30 PM"),
    ("March 4, 2021", lambda d: f"{MONTHS[d.month - 1]} {d.day}, {d.year}"),
    ("Mar 4 2021", lambda d: f"{MONTHS[d.month - 1][:3]} {d.day} {d.year}"),
    ("Mar. 4, 2021", lambda d: f"{MONTHS[d.month - 1][:3]}. {d.day}, {d.year}"),
    ("MARCH 4TH, 2021", lambda d: f"{MONTHS[d.month - 1].upper()} {d.day}{_ord(d.day).upper()}, {d.year}"),
    ("march 4th 2021", lambda d: f"{MONTHS[d.month - 1].lower()} {d.day}{_ord(d.day)} {d.year}"),
    ("4 March 2021", lambda d: f"{d.day} {MONTHS[d.month - 1]} {d.year}"),
    ("4th of March, 2021", lambda d: f"{d.day}{_ord(d.day)} of {MONTHS[d.month - 1]}, {d.year}"),
    ("04-Mar-2021", lambda d: f"{d.day:02d}-{MONTHS[d.month - 1][:3]}-{d.year}"),
    ("Thursday, March 4, 2021", lambda d: f"{d.strftime('%A')}, {MONTHS[d.month - 1]} {d.day}, {d.year}"),
    ("Thu Mar 4 2021", lambda d: f"{d.strftime('%a')} {MONTHS[d.month - 1][:3]} {d.day} {d.year}"),
]


def _ord(n: int) -> str:
    return "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("text,fmt", FULL_FORMATS, ids=[t for t, _ in FULL_FORMATS])
def test_full_dates_shift_exactly_and_keep_their_format(text, fmt, sign):
    pid, off = _patient_with(sign)
    assert shift_date(KA, pid, text) == fmt(D + timedelta(days=off))


def test_padding_follows_the_original():
    pid, off = _patient_with(1)
    new = date(2021, 1, 1) + timedelta(days=off)
    assert shift_date(KA, pid, "1/1/2021") == f"{new.month}/{new.day}/{new.year}"
    assert shift_date(KA, pid, "01/01/2021") == f"{new.month:02d}/{new.day:02d}/{new.year}"
    assert shift_date(KA, pid, "January 01, 2021") == f"{MONTHS[new.month - 1]} {new.day:02d}, {new.year}"


def test_day_first_numeric_dates_when_the_first_number_cannot_be_a_month():
    pid, off = _patient_with(1)
    new = date(2021, 3, 25) + timedelta(days=off)
    assert shift_date(KA, pid, "25/03/2021") == f"{new.day:02d}/{new.month:02d}/{new.year}"


def test_partial_dates_follow_the_precision_rule():
    pid, off = _patient_with(-1)
    sign = -1
    # month + day: exact shift inside the reference year (default: leap year 2000)
    new = date(DEFAULT_REFERENCE_YEAR, 3, 3) + timedelta(days=off)
    assert shift_date(KA, pid, "March 3rd") == f"{MONTHS[new.month - 1]} {new.day}{_ord(new.day)}"
    new = date(2021, 3, 4) + timedelta(days=off)
    assert shift_date(KA, pid, "3/4", reference_year=2021) == f"{new.month}/{new.day}"
    assert shift_date(KA, pid, "2/29") != "2/29"  # valid without a year
    # month + year: whole months, at least one, in the offset's direction
    months = sign * max(1, round(abs(off) / 30.44))
    total = 2021 * 12 + 2 + months
    y, m = total // 12, total % 12 + 1
    assert shift_date(KA, pid, "March 2021") == f"{MONTHS[m - 1]} {y}"
    assert shift_date(KA, pid, "03/2021") == f"{m:02d}/{y}"
    assert shift_date(KA, pid, "2021-03") == f"{y}-{m:02d}"
    # year alone: generalised to its decade, whatever the patient or key (tests/anonymize/test_partial_dates.py)
    assert shift_date(KA, pid, "2019") == "2010s"
    assert shift_date(KA, pid, "'19") == "'10s"
    pos, _ = _patient_with(1)
    assert shift_date(KA, pos, "2019") == shift_date(KB, pos, "2019") == "2010s"


@pytest.mark.parametrize(
    "bad,code",
    [
        ("02/30/2021", "E411"),
        ("13/13/2021", "E411"),
        ("yesterday", "E410"),
        ("Spring 2020", "E410"),
        ("2021-03-04 noonish", "E410"),
        ("99/99", "E411"),
    ],
)
def test_unparseable_dates_raise_coded_errors_without_the_value(bad, code):
    with pytest.raises(AnonymizationError) as e:
        shift_date(KA, "p1", bad)
    assert e.value.code == code
    assert bad not in str(e.value)


@settings(max_examples=200, deadline=None)
@given(
    st.dates(min_value=date(1900, 6, 1), max_value=date(2099, 6, 1)),
    st.dates(min_value=date(1900, 6, 1), max_value=date(2099, 6, 1)),
    st.text(alphabet="abcdefgh0123", min_size=1, max_size=8),
    st.sampled_from([0, 3, 9, 15]),
)
def test_intervals_between_full_dates_are_preserved_across_formats(d1, d2, pid, fmt_index):
    fmt1, fmt2 = FULL_FORMATS[fmt_index][1], FULL_FORMATS[(fmt_index + 5) % len(FULL_FORMATS)][1]
    out1, out2 = shift_date(KA, pid, fmt1(d1)), shift_date(KA, pid, fmt2(d2))
    p1, p2 = parse_date(out1), parse_date(out2)
    s1, s2 = date(p1.year, p1.month, p1.day), date(p2.year, p2.month, p2.day)
    if fmt2 is FULL_FORMATS[1][1] and not 1970 <= d2.year <= 2067:
        return  # a 2-digit year is read in the %y window
    assert (s2 - s1) == (d2 - d1)
    assert s1 - d1 == timedelta(days=date_offset_days(KA, pid))


def test_note_date_shift_matches_span_shift():
    pid = "patient-42"
    off = date_offset_days(KA, pid)
    assert shift_note_date(KA, pid, "2021-03-04") == (D + timedelta(days=off)).isoformat()
    assert shift_note_date(KA, pid, D) == (D + timedelta(days=off)).isoformat()
    assert shift_note_date(KA, pid, None) is None
    assert shift_note_date(KA, pid, "2021-03-04") == shift_date(KA, pid, "2021-03-04")
    with pytest.raises(AnonymizationError):
        shift_note_date(KA, pid, "not a date")


def test_two_digit_years_that_cross_the_century_window_are_written_in_full():
    d = date(2068, 12, 20)  # "68" reads as 2068; a forward shift lands in 2069, which "69" would read as 1969
    crossing = [p for p in (f"p{i}" for i in range(400)) if (d + timedelta(days=date_offset_days(KA, p))).year == 2069]
    staying = [p for p in (f"p{i}" for i in range(400)) if (d + timedelta(days=date_offset_days(KA, p))).year == 2068]
    assert crossing and staying
    for pid in crossing[:20] + staying[:20]:
        out = shift_date(KA, pid, d.strftime("%m/%d/%y"))
        parsed = parse_date(out)
        shifted = date(parsed.year, parsed.month, parsed.day)
        assert shifted - d == timedelta(days=date_offset_days(KA, pid))  # the interval survives the re-read
        assert len(out.split("/")[-1]) == (4 if pid in crossing else 2)  # full year only where needed
