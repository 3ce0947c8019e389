"""The blocking release check fed by known PHI (``tide_core.release.known_phi_check``).

A name recognition missed is not in the span cache, so ``no_surface_survives`` cannot see it;
this check reads each patient's values from the ``patients`` table and searches for them in that
patient's released notes, on the normalised view, as whole tokens, and digit identifiers also
without their separators.  Real DuckDB warehouse; the clean and one failing case on the
BigQuery emulator too.
"""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from tide_core.config import TideConfig
from tide_core.io.open import open_warehouse
from tide_core.release import known_phi_check
from tide_core.release.known_phi_check import KINDS, known_phi_survives
from tide_core.store import tables

try:  # reuse the BigQuery emulator fixture; without bqemulator only the BigQuery tests skip
    import bqemulator  # noqa: F401
    import google.cloud.bigquery  # noqa: F401
    from test_bigquery_warehouse import PROJECT, _open, emulator  # noqa: F401 (pytest fixture)
except ImportError as exc:  # pragma: no cover - depends on the environment
    _NO_EMULATOR = f"BigQuery emulator not available: {exc}"

    @pytest.fixture(scope="module")
    def emulator():
        pytest.skip(_NO_EMULATOR)

    def _open(emulator, dataset):  # pragma: no cover
        raise AssertionError("unreachable")


CONFIG = TideConfig(recognizers=({"name": "tide.regex"},))
S, K = "study-kp", "key-kp"
PA, PB = "PAT-77QZ", "PAT-31XW"
NA, NB = "NOTE-8841A", "NOTE-2210B"

P1 = {
    "patient_id": PA,
    "first_name": "Zebulon",
    "middle_name": "Quill",
    "last_name": "Pettigrew",
    "dob": dt.date(1950, 3, 4),
    "mrn": "44170231",
    "phone": "617-555-0199",
    "email": "zq.larch77@example.org",
    "street": "42 Larkspur Street",
    "city": "Marblehead",
    "state": "MA",
    "zip": "01945",
    "insurance_member_no": "XG-88412907",  # another patient identifier column
    "facility_id": "4021",  # a code, not the patient's identifier
}
P2 = {
    "patient_id": PB,
    "first_name": "Henrietta",
    "middle_name": None,
    "last_name": "Oyelaran",
    "dob": dt.date(1962, 11, 23),
    "mrn": "90318872",
    "phone": "(508) 555-0143",
    "email": "h.oyelaran@example.net",
    "street": "7 Quarry Road",
    "city": "Swampscott",
    "state": "MA",
    "zip": "01907",
}
VALUES = [
    str(v) for p in (P1, P2) for c, v in p.items() if v is not None and c not in ("patient_id", "state", "facility_id")
]

#: Released texts with every value replaced by a surrogate.
CLEAN_A = "Pt [NAME] (MRN [ID]) seen 2021-05-06 in room 4021. BP 120/80, HR 72. Call [PHONE] with results."
CLEAN_B = "Follow-up visit for [NAME], DOB [DATE]. Lives at [ADDRESS]. Plan: labs in 3 weeks, 40 mg daily."


def _warehouse(tmp_path, name="wh.duckdb"):
    return open_warehouse(f"duckdb:{tmp_path / name}")


def _notes(patient_a=PA, patient_b=PB) -> pa.Table:
    return pa.table(
        {
            "study": [S, S],
            "note_id": [NA, NB],
            "patient_id": [patient_a, patient_b],
            "text": ["Zebulon Pettigrew, MRN 44170231, seen.", "Henrietta Oyelaran at 7 Quarry Road."],
        }
    )


def _deid(texts: dict[str, str], key: str = K) -> pa.Table:
    rows = [
        {
            "study": S,
            "key": key,
            "note_id": nid,
            "note_ref": f"ref-{i}",
            "patient_ref": f"pref-{i}",
            "text": text,
            "anonymizer": "tide.anonymizer@4",
            "fingerprint": "fp",
        }
        for i, (nid, text) in enumerate(texts.items())
    ]
    return tables.to_table("deid_notes", rows)


def _load(wh, released: dict[str, str], patients=(P1, P2), notes: pa.Table | None = None) -> None:
    wh.replace_table(CONFIG.tables.notes, notes if notes is not None else _notes())
    if patients is not None:
        wh.replace_table(CONFIG.tables.patients, pa.Table.from_pylist([dict(p) for p in patients]))
    wh.replace_table(CONFIG.tables.deid_notes, _deid(released))


def _check(wh):
    return known_phi_survives(wh, CONFIG, S, K)


def _surviving(outcome) -> dict[str, int]:
    return {k: n for k, n in outcome.metadata["surviving_by_kind"].items() if n}


