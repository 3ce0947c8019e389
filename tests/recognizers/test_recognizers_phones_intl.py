"""International phone numbers without a country code (tide.phones_intl)."""

from __future__ import annotations

import pytest

from tide_core.config import rules_specs
from tide_core.engine.recognition import finish_note
from tide_core.recognizers.registry import create
from tide_core.spans import Note

PHONES = create({"name": "tide.phones_intl"})


def _found(text: str, rec=PHONES) -> list[str]:
    return [text[r.start : r.end] for r in rec.analyze(text)]


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        # after a phone cue: any grouping, 7 to 13 digits
        ("Tel: 78 651 450", ["78 651 450"]),
        ("Daughter's mobile is 78651450.", ["78651450"]),
        ("Please call her on 0688 872 49 99 after 5.", ["0688 872 49 99"]),
        ("T: 22 123 45 67 | F: 22 123 45 68", ["22 123 45 67", "22 123 45 68"]),
        ("Contact abroad: Chidi 0091 98574 12478 (brother)", ["0091 98574 12478"]),
        ("phone (home): +36 1 234 5678", ["+36 1 234 5678"]),
        ("reachable via WhatsApp 612 345 678", ["612 345 678"]),
        # a phone word right after it
        ("Son 78 651 450 (mobile), wife at home.", ["78 651 450"]),
        # a national trunk prefix, no cue
        ("Son: 0688 872 49 99.", ["0688 872 49 99"]),
        ("GP surgery 020 7123 4567, fax to follow", ["020 7123 4567"]),
        ("Dr Kovacs 06-12345678", ["06-12345678"]),
        ("Pharmacie 01.45.67.89.10 ouverte", ["01.45.67.89.10"]),
        ("Surgery (0)20 7123 4567 Mon-Fri", ["(0)20 7123 4567"]),
        ("Hija, móvil 612 345 678.", ["612 345 678"]),
        # weak cues: "on", "at", "via" right before a grouped number, or a name and "("
        ("or Hamish P. Sowerby on 30 717 523, or", ["30 717 523"]),
        ("via J. Nowak on 22 849 82 20", ["22 849 82 20"]),
        ("K.-D. Dietrich (0151 45399502)", ["0151 45399502"]),
        # slashes, an area code with a hyphen, a one-digit area code, runs with "+" or a trunk "0"
        ("Tel. 030/48031882", ["030/48031882"]),
        ("Vác, tel. 06-30/605-4753", ["06-30/605-4753"]),
        ("Her son Gábor (mobile (06-20) 746 4701)", ["(06-20) 746 4701"]),
        ("Lukács, Ildikó (06 1 158 0208)", ["06 1 158 0208"]),
        ("neighbour, +447935869788", ["+447935869788"]),
        ("Fitzmaurice (0810509551)", ["0810509551"]),
        ("Morag on (01632) 965684", ["(01632) 965684"]),
        # an area code in parentheses
        ("Niece (99) 645-791 will collect her.", ["(99) 645-791"]),
        ("Clinic (061) 234 5678.", ["(061) 234 5678"]),
    ],
)
def test_international_shapes(text, spans):
    assert _found(text) == spans


@pytest.mark.parametrize(
    "text",
    [
        # doses, counts and measurements, even after a cue word
        "Called 3 times overnight; call back in 2-3 days.",
        "Heparin 5 000 units; dose 2 500 000 units of penicillin.",
        "Contact precautions. Text 12 34 56 mg?",
        "(10) 150-200 mg daily; (12) 100-150 bpm.",
        "Group (10) 150-200 daily, (20) 300-500 weekly",
        # lab values, scores, vitals, times, rooms, ICD codes, pages and sections
        "Na 138 K 4.2 Cr 1.1 Hb 10.2 WBC 11 200",
        "GCS 15, pain 7/10, MMSE 24 30",
        "BP 120/80 HR 88 RR 16 SpO2 97",
        "Seen at 14:30 and 09 45, call 911 if worse.",
        "Room 412 bed 3, ward 0 12",
        "ICD-10 E11.65, I10, O09.893",
        "Lesion 3.2 x 4.1 x 2.0 cm; 0.5 mg",
        "See page 12 of 15, section 4.2.1, figure 0 1",
        # dates, SSNs, ZIP codes, drug codes and account numbers
        "Called on 12 03 2019 and 2020-10-24 10:15.",
        "Phone note: SSN 649-31-5819\nPhone : ZIP 29114-1518",
        "NDC 0781-1506-10 and 00781-150-61",
        "Dispensed 0781-1506-10 today, 0378-0018-01 tomorrow.",
        # a phone word on the next line belongs to the next line
        "Total 12 345 678\nHome visit booked.",
        "Account 0123 456 789; IBAN ES66 6981 0338 8062 71.",
        "Policy number 0612 345 678 on file.",
        # round-number lists, years in parentheses, IP addresses, dates with a time
        "Titrated on 100 200 300 then stopped; on 2 4 6 8 10 12.",
        "See Smith (2019) 123 456 for the ruling.",
        "Seen at 192.168.2.158 and via 10.211.154.140.",
        "Phone note 06/07/12 0515 and 09/11-09/18/20.",
    ],
)
def test_hard_negatives_are_left_alone(text):
    assert _found(text) == []


def test_long_ungrouped_runs_after_a_cue_are_not_phones():
    # eleven digits or more in one run: an account or record number, left to the ID recognizers
    assert _found("Contact ref 00123456789012") == []
    assert _found("Contact 0123456789") == ["0123456789"]


def test_scores_are_options():
    rec = create({"name": "tide.phones_intl", "score": 0.9, "shape_score": 0.55})
    scores = [r.score for r in rec.analyze("Tel: 78 651 450; son 0688 872 49 99")]
    assert scores == [0.9, 0.55]  # the second has no cue of its own: a trunk-prefix shape
    assert [r.score for r in rec.analyze("son 0688 872 49 99")] == [0.55]
    assert rec.fingerprint() != PHONES.fingerprint()


def test_the_rules_preset_labels_them_phone():
    text = "Next of kin: Ilona, tel 78 651 450; her GP (99) 645-791; office 0688 872 49 99."
    recs = [create(s) for s in rules_specs() if s["name"] != "tide.known_phi"]
    for r in recs:
        r.load()
    note = Note("n1", "p1", text)
    spans = finish_note("n1", [s for r in recs for s in r.recognize(note)], None, None, text)[0]
    phones = [text[s.start : s.end] for s in spans if s.label == "PHONE"]
    assert phones == ["78 651 450", "(99) 645-791", "0688 872 49 99"]
