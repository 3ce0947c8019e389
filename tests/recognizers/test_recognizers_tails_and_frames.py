"""Facility and firm tails (``tide.facilities@5``, ``tide.org_heads@4``, ``tide.org@4``) and names in
frames of messages and letters (``tide.names@5``): true positives and hard negatives."""

from __future__ import annotations

import pytest

from tide_core.recognizers.registry import create

FAC = create({"name": "tide.facilities"})
ORG_HEADS = create({"name": "tide.org_heads"})
ORG = create({"name": "tide.org"})
NAMES = create({"name": "tide.names"})


def _found(rec, text: str) -> list[str]:
    return [text[r.start : r.end] for r in rec.analyze(text)]


def _longest(recs, text: str) -> list[str]:
    """The spans of several recognizers, those inside a longer one dropped."""
    spans = sorted({(r.start, r.end) for rec in recs for r in rec.analyze(text)}, key=lambda x: (x[0], -x[1]))
    out: list[tuple[int, int]] = []
    for s, e in spans:
        if out and s < out[-1][1]:
            continue
        out.append((s, e))
    return [text[s:e] for s, e in out]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("seen at Mercy Med Ctr yesterday", ["Mercy Med Ctr"]),  # abbreviated heads
        ("records from St. Luke's Hosp attached", ["St. Luke's Hosp"]),
        (
            "HILLCREST MEDICAL CENTER - NORTH CAMPUS",
            ["HILLCREST MEDICAL CENTER - NORTH CAMPUS"],
        ),  # a campus after a dash
        ("Riverside Hospital \u2013 North Campus", ["Riverside Hospital \u2013 North Campus"]),
        ("at Riverside Hospital (Main Campus) today", ["Riverside Hospital (Main Campus)"]),
        ("billed by Mercy Hospital, Inc. in May", ["Mercy Hospital, Inc."]),  # a legal form after a comma
        ("seen at Mercy Hospital of Mason on Apr 25", ["Mercy Hospital of Mason"]),  # a town after "of"
        ("MERCY HOSPITAL OF BUTTE ON MAY 30", ["MERCY HOSPITAL OF BUTTE"]),
        ("imaging from Szpital Miejski nr 1.", ["Szpital Miejski nr 1"]),  # a number after the name
        ("Городская больница № 1", ["Городская больница № 1"]),  # Cyrillic, head in lower case
        ("Γενικό Νοσοκομείο Αθηνών", ["Γενικό Νοσοκομείο Αθηνών"]),  # Greek, head first
        ("died at St.-Josef-Krankenhaus on 4th May", ["St.-Josef-Krankenhaus"]),  # a head inside a compound
        ("staff of Kreiskrankenhaus Bernau bei Berlin and", ["Kreiskrankenhaus Bernau bei Berlin"]),
        ("treated at Dublin Primary Care Centre for a fall", ["Dublin Primary Care Centre"]),
        ("at Buda Városi Rendelőintézet has", ["Buda Városi Rendelőintézet"]),
        ("at Aldan City Hospital No. 5 for", ["Aldan City Hospital No. 5"]),
    ],
)
def test_facility_tails_are_one_span(text, expected):
    assert _found(FAC, text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Brief Hosp Course: uneventful",  # a section header, not a facility
        "BRIEF HOSP COURSE:",
        "prior hosp stay of 3 days; hosp day 2",
        "admitted to the hospital - north campus",  # generic words only
        "Mercy Hospital of Choice",  # "of" and no town: the tail stays out
    ],
)
def test_facility_tail_hard_negatives(text):
    found = _found(FAC, text)
    assert all("of Choice" not in f and "Course" not in f and "COURSE" not in f for f in found)
    if text != "Mercy Hospital of Choice":
        assert found == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ("works at Acme Widgets, Inc. since 2019", ["Acme Widgets, Inc."]),  # a legal form after a comma
        ("employed by Siemens GmbH in Erlangen", ["Siemens GmbH"]),
        ("szerződés: Richter Gedeon Kft.", ["Richter Gedeon Kft."]),
        ("billed by Telefónica S.A. last month", ["Telefónica S.A."]),
        ("contract with Novartis AG", ["Novartis AG"]),  # an ambiguous form after a rare word
        ("letter from Smith, Jones and Patel regarding", ["Smith, Jones and Patel"]),  # partners
        ("Okafor, Lindqvist & Ruiz LLP", ["Okafor, Lindqvist & Ruiz LLP"]),
        ("First Baptist Church of Duluth.", ["First Baptist Church of Duluth"]),
        ("I studied at Kestrel Montessori and", ["Kestrel Montessori"]),
        ("spent 21 years at Port Washington School District.", ["Port Washington School District"]),
        ("Pastor Priya of Kingdom Hall of Temecula may help", ["Kingdom Hall of Temecula"]),
        ("O'Donoghue Holdings, DAC", ["O'Donoghue Holdings, DAC"]),
        ("the application by van den Bosch & Bakker B.V. for", ["van den Bosch & Bakker B.V."]),  # particles
        ("with O'Donoghue, Mac Giolla Phádraig and McGettigan.", ["O'Donoghue, Mac Giolla Phádraig and McGettigan"]),
        ("The employer, Osmark, with its office", ["Osmark"]),  # a one-word firm after a firm noun
        ("the application by Penhaligon Solicitors for", ["Penhaligon Solicitors"]),
        ("with Georgiou, Νικολαΐδης and Antoniou.", ["Georgiou, Νικολαΐδης and Antoniou"]),  # partners in two scripts
        ("to the Newport Residents' Association, account", ["Newport Residents' Association"]),
    ],
)
def test_firms_and_organisations_whole(text, expected):
    assert _longest([ORG, ORG_HEADS], text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Severe AS noted; SA node dysfunction; no LOC, ASA class IV",  # clinical abbreviations, not legal forms
        "Blood type AB positive; PC 2",
        "Wolff, Parkinson and White syndrome",  # an eponym, not a firm
        "visited Paris, London and Rome",  # places
        "every May, June and July",  # months
        "The company, Medicare, was billed",  # an everyday or common word after a firm noun
    ],
)
def test_firm_hard_negatives(text):
    assert _found(ORG, text) == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Customer Jasper Rios reports that", ["Jasper Rios"]),  # a relation word before the name
        ("Yesterday Philippa Falkenrath called", ["Philippa Falkenrath"]),  # a capitalised word before it
        ("Her son, Mark Ellis, visited.", ["Mark Ellis"]),  # relatives
        ("His manager, Ramona, can be reached", ["Ramona"]),
        ("also Tamsin says call me", ["Tamsin"]),  # verb frames
        ("hey its Nanami, new phone", ["Nanami"]),
        ("Magnus was born on Thu 9/14", ["Magnus"]),
        ("Please pass this on to Vikram Ciszewski at Hightower", ["Vikram Ciszewski"]),
        ("Copies to: Hargreaves Quillfeather", ["Hargreaves Quillfeather"]),  # copies sent to someone
        ("Family contact=Eulalia Yilmaz +1 514-170-5587", ["Eulalia Yilmaz"]),  # emergency and family contacts
        ("Patient = JARAMILLO, BABAJIDE\nMRN", ["JARAMILLO, BABAJIDE"]),
        ("Ximena Rivers called back", ["Ximena Rivers"]),  # a rare given name before an everyday surname
        ('Tadeo "Teddy" Brennan is here', ['Tadeo "Teddy" Brennan']),  # a nickname in quotes
        ("Philippa Falkenrath III and", ["Philippa Falkenrath III"]),  # a generational suffix
        ("Philippa J. K. Falkenrath came", ["Philippa J. K. Falkenrath"]),  # initials inside the name
        ("-- F. Hoang\n", ["F. Hoang"]),  # an initial and a surname
        ("neighbour Benedikt McGillicuddy found him", ["Benedikt McGillicuddy"]),  # an inner capital
        ("Jan Novák, Łukasz Żółć", ["Jan Novák", "Łukasz Żółć"]),  # Latin letters with diacritics
        ("emergency contact: Γιώργος Παπαδόπουλος", ["Γιώργος Παπαδόπουλος"]),  # Greek after a cue
        ("сын Иван Петров", ["Иван Петров"]),  # Cyrillic after a cue
        ("Κατερίνα emigrated to Kushva", ["Κατερίνα"]),  # Greek in a Latin-script note
        ("we will write to Torben von der Heydt at", ["Torben von der Heydt"]),  # surname particles
        ("Emergency contact: de Vries, Sanne (neighbour)", ["de Vries, Sanne"]),
        ("call Sergeant R. Ferraro on 344", ["R. Ferraro"]),
        ("J.-B. Giraud (Secretary)", ["J.-B. Giraud"]),
        ("cc: Fekete Zoltán (Szűcs Zrt.)", ["Fekete Zoltán"]),  # surname first, as Hungarian writes it
        ("CASE HISTORY \u2014 HORVÁTH Enikő", ["HORVÁTH Enikő"]),
    ],
)
def test_names_in_new_frames(text, expected):
    assert _found(NAMES, text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Braden Scale 18; B. Esophagus noted",  # a clinical noun after a rare word or an initial
        "E. Coli and S. Aureus grew; C. Difficile negative",  # species
        "pick up Keppra from pharmacy",  # a drug after a pick-up verb
        "Patient takes Eliquis, says it helps",
        "CUSTOMER ASKED US TO CALL",  # a verb in capitals after a relation word
        "Parkinson disease, Bence Jones protein, Cushing syndrome",  # eponyms
        "Cardiology Clinic follow-up; Department of Medicine",  # departments
        "Will said the plan is fine.",  # an everyday word that is also a name, before a verb
        "Glasgow Coma Scale 15; Crohn Disease",  # a place or an eponym before a clinical noun
    ],
)
def test_name_hard_negatives(text):
    assert _found(NAMES, text) == []
