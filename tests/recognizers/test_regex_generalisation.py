"""Regex-layer formats beyond the in-house generator: each rule with positives and negatives that
differ from a positive in exactly one property (the context, the separator, the unit after ...)."""

from __future__ import annotations

import pytest

from tide_core.recognizers.regex_recognizer import RegexRecognizer

REC = RegexRecognizer()


def found(text, label=None):
    return [text[r.start : r.end] for r in REC.analyze(text) if label is None or r.entity_type == label]


# ------------------------------------------------------------------ DATE
@pytest.mark.parametrize(
    "text,expected",
    [
        # directly after a label's colon or equals sign
        ("DOB:09/30/1958\nMRN", "09/30/1958"),
        ("RECEIVED:09/22/2018 | SIGNED", "09/22/2018"),
        ("ADMIT:10/2\tROOM 4", "10/2"),
        ("ADMIT=3/18\n", "3/18"),
        ("Date:2016-03-24 5:12 PM\nFrom", "2016-03-24 5:12 PM"),
        # day-first numeric dates
        ("DOB = 23/06/1967\tSEX", "23/06/1967"),
        ("WHEN 21.11.2018 12:45 SPO2 84%", "21.11.2018 12:45"),
        ("Transfer date: 28.01.2020 01:20\n", "28.01.2020 01:20"),
        ("DOS - 20/09/2022 6:12 PM\n", "20/09/2022 6:12 PM"),
        # m/d with a time after it (tables, message stamps)
        ("I. Loughlin\n5/21 1650\tHR 119", "5/21 1650"),
        ("| 3/1 0645 | T 35.8 C |", "3/1 0645"),
        ("| 2/18 4:15 PM | 174/70 | 110 |", "2/18 4:15 PM"),
        ("| 11/8 12:05 | 104/98 | 113 |", "11/8 12:05"),
        ("[6/25 2:30 AM] Zainab: ok", "6/25 2:30 AM"),
        # a weekday in front belongs to the date
        ("only came back THU 6/30.", "THU 6/30"),
        ("Sign-out Wed 6/22\n", "Wed 6/22"),
        ("signed Wed 7/10 0845\n", "Wed 7/10 0845"),
        ("sent=friday, april 7, 2017 10:12\n", "friday, april 7, 2017 10:12"),
        ("Magnus was born on Thu 9/14 in Live Oak", "Thu 9/14"),
        # lower-case month names
        ("symptoms since august 12th. she", "august 12th"),
        ("lyme disease on the 1st of september. travel", "1st of september"),
        ("my birthday is april 5, 1984. i need", "april 5, 1984"),
        ("forgetful since january 2014. at triage", "january 2014"),
        ("bed offer expected by jun 20. insurance", "jun 20"),
        ("response: dec 24 1350\nhi", "dec 24 1350"),
        ("sent: may. 6, 2019 08:45\n", "may. 6, 2019 08:45"),
        ("sign-out : 3 may 2020\n", "3 may 2020"),
        ("pending since may 16. she", "may 16"),
        ("procedure date : march 8th\n", "march 8th"),
        ("signed out mar 9 00:12\n", "mar 9 00:12"),
        ("ON THE 20TH OF JANUARY.", "20TH OF JANUARY"),
        ("collected : 29apr2020\n", "29apr2020"),
        ("Dec 26 2017-03-05", "2017-03-05"),  # the year of an ISO date is not a clock time "2017"
        # month name and a time
        ("at 0444 on Feb 23 0550, who acknowledged", "Feb 23 0550"),
        ("ON FEB 19 23:12.", "FEB 19 23:12"),
        ("2016-09-17t23:05:00 - chloe", "2016-09-17t23:05:00"),
        ("Sjogren syndrome, dx 2004\n", "2004"),
    ],
)
def test_dates(text, expected):
    assert expected in found(text, "DATE")


def test_table_cells_chain_dates():
    assert found("Test\tDec 26\t12/29\tUnits", "DATE") == ["Dec 26", "12/29"]
    assert found("Test | 2/28 | Mar 3 | 2017-03-05 | Units", "DATE") == ["2/28", "Mar 3", "2017-03-05"]


