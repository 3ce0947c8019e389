"""Name frames of ``tide.names@7``, care homes of ``tide.facilities@6`` and the regex rules added beside
them (digit-group identifiers, results-table date headings, a phone wrapped after its country code,
"came\\nback m/d", "on m/d in ..."): each rule on text written here, with hard negatives (clinical
terms, drugs, devices, table headings, everyday words)."""

from __future__ import annotations

import pytest

from tide_core.recognizers.registry import create

NAMES = create({"name": "tide.names"})
REGEX = create({"name": "tide.regex"})
FACILITIES = create({"name": "tide.facilities"})
NAMES.load()
REGEX.load()
FACILITIES.load()


def _names(text: str) -> list[tuple[str, str]]:
    return [(text[r.start : r.end], r.entity_type) for r in NAMES.analyze(text)]


def _regex(text: str, label: str) -> list[str]:
    return [text[r.start : r.end] for r in REGEX.analyze(text) if r.entity_type == label]


def _facilities(text: str) -> list[str]:
    return [text[r.start : r.end] for r in FACILITIES.analyze(text)]


def test_version_is_7():
    assert NAMES.qualified_name == "tide.names@7"
    assert FACILITIES.qualified_name == "tide.facilities@6"


# --- a name and a credential filling a table cell -------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0800\t141/72\t88\t97%\tWill RN\n", [("Will", "DOCTOR")]),
        ("22:10   118/64   76   96%   98.1F   May RN\n", [("May", "DOCTOR")]),
        ("03:15   131/77   91   95%   97.9f   oriel rn\n", [("oriel", "DOCTOR")]),
        ("| 0400 | 98% | Tobiah Quenneville, LPN |\n", [("Tobiah Quenneville", "DOCTOR")]),
        ("Will recheck the dressing at noon.\nWill (RN)\n", [("Will", "DOCTOR")]),
    ],
)
def test_name_and_credential_in_a_cell(text, expected):
    assert _names(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Date/Time   BP   HR   RR   SpO2   Temp   Pain   RN\n",  # headings: the name and "RN" in separate cells
        "Date/Time\tBP\tHR\tSpO2\tTemp\tPain\tRN\n",
        "0800\t141/72\tCharge RN\n0900\t138/70\tFloat RN\n",  # a shift or role word
        "critical result\ncalled to cna  at 0412\n",  # a verb in lower case
        "Foley care per RN\n",  # not a cell of its own
    ],
)
def test_name_and_credential_in_a_cell_negatives(text):
    assert _names(text) == []


# --- self-introductions with the writer's details, and the sign-off that repeats the name -----------


def test_self_introduction_then_birthday_and_the_last_line():
    text = "good morning,\nit's will, my date of birth is 03/14/1961.\ni will bring the forms.\n\nwill\n"
    assert _names(text) == [("will", "PATIENT"), ("will", "PATIENT")]
    assert text.rfind("will") == [r.start for r in NAMES.analyze(text)][-1]  # the sign-off, not the verb


@pytest.mark.parametrize(
    "text",
    [
        "this is urgent, please call me back.",
        "this is tuesday, my appointment was moved.",
        "this is metformin, my new prescription.",  # "this is" + a drug: no "my birthday" follows
        "I think this is the one, my doctor said.",
    ],
)
def test_self_introduction_negatives(text):
    assert _names(text) == []


# --- a relative or friend named between commas, or in lower case ------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Her cousin from the choir, Will, drives her to dialysis.", ["Will"]),
        ("a neighbour from the farm, oriel quenneville, drives her.", ["oriel quenneville"]),
        ("lives alone; her nephew eamon checks in after work.", ["eamon"]),
    ],
)
def test_relatives_in_appositives_and_lower_case(text, expected):
    assert [s for s, _ in _names(text)] == expected


