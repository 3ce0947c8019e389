"""The real-world place recognizer (tide.places) and bare identifiers by shape (tide.ids)."""

from __future__ import annotations

import pytest

from tide_core.recognizers.registry import create


@pytest.fixture(scope="module")
def places():
    r = create({"name": "tide.places"})
    r.load()
    return r


def _found(rec, text: str) -> list[str]:
    return [text[r.start : r.end] for r in rec.analyze(text)]


def test_towns_named_alone_in_running_text(places):
    text = "Pt moved here from Keene two years ago; her sister still lives outside Dayton."
    assert _found(places, text) == ["Keene", "Dayton"]


def test_distinctive_names_need_no_cue_but_common_words_do(places):
    assert _found(places, "Daughter is a teacher, Guadalajara based, visits monthly.") == ["Guadalajara"]
    # "Normal" is a town in Illinois and an everyday word: kept after a place cue only
    assert _found(places, "Normal exam. Lungs clear.") == []
    assert _found(places, "She lives in Normal with her husband.") == ["Normal"]


def test_eponyms_titles_and_possessives_are_left_alone(places):
    text = "GCS 15 on the Glasgow Coma Scale. Seen by Dr. Dayton. Keene's exam was normal."
    assert _found(places, text) == []


def test_all_caps_documents_need_a_cue_for_single_words(places):
    assert _found(places, "PATIENT IS FROM WORCESTER, MA. PLAN: CONTINUE LASIX. DAYTON.") == ["WORCESTER"]


def test_lower_case_words_match_only_in_lower_case_text(places):
    # in mixed-case text a lower-case word is an ordinary word; in text written without capitals
    # (portal messages) a distinctive place name after a cue is still a place
    assert _found(places, "Pt moved from keene to Dayton last Spring.") == ["Dayton"]
    assert _found(places, "we were at my brother's in ashland over the weekend and i had pain") == ["ashland"]
    assert _found(places, "we were at my brother's place ashland over the weekend and i had pain") == []


def test_states_after_a_town_and_counties(places):
    assert _found(places, "his sister lives in Horn Lake, MS and only came back") == ["Horn Lake", "MS"]
    assert _found(places, "a case was opened by Lee County in March") == ["Lee County"]


def test_diacritics_and_eponym_compounds(places):
    assert _found(places, "was on holiday in Tāndā when he fell ill") == ["Tāndā"]
    assert _found(places, "symptoms of Osgood-Schlatter disease; a Penrose drain; MoCA 28/30") == []


def test_place_fingerprint_depends_on_scores(places):
    other = create({"name": "tide.places", "cue_score": 0.9})
    assert other.fingerprint() != places.fingerprint()


IDS = create({"name": "tide.ids"})


@pytest.mark.parametrize(
    "text, expected",
    [
        ("specimen S21-04567 received", ["S21-04567"]),
        ("ref A00123456 noted", ["A00123456"]),
        ("card 4111 1111 1111 1111 on file", ["4111 1111 1111 1111"]),
        ("see 0045123 for prior", ["0045123"]),
        ("Case #2021-00456 opened", ["2021-00456"]),
        ("acct XK-4471-09 billed", ["XK-4471-09"]),
    ],
)
def test_bare_identifiers_are_found(text, expected):
    assert _found(IDS, text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "HbA1c 7.2, B12 low, COVID-19 negative, CA-125 35, ICD-10 E11.65",  # clinical codes and lab names
        "phone 617-555-0199 or 555-0199; dob 03/04/1961; 2021-03-04",  # phones and dates keep their labels
        "SSN 123-45-6789",
        "Norco 5-325 mg, 1000 mL NS, BP 120/80, 150,000 platelets, 20 units",
        "give 100000 units of penicillin",  # a count with a unit
        "room 4127, bed 12B",  # too few digits
    ],
)
def test_clinical_numbers_are_not_identifiers(text):
    assert _found(IDS, text) == []


def test_six_digits_is_the_pure_digit_threshold():
    assert _found(IDS, "ref 123456 ok") == ["123456"]
    assert _found(IDS, "ref 12345 ok") == []


@pytest.mark.parametrize(
    "text",
    [
        "client address 172.149.161.91 joined",  # IPv4 addresses are URL
        "Denver, CO 80239-8567",  # ZIP+4 is LOCATION
        "DOB: 06-Apr-2006; seen 16APR1981; recheck Apr-2024",  # dates with a month name
    ],
)
def test_other_labels_shapes_are_not_identifiers(text):
    assert _found(IDS, text) == []


@pytest.mark.parametrize(
    "text",
    [
        "Temp 100.9F at 04:52",
        "call 0161 838 3894 today",
        "line 090-8398-0067.",
        "phone (022 7818-2859)",
    ],
)
def test_values_with_units_and_trunk_prefixed_phones_are_not_identifiers(text):
    assert _found(IDS, text) == []