def test_a_clean_release_passes(tmp_path):
    wh = _warehouse(tmp_path)
    _load(wh, {NA: CLEAN_A, NB: CLEAN_B})
    out = _check(wh)
    assert out.passed, out.description
    md = out.metadata
    assert md["patients_table_found"] is True
    assert md["n_notes"] == md["n_notes_checked"] == 2
    assert md["n_patients_with_known_values"] == 2
    assert md["n_values_checked"] > 10 and md["n_known_values_surviving"] == 0 and md["n_notes_with_survivors"] == 0
    assert set(md["surviving_by_kind"]) == set(KINDS) and not _surviving(out)
    assert md["values_checked_by_kind"]["name"] == 5  # Zebulon, Quill, Pettigrew; Henrietta, Oyelaran
    assert md["values_checked_by_kind"]["id"] == 1  # the insurance member number; facility_id is a code
    assert "no known patient value survives" in out.description


LEAKS = [
    ("name", "Zebulon"),
    ("name", "PETTIGREW"),
    ("name", "Pettigrew, Zebulon Q."),
    ("name", "Quill"),  # the middle name alone
    ("mrn", "MRN 44170231"),
    ("mrn", "MRN 4417-0231"),  # another format: matched without separators
    ("id", "policy XG 88412907"),
    ("id", "policy xg88412907"),
    ("phone", "call 617.555.0199"),
    ("phone", "call 617-5550199"),
    ("phone", "call +1 (617) 555 0199"),
    ("email", "ZQ.LARCH77@EXAMPLE.ORG"),
    ("street", "42 Larkspur St."),
    ("city", "lives in marblehead"),
    ("zip", "MA 01945-2210"),
    ("dob", "DOB 3/4/1950"),
    ("dob", "born March 4th, 1950"),
    ("dob", "DOB 19500304"),
]


@pytest.mark.parametrize(("kind", "leak"), LEAKS, ids=[f"{k}:{v}" for k, v in LEAKS])
def test_each_kind_of_surviving_value_fails_and_is_counted_by_kind(tmp_path, kind, leak):
    wh = _warehouse(tmp_path)
    _load(wh, {NA: f"{CLEAN_A} {leak}.", NB: CLEAN_B})
    out = _check(wh)
    assert not out.passed
    assert set(_surviving(out)) == {kind}, out.metadata["surviving_by_kind"]
    assert out.metadata["n_notes_with_survivors"] == 1
    assert out.metadata["n_known_values_surviving"] == sum(_surviving(out).values())
    assert "block this release" in out.description and kind in out.description


UNICODE_LEAKS = [
    ("phone", "call \uff16\uff11\uff17-\uff15\uff15\uff15-\uff10\uff11\uff19\uff19"),  # fullwidth digits
    ("phone", "call 617-555\u200b-0199"),  # a zero-width space inside the number
    ("phone", "call 617\u2060555\u00ad0199"),  # word joiner and soft hyphen: the bare digits
    ("name", "Mr \u0420\u0435ttigrew"),  # Cyrillic Р and е in a Latin name
    ("name", "Zebul\u043en"),  # Cyrillic о
    ("mrn", "MRN \uff14\uff14\uff11\uff17\uff10\uff12\uff13\uff11"),
    ("email", "zq.larch77@ex\u200bample.org"),
    ("zip", "MA \uff10\uff11\uff19\uff14\uff15"),
]


@pytest.mark.parametrize(("kind", "leak"), UNICODE_LEAKS, ids=[f"{k}:{ascii(v)}" for k, v in UNICODE_LEAKS])
def test_values_written_with_unicode_tricks_still_fail(tmp_path, kind, leak):
    wh = _warehouse(tmp_path)
    _load(wh, {NA: f"{CLEAN_A} {leak}.", NB: CLEAN_B})
    out = _check(wh)
    assert not out.passed
    assert set(_surviving(out)) == {kind}


def test_the_check_is_per_patient(tmp_path):
    """Patient B's name in patient A's note is not one of A's known values (the recognizers and the
    audit look for it); the same name in B's own note fails."""
    wh = _warehouse(tmp_path)
    _load(wh, {NA: f"{CLEAN_A} Discussed with Henrietta Oyelaran, 7 Quarry Road, 508-555-0143.", NB: CLEAN_B})
    out = _check(wh)
    assert out.passed, out.description
    assert out.metadata["n_known_values_surviving"] == 0
    _load(wh, {NA: CLEAN_A, NB: f"{CLEAN_B} Henrietta Oyelaran."})
    out = _check(wh)
    assert not out.passed
    assert _surviving(out) == {"name": 2}  # first and last name of B, in B's note


