"""Known PHI whatever the id columns' types: patient ids are compared as normalised text.

The issue's reproduction: a patients table whose ``patient_id`` is a number while the notes'
ids are text found nothing, silently, and "Xavrielle Quondamir ... 14 Brackenfold Wynd, Oxhey"
was released verbatim.  Now the values are replaced, and a patients table that matches none of
a study's patients is a coded warning (E624) in the run report and the Dagster metadata.
"""

from __future__ import annotations

import hashlib
import hmac
import warnings
from datetime import date
from decimal import Decimal

import dagster as dg
import pytest

from tests.release_helpers import fixed_key
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.config import TideConfig
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.recognizers.known_phi import (
    KnownPHIRecognizer,
    _longest_first,
    dob_variants,
    mrn_variants,
    name_variants,
    patient_key,
    phone_variants,
    row_variants,
    street_variants,
)
from tide_core.runner import anonymize_study, recognize_study
from tide_core.spans import Note, RecognizerResult

warnings.filterwarnings("ignore", category=dg.BetaWarning)
warnings.filterwarnings("ignore", category=dg.PreviewWarning)

TEXT = "Seen Xavrielle Quondamir at home, 14 Brackenfold Wynd, Oxhey; follow up in two weeks."
SECRETS = ("Xavrielle", "Quondamir", "Brackenfold")
CONFIG = TideConfig.preset("rules")


def _warehouse(id_type: str, stored: object, note_ids: list[str]) -> DuckDBWarehouse:
    wh = DuckDBWarehouse(":memory:")
    wh.sql("CREATE TABLE notes (note_id VARCHAR, patient_id VARCHAR, study VARCHAR, text VARCHAR)")
    for i, pid in enumerate(note_ids):
        wh.sql("INSERT INTO notes VALUES (?, ?, 's', ?)", [f"n{i}", pid, TEXT])
    wh.sql(
        f"CREATE TABLE patients (patient_id {id_type}, first_name VARCHAR, last_name VARCHAR, "
        "street VARCHAR, city VARCHAR)"
    )
    wh.sql(
        "INSERT INTO patients VALUES (?, 'Xavrielle', 'Quondamir', '14 Brackenfold Wynd', 'Oxhey')",
        [stored],
    )
    wh.sql("INSERT INTO patients VALUES (7, 'Ottoline', 'Brack', '1 Other Road', 'Elsewhere')")
    return wh


@pytest.mark.parametrize(
    ("id_type", "stored", "note_id"),
    [
        ("INTEGER", 42, "0042"),  # the notes' ids are zero-padded text
        ("BIGINT", 42, " 42 "),
        ("DOUBLE", 42.0, "42"),  # a float column: 42.0 is the patient "42"
        ("DECIMAL(10, 0)", 42, "42"),
        ("VARCHAR", "42", "0042"),  # text both sides: the notes' zero padding
    ],
)
def test_numeric_patient_ids_are_matched_and_the_values_replaced(tmp_path, id_type, stored, note_id):
    wh = _warehouse(id_type, stored, [note_id])
    rec = recognize_study(wh, "s", CONFIG, progress=False)
    assert rec.n_known_phi_patients == 1 and rec.known_phi_patients_matched == 1
    assert not any("E624" in w for w in rec.warnings)
    keys = FileKeyProvider(tmp_path / "keys")
    fixed_key(keys, "s", "k")
    anonymize_study(wh, "s", "k", keys, CONFIG, progress=False)
    released = wh.sql("SELECT text FROM tide_deid_notes WHERE study = 's' AND key = 'k'").column("text").to_pylist()
    assert len(released) == 1
    for secret in SECRETS:
        assert secret not in released[0], (id_type, secret)


