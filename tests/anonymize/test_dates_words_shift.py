"""Dates written in words, in other languages and as ranges are shifted, not masked.

Every shape the word-date recognizer (``tide.dates_words``) emits is taken from its own tests and
run through the real recognizer and anonymizer: what names a month is shifted by the patient's
offset and written in its own words; only a span that names no month (a day alone, a weekday
alone, a holiday) stays masked.  Property tests generate word dates (day as digits, ordinals or
words; years in digits or words; weekdays; other languages; ranges) and check that the output
reads back as the date plus the patient's offset, keeps intervals and keeps its style.
"""

from __future__ import annotations

import re
import subprocess
import sys
import unicodedata
from datetime import date, timedelta

import duckdb
import pytest
import test_recognizers_dates_words as recognizer_tests
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tide_core.anonymize.dates import (
    anonymize_date_by,
    anonymize_date_run_by,
    date_offset_days,
    date_runs,
    dates_named,
    shift_date,
)
from tide_core.anonymize.engine import DATE_MASK, Anonymizer
from tide_core.anonymize.keys import FileKeyProvider, keyring_for_tests
from tide_core.config import TideConfig
from tide_core.engine.anonymization import anonymize_notes
from tide_core.errors import AnonymizationError
from tide_core.recognizers.registry import create
from tide_core.spans import Note, Span

KR = keyring_for_tests("study-w", "k1", "dates-words")
RECOGNIZER = create({"name": "tide.dates_words"})
PATIENTS = [f"p{i}" for i in range(400)]

# --- the test's own word tables (independent of the module under test) ---------------------------
MONTHS_EN = "January February March April May June July August September October November December".split()
WEEKDAYS_EN = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
ORD_UNITS = (
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
    "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth"
).split()
CARD = (
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen"
).split()
TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
FOREIGN = {
    lang: [unicodedata.normalize("NFC", w) for w in names.split()]
    for lang, names in {
        "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
        "it": "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
        "es": "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
        "pt": "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro",
        "nl": "januari februari maart april mei juni juli augustus september oktober november december",
        "de": "Januar Februar März April Mai Juni Juli August September Oktober November Dezember",
        "pl": "stycznia lutego marca kwietnia maja czerwca lipca sierpnia września października listopada grudnia",
        "el": "Ιανουαρίου Φεβρουαρίου Μαρτίου Απριλίου Μαΐου Ιουνίου Ιουλίου Αυγούστου Σεπτεμβρίου "
        "Οκτωβρίου Νοεμβρίου Δεκεμβρίου",
        "hu": "január február március április május június július augusztus szeptember október november december",
    }.items()
}
#: How each language writes day, month and year (the layouts the recognizer reads).
FOREIGN_LAYOUT = {
    "fr": "{d} {m} {y}",
    "it": "{d} {m} {y}",
    "es": "{d} de {m} de {y}",
    "pt": "{d} de {m} de {y}",
    "nl": "{d} {m} {y}",
    "de": "{d}. {m} {y}",
    "pl": "{d} {m} {y}",
    "el": "{d} {m} {y}",
    "hu": "{y}. {m} {d}.",
}


def _shared_elsewhere(lang: str, month: int) -> bool:
    """The month word is also another language's word in the same layout (read in one of them only)."""
    word = FOREIGN[lang][month - 1].casefold()
    same_layout = [o for o in FOREIGN if o != lang and FOREIGN_LAYOUT[o] == FOREIGN_LAYOUT[lang]]
    return any(word in [w.casefold() for w in FOREIGN[o]] and FOREIGN[o] != FOREIGN[lang] for o in same_layout)