FAC = create({"name": "tide.facilities"})
ORG = create({"name": "tide.org_heads"})
NAMES = create({"name": "tide.names"})


@pytest.mark.parametrize(
    "text, expected",
    [
        ("MILLSTONE VALLEY HOSPITAL\nDISCHARGE SUMMARY", ["MILLSTONE VALLEY HOSPITAL"]),  # capitals, header excluded
        ("she used to work with you at east garfield park urgent care. my", ["east garfield park urgent care"]),
        ("Specimen received from Hospital Universitario San Hedwig on 30 March", ["Hospital Universitario San Hedwig"]),
        ("Dr. Lindgren\nOspedale Santa Chiara\nPO Box 6474", ["Ospedale Santa Chiara"]),  # head word first
        ("KLINIKUM SCHWABING\n7102 ELMHURST DRIVE", ["KLINIKUM SCHWABING"]),
        ("sent to zimmerman's pharmacy on main", ["zimmerman's pharmacy"]),
        ("Transferred to Hospital General de Zona 8 yesterday", ["Hospital General de Zona 8"]),
        ("seen at East Brunswick Dialysis Unit today", ["East Brunswick Dialysis Unit"]),  # the unit is the name
        ("transferred to lynwood dialysis unit.", ["lynwood dialysis unit"]),
        ("resides at ST. ANSELM HOME FOR THE AGED\n", ["ST. ANSELM HOME FOR THE AGED"]),
        ("from Hospital das Clínicas de Arcoverde\n", ["Hospital das Clínicas de Arcoverde"]),
        # a head with its field after "for" is one name: the field is not left beside the surrogate
        ("NAVARRO CENTER FOR SLEEP MEDICINE 9005 Alder St.", ["NAVARRO CENTER FOR SLEEP MEDICINE"]),
        ("referred to Hollis Institute for Women's Health.", ["Hollis Institute for Women's Health"]),
    ],
)
def test_facilities_in_any_casing_and_language(text, expected):
    assert _found(FAC, text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "she was admitted to the hospital",  # no name before the head word
        "the regional medical center",  # generic words only: a service, not a facility
        "Seen in Cardiology Clinic today",  # a department
        "called the pharmacy",
        "pharmacist at the drug counter",  # "drug" is a head word only in title case or capitals
        "the dialysis unit nurse called",
        "admitted to the psychiatric unit",
        "placed in a home for the aged",
        "the center for pain management",  # no name before it
        "per Center for Disease Control guidance",
    ],
)
def test_generic_facility_words_are_not_names(text):
    assert _found(FAC, text) == []