def test_a_patients_table_that_matches_nobody_is_a_loud_warning():
    wh = _warehouse("INTEGER", 42, ["p-42", "p-43"])  # text ids that no integer can be
    rec = recognize_study(wh, "s", CONFIG, progress=False)
    assert rec.n_known_phi_patients == 2 and rec.known_phi_patients_matched == 0
    [line] = [w for w in rec.warnings if "E624" in w]
    assert "'patients'" in line and "2 patient(s)" in line
    assert not any(s in line for s in SECRETS)
    # one patient of two found: no warning (a patient without a registry row is common)
    wh.sql("INSERT INTO notes VALUES ('n9', '42', 's', ?)", [TEXT])
    again = recognize_study(wh, "s", CONFIG, progress=False)
    assert again.known_phi_patients_matched == 1 and not any("E624" in w for w in again.warnings)


def test_the_warning_and_the_count_reach_the_dagster_metadata(tmp_path):
    from tide_etl import build_defs
    from tide_etl.resources import KeyProviderResource, ReleaseGateResource, TideConfigResource, WarehouseResource

    url = f"duckdb:{tmp_path / 'wh.duckdb'}"
    with DuckDBWarehouse(tmp_path / "wh.duckdb") as wh:
        wh.sql("CREATE TABLE notes (note_id VARCHAR, patient_id VARCHAR, study VARCHAR, text VARCHAR)")
        wh.sql("INSERT INTO notes VALUES ('n1', 'p-42', 's', ?)", [TEXT])
        wh.sql("CREATE TABLE patients (patient_id INTEGER, first_name VARCHAR, last_name VARCHAR)")
        wh.sql("INSERT INTO patients VALUES (42, 'Xavrielle', 'Quondamir')")
    config_file = tmp_path / "tide.json"
    config_file.write_text('{"preset": "rules"}')
    defs = build_defs(
        {
            "warehouse": WarehouseResource(url=url),
            "tide_config": TideConfigResource(config_file=str(config_file)),
            "key_provider": KeyProviderResource(key_dir=str(tmp_path / "keys")),
            "gate": ReleaseGateResource(),
        }
    )
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("study", ["s"])
    result = defs.resolve_job_def("recognition_job").execute_in_process(
        partition_key="s", instance=instance, raise_on_error=True
    )
    meta = {
        e.asset_key.to_user_string(): {k: v.value for k, v in e.materialization.metadata.items()}
        for e in result.get_asset_materialization_events()
    }
    assert meta["recognized_spans"]["known_phi_patients_matched"] == 0
    logged = [e.message for e in instance.all_logs(result.run_id) if e.level >= 30 and "E624" in (e.user_message or "")]
    assert logged