@pytest.mark.parametrize(
    "text",
    [
        "A friend from work, however, disagreed.",
        "a friend from church, sunday, brings meals.",
        "her son metformin was refilled.",  # drug names are not relatives' names
        "his wife insulin pens are in the fridge.",
        "her daughter heparin flush",
    ],
)
def test_relatives_negatives(text):
    assert _names(text) == []


# --- header fields, signatures, reports, role words before a month-name --------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Date : 2019-04-02\nSender = Will Quenneville\nTo = Medication Questions\n", ["Will Quenneville"]),
        ("Signed by: June Abernathy-Voss 2/02/2021 08:40\n", ["June Abernathy-Voss"]),
        ("The school nurse called after a report from Oriel.", ["Oriel"]),
        ("Hand-off\nMÉDECIN: May Quenneville\nService: Internal Medicine\n", ["May Quenneville"]),
    ],
)
def test_header_signature_report_and_role_frames(text, expected):
    assert [s for s, _ in _names(text)] == expected


@pytest.mark.parametrize(
    "text",
    [
        "Sender = Pharmacy Team\nTo = Medication Questions\n",
        "after a report from Pathology.",
        "after a report from Cardiology, and a report from Radiology.",
    ],
)
def test_header_and_report_negatives(text):
    assert _names(text) == []


# --- identifiers in three digit groups -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Patient: Oriel Quenneville (born 1950-05-02) 381 920 47\n", ["381 920 47"]),
        ("Health card 207-14-553 on file.", ["207-14-553"]),
        ("my plan number is 415 062 38, thanks", ["415 062 38"]),
    ],
)
def test_digit_group_identifiers(text, expected):
    assert _regex(text, "ID") == expected


@pytest.mark.parametrize(
    "text",
    [
        "call 06 123 456 78 tomorrow",  # a national phone: a digit group before
        "BP 120 80, HR 72, RR 16",
        "codes 123 456 78 mg",  # a unit after
        "142 61 107 99 in the row",  # a longer run of groups
        "+31 6 123 456 78",
    ],
)
def test_digit_group_identifier_negatives(text):
    assert _regex(text, "ID") == []


# --- dates: results-table headings, line wraps, "on m/d in ..." -------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Lab | 2/3 | 2/6 | Reference\nsodium | 134 | 138 | 135-145\n", ["2/3", "2/6"]),
        ("Component\t9/14\tFlag\nferritin\t12\tL\n", ["9/14"]),
        ("She stayed with her sister and went\nhome 11/12 by train.", ["11/12"]),
        ("Blood cultures drawn on 5/11 in the emergency department.", ["5/11"]),
    ],
)
def test_table_headings_wraps_and_on_dates(text, expected):
    assert _regex(text, "DATE") == expected


@pytest.mark.parametrize(
    "text",
    [
        "Strength\t5/5\t4/5\n",  # muscle strength grades in a table
        "Motor | 5/5 | 5/5 | symmetric\n",
        "a 3/4 in laceration on the forearm",
        "cut 1/2 in diameter on the shin",
        "Test | Value | Units\nsodium | 140 | mmol/L\n",
    ],
)
def test_table_heading_and_inch_negatives(text):
    assert _regex(text, "DATE") == []


# --- a phone number wrapped after its country code -----------------------------------------------------


def test_phone_wrapped_after_the_country_code():
    text = "reach her daughter abroad on +49\n30 901820 55 or by e-mail."
    assert _regex(text, "PHONE") == ["+49\n30 901820 55"]


# --- care homes named after a person -------------------------------------------------------------------


def test_care_home_named_after_a_person():
    text = "Discharged to Quenneville Manor for respite care."
    assert _facilities(text) == ["Quenneville Manor"]


@pytest.mark.parametrize(
    "text",
    [
        "Press at the White House today.",
        "Open House on Sunday.",
        "a Guest House near the coast",
        "Meeting at Boston Lodge",  # a place, not a person
        "the Court House steps",
    ],
)
def test_care_home_negatives(text):
    assert _facilities(text) == []