@pytest.mark.parametrize(
    "text",
    [
        "ratio 1:2/3 of the dose",  # a colon after a digit is not a label colon
        "Invalid 31/31/2021 and 13.13.2021",  # neither reading is a calendar date
        "Take 1/2 1000 mg tablet",  # m/d-like fraction before a dose, not a time
        "Pain 7/10 1200 today",  # a score, even with a time-like number after it
        "Strength 5/5 12:00",
        "she may 2 go home",  # "may" is a verb
        "you may 16 x daily",  # lower-case "may" + day without a date word
        "improved on march 8",  # (context word "on": allowed)
        "the sat 3/4 of the time",  # fine either way; only checks no crash
    ],
)
def test_date_lookalikes(text):
    out = found(text, "DATE")
    if text.startswith("improved"):
        assert out == ["march 8"]
    elif text.startswith("the sat"):
        assert isinstance(out, list)
    else:
        assert out == []


def test_lower_case_ambiguous_months_need_a_date_signal():
    assert found("pending since may 16. she", "DATE") == ["may 16"]
    assert found("symptoms may 16 she", "DATE") == []  # no date word before
    assert found("procedure date : march 8th", "DATE") == ["march 8th"]
    assert found("she will march 8 miles", "DATE") == []  # no ordinal, no date word
    assert found("she will march 8th street", "DATE") == ["march 8th"]  # an ordinal is enough


def test_weekday_and_time_make_month_day_a_date():
    # (a day of 13 or more is a date on its own: date_month_late_day; these use small days)
    assert found("came back Wed 6/10.", "DATE") == ["Wed 6/10"]
    assert found("came back 6/10.", "DATE") == []  # no weekday, no context
    assert found("| 2/8 4:15 PM |", "DATE") == ["2/8 4:15 PM"]
    assert found("| 2/8 |", "DATE") == []  # no time
    assert found("| 2/8 1650 |", "DATE") == ["2/8 1650"]
    assert found("| 2/8 1675 |", "DATE") == []  # not a clock time


def test_full_month_name_takes_no_sentence_period():
    assert found("on the 1st of September. Then", "DATE") == ["1st of September"]
    assert found("seen on Sept. 3 again", "DATE") == ["Sept. 3"]


# ------------------------------------------------------------------ PHONE
@pytest.mark.parametrize(
    "text,expected",
    [
        ("left a voicemail at 797/782-5377 and", "797/782-5377"),
        ("call 691/929-4203 x25.", "691/929-4203 x25"),
        ("assistance line +39 06 7905 7889.", "+39 06 7905 7889"),
        ("assistance line +84-24-8132-4169.", "+84-24-8132-4169"),
        ("line +44-7078-780257.", "+44-7078-780257"),
        ("by phone (+48 22 221 64 38).", "+48 22 221 64 38"),
        ("COBALT TELECOM | +39 (0)06 1415 0737", "+39 (0)06 1415 0737"),
        ("my new number is +31-6-12742700", "+31-6-12742700"),
        ("CALL YOU AT 0033 6 80 48 47 89.", "0033 6 80 48 47 89"),
        ("assistance line 0020 2 1392 4746.", "0020 2 1392 4746"),
        ("Clinic line 02 7623 0792. Repeat", "02 7623 0792"),
        ("Contact | 06 25 77 31 98\tEmail", "06 25 77 31 98"),
        ("Sent to 673-2815, ext. 5257.", "673-2815, ext. 5257"),
        ("Clinic line 8032653873. Repeat", "8032653873"),
    ],
)
def test_phones(text, expected):
    assert expected in found(text, "PHONE")


@pytest.mark.parametrize(
    "text",
    [
        "BP 120/80-110/70 overnight",  # slash form needs ddd/ddd-dddd
        "+39 06 78",  # under 8 digits after the country code
        "+39 06 7905 7889 1234 5678 9",  # over 15 digits (E.164)
        "Lab ref 02 7623 0792 pending",  # national number without phone context
        "my account # is 052 3176 262",  # an account number in phone-ish groups
        "Card 0012 3456 7890 1234",  # 4-4-4-4 with a leading 00: not a phone
        "give 500-1000 mL over the shift",  # a dose range: units after it
        "platelets 250-1000 today",  # a round range: exchange ends in 0 and the number in 00
        "Stock 173-2815 sent",  # an exchange cannot start with 1
    ],
)
def test_phone_lookalikes(text):
    assert found(text, "PHONE") == []


def test_international_needs_plus_or_short_first_group():
    assert found("call +39 06 7905 7889", "PHONE") == ["+39 06 7905 7889"]
    assert found("code 39 06 7905 7889", "PHONE") == []  # no "+"