NOT_TOKENS = [
    "Pettigrewson family",  # a surname inside a longer word
    "Zebulons",
    "Marbleheadshire",
    "code 019452",  # a ZIP inside a longer digit run
    "ref 9019450",
    "call 61755501990",  # a phone inside a longer digit run
    "ref 144170231",  # an MRN inside a longer digit run
    "lot 441702310",
]


@pytest.mark.parametrize("text", NOT_TOKENS)
def test_a_value_inside_a_longer_word_or_number_is_no_hit(tmp_path, text):
    wh = _warehouse(tmp_path)
    _load(wh, {NA: f"{CLEAN_A} {text}.", NB: CLEAN_B})
    out = _check(wh)
    assert out.passed, (text, out.metadata["surviving_by_kind"])


@pytest.mark.parametrize("integer_side", ["patients", "notes"])
def test_patient_ids_match_as_text_whatever_the_column_types(tmp_path, integer_side):
    """An INTEGER patients.patient_id matches notes whose patient_id is the text '123', and the reverse."""
    wh = _warehouse(tmp_path)
    p1 = dict(P1, patient_id=123 if integer_side == "patients" else "123")
    p2 = dict(P2, patient_id=456 if integer_side == "patients" else "456")
    if integer_side == "notes":
        notes = pa.table(
            {"study": [S, S], "note_id": [NA, NB], "patient_id": pa.array([123, 789], pa.int64()), "text": ["x", "y"]}
        )
    else:
        notes = _notes(" 123", "patient-not-a-number")  # stripped; a text id never reaches an INTEGER filter
    _load(wh, {NA: f"{CLEAN_A} Zebulon", NB: f"{CLEAN_B} Henrietta"}, patients=(p1, p2), notes=notes)
    out = _check(wh)
    assert not out.passed, out.description
    assert _surviving(out) == {"name": 1}  # Zebulon in 123's note; NB's patient has no patients row
    assert out.metadata["n_notes_without_patient_row"] == 1


def test_no_patients_table_passes_and_says_it_was_skipped(tmp_path):
    wh = _warehouse(tmp_path)
    _load(wh, {NA: f"{CLEAN_A} Zebulon Pettigrew", NB: CLEAN_B}, patients=None)
    out = _check(wh)
    assert out.passed
    assert out.metadata["patients_table_found"] is False
    assert out.metadata["n_notes"] == out.metadata["n_notes_without_patient_row"] == 2
    assert out.metadata["n_values_checked"] == 0
    assert out.description.startswith("skipped") and "no patients table" in out.description


def test_no_patients_row_for_the_study_passes_and_says_it_was_skipped(tmp_path):
    wh = _warehouse(tmp_path)
    other = dict(P1, patient_id="PAT-OTHER")
    _load(wh, {NA: f"{CLEAN_A} Zebulon Pettigrew", NB: CLEAN_B}, patients=(other,))
    out = _check(wh)
    assert out.passed
    assert out.metadata["patients_table_found"] is True
    assert out.metadata["n_notes_without_patient_row"] == 2 and out.metadata["n_notes_checked"] == 0
    assert out.description.startswith("skipped") and "no known patient value was checked" in out.description


def test_the_outcome_holds_no_value_and_no_note_or_patient_id(tmp_path):
    wh = _warehouse(tmp_path)
    leak_a = "Zebulon Q. Pettigrew, 42 Larkspur Street, Marblehead MA 01945, 617-555-0199, zq.larch77@example.org"
    leak_b = "Henrietta Oyelaran DOB 11/23/1962 MRN 90318872"
    _load(wh, {NA: f"{CLEAN_A} {leak_a}", NB: f"{CLEAN_B} {leak_b}"})
    out = _check(wh)
    assert not out.passed and out.metadata["n_notes_with_survivors"] == 2
    text = str(out).casefold()
    for secret in [*VALUES, "1962", "0199", PA, PB, NA, NB]:
        assert secret.casefold() not in text, secret
    assert all(isinstance(v, (bool, int, dict)) for v in out.metadata.values())