def ordinal_word(n: int, sep: str = "-") -> str:
    if n < 20:
        return ORD_UNITS[n - 1]
    if n % 10 == 0:
        return {20: "twentieth", 30: "thirtieth"}[n]
    return TENS[n // 10 - 2] + sep + ORD_UNITS[n % 10 - 1]


def ordinal_suffix(n: int) -> str:
    return "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def cardinal(n: int) -> str:
    return CARD[n - 1] if n < 20 else TENS[n // 10 - 2] + ("-" + CARD[n % 10 - 1] if n % 10 else "")


def year_words(y: int, style: str) -> str:
    c, r = divmod(y, 100)
    if style == "thousand" and 2000 <= y <= 2099:
        return "two thousand" + (" and " + cardinal(r) if r else "")
    if r == 0:
        return cardinal(c) + " hundred"
    return cardinal(c) + (" oh-" + cardinal(r) if r < 10 else " " + cardinal(r))


def cased(text: str, case: str) -> str:
    return {"lower": text.lower(), "title": text.title(), "upper": text.upper(), "first": text[:1].upper() + text[1:]}[
        case
    ]


@st.composite
def english_word_dates(draw, with_year: bool = True):
    """(text, date, style) for an English date with its day as digits, an ordinal or a word."""
    d = draw(st.dates(min_value=date(1951, 1, 1), max_value=date(2089, 12, 31)))
    day_style = draw(st.sampled_from(["digit", "ordinal", "word"]))
    case = draw(st.sampled_from(["lower", "title", "upper", "first"])) if day_style == "word" else "lower"
    year_style = draw(st.sampled_from(["digits", "words"])) if with_year else "none"
    layout = draw(
        st.sampled_from(["{d} of {m}{y}", "the {d} of {m}{y}", "{m} the {d}{y}", "{m} {d}{y}", "{d} day of {m}{y}"])
    )
    weekday = draw(st.booleans())
    sep = "-"
    if day_style == "digit":
        assume(layout not in ("{d} of {m}{y}", "{d} day of {m}{y}", "{m} the {d}{y}"))
        day = str(d.day)
    elif day_style == "ordinal":
        day = f"{d.day}{ordinal_suffix(d.day)}"
    else:
        sep = draw(st.sampled_from(["-", " "]))
        day = cased(ordinal_word(d.day, sep), case)
    if year_style == "digits":
        year = f", {d.year}"
    elif year_style == "words":
        style = "thousand" if d.year >= 2000 and draw(st.booleans()) else "pair"
        assume(not (style == "pair" and 2000 <= d.year <= 2009))
        year = ", " + year_words(d.year, style)
    else:
        year = ""
    text = layout.format(d=day, m=MONTHS_EN[d.month - 1], y=year)
    if weekday:
        text = WEEKDAYS_EN[d.weekday()] + ", " + text
    compound = d.day > 20 and d.day % 10 != 0
    return text, d, (day_style, year_style, weekday, case, sep if compound else "-")


@st.composite
def foreign_dates(draw):
    """(text, date, language) for a date with its month named in another language."""
    lang = draw(st.sampled_from(sorted(FOREIGN)))
    d = draw(st.dates(min_value=date(1951, 1, 1), max_value=date(2089, 12, 31)))
    assume(not _shared_elsewhere(lang, d.month))
    # "3 april 2019" is read as English (a Dutch month the English parser also reads)
    assume(FOREIGN_LAYOUT[lang] != "{d} {m} {y}" or FOREIGN[lang][d.month - 1] not in [m.lower() for m in MONTHS_EN])
    return FOREIGN_LAYOUT[lang].format(d=d.day, m=FOREIGN[lang][d.month - 1], y=d.year), d, lang


@st.composite
def ranges(draw):
    """(text, first day, last day) for a range written as one span, in the layouts the recognizer reads."""
    first = draw(st.dates(min_value=date(1951, 1, 1), max_value=date(2089, 12, 1)))
    last = first + timedelta(days=draw(st.integers(1, 27)))
    assume(last.month == first.month)
    m, y = MONTHS_EN[first.month - 1], first.year
    a, b = first.day, last.day
    layouts = [
        f"between {a} and {b} {m} {y}",
        f"{a}-{b} {m} {y}",
        f"{a}\u2013{b} {m} {y}",
        f"from {a} to {b} {m} {y}",
        f"the {a}{ordinal_suffix(a)} to the {b}{ordinal_suffix(b)} of {m} {y}",
        f"{m} {a}\u2013{b}, {y}",
        f"{m} {a}{ordinal_suffix(a)} through the {b}{ordinal_suffix(b)}, {y}",
        f"{ordinal_word(a)} to {ordinal_word(b)} of {m} {y}",
    ]
    return draw(st.sampled_from(layouts)), first, last


def _md(d: date) -> tuple[int, int]:
    """(month, day): what a date written without its year says."""
    return d.month, d.day


def _shift(text: str, pid: str, reference_year: int | None = None) -> str:
    return anonymize_date_by(text, lambda: date_offset_days(KR, pid), reference_year)[0]


# --- properties ------------------------------------------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(english_word_dates(), st.sampled_from(PATIENTS))
def test_word_dates_read_back_as_the_date_plus_the_patients_offset(case, pid):
    text, d, (day_style, year_style, weekday, letter_case, sep) = case
    offset = date_offset_days(KR, pid)
    assert offset != 0
    out = _shift(text, pid)
    new = d + timedelta(days=offset)
    assert dates_named(out) == [new]  # (a)
    assert out.casefold() != text.casefold()  # (c)
    # (d) the style is kept: words stay words, ordinals stay ordinals, the weekday is the new one
    if day_style == "word":
        word = re.search(re.escape(ordinal_word(new.day, sep)), out, re.I)
        assert word is not None, out
        w = word.group()
        assert {"lower": w.islower(), "upper": w.isupper()}.get(letter_case, w[0].isupper() and w != w.upper()), w
        assert not re.search(r"\d", out) if year_style == "words" else len(re.findall(r"\d+", out)) == 1
    if day_style == "ordinal":
        assert f"{new.day}{ordinal_suffix(new.day)}" in out
    if year_style == "words":
        assert not re.search(r"\d", out.split(",")[-1])
    if weekday:
        assert out.startswith(WEEKDAYS_EN[new.weekday()] + ", ")
    assert MONTHS_EN[new.month - 1] in out


@settings(max_examples=200, deadline=None)
@given(english_word_dates(with_year=False), st.sampled_from(PATIENTS), st.sampled_from([None, 2019, 2020]))
def test_word_dates_without_a_year_shift_in_the_reference_year(case, pid, reference_year):
    text, d, _ = case
    ry = reference_year or 2000
    assume(not (d.month == 2 and d.day == 29) or ry % 4 == 0)
    out = _shift(text, pid, reference_year)
    expected = d.replace(year=ry) + timedelta(days=date_offset_days(KR, pid))
    assert [_md(x) for x in dates_named(out, reference_year)] == [_md(expected)]  # no year: read in any year


@settings(max_examples=300, deadline=None)
@given(english_word_dates(), foreign_dates(), st.sampled_from(PATIENTS))
def test_intervals_between_two_dates_of_a_patient_are_kept(first, second, pid):
    (t1, d1, _), (t2, d2, _) = first, second
    n1, n2 = dates_named(_shift(t1, pid)), dates_named(_shift(t2, pid))
    assert (n2[0] - n1[0]) == (d2 - d1)  # (b)
    assert n1[0] - d1 == timedelta(days=date_offset_days(KR, pid))


@settings(max_examples=300, deadline=None)
@given(foreign_dates(), st.sampled_from(PATIENTS))
def test_dates_in_other_languages_stay_in_their_language(case, pid):
    text, d, lang = case
    out = _shift(text, pid)
    new = d + timedelta(days=date_offset_days(KR, pid))
    assert out == FOREIGN_LAYOUT[lang].format(d=new.day, m=FOREIGN[lang][new.month - 1], y=new.year)
    assert dates_named(out) == [new]


@settings(max_examples=400, deadline=None)
@given(ranges(), st.sampled_from(PATIENTS))
def test_ranges_move_both_ends_by_one_offset_and_keep_the_interval(case, pid):
    text, first, last = case
    offset = timedelta(days=date_offset_days(KR, pid))
    out = _shift(text, pid)
    assert dates_named(text) == [first, last]
    assert dates_named(out) == [first + offset, last + offset]
    assert out.casefold() != text.casefold()
    # the layout is kept: the words around the dates are all there, in the same order (a day may
    # gain the month it no longer shares with the other end: "between 29 March and 2 April")
    day_words = {*ORD_UNITS, *TENS, "twentieth", "thirtieth", "st", "nd", "rd", "th"}
    months = {m.lower() for m in MONTHS_EN}
    kept = [w for w in re.findall(r"[a-z]+", text.lower()) if w not in day_words | months]
    rest = iter(re.findall(r"[a-z]+", out.lower()))
    assert all(any(w == x for x in rest) for w in kept), (text, out)


# --- every shape the recognizer emits --------------------------------------------------------------


def _examples(test) -> list[tuple[str, list[str]]]:
    """The (text, spans) examples of a parametrized test of the recognizer's own test module."""
    (mark,) = [m for m in test.pytestmark if m.name == "parametrize"]
    return [(text, spans) for text, spans in mark.args[1] if spans]


SINGLE_SHAPES = (
    _examples(recognizer_tests.test_dates_written_in_words)
    + _examples(recognizer_tests.test_weekdays_tied_to_an_event)
    + _examples(recognizer_tests.test_holidays_tied_to_an_event)
)
RANGE_SHAPES = _examples(recognizer_tests.test_both_ends_of_ranges)
_MONTH_WORD = re.compile(
    r"(?i)(?<![^\W\d_])(?:"
    + "|".join([m[:3] for m in MONTHS_EN] + [w for ws in FOREIGN.values() for w in ws] + ["maerz", "fevrier", "aout"])
    + r")"
)


def _release(text: str, pid: str = "p1") -> tuple[list[str], list[str], list[str], str]:
    """(span surfaces, their surrogates, their operators, released text) with the real recognizer."""
    found = RECOGNIZER.analyze(text)
    spans = [Span("n1", r.start, r.end, "DATE") for r in found]
    out = Anonymizer(KR).anonymize(Note("n1", pid, text), spans)
    surrogates = [out.text[s.out_start : s.out_end] for s in out.spans]
    return [text[r.start : r.end] for r in found], surrogates, [s.operator for s in out.spans], out.text


@pytest.mark.parametrize(("text", "spans"), SINGLE_SHAPES)
def test_every_word_date_that_names_a_month_is_shifted_not_masked(text, spans):
    surfaces, surrogates, operators, _ = _release(text)
    assert surfaces == spans  # the recognizer's own expectation: the shape is the one emitted
    for surface, surrogate, op in zip(surfaces, surrogates, operators, strict=True):
        if _MONTH_WORD.search(surface):
            assert op == "date.shift", surface
            assert surrogate.casefold() != surface.casefold()
            try:
                days = dates_named(surface)
            except AnonymizationError:  # a month alone or a month + year: the month rule
                continue
            offset = timedelta(days=date_offset_days(KR, "p1"))
            assert [_md(x) for x in dates_named(surrogate)] == [_md(d + offset) for d in days]
        else:  # a day alone, a weekday alone, a holiday: nothing a shift can move
            assert (op, surrogate) == ("date.mask", DATE_MASK), surface


@pytest.mark.parametrize(("text", "spans"), RANGE_SHAPES)
@pytest.mark.parametrize("pid", ["p1", "p7", "p42"])
def test_both_ends_of_every_range_shape_are_shifted_together(text, spans, pid):
    surfaces, surrogates, operators, released = _release(text, pid)
    assert surfaces == spans
    assert operators == ["date.shift"] * len(spans)
    assert all(s.casefold() != o.casefold() for s, o in zip(surfaces, surrogates, strict=True))
    # read back as a whole: every end moved by the same offset
    found = RECOGNIZER.analyze(text)
    start, end = found[0].start, found[-1].end
    tail = len(text) - end
    before = text[start:end]
    after = released[start : len(released) - tail]
    old, new = dates_named(before), dates_named(after)
    offset = timedelta(days=date_offset_days(KR, pid))
    assert len(old) == len(spans)
    assert [_md(n) for n in new] == [_md(o + offset) for o in old]
    if re.search(r"\d{4}", before):  # with a year: the dates themselves
        assert new == [o + offset for o in old]


def test_a_range_crossing_into_the_next_month_and_year_writes_what_its_days_no_longer_share():
    cases = {
        ("7-11 March 2019", 22): "29 March-2 April 2019",
        ("between 7 and 11 March", 5): "between 12 and 16 March",
        ("March 7th through the 11th", 25): "April 1st through the 5th",
        ("March 7th through the 11th", 22): "March 29th through the 2nd of April",
        ("September 2 through 28, 2010", 30): "October 2 through October 28, 2010",
        ("20 and 24 December 2019", 10): "30 December 2019 and 3 January 2020",
        ("28 December to 3 January 2020", 5): "2 January to 8 January 2020",
        ("the third to the fifth of July", 30): "the second to the fourth of August",
        ("March 7, 2019 to March 11, 2019", -10): "February 25, 2019 to March 1, 2019",
        ("March 7-11, 2019", 22): "March 29-April 2, 2019",  # not 7 March '11 at 20:19
        ("March 7-11", 5): "March 12-16",
    }
    for (text, offset), expected in cases.items():
        assert anonymize_date_by(text, lambda offset=offset: offset) == (expected, "date.shift"), text


def test_word_dates_are_written_back_in_their_own_words():
    cases = {
        ("third of July", 5): "eighth of July",
        ("July the third, 2019", 30): "August the second, 2019",
        ("Thirty-First of December, 2018", 1): "First of January, 2019",
        ("6th day of May, two thousand and eleven", -130): "27th day of December, two thousand and ten",
        ("third day of July, nineteen ninety-nine", 180): "thirtieth day of December, nineteen ninety-nine",
        ("31st of December, nineteen ninety-nine", 1): "1st of January, two thousand",
        ("July the fourth, twenty nineteen", 180): "December the thirty-first, twenty nineteen",
        ("Monday, the third of May 2021", 3): "Thursday, the sixth of May 2021",
        ("TWENTY FIRST OF MARCH", 10): "THIRTY FIRST OF MARCH",
        ("August", 40): "September",
        ("Jan", -100): "Oct",
        ("3 septembre 2014", 30): "3 octobre 2014",
        ("7 de octubre de 2013", -10): "27 de septiembre de 2013",
        ("6. Februar 2017", 30): "8. März 2017",
        ("3. April 2017", 30): "3. Mai 2017",
        ("19 juni 2009", 30): "19 juli 2009",
        ("30 sierpnia 2018", 5): "4 września 2018",
        ("23 Μαΐου 2022", 10): "2 Ιουνίου 2022",
        ("2010. március 3.", 30): "2010. április 2.",
        ("septembre 2014", 30): "octobre 2014",
        ("3 fevrier 2014", 190): "12 aout 2014",
        ("1er mars 2014", 3): "4 mars 2014",
        ("27 février 2014", 2): "1 mars 2014",
    }
    for (text, offset), expected in cases.items():
        assert anonymize_date_by(text, lambda offset=offset: offset)[0] == expected, text


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("thirty-first of February", "E411"),  # invalid dates: as for numeric ones
        ("30 février 2014", "E411"),
        ("twenty-first", "E410"),  # a day alone names no month
        ("Tuesday", "E410"),
        ("Tuesday the 4th", "E410"),
        ("Christmas Eve 2019", "E410"),
        ("7", "E410"),
        ("between 11 and 7", "E410"),
    ],
)
def test_what_names_no_day_or_no_valid_date_still_raises(text, code):
    with pytest.raises(AnonymizationError) as e:
        shift_date(KR, "p1", text)
    assert e.value.code == code and text not in str(e.value)