def test_generic_check_is_what_separates_a_service_from_a_facility():
    # same frame, one word differs: a specific word makes it a named facility
    assert _found(FAC, "Seen in Cardiology Clinic today") == []
    assert _found(FAC, "Seen in Brannigan Clinic today") == ["Brannigan Clinic"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("His coworker Leopold from Desrosiers Tool & Die says", ["Desrosiers Tool & Die"]),
        ("chaplain from antelope islamic center visited", ["antelope islamic center"]),
        ("SHE GETS OFF AT SUMMITSTONEBRIDGE SOFTWARE AROUND 11", ["SUMMITSTONEBRIDGE SOFTWARE"]),
        ("Attends St. Jude Parish most Sundays", ["St. Jude Parish"]),
        ("a payment of $107.98 to nwosu & rosenthal llp was made", ["nwosu & rosenthal llp"]),  # lower case
        ("FROM KAUFMANN REALTY: hi", ["KAUFMANN REALTY"]),
    ],
)
def test_organisations_by_head_word(text, expected):
    assert _found(ORG, text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "she works at the local school",
        "went to high school",
        "goes to church on sunday",
        "she works at the law firm downtown",
        "call the realty office",
    ],
)
def test_organisation_heads_need_a_specific_name(text):
    assert _found(ORG, text) == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ("my friend Elodie Moreau called", ["Elodie Moreau"]),
        ("PATIENT = GUERRERO, ABIGAIL\tDOB", ["GUERRERO, ABIGAIL"]),
        ("[6 PM] Ivana: omw\n[12 PM] Kasimir: great", ["Ivana", "Kasimir"]),  # chat speakers
        ("Hello Summer,\nFlight lands at 6", ["Summer"]),  # greeting
        ("Thanks again.\n\nBest,\nTheodora\n", ["Theodora"]),  # sign-off
        ("Next of kin:\tNorbert +1-977-599-7201", ["Norbert"]),  # labelled field
        # strong frames take any word, everyday English or a month included
        ("[9:35 pm] Mirela > omw\n[03:54] Peregrine: ok\n", ["Mirela", "Peregrine"]),
        ("2017-02-11 06:12 - May: landing at 6", ["May"]),
        ("mark > link: http://x.org\nbo: send it\n", ["mark", "bo"]),  # a chat log: bare speakers too
        ("TO -- w@x.co.uk\n\nHi Will,\nCan you send it", ["Will"]),
        ("From - Bo E. Tremblay <tremblayb@fastmail.fm>\nSubject", ["Bo E. Tremblay"]),
        ("FROM\tOksana <o.moreau2@gmx.de>\n", ["Oksana"]),
        ("were blocked at 11:54 pm.\n-- Dmitri (Tier 2)\n", ["Dmitri"]),
        ("See you then.\n\nCheers\nOksana Moreau\nRidgeline Inc.", ["Oksana Moreau"]),
        ("Contact Ignatius at ignatius_holmqvist@gmail.com", ["Ignatius"]),  # the address names him
        # given names of the recognition-only list (all of Faker's locales), not of the surrogate list
        ("36.7\t2\tPhilippa Falkenrath 05/17/2016 8:05 PM", ["Philippa Falkenrath"]),
        ("Referred by Tadeo Brennan for follow-up", ["Tadeo Brennan"]),
    ],
)
def test_person_names_without_titles(text, expected):
    assert _found(NAMES, text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Will Power and May Day",  # everyday words
        "Grace Hospital admitted her",  # facility head word
        "HPI: cough\nPlan: continue\nAssessment: stable",  # section headers are not chat speakers
        "Subject: refill\nFrom: Pharmacy",
        "Hi all,\nHello there!",  # greeting fillers
        "plan: continue\nfollow: in 2 weeks\n",  # lower-case headers with no timestamped or '>' speaker
        "Contact Ignatius at the front desk",  # no address with the name in it
        "2. Bence Jones protein positive",  # an eponym: a clinical noun follows the run
        "Tadeo Brennan syndrome was ruled out",
    ],
)
def test_person_name_negatives(text):
    assert _found(NAMES, text) == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Plan: SW to follow. Gintaras (MSW), pager 4471", [("Gintaras", "DOCTOR")]),
        ("spoke with tamsin falkenrath, md; ok to dispense", [("tamsin falkenrath", "DOCTOR")]),
        ("THANKS FOR THE MESSAGE. DR WOODHOUSE REVIEWED YOUR BNP", [("WOODHOUSE", "DOCTOR")]),
        ("lcsw c. thibodeau | ext. 5", [("c. thibodeau", "DOCTOR")]),
        ("hi wendell cormier,\nthanks", [("wendell cormier", "PATIENT")]),
    ],
)
def test_clinicians_by_credential_or_role_and_lower_case_names(text, expected):
    assert [(text[r.start : r.end], r.entity_type) for r in NAMES.analyze(text)] == expected


@pytest.mark.parametrize(
    "text",
    [
        "Nursing notified. RN to follow. Dr. on call aware.",
        "Family at bedside, MD aware",
        "will smith and grace lee",
    ],
)
def test_role_words_without_a_name(text):
    assert NAMES.analyze(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "the year in Logansport, Indiana and fly",
        "73 School St.\nGlendale,  Arizona  75865",
        "He moved here from Coral Gables in 2012",
    ],
)
def test_town_state_pairs_and_places_are_not_people(text):
    assert NAMES.analyze(text) == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ("was in her usual state of health until 9/18", []),  # "state of" is no organisation
        ("outside Iron County. Works nights at Northway Software", ["Northway Software"]),  # a sentence ended
        ("Pastor Tariq Fontaine of St. Jude Parish may help", ["St. Jude Parish"]),  # a person before "of"
    ],
)
def test_organisation_heads_stop_at_sentences_and_people(text, expected):
    assert _found(ORG, text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Freeman Foods. I'm Seraphina, aged 82, originally", ["Seraphina"]),  # self-introduction
        ("blocked at 5:21 am.\nHandled by Chloe (Tier 2)\n", ["Chloe"]),  # support agent
        ("[2024-01-14 15:15] SERAPHINA: SHE TURNS 35", ["SERAPHINA"]),  # a speaker in capitals
    ],
)
def test_message_frames_for_single_names(text, expected):
    assert _found(NAMES, text) == expected


@pytest.mark.parametrize("text", ["went to Boston, then home", "I'm sorry, I am tired. It's fine."])
def test_message_frames_do_not_take_places_or_words(text):
    assert _found(NAMES, text) == []


def test_bare_speakers_need_a_chat_log():
    # the same two lines; a '>' speaker line is the one property that makes the note a chat log
    assert _found(NAMES, "bo: send it\nmay: ok\n") == []
    assert _found(NAMES, "mark > hi\nbo: send it\nmay: ok\n") == ["mark", "bo", "may"]


def test_the_recognition_only_given_names_never_reach_the_surrogate_list():
    from tide_core.recognizers.given_names import recognition_given_names
    from tide_core.steps.propagate import name_lexicon

    surrogate_given = name_lexicon()[0]
    more = recognition_given_names() - surrogate_given
    assert {"philippa", "tadeo", "lupita"} <= more  # recognized, and never drawn as a surrogate
    assert "bence" not in recognition_given_names()  # an eponym root is not a given name here