# ------------------------------------------------------------------ AGE
@pytest.mark.parametrize(
    "text,expected",
    [
        ("He is now 66 and has lived alone", "66"),
        ("thanks for seeing Isidore, who is 85. Works nights", "85"),
        ("who is 20\nyrs. Per his friend", "20"),
        ("She is 36 yrs and has lived alone", "36"),
        ("she turns 72.", "72"),
        ("she turns 82 ON AUG 20", "82"),
        ("Unit -- MICU\tAge -- 73\tMrn", "73"),
        ("AGE : 58", "58"),
        ("Age | 82\n", "82"),
        ("AGE - 94; ROOM", "94"),
        ("MR. Sokolov, 51 yrs, was on holiday", "51"),
        ("Mr. Anders Shackleford,  46 yrs, who presents", "46"),
        ("history per Sigrid Sandoval: 27 yrs with Boerhaave", "27"),
        ("Her daughter Eamon (14 yrs) is in", "14"),
        ("Clement Young (38 yrs) reported", "38"),
        ("Ingrid Mahlangu (33F) reported", "33"),
        ("eamon tanaka (64 m) reported", "64"),
        ("Benedikt Navarro, 75 M, from Guelph", "75"),
        ("happy 54th bday Wilhelmina", "54"),
        ("I'm Norbert, now 93, originally from", "93"),
        ("I'M THEODORA, 48 YRS, ORIGINALLY", "48"),
    ],
)
def test_ages(text, expected):
    assert expected in found(text, "AGE")


@pytest.mark.parametrize(
    "text",
    [
        "troponin I was 1.22 ng/mL",  # a decimal, not an age
        "she is 2 weeks postpartum",  # a duration unit after the number
        "he is 5 cm dilated",
        "She is 2 years post transplant.",  # "years" followed by more than the clause end
        "the pain is now 6 and",  # subject is not a person
        "he turned 90 degrees",  # turned + unit
        "Diabetes (10 yrs) on metformin",  # one capitalised word that is not after a relation word
        "HTN, 10 yrs, on lisinopril",  # no name before the comma
        "(M, 51) Unit",  # kept by the old pattern; the new one must not double it
    ],
)
def test_age_lookalikes(text):
    out = found(text, "AGE")
    assert out == (["51"] if text.startswith("(M") else [])


def test_age_rules_differ_in_one_property():
    assert found("who is 85.", "AGE") == ["85"]
    assert found("which is 85.", "AGE") == []  # not a person
    assert found("she turns 72.", "AGE") == ["72"]
    assert found("she turns 72 mg.", "AGE") == []  # unit after
    assert found("Clement Young (38 yrs) reported", "AGE") == ["38"]
    assert found("Clement Young (38) reported", "AGE") == []  # no unit, no sex
    assert found("happy 54th bday", "AGE") == ["54"]
    assert found("happy 54th day", "AGE") == []
    assert found("Age -- 73", "AGE") == ["73"]
    assert found("Age --- 73", "AGE") == []  # a rule line, not a label separator


@pytest.mark.parametrize(
    "text, expected",
    [
        ("IN A SPLIT-LEVEL HOUSE OFF 5286 WHIPPOORWILL LN APT 11C IN NEW SPRINGVILLE.", "5286 WHIPPOORWILL LN APT 11C"),
        ("in a split-level house off 2538 whippoorwill boulevard in trussville.", "2538 whippoorwill boulevard"),
        ("sent to larchmont apothecary on 1054 s. chestnut st.. call me", "1054 s. chestnut st."),
        ("SENT TO BELOIT DRUG ON 8595 STONEWALL AVENUE.  MY", "8595 STONEWALL AVENUE"),
    ],
)
def test_street_lines_in_capitals_or_lower_case(text, expected):
    from tide_core.recognizers.registry import create

    got = [text[r.start : r.end] for r in create({"name": "tide.regex"}).analyze(text) if r.entity_type == "LOCATION"]
    assert got == [expected]