def test_released_notes_are_read_in_batches(tmp_path, monkeypatch):
    """Never every released text at once: texts are read BATCH_NOTES at a time, and each batch reads
    only its own patients' rows; the outcome equals the one of a single batch."""
    wh = _warehouse(tmp_path)
    n = 11
    pids = [f"PAT-{i:03d}" for i in range(n)]
    nids = [f"NOTE-{i:03d}" for i in range(n)]
    patients = [dict(P1, patient_id=p, last_name=f"Pettigrew{chr(97 + i)}") for i, p in enumerate(pids)]
    notes = pa.table({"study": [S] * n, "note_id": nids, "patient_id": pids, "text": ["x"] * n})
    released = {nid: CLEAN_A + (" Zebulon" if i % 4 == 0 else "") for i, nid in enumerate(nids)}
    _load(wh, released, patients=patients, notes=notes)
    whole = _check(wh)
    reads = []
    original = wh.read_table

    def spy(name, columns=None, where=None):
        table = original(name, columns, where)
        reads.append((name, list(columns or []), dict(where or {}), table.num_rows))
        return table

    monkeypatch.setattr(wh, "read_table", spy)
    monkeypatch.setattr(known_phi_check, "BATCH_NOTES", 3)
    batched = _check(wh)
    assert batched == whole and not batched.passed
    assert batched.metadata["n_notes_with_survivors"] == 3  # notes 0, 4, 8
    text_reads = [r for r in reads if r[0] == CONFIG.tables.deid_notes and "text" in r[1]]
    assert len(text_reads) == 4 and max(r[3] for r in text_reads) <= 3
    patient_reads = [r for r in reads if r[0] == CONFIG.tables.patients and r[2].get("patient_id")]
    assert len(patient_reads) == 4 and max(len(r[2]["patient_id"]) for r in patient_reads) <= 3


def test_unreadable_inputs_fail_closed(tmp_path):
    wh = _warehouse(tmp_path)
    out = _check(wh)  # nothing released
    assert not out.passed and "materialize deidentified_notes" in out.description
    _load(wh, {NA: CLEAN_A, NB: CLEAN_B})
    wh.replace_table(CONFIG.tables.patients, pa.table({"pid": [PA], "first_name": ["Zebulon"]}))
    out = _check(wh)
    assert not out.passed and "patient_id" in out.description
    _load(wh, {NA: CLEAN_A, NB: CLEAN_B}, notes=pa.table({"study": [S], "note_id": [NA], "text": ["x"]}))
    out = _check(wh)
    assert not out.passed and "notes table" in out.description


def test_a_released_note_without_a_source_row_fails(tmp_path):
    wh = _warehouse(tmp_path)
    _load(wh, {NA: CLEAN_A, NB: CLEAN_B, "NOTE-GONE": CLEAN_A})
    out = _check(wh)
    assert not out.passed and out.metadata["n_notes_without_source"] == 1
    assert "no source row" in out.description


# --------------------------------------------------------------------------- BigQuery emulator


def test_clean_and_leaking_release_on_bigquery(emulator):
    wh = _open(emulator, "known_phi")
    p1 = dict(P1, patient_id=123)  # an INTEGER id column on BigQuery too
    p2 = dict(P2, patient_id=456)
    notes = _notes("123", "456")
    _load(wh, {NA: CLEAN_A, NB: CLEAN_B}, patients=(p1, p2), notes=notes)
    out = _check(wh)
    assert out.passed, out.description
    assert out.metadata["n_notes_checked"] == 2 and out.metadata["n_patients_with_known_values"] == 2
    _load(wh, {NA: f"{CLEAN_A} call 617 5550199", NB: CLEAN_B}, patients=(p1, p2), notes=notes)
    out = _check(wh)
    assert not out.passed
    assert _surviving(out) == {"phone": 1}


def test_a_surrogate_equal_to_a_known_value_is_not_counted(tmp_path):
    """A keyed surrogate can coincide with the patient's own city; the original city was replaced."""

    assert known_phi_check.mask_surrogates("in Fremont today", [(3, 10)]) == "in ####### today"
    wh = open_warehouse(f"duckdb:{tmp_path / 'wh.duckdb'}")
    try:
        wh.replace_table(
            "notes",
            pa.Table.from_pylist([{"study": "s", "note_id": "n1", "patient_id": "p1", "text": "Lives in Boston."}]),
        )
        wh.replace_table(
            "patients", pa.Table.from_pylist([{"patient_id": "p1", "first_name": "Ann", "city": "Fremont"}])
        )
        released = "Lives in Fremont."
        wh.replace_table(
            "tide_deid_notes",
            tables.to_table("deid_notes", [{"study": "s", "key": "k", "note_id": "n1", "text": released}]),
        )
        span = {
            "study": "s",
            "key": "k",
            "note_id": "n1",
            "start": 9,
            "end": 15,
            "out_start": 9,
            "out_end": 16,
            "label": "LOCATION",
        }
        wh.replace_table("tide_released_spans", tables.to_table("released_spans", [span]))
        config = TideConfig.preset("rules")
        assert known_phi_survives(wh, config, "s", "k").passed
        # the same value outside the surrogate is a hit
        wh.replace_table("tide_released_spans", tables.to_table("released_spans", [dict(span, out_start=0, out_end=5)]))
        assert not known_phi_survives(wh, config, "s", "k").passed
    finally:
        wh.close()
