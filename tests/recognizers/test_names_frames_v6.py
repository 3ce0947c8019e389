"""Name frames of ``tide.names@6`` and the return cue of the m/d date pattern (``tide.regex``):
each rule on text written here, with hard negatives (clinical terms, eponyms, drugs, departments)."""

from __future__ import annotations

import pytest

from tide_core.recognizers.registry import create

NAMES = create({"name": "tide.names"})
REGEX = create({"name": "tide.regex"})
NAMES.load()


def _names(text: str) -> list[tuple[str, str]]:
    return [(text[r.start : r.end], r.entity_type) for r in NAMES.analyze(text)]


def _surfaces(text: str) -> list[str]:
    return [s for s, _ in _names(text)]


# --- a relation noun at the end of a wrapped line ------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("meals on wheels and help from her neighbour\nPeregrine on weekdays.", ["Peregrine"]),
        ("This morning his daughter\nOttilie Zwanenburg found him.", ["Ottilie Zwanenburg"]),
    ],
)
def test_relation_noun_before_a_line_wrap(text, expected):
    assert _surfaces(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Lives with her husband\nPlan: continue Lasix 40 mg daily.",  # a heading on the next line
        "Family history: mother\nHypertension, father\nDiabetes.",
        "Discussed with wife\nFollow-up in two weeks.",
    ],
)
def test_relation_noun_before_a_line_wrap_negatives(text):
    assert _surfaces(text) == []


# --- clinician frames: a title-case verb that is a given name, two-letter names ---------------------


def test_role_word_then_a_given_name_that_is_also_a_verb():
    text = "Reassessed at 0200, pain 2/10. -- RN Will Quillfeather\n"
    assert _names(text) == [("Will Quillfeather", "DOCTOR")]


@pytest.mark.parametrize("text", ["RN will follow up in the morning.", "RN Will Follow up.", "NP Will see her."])
def test_role_word_then_a_verb_is_not_a_name(text):
    assert _surfaces(text) == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Spoke with Ty (LICSW) at the shelter regarding rent.", "Ty"),
        ("please keep your appointment. - ty (cna)\n", "ty"),
    ],
)
def test_two_letter_name_before_a_credential(text, expected):
    assert _names(text) == [(expected, "DOCTOR")]


@pytest.mark.parametrize(
    "text",
    ["Referred to (PT) for gait.", "Seen in (OT) today.", "continue as (RN) directed"],
)
def test_two_letter_english_words_before_a_credential_are_not_names(text):
    assert _surfaces(text) == []


# --- an initial and a surname in capitals, or in a table column -------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("21.11.2018 12:45   SPO2 84% ON RA   1   K. QUILLFEATHER-MARCHBANKS\n", ["K. QUILLFEATHER-MARCHBANKS"]),
        ("11/22/2018 8:20 AM\tSPO2 91%\t9\tO. MARCHBANKS\n", ["O. MARCHBANKS"]),
        ("Seen by\tP. Zwanenburg\n", ["P. Zwanenburg"]),
    ],
)
def test_initial_and_surname_in_capitals_or_a_column(text, expected):
    assert _surfaces(text) == expected


@pytest.mark.parametrize(
    "text",
    ["CULTURE   S. AUREUS   SENSITIVE\n", "STOOL:   C. DIFF NEGATIVE\n", "URINE\tE. COLI >100K\n"],
)
def test_species_in_capitals_and_columns_are_not_names(text):
    assert _surfaces(text) == []


# --- a rare given name and a double-barrelled surname ------------------------------------------------


def test_rare_given_name_and_double_barrelled_surname():
    text = "Physical therapy (Jurgis Abernathy-Quillfeather) cleared her for home."
    assert _surfaces(text) == ["Jurgis Abernathy-Quillfeather"]


@pytest.mark.parametrize(
    "text",
    [
        "Diagnosed with Creutzfeldt-Jakob disease last year.",
        "Biopsy showed Non-Hodgkin lymphoma.",
        "History of Wolff-Parkinson-White syndrome.",
        "Started Keppra Extended-Release tablets.",
    ],
)
def test_eponyms_and_drugs_with_hyphens_are_not_names(text):
    assert _surfaces(text) == []