@pytest.mark.parametrize("text", ["walked 3 blocks down the street today", "LIVES 2 DOORS DOWN THE STREET"])
def test_distances_are_not_street_lines(text):
    from tide_core.recognizers.registry import create

    assert [r for r in create({"name": "tide.regex"}).analyze(text) if r.entity_type == "LOCATION"] == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Fax 2727451019\nportal.lachancewing.co.uk/portal\n", ["portal.lachancewing.co.uk/portal"]),
        ("see www.example.de now", ["www.example.de"]),
        ("Na 140; pt.in bed; e.g. at 5 p.m.", []),  # English words after a dot are not top-level domains
    ],
)
def test_country_domains(text, expected):
    assert [text[r.start : r.end] for r in REC.analyze(text) if r.entity_type == "URL"] == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("pneumococcal 2022; COVID booster 09/18.", ["2022", "09/18"]),  # a day of 13+ needs no context
        ("Second attempt 9/18 - spoke with her husband", ["9/18"]),
        ("Stay: 4/14/2027-4/21/27 on 3 North", ["4/14/2027", "4/21/27"]),  # both ends of a hyphenated range
        ("pain 4/10, strength 5/5, 2/6 murmur, 3/4 tab, MoCA 26/30, BP 120/80", []),  # scores and fractions
    ],
)
def test_bare_month_day_and_ranges(text, expected):
    assert [text[r.start : r.end] for r in REC.analyze(text) if r.entity_type == "DATE"] == expected


def test_bare_ten_digit_north_american_numbers_are_phones_unless_labelled():
    assert found("reach me at k@quincy.com or 3646756317.", "PHONE") == ["3646756317"]
    assert found("MRN: 0079449392", "PHONE") == []  # starts with 0: no area code
    assert found("Acct 2962935511 billed", "ID") == ["2962935511"]  # a cue word makes it an identifier


def test_bare_seven_digit_local_numbers_are_phones():
    assert found("Vasquez Realty | 738-7912", "PHONE") == ["738-7912"]
    assert found("at bwojcik@x.io or 549-9524. She", "PHONE") == ["549-9524"]
    # one property differs from the range above: the number is not round
    assert found("platelets 250-1017 today", "PHONE") == ["250-1017"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("SSN (LAST 4): 4166\nSIGNED", ["4166"]),
        ("Ssn (Last 4) - 3789\n", ["3789"]),
        ("SSN (last 4)\t6068\nEmployer", ["6068"]),
        ("last four of SSN: 0947", ["0947"]),
        ("Replacement shipped; tracking 329 43 7585. Customer", ["329 43 7585"]),
        ("TRACKING NUMBER: 1Z999AA10123456784", ["1Z999AA10123456784"]),
    ],
)
def test_last_four_and_tracking_numbers(text, expected):
    assert found(text, "ID") == expected


def test_last_four_needs_the_ssn_cue():
    # same frame, the cue word differs: "last 4" of something else is not an identifier here
    assert found("SSN (last 4): 4166", "ID") == ["4166"]
    assert found("BMP (last 4): 4166", "ID") == []


def test_tracking_number_needs_a_digit():
    assert found("tracking SHIPPED TODAY", "ID") == []


def test_rural_route_addresses():
    assert found("we run a small bakery on RR 5 Box 410.", "LOCATION") == ["RR 5 Box 410"]
    assert found("grabbing coffee near rr 8 box 81, want anything?", "LOCATION") == ["rr 8 box 81"]
    assert found("RR 18, HR 92, BP 120/80", "LOCATION") == []  # a respiratory rate: no "Box"


def test_emails_with_accented_local_parts():
    assert found("E-mail\trgarzón@comcast.net    Company", "EMAIL") == ["rgarzón@comcast.net"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Patient seen and discussed with resident TA. I agree", ["TA"]),
        ("MD; first assist AC. Anesthetist KB.\nNarrative", ["AC", "KB"]),
        ("Charge nurse Bruce Woods RN aware. -- CW\n\nAttestation", ["Bruce Woods", "CW"]),
        ("Will sign off; re-consult via 4-5287.", []),
    ],
)
def test_clinician_initials(text, expected):
    assert found(text, "DOCTOR") == expected


def test_sign_off_initials_need_a_sentence_before_them():
    assert found("aware. -- CW\n", "DOCTOR") == ["CW"]
    assert found("Labs:\n-- CBC\n-- XY\n", "DOCTOR") == []  # a list item, not a sign-off


def test_extensions_after_via():
    assert found("Will sign off; re-consult via 4-5287.", "PHONE") == ["4-5287"]
    assert found("re-consult via 97657.", "PHONE") == ["97657"]


def test_month_day_before_a_dated_range_end():
    assert found("Stay: 09/11-09/18/20 on OR 2", "DATE") == ["09/11", "09/18/20"]
    assert found("COVID booster 8/2.", "DATE") == ["8/2"]