class TestGuard:
    """The module's own rules, in process and in milliseconds (``scripts/mutation.py`` runs these).

    Every expected value is written out here, not computed with the module's helpers.
    """

    def test_recognizer_compares_ids_as_normalised_text(self):
        rows = [{"patient_id": 42, "first_name": "Xavrielle", "last_name": "Quondamir"}]
        rec = KnownPHIRecognizer.from_rows(rows)
        rec.load()
        for pid in ("42", "0042", " 42 ", "042"):
            found = {TEXT[s.start : s.end] for s in rec.recognize(Note("n", pid, TEXT))}
            assert "Xavrielle Quondamir" in found, pid
        assert rec.recognize(Note("n", "43", TEXT)) == []
        assert rec.recognize(Note("n", "420", TEXT)) == []
        assert rec.recognize(Note("n", "  ", TEXT)) == []
        odd = KnownPHIRecognizer.from_rows([{**rows[0], "patient_id": "XXXX"}, {**rows[0], "patient_id": ""}])
        odd.load()
        assert odd.recognize(Note("n", "  ", TEXT)) == []  # an empty id is no patient's, whatever the ids stored

    def test_patient_key(self):
        assert patient_key(42) == patient_key("42") == patient_key(" 0042 ") == patient_key(42.0) == "42"
        assert patient_key(Decimal("42")) == patient_key(Decimal("42.0")) == patient_key(Decimal("042.00")) == "42"
        assert patient_key(Decimal("42.5")) == "42.5" and patient_key(Decimal("NaN")) == "NaN"
        assert patient_key(b"42") == patient_key(bytearray(b" 42")) == patient_key(memoryview(b"042")) == "42"
        assert patient_key("0") == patient_key(0) == patient_key("000") == patient_key(-0.0) == "0"
        assert patient_key("p-0042") == "p-0042"  # only all-digit ids lose their zeros
        assert patient_key(-42) == "-42" and patient_key(1e20) == "100000000000000000000"
        assert patient_key(42.5) == "42.5" and patient_key("\u0664\u0662") == "\u0664\u0662"  # non-ASCII digits kept
        for empty in (None, "", "  ", float("nan"), float("inf"), float("-inf"), b"\xff", b"", True, False):
            assert patient_key(empty) is None, empty

    def test_date_of_birth_variants(self):
        expected = {
            "04/05/1950",
            "4/5/1950",
            "04/05/50",
            "4/5/50",
            "04-05-1950",
            "4-5-1950",
            "1950-04-05",
            "1950/04/05",
            "04.05.1950",
        }
        for m in ("April", "Apr", "Apr."):
            expected |= {f"{m} 5, 1950", f"{m} 5 1950", f"{m} 5th, 1950", f"5 {m} 1950", f"{m} 05, 1950"}
        assert dob_variants(date(1950, 4, 5)) == expected
        assert dob_variants("1950-04-05") == dob_variants(" 1950-04-05T10:30 ") == expected
        assert dob_variants("04/05/1950") == {"04/05/1950"}  # not ISO: as written
        assert dob_variants("") == dob_variants(None) == set()
        assert "01/02/08" in dob_variants(date(2008, 1, 2)) and "1/2/08" in dob_variants(date(2008, 1, 2))

    @pytest.mark.parametrize(
        ("day", "suffix"),
        [(1, "st"), (2, "nd"), (3, "rd"), (4, "th"), (10, "th"), (11, "th"), (12, "th"), (13, "th")]
        + [(14, "th"), (20, "th"), (21, "st"), (22, "nd"), (23, "rd"), (24, "th"), (30, "th"), (31, "st")],
    )
    def test_ordinal_suffixes(self, day, suffix):
        ordinals = {v for v in dob_variants(date(1950, 5, day)) if v.endswith(", 1950") and v[-8].isalpha()}
        assert ordinals == {f"May {day}{suffix}, 1950", f"May. {day}{suffix}, 1950"}

    def test_mrn_variants(self):
        assert mrn_variants("12-345-678") == {"12-345-678", "12345678", "12 345 678"}
        assert mrn_variants(" 12.34/5 ") == {"12.34/5", "12345", "12-34-5", "12 34 5"}
        assert mrn_variants("12-3456") == {"12-3456", "123456", "12 3456"}
        assert mrn_variants("1234") == {"1234"} and mrn_variants("AB12345") == {"AB12345"}
        assert mrn_variants("12 4") == {"12 4", "12-4"}  # the compact form is too short
        assert mrn_variants("123") == mrn_variants(None) == set()

    def test_name_variants(self):
        assert name_variants("Johanna", "Quinn", "Vandermeer") == {
            "Johanna Vandermeer",
            "Vandermeer, Johanna",
            "Vandermeer Johanna",
            "J. Vandermeer",
            "J Vandermeer",
            "Vandermeer, J.",
            "Johanna Quinn Vandermeer",
            "Johanna Q. Vandermeer",
            "Johanna Q Vandermeer",
            "Vandermeer, Johanna Q.",
            "Vandermeer, Johanna Quinn",
            "J. Q. Vandermeer",
            "Johanna",
            "Vandermeer",
        }
        assert name_variants("Ann", None, "Lee") == {
            "Ann Lee",
            "Lee, Ann",
            "Lee Ann",
            "A. Lee",
            "A Lee",
            "Lee, A.",
            "Ann",
            "Lee",
        }
        assert name_variants("Will", "", "Brown") == {
            "Will Brown",
            "Brown, Will",
            "Brown Will",
            "W. Brown",
            "W Brown",
            "Brown, W.",
        }
        assert name_variants("Johanna", None, None) == {"Johanna"} and name_variants(None, None, "Lee") == {"Lee"}
        assert name_variants("Al", None, None) == set()

    def test_phone_variants(self):
        base = {
            "(555) 123-4567",
            "(555)123-4567",
            "555-123-4567",
            "555.123.4567",
            "555 123 4567",
            "5551234567",
            "555/123-4567",
            "555 123-4567",
        }
        expected = (
            base | {"+1 " + v for v in base} | {"1-555-123-4567", "+1-555-123-4567", "+15551234567", "15551234567"}
        )
        assert phone_variants("555-123-4567") == phone_variants("+1 (555) 123-4567") == expected
        assert "(155) 512-3456" in phone_variants("155-512-3456")  # ten digits that start with 1
        assert phone_variants("25551234567") == {"25551234567"}  # eleven digits, not a country code 1
        assert phone_variants(" 12-3456 ") == {"12-3456"} and phone_variants("123456") == set()
        assert phone_variants("123") == phone_variants("") == set()

    def test_street_variants(self):
        assert street_variants("12 Oak Street") == {"12 Oak Street", "12 Oak St", "12 Oak St.", "12 Oak Street."}
        assert street_variants("12 Oak Street.") == street_variants("12 Oak Street")
        assert street_variants("14  North Main St.") == {
            "14 North Main St",
            "14 N Main St",
            "14 N Main St.",
            "14 North Main Street",
            "14 North Main Street.",
        }
        assert street_variants("5 elm avenue") == {"5 elm avenue", "5 elm ave", "5 elm ave.", "5 elm avenue."}
        assert street_variants("12 Oak St., Apt 4") == {
            "12 Oak St., Apt 4",
            "12 Oak St., Apt 4.",
            "12 Oak Street, Apartment 4",
            "12 Oak Street, Apartment 4.",
        }
        assert street_variants("12 Rd") == {"12 Rd", "12 Rd.", "12 Road", "12 Road."}
        assert street_variants("7 Route X") == {"7 Route X", "7 Route X."}
        assert street_variants("12 Oak StreetX") == {"12 Oak StreetX", "12 Oak StreetX."}
        assert street_variants("1 Rd") == street_variants(None) == set()

    def test_row_variants(self):
        assert row_variants({"patient_id": "p"}) == []
        assert row_variants({"patient_id": "p", "city": "Ely"}) == [("Ely", "LOCATION")]
        assert row_variants({"patient_id": "p", "city": "Hill"}) == row_variants({"city": "Ab"}) == []
        assert row_variants({"email": "a@b.org", "zip": "62704-1234"}) == [
            ("62704-1234", "LOCATION"),
            ("a@b.org", "EMAIL"),
        ]
        assert row_variants({"email": "ab.org", "zip": "6270"}) == []

    def test_overlaps_keep_the_longest_and_adjacent_spans_both(self):
        def r(start, end, label="ID"):
            return RecognizerResult(label, start, end, 0.9)

        kept = _longest_first([r(6, 9), r(0, 6, "PATIENT"), r(3, 5), r(9, 11, "DATE")])
        assert [(k.start, k.end, k.entity_type) for k in kept] == [(0, 6, "PATIENT"), (6, 9, "ID"), (9, 11, "DATE")]
        kept = _longest_first([r(0, 3), r(3, 9, "PATIENT")])
        assert [(k.start, k.end) for k in kept] == [(0, 3), (3, 9)]

    def test_rows_digest_and_config(self):
        rows = [
            {"patient_id": None, "first_name": "Zed", "last_name": "Nobody"},
            {"patient_id": "p2", "first_name": "Ann", "last_name": "Lee", "phone": "555.987.6543"},
        ]
        rec = KnownPHIRecognizer.from_rows(rows, score=0.9)
        rec.load()
        digest = hmac.new(b"tide.known_phi.fingerprint.v1", digestmod=hashlib.sha256)
        cols = ("patient_id", "first_name", "middle_name", "last_name", "dob", "mrn", "phone", "email")
        cols += ("street", "city", "state", "zip")
        digest.update(("\x1e".join(str(rows[1].get(c) or "") for c in cols) + "\x1d").encode())
        assert rec.table_info() == {"n_rows": 1, "table_digest": digest.hexdigest()[:32]} and rec.n_patients == 1
        assert rec.config() == {"score": 0.9, "match_any_patient": False}
        text = "Ann Lee, call 555-987-6543; Zed Nobody."
        spans = rec.recognize(Note("n7", "p2", text))
        assert [(s.note_id, text[s.start : s.end], s.label, s.recognizer) for s in spans] == [
            ("n7", "Ann Lee", "PATIENT", "tide.known_phi@1"),
            ("n7", "555-987-6543", "PHONE", "tide.known_phi@1"),
        ]

    def test_entities_labels_and_any_patient(self):
        rows = [
            {"patient_id": "p1", "first_name": "Jordan", "last_name": "Quill", "city": "Jordan", "mrn": "Jordan"},
            {"patient_id": "p2", "phone": "555-987-6543", "email": "ann@example.org"},
        ]
        text = "Call 555-987-6543 or ann@example.org; Jordan Quill of Jordan."
        anyone = KnownPHIRecognizer.from_rows(rows, match_any_patient=True)
        anyone.load()
        assert [(text[r.start : r.end], r.entity_type) for r in anyone.analyze(text, ["EMAIL"])] == [
            ("ann@example.org", "EMAIL")
        ]
        found = anyone.analyze(text)
        assert [(text[r.start : r.end], r.entity_type) for r in found] == [
            ("555-987-6543", "PHONE"),
            ("ann@example.org", "EMAIL"),
            ("Jordan Quill", "PATIENT"),
            ("Jordan", "ID"),  # a surface with three labels takes the first in order
        ]
        assert all(r.recognition_metadata == {"recognizer_name": "tide.known_phi@1"} for r in found)
        mine = anyone.analyze_for_patient(text, "p1", ["PATIENT", "ID"])
        assert [(text[r.start : r.end], r.entity_type) for r in mine] == [("Jordan Quill", "PATIENT"), ("Jordan", "ID")]
        assert KnownPHIRecognizer.from_rows(rows).analyze(text) == []  # no patient context: nothing by default

    def test_a_surface_with_two_labels_takes_the_first_in_order(self):
        rows = [
            {"patient_id": "p1", "first_name": "Jordan", "last_name": "Quill", "city": "Jordan"},
            {"patient_id": "p2", "mrn": "5559876543", "phone": "555-987-6543"},
            {"patient_id": "p3", "mrn": "1950-04-05", "dob": "1950-04-05"},
            {"patient_id": "p4", "mrn": "62704", "zip": "62704"},
            {"patient_id": "p5", "email": "Ely@x.org", "mrn": "Ely@x.org"},
        ]
        rec = KnownPHIRecognizer.from_rows(rows)
        rec.load()
        cases = {
            "p1": ("Seen in Jordan.", "Jordan", "LOCATION"),
            "p2": ("Ref 5559876543.", "5559876543", "ID"),
            "p3": ("Ref 1950-04-05.", "1950-04-05", "DATE"),
            "p4": ("Ref 62704.", "62704", "ID"),
            "p5": ("Ref Ely@x.org.", "Ely@x.org", "EMAIL"),
        }
        for pid, (text, surface, label) in cases.items():
            found = [(text[r.start : r.end], r.entity_type) for r in rec.analyze_for_patient(text, pid)]
            assert found == [(surface, label)], pid