def test_a_run_that_does_not_need_its_neighbours_is_left_to_each_span():
    off = lambda: 10  # noqa: E731
    assert anonymize_date_run_by(["3 March 2019", "5 April 2019"], off) is None  # each reads alone
    assert anonymize_date_run_by(["2018", "2019"], off) is None  # years: the decade rule
    assert anonymize_date_run_by(["Tuesday", "7"], off) is None
    assert anonymize_date_run_by(["7", "11 March"], off) == [("17", "date.shift"), ("21 March", "date.shift")]
    text = "Seen 7, 8 and 11 March; 3 May and 2019, 12 to 14."
    spans = [(m.start(), m.end()) for m in re.finditer(r"\d+(?: March| May)?", text)]
    assert date_runs(text, spans) == [[0, 1, 2], [3, 4, 5, 6]]


def test_the_engine_shifts_both_ends_for_every_patient_and_releases_every_note():
    """All offsets: a shift into the next month writes the month, a shift that keeps the day writes it too."""
    text = "Admitted between 7 and 11 March 2019; again from 3rd to 5th of June; March 29 through 31, 2019."
    found = RECOGNIZER.analyze(text)
    spans = {f"n{i}": [Span(f"n{i}", r.start, r.end, "DATE") for r in found] for i in range(len(PATIENTS))}
    notes = [Note(f"n{i}", pid, text) for i, pid in enumerate(PATIENTS)]
    batch = anonymize_notes(notes, spans, KR, TideConfig.preset("rules"))
    assert not batch.quarantined  # no end is released unchanged (E405), none fails
    assert len(batch.released) == len(PATIENTS)
    for rel in batch.released:
        assert DATE_MASK not in rel.note.text and {s.operator for s in rel.note.spans} == {"date.shift"}
        offset = timedelta(days=date_offset_days(KR, rel.source.patient_id))
        out = rel.note.text
        first = re.search(r"between (.+?) for|between (.+?);", out)
        assert first is not None
        got = dates_named(first.group(1) or first.group(2))
        assert got == [date(2019, 3, 7) + offset, date(2019, 3, 11) + offset]


