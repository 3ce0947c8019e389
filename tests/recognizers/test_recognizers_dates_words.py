"""Dates in words, both ends of ranges and weekdays tied to an event (tide.dates_words)."""

from __future__ import annotations

import secrets

import pytest

from tide_core.anonymize.engine import Anonymizer
from tide_core.anonymize.keys import KeyRing
from tide_core.config import rules_specs
from tide_core.engine.recognition import finish_note
from tide_core.recognizers.dates_words import day_number
from tide_core.recognizers.registry import create
from tide_core.spans import Note

DATES = create({"name": "tide.dates_words"})


def _found(text: str, rec=DATES) -> list[str]:
    return [text[r.start : r.end] for r in rec.analyze(text)]


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        ("Seen on the third of July for review.", ["third of July"]),
        ("Born July the third, 2019 at term.", ["July the third, 2019"]),
        ("Surgery on the 3rd of July.", ["3rd of July"]),
        ("Return visit on the twenty-first.", ["twenty-first"]),
        ("Booked on the twenty first at 10:00.", ["twenty first"]),
        ("Pay the invoice by the 5th.", ["5th"]),
        ("Symptoms began in mid-March 2020 and worsened.", ["March 2020"]),
        ("No travel since August.", ["August"]),
        ("She was seen early Jan by her GP.", ["Jan"]),
        ("Thirty-First of December, 2018 was her last visit.", ["Thirty-First of December, 2018"]),
        ("Signed on the 6th day of May, two thousand and eleven.", ["6th day of May, two thousand and eleven"]),
        ("Born the third day of July, nineteen ninety-nine.", ["third day of July, nineteen ninety-nine"]),
        # other languages: with a day number before the month or a year after it
        ("Lettre du 3 septembre 2014.", ["3 septembre 2014"]),
        ("Aviso del 7 de octubre de 2013.", ["7 de octubre de 2013"]),
        ("Brief vom 6. Februar 2017 und 3. April 2017.", ["6. Februar 2017", "3. April 2017"]),
        ("Brief van 19 juni 2009.", ["19 juni 2009"]),
        ("Pismo z 30 sierpnia 2018.", ["30 sierpnia 2018"]),
        ("Επιστολή 23 Μαΐου 2022.", ["23 Μαΐου 2022"]),
        ("Cegléd, 2010. március 3.", ["2010. március 3."]),
    ],
)
def test_dates_written_in_words(text, spans):
    assert _found(text) == spans


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        ("Admitted between 7 and 11 March for sepsis.", ["7", "11 March"]),
        ("Inpatient 7\u201311 March 2019 (en dash).", ["7", "11 March 2019"]),
        ("Inpatient 7-11 March 2019 (hyphen).", ["7", "11 March 2019"]),
        ("Inpatient 7\u221211 March 2019 (minus sign).", ["7", "11 March 2019"]),
        ("Away from 3 to 5 June.", ["3", "5 June"]),
        ("Course from the 3rd to the 5th of June.", ["3rd", "5th of June"]),
        ("Treated March 7th through the 11th at the hospice.", ["March 7th", "11th"]),
        ("Treated March 7\u201311, 2019.", ["March 7", "11, 2019"]),
        ("Stayed July the third to the fifth.", ["July the third", "fifth"]),
        ("Scans on 18 & 21 October, or 3 or 4 May.", ["18", "21 October", "3", "4 May"]),
        ("Away from September 2 through 28, 2010 while abroad.", ["September 2", "28, 2010"]),
        ("Dressings changed 7, 8 and 11 March.", ["7", "8", "11 March"]),
    ],
)
def test_both_ends_of_ranges(text, spans):
    assert _found(text) == spans


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        ("Fell last Tuesday at home.", ["Tuesday"]),
        ("Seen on Monday 3 May in clinic.", ["Monday 3 May"]),
        ("Review Tuesday the 4th.", ["Tuesday the 4th"]),
        ("Fever since Friday, now better.", ["Friday"]),
        ("Chest pain Sunday night, resolved.", ["Sunday"]),
        ("Plan to call next Wednesday.", ["Wednesday"]),
        ("Bloods before next Wednesday's visit.", ["Wednesday"]),
    ],
)
def test_weekdays_tied_to_an_event(text, spans):
    assert _found(text) == spans


