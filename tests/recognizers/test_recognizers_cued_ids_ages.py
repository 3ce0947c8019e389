"""Identifiers after document names and file cues (tide.cued_ids), slash-separated numbers
(tide.ids), ages in apposition to a name (tide.ages), and the release of notes that hold them."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tide_core.anonymize.keys import FileKeyProvider
from tide_core.cli.main import main
from tide_core.config import rules_specs
from tide_core.io.open import open_warehouse
from tide_core.recognizers.registry import create

CUED = create({"name": "tide.cued_ids"})
IDS = create({"name": "tide.ids"})
AGES = create({"name": "tide.ages"})


def _found(rec, text: str) -> list[str]:
    return [text[r.start : r.end] for r in rec.analyze(text)]


# ----------------------------------------------------------------------------- tide.cued_ids
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Her National Insurance number is QQ 12 34 56 C and she lives alone.", "QQ 12 34 56 C"),
        ("He gave his Steuer-ID 12 345 678 901 on the form.", "12 345 678 901"),
        ("PESEL: 85010112345, wydany w 2010.", "85010112345"),
        ("Ο ΑΔΤ ΑΚ 482913 εκδόθηκε το 2012.", "ΑΚ 482913"),
        ("предъявил паспорт 45 12 678901 в отделении", "45 12 678901"),
        ("Her DNI 12345678-Z was checked.", "12345678-Z"),
        ("codice fiscale RSSMRA85T10A562S, residente a Roma", "RSSMRA85T10A562S"),
        ("the applicant gave his tax number (482 771 3095) and", "482 771 3095"),
        ("TAJ szám 123 456 789, lakcím", "123 456 789"),
    ],
)
def test_values_after_the_names_of_identity_documents(text, value):
    assert _found(CUED, text) == [value]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Landgericht Bonn, Az. 12 O 345/07, Urteil", "12 O 345/07"),
        ("w sprawie sygn. akt II K 123/07 sąd orzekł", "II K 123/07"),
        ("Az ügyszám: 3.P.45.123/2015/3 alatt", "3.P.45.123/2015/3"),
        ("Cour d'appel, RG n° 07/12345, arrêt", "07/12345"),
        ("The firm was fined (case no. 27/159587).", "27/159587"),
        ("Call the station quoting incident number 12/345678.", "12/345678"),
        ("Claim No. A12BC345 was issued in the County Court.", "A12BC345"),
        ("High Court Record No. 2015/1234 P, judgment", "2015/1234 P"),
        ("zaaknummer C/05/123456, vonnis", "C/05/123456"),
        ("Our ref: AB/N123/07\n\nDear Sir", "AB/N123/07"),
    ],
)
def test_values_after_file_and_case_words_in_several_languages(text, value):
    assert _found(CUED, text) == [value]


def test_number_signs_alone_need_four_digits_and_no_statute_word_before():
    assert _found(CUED, "By a decision of 3 May 2011 (no. 30326/03), the court dismissed it.") == ["30326/03"]
    assert _found(CUED, "Gemäß Bescheid Nr. 4521/2019 wurde") == ["4521/2019"]
    # statute, protocol, room and page numbers are references, not identifiers
    for text in (
        "under Law no. 123/2005 on civil procedure",
        "Article 1 of Protocol No. 1 to the Convention",
        "She was moved to Room no. 4512 on the second floor.",
        "see page no. 10452 of the record",
        "there were no 2000 spectators",
    ):
        assert _found(CUED, text) == [], text


def test_number_plates_take_their_letters_after_a_plate_word():
    assert _found(CUED, "the vehicle, registration AB12 CDE, had been travelling fast") == ["AB12 CDE"]
    assert _found(CUED, "Kennzeichen B-MK 123 wurde") == ["B-MK 123"]


def test_hard_negatives_after_cues_stay_unmarked():
    for text in (
        "the claim of €12,000 was rejected",  # money
        "the claim 12000 euros was paid",  # money with its unit after
        "file 12/03/2015 was closed",  # a date
        "in case 2015 was a bad year",  # a year
        "the policy 2019 changes",
        "application 500 mg twice daily",  # a dose
        "ref 120 kg",
        "Case number pending, reference to follow",
        "passport photos were taken",
    ):
        assert _found(CUED, text) == [], text


def test_a_value_stops_at_prose():
    # a lone digit after a space, a title-case word or a lower-case word ends the value
    assert _found(CUED, "case no. 27/159587 2 days later") == ["27/159587"]
    assert _found(CUED, "file 12345/07 The court") == ["12345/07"]
    assert _found(CUED, "incident number 12/345678 I think") == ["12/345678"]


# ----------------------------------------------------------------------------- tide.ids: slashes
def test_slash_numbers_without_a_cue():
    text = "He quoted 27/159587 and 017023/22 in his letter; the Dutch court wrote C/05/123456."
    assert _found(IDS, text) == ["27/159587", "017023/22", "C/05/123456"]


def test_slash_hard_negatives():
    for text in (
        "seen on 12/03/2015 in clinic",  # a date
        "since 03/2015 she has",  # a month and a year
        "the 2003/2004 season and the 2015/16 budget",  # spans of years
        "BP 120/80, pulse 72",
        "Augmentin 875/125 mg twice daily",  # a dose pair
        "a range of 12500/25000 units was set",  # a pair with its unit
        "under Regulation (EU) 2016/679 and Directive 2004/38/EC",  # statutes
        "Law no. 123/2005 on civil procedure",
    ):
        assert _found(IDS, text) == [], text


# ----------------------------------------------------------------------------- tide.ages
def test_ages_in_apposition_to_a_name():
    text = "Jane Doe, 47, of Leeds, was named. Νίκος Παπαδόπουλος, 92, was killed. Anna Kovács (63) told us."
    assert _found(AGES, text) == ["47", "92", "63"]


def test_numbers_after_references_months_and_lists_are_not_ages():
    for text in (
        "Article 8, 12, and 14 of the Convention",
        "by March, 12, were missing",
        "Leeds, 12, Manchester, 14",  # a list: no lower-case word after
        "a payment of £12,000, was made",
        "see Table (3) and Figure (4).",
        "the reading (12.5) was low",
        "Blood Glucose (95) was normal",  # in parentheses: only after a given name and a surname
    ):
        assert _found(AGES, text) == [], text


def test_employers_after_past_tense_work_and_insurance_cues():
    org = create({"name": "tide.org"})
    org.load()
    text = (
        "He worked as a fisherman with Vantrix for years and worked for Osmark until 2003; "
        "she took a job with Brendle and is insured with Pellucid. She worked with PT on gait."
    )
    assert _found(org, text) == ["Vantrix", "Osmark", "Brendle", "Pellucid"]


def test_new_recognizers_are_in_the_default_configuration():
    names = [s["name"] for s in rules_specs()]
    assert {"tide.cued_ids", "tide.ages"} <= set(names)
    assert names.index("tide.cued_ids") == names.index("tide.ids") + 1


# ----------------------------------------------------------------------------- release
ROWS = {
    "nino": "Her national insurance number is QQ 12 34 56 C and she lives alone.",
    "greek": "Ο ΑΔΤ ΑΚ 482913 εκδόθηκε το 2012 στην Αθήνα.",
    "cyrillic": "Он предъявил паспорт 45 12 678901 в отделении.",
    "az": "Das Gericht entschied, Az. 12 O 345/07, ohne Verhandlung.",
    "sygn": "Sprawa sygn. akt II K 123/07 została zamknięta.",
    "hu": "Az ügyszám: 3.P.45.123/2015/3 alatt folyik.",
    "slash": "He quoted 27/159587 in his letter of complaint.",
    "sign": "The court dismissed it (no. 30326/03) without costs.",
    "plate": "The vehicle, registration AB12 CDE, was found abandoned.",
}
SECRETS = {
    "nino": "QQ 12 34 56 C",
    "greek": "ΑΚ 482913",
    "cyrillic": "45 12 678901",
    "az": "12 O 345/07",
    "sygn": "II K 123/07",
    "hu": "3.P.45.123/2015/3",
    "slash": "27/159587",
    "sign": "30326/03",
    "plate": "AB12 CDE",
}


def test_notes_with_each_new_identifier_shape_are_released_with_their_digits_changed(tmp_path):
    url = f"duckdb:{tmp_path / 'wh.duckdb'}"
    wh = open_warehouse(url)
    rows = [{"note_id": k, "patient_id": "p1", "text": t, "note_date": "2021-03-04"} for k, t in ROWS.items()]
    wh.replace_table("notes", pa.Table.from_pylist(rows))
    wh.close()
    FileKeyProvider(tmp_path / "keys").create("s", "k1")
    argv = ["run", "--warehouse", url, "--study", "s", "--key", "k1", "--preset", "rules"]
    assert main([*argv, "--key-dir", str(tmp_path / "keys"), "--no-progress"]) == 0
    wh = open_warehouse(url)
    try:
        out = wh.read_table("tide_deid_notes", ["note_id", "text"], where={"study": "s", "key": "k1"}).to_pylist()
    finally:
        wh.close()
    released = {r["note_id"]: r["text"] for r in out}
    assert set(released) == set(ROWS)  # none quarantined
    for note_id, text in released.items():
        secret = SECRETS[note_id]
        assert secret not in text, (note_id, text)
        i = ROWS[note_id].index(secret)
        sur = text[i : i + len(secret)]
        assert text[:i] == ROWS[note_id][:i], (note_id, text)
        # the separators stay, the digits change
        assert [c for c in sur if not c.isalnum()] == [c for c in secret if not c.isalnum()], (note_id, sur)
        digits_in, digits_out = [c for c in secret if c.isdigit()], [c for c in sur if c.isdigit()]
        assert len(digits_out) == len(digits_in) and digits_out != digits_in, (note_id, sur)