def test_a_note_released_with_tide_run_keeps_the_interval_between_word_and_numeric_dates(tmp_path):
    text = "Patient seen on the third of July 2019 and again on 10 July 2019 for review."
    db = tmp_path / "w.duckdb"
    con = duckdb.connect(str(db))
    con.sql("CREATE TABLE notes (note_id VARCHAR, patient_id VARCHAR, text VARCHAR)")
    con.execute("INSERT INTO notes VALUES ('n1', 'p1', ?), ('n2', 'p2', ?)", [text, text])
    con.close()

    def tide(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tide_core.cli.main", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )

    assert tide("keys", "new", "--study", "s", "--key", "k").returncode == 0
    r = tide(
        "run", "--warehouse", "duckdb:w.duckdb", "--study", "s", "--key", "k", "--preset", "rules", "--no-progress"
    )
    assert r.returncode == 0, r.stderr[-3000:]
    con = duckdb.connect(str(db))
    released = dict(con.sql("SELECT note_id, text FROM tide_deid_notes WHERE key = 'k'").fetchall())
    operators = [row[0] for row in con.sql("SELECT operator FROM tide_released_spans WHERE label = 'DATE'").fetchall()]
    con.close()
    assert set(released) == {"n1", "n2"} and operators and set(operators) == {"date.shift"}
    keyring = FileKeyProvider(tmp_path / ".tide" / "keys").keyring("s", "k")
    for note_id, pid in (("n1", "p1"), ("n2", "p2")):
        m = re.fullmatch(r"Patient seen on the (.+) and again on (.+) for review\.", released[note_id])
        assert m is not None, released[note_id]
        (first,), (second,) = dates_named(m.group(1)), dates_named(m.group(2))
        assert second - first == timedelta(days=7)
        assert re.fullmatch(r"[a-z-]+ of [A-Z][a-z]+ \d{4}", m.group(1))  # still in words
        assert first != date(2019, 7, 3)
        offset = date_offset_days(keyring, pid)
        assert first == date(2019, 7, 3) + timedelta(days=offset)