# --- a message left for someone, a plan gone over with someone ----------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("SW left a voicemail for Anselm at 555-0100 and will call back.", ["Anselm"]),
        ("Return precautions reviewed with Hope.", ["Hope"]),
        ("Plan discussed with Ottilie and her son.", ["Ottilie"]),
    ],
)
def test_message_for_and_reviewed_with(text, expected):
    assert _surfaces(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Plan discussed with Cardiology and Neurology.",
        "Left a message for Pharmacy about Eliquis.",
        "Results reviewed with Radiology.",
        "Dose reviewed with Lasix held.",
        "Plan discussed with Nephrology and Urology.",  # words rare in English: no known name among them
        "Left a voicemail for Podiatry.",
    ],
)
def test_message_for_and_reviewed_with_negatives(text):
    assert _surfaces(text) == []


# --- "Surname, Given" after a patient or subject label ---------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Age -- 71\tPt -- FAIRBANKS, SUMMER\n", ["FAIRBANKS, SUMMER"]),
        ("Re: GOLDBERG, THADDEUS - d.o.b. 01/02/1950\n", ["GOLDBERG, THADDEUS"]),
    ],
)
def test_inverted_name_after_a_label(text, expected):
    assert _surfaces(text) == expected


@pytest.mark.parametrize(
    "text",
    ["Pt: Stable, Alert\n", "Re: Boston, Georgia\n", "Subject: Labs, Results\n", "Re: Referral, Cardiology\n"],
)
def test_inverted_label_negatives(text):
    assert _surfaces(text) == []


# --- display names in lower case ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("from\tottilie quillfeather <ottilie.q55@example.com>\n", ["ottilie quillfeather"]),
        ("from: anselm marchbanks <anselm_m@example.org>\n", ["anselm marchbanks"]),
    ],
)
def test_lower_case_display_name(text, expected):
    assert _surfaces(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "please email me at <help@example.com>\n",
        "sent to pharmacy refill <refills@example.com>\n",
        "questions about metformin dosing <metformin@example.com>\n",
        "meds:\tlisinopril atorvastatin <rx@example.com>\n",  # no word of the address
    ],
)
def test_lower_case_display_name_negatives(text):
    assert _surfaces(text) == []


# --- m/d after a return ("came back 2/6") ----------------------------------------------------------


def _dates(text: str) -> list[str]:
    return [text[r.start : r.end] for r in REGEX.analyze(text) if r.entity_type == "DATE"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("spent the winter abroad and only came back 2/6. Since then", ["2/6"]),
        ("She got home 9/8 and felt well.", ["9/8"]),
    ],
)
def test_month_day_after_a_return(text, expected):
    assert _dates(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "came back with pain 3/10 at rest",
        "came back; strength 4/5 in the left leg",
        "went back to 1/2 tab of metoprolol",
        "came back 6/10.",  # a day of 10 reads as a score's denominator
    ],
)
def test_scores_and_fractions_after_a_return_are_not_dates(text):
    assert _dates(text) == []


# --- a report or a call from someone; names that are also months ----------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("A case was opened in 2015 after a report from Anselm. Insurance: Medicaid.", ["Anselm"]),
        ("opened after a report from Jurgis Zwanenburg. She would prefer", ["Jurgis Zwanenburg"]),
    ],
)
def test_report_from_a_person(text, expected):
    assert _surfaces(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Awaiting a report from Pathology.",
        "Got a call from Physical Therapy.",
        "Referral from Nephrology and Urology.",
        "A report from Cardiology Associates.",
        "Received a report from Epic.",  # one word: a known name or a word rare in English (tide.names@7)
    ],
)
def test_report_from_negatives(text):
    assert _surfaces(text) == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Spoke with May (MSW) at the shelter.", [("May", "DOCTOR")]),
        ("Pt = Quillfeather, May   Unit = L&D\n", [("Quillfeather, May", "PATIENT")]),
    ],
)
def test_names_that_are_months_in_name_frames(text, expected):
    assert _names(text) == expected


@pytest.mark.parametrize(
    "text", ["Seen in May (2019) and June.", "Pt: Stable, May\n", "Re: Review, May\n", "Follow-up in May (PT)."]
)
def test_months_outside_name_frames_are_not_names(text):
    assert _surfaces(text) == []