@pytest.mark.parametrize(
    "text",
    [
        # schedules, not dates
        "Dialysis on Monday, Wednesday and Friday.",
        "Clinic open Monday to Friday.",
        "HD on Mon/Wed/Fri.",
        "Visits every Monday.",
        "Walks on Mondays.",
        "Tuesday clinic is full.",
        # ordinals that count things
        "Improved on the first day of treatment.",
        "Second attempt on the third try failed.",
        "May the second dose be given early?",
        "Survivors were classified by the fifth.",
        # doses, lab values, scores, vitals, times, rooms, codes, measurements, pages
        "Take 1 to 2 tablets every 4 to 6 hours.",
        "Metformin 500 mg, 2 to 3 times daily.",
        "Na 138, K 4.2, Cr 1.1; Hb 7 to 11 g/dL.",
        "Pain 7/10, GCS 15, PHQ-9 scored 7 to 11 points.",
        "BP 120/80, HR 88, RR 16, T 37.2.",
        "Seen at 14:30, again 3 to 5 pm.",
        "Room 412, bed 3 to 5.",
        "ICD-10 E11.65 and I10.",
        "Lesion 3.2 x 4.1 cm, 2 to 3 mm margins.",
        "See page 12 of 15, section 4.2.1, pages 7-11.",
        "Since March 3 - 5 episodes a week.",
        "may be seen in the first week; march to the desk.",
        "Labs drawn at 7, 8 and 11 hours; doses 1, 2 and 4 mg.",
        "Section 3. May be given with food. 4. April is optional.",
        "Ate 10 mayo packets; mars bar.",
    ],
)
def test_hard_negatives_are_left_alone(text):
    found = _found(text)
    # a month named in the text may be a date element; nothing else may be marked
    assert all(f in ("March",) for f in found), found


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        ("Fell on Christmas Eve 2019.", ["Christmas Eve 2019"]),
        ("No alcohol since Thanksgiving.", ["Thanksgiving"]),
        ("Flew home over Easter, back by New Year's Day.", ["Easter", "New Year's Day"]),
        # a holiday word that names a thing, or with no word tying it to an event
        ("Gave her a Christmas tree for the ward.", []),
        ("Easter egg hunt with grandchildren.", []),
        ("Helped her daughter shop for Christmas presents.", []),
        ("Worried about money since Christmas shopping.", []),
        ("Christmas is her favourite time.", []),
    ],
)
def test_holidays_tied_to_an_event(text, spans):
    assert _found(text) == spans


def test_weekdays_can_be_turned_off():
    rec = create({"name": "tide.dates_words", "weekdays": False})
    assert _found("Fell last Tuesday; seen on Monday 3 May.", rec) == []
    assert rec.fingerprint() != DATES.fingerprint()


def test_ordinal_words_name_their_day():
    assert [day_number(w) for w in ("first", "Twenty-First", "twenty first", "thirtieth", "31st", "07")] == [
        1,
        21,
        21,
        30,
        31,
        7,
    ]


def test_descending_or_impossible_ranges_are_not_dates():
    # "7 March" alone is the regex layer's; a descending pair is no range, so "11" stays unmarked
    assert _found("Scores fell from 11 to 7 March") == []
    assert _found("from 28 to 35 June") == []
    assert _found("from 3 to 5 June") == ["3", "5 June"]


def _rules_spans(text: str):
    recs = [create(s) for s in rules_specs() if s["name"] != "tide.known_phi"]
    for r in recs:
        r.load()
    note = note_for(text)
    spans = [s for r in recs for s in r.recognize(note)]
    return finish_note("n1", spans, None, None, text)[0]


def test_the_rules_preset_covers_both_ends_and_the_release_drops_them():
    text = "Admitted between 7 and 11 March; seen on the third of July and last Tuesday."
    spans = _rules_spans(text)
    dates = sorted(text[s.start : s.end] for s in spans if s.label == "DATE")
    assert dates == sorted(["7", "11 March", "third of July", "Tuesday"])
    released = Anonymizer(KeyRing("t", "s", secrets.token_bytes(32))).anonymize(note_for(text), spans)
    for surface in ("between 7 and", "11 March", "third of July", "Tuesday"):
        assert surface not in released.text


def note_for(text: str) -> Note:
    return Note("n1", "p1", text)
