"""Known-PHI: each patient's registered values, matched only in that patient's notes."""

from __future__ import annotations

import json
import logging

import pytest

from tide_core.recognizers.known_phi import KnownPHIRecognizer, dob_variants, name_variants, phone_variants
from tide_core.spans import Note

ROWS = [
    {
        "patient_id": "p1",
        "first_name": "Johanna",
        "middle_name": "Q",
        "last_name": "Vandermeer",
        "dob": "1950-04-05",
        "mrn": "12-345-678",
        "phone": "(555) 123-4567",
        "email": "jv@example.org",
        "street": "12 Oak Street",
        "city": "Springfield",
        "state": "IL",
        "zip": "62704",
    },
    {
        "patient_id": "p2",
        "first_name": "Ann",
        "middle_name": None,
        "last_name": "Lee",
        "dob": "1988-12-01",
        "mrn": "999888",
        "phone": "555.987.6543",
        "email": None,
        "street": None,
        "city": None,
        "state": None,
        "zip": None,
    },
]
TEXT = (
    "Ms. Vandermeer (MRN 12345678), Johanna Q. Vandermeer, born April 5, 1950 (04/05/1950); call 555-123-4567 "
    "or +1 (555) 123-4567; lives 12 Oak St., Springfield 62704; jv@example.org. Ann Lee, MRN 999888, 12/01/1988."
)


@pytest.fixture(scope="module")
def rec():
    return KnownPHIRecognizer.from_rows(ROWS)


def values(rec, note):
    return [(s.label, note.text[s.start : s.end]) for s in rec.recognize(note)]


def test_variants_found_in_own_notes_only(rec):
    mine = values(rec, Note("n1", "p1", TEXT))
    for item in [
        ("PATIENT", "Vandermeer"),
        ("ID", "12345678"),
        ("PATIENT", "Johanna Q. Vandermeer"),
        ("DATE", "April 5, 1950"),
        ("DATE", "04/05/1950"),
        ("PHONE", "555-123-4567"),
        ("PHONE", "+1 (555) 123-4567"),
        ("LOCATION", "12 Oak St."),
        ("LOCATION", "Springfield"),
        ("LOCATION", "62704"),
        ("EMAIL", "jv@example.org"),
    ]:
        assert item in mine, item
    assert not any(v in ("Ann Lee", "999888", "12/01/1988") for _, v in mine)
    theirs = values(rec, Note("n2", "p2", TEXT))
    assert ("PATIENT", "Ann Lee") in theirs and ("ID", "999888") in theirs and ("DATE", "12/01/1988") in theirs
    assert not any("Vandermeer" in v or v == "12345678" for _, v in theirs)
    assert values(rec, Note("n3", "p9", TEXT)) == []


def test_word_boundaries_case_and_short_names(rec):
    note = Note("n1", "p1", "Vandermeers and vandermeer-like; VANDERMEER; ann lee; Leeward")
    assert values(rec, note) == [("PATIENT", "VANDERMEER")]
    # "Lee" alone (3 letters) is matched for p2, "Ann" too; lowercase names never are
    note2 = Note("n2", "p2", "Lee called. ann called. Annual visit.")
    assert values(rec, note2) == [("PATIENT", "Lee")]


def test_analyze_without_patient_context():
    assert KnownPHIRecognizer.from_rows(ROWS).analyze(TEXT) == []
    anyone = KnownPHIRecognizer.from_rows(ROWS, match_any_patient=True)
    labels = {TEXT[r.start : r.end] for r in anyone.analyze(TEXT)}
    assert "Ann Lee" in labels and "Vandermeer" in labels


def test_config_holds_no_values_and_tracks_table(caplog):
    caplog.set_level(logging.DEBUG)
    rec = KnownPHIRecognizer.from_rows(ROWS)
    blob = json.dumps(rec.config())
    for v in ("Vandermeer", "12345678", "12-345-678", "555", "1950", "Oak", "jv@"):
        assert v not in blob
    assert rec.table_info()["n_rows"] == 2 and rec.n_patients == 2
    changed = [dict(ROWS[0], phone="(555) 000-1111"), ROWS[1]]
    other = KnownPHIRecognizer.from_rows(changed)
    assert other.table_info()["table_digest"] != rec.table_info()["table_digest"]
    # the recognition fingerprint (span-cache key) does not depend on the patient rows
    assert other.fingerprint() == rec.fingerprint()
    for v in ("Vandermeer", "12345678", "555"):
        assert v not in json.dumps(rec.table_info())
    assert KnownPHIRecognizer.from_rows(list(ROWS)).fingerprint() == rec.fingerprint()
    rec.recognize(Note("n1", "p1", TEXT))
    assert not any("Vandermeer" in r.getMessage() for r in caplog.records)


def test_variant_builders():
    assert {"John Smith", "Smith, John", "J. Smith", "John A. Smith", "Smith"} <= name_variants(
        "John", "Albert", "Smith"
    )
    assert "Li" not in name_variants("Li", "", "Wu") and "Mark" not in name_variants("Mark", "", "Stone")
    assert {"(555) 123-4567", "555-123-4567", "5551234567", "+1 555-123-4567"} <= phone_variants("555 123 4567")
    assert {"04/05/1950", "4/5/1950", "1950-04-05", "April 5, 1950", "Apr 5, 1950", "5 April 1950"} <= dob_variants(
        "1950-04-05"
    )
