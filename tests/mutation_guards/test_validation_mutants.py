"""Every input row ends as a Note or as a Quarantined record that says exactly which row and why.

The record of each quarantine code is checked field by field (note id, patient id, stage, code, row
number) and its reason for what it must name (the row, the note, the fault, the limit) and must not
(the text); each refusal has a passing twin that differs in one property.
"""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from tide_core.engine.validation import (
    check_columns,
    resolve_duplicates,
    sort_quarantined,
    validate_chunk,
    validate_rows,
    validate_table,
)
from tide_core.errors import ConfigError
from tide_core.spans import Note, Quarantined

OK = {"note_id": "n1", "patient_id": "p1", "text": "Seen today."}


def _one(row: dict, i: int = 7, max_chars: int = 100) -> Note | Quarantined:
    notes, quarantined = validate_chunk([row], first_row=i, max_chars=max_chars)
    assert len(notes) + len(quarantined) == 1
    if notes:
        assert notes[0][0] == i
        return notes[0][1]
    return quarantined[0]


def _refused(row: dict, code: str, *words: str, i: int = 7, max_chars: int = 100) -> Quarantined:
    q = _one(row, i, max_chars)
    assert isinstance(q, Quarantined), q
    assert (q.stage, q.code, q.row_number) == ("input", code, i), q
    assert isinstance(q.reason, str) and q.reason.startswith(f"row {i}")
    for w in words:
        assert w in q.reason, (w, q.reason)
    return q


def test_a_missing_note_id_is_e601_and_keeps_the_patient():
    q = _refused({**OK, "note_id": None}, "E601", "note_id")
    assert (q.note_id, q.patient_id) == (None, "p1")
    q = _refused({**OK, "note_id": "  "}, "E601")
    assert (q.note_id, q.patient_id) == (None, "p1")
    assert isinstance(_one({**OK, "note_id": " n1 "}), Note)


def test_a_missing_patient_is_e602_and_names_the_note():
    q = _refused({**OK, "patient_id": ""}, "E602", "note n1", "patient_id", "shifted per patient")
    assert (q.note_id, q.patient_id) == ("n1", None)


def test_ids_given_as_bytes_are_read_as_utf8_and_undecodable_ones_are_missing():
    note = _one({**OK, "note_id": "n\u00e9".encode(), "patient_id": b" p1 "})
    assert isinstance(note, Note) and (note.note_id, note.patient_id) == ("n\u00e9", "p1")
    q = _refused({**OK, "note_id": b"n\xe9"}, "E623", "not valid UTF-8")  # latin-1 bytes: no id, said so
    assert q.patient_id == "p1"
    q = _refused({**OK, "patient_id": b"p\xff"}, "E602")
    assert q.note_id == "n1"


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_text_given_as_bytes_is_decoded_as_utf8(kind):
    note = _one({**OK, "text": kind("caf\u00e9 visit".encode())})
    assert isinstance(note, Note) and note.text == "caf\u00e9 visit"
    q = _refused({**OK, "text": kind(b"abc caf\xe9")}, "E603", "note n1", "UTF-8", "byte offset 7")
    assert (q.note_id, q.patient_id) == ("n1", "p1")


def test_an_unpaired_surrogate_is_e603_at_its_character():
    q = _refused({**OK, "text": "ab\ud800cd"}, "E603", "note n1", "surrogate", "character 2")
    assert (q.note_id, q.patient_id) == ("n1", "p1")


@pytest.mark.parametrize("text", [None, "", "  \n\t"])
def test_empty_or_non_text_is_e604(text):
    q = _refused({**OK, "text": text}, "E604", "note n1", "text")
    assert (q.note_id, q.patient_id) == ("n1", "p1")


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (42, "INTEGER"),
        (0, "INTEGER"),
        (True, "BOOLEAN"),
        (1.5, "FLOAT"),
        (["Seen"], "LIST"),
        (("Seen",), "LIST"),
        ({"body": "Seen"}, "STRUCT or MAP"),
        (dt.date(2021, 3, 4), "DATE or TIME"),
        (dt.datetime(2021, 3, 4, 5, 6), "DATE or TIME"),
        (dt.time(5, 6), "DATE or TIME"),
        (object(), "OBJECT"),
    ],
)
def test_text_of_another_type_is_e622_naming_the_type(text, kind):
    q = _refused({**OK, "text": text}, "E622", "note n1", f"text is a {kind} value,", "expected VARCHAR")
    assert (q.note_id, q.patient_id) == ("n1", "p1")
    assert "Seen" not in q.reason and "42" not in q.reason


def test_the_length_limit_is_inclusive():
    assert isinstance(_one({**OK, "text": "x" * 20}, max_chars=20), Note)
    q = _refused({**OK, "text": "x" * 21}, "E605", "note n1", "21 characters", "limit 20", max_chars=20)
    assert (q.note_id, q.patient_id) == ("n1", "p1")
    assert "xxx" not in q.reason


@pytest.mark.parametrize(
    "value,iso",
    [
        (None, None),
        ("", None),
        ("  ", None),
        ("2021-03-04", "2021-03-04"),
        (" 2021-03-04 ", "2021-03-04"),
        ("2021-03-04T10:30:00", "2021-03-04"),
        ("2021-03-04 10:30:00+00:00", "2021-03-04"),
        (dt.date(2021, 3, 4), "2021-03-04"),
        (dt.datetime(2021, 3, 4, 23, 59), "2021-03-04"),
    ],
)
def test_note_dates_are_normalised_to_iso(value, iso):
    note = _one({**OK, "note_date": value})
    assert isinstance(note, Note)
    assert note.metadata["note_date"] == iso


@pytest.mark.parametrize("value", ["yesterday", "03/04/2021", "2021-13-01", 2021])
def test_a_note_date_that_is_no_iso_date_is_e606(value):
    q = _refused({**OK, "note_date": value}, "E606", "note n1", "note_date")
    assert (q.note_id, q.patient_id) == ("n1", "p1")


def test_metadata_columns_are_kept_as_text():
    note = _one({**OK, "note_type": "discharge", "source": 3, "site": None, "other": "dropped"})
    assert isinstance(note, Note)
    assert dict(note.metadata) == {"note_date": None, "note_type": "discharge", "source": "3", "site": None}


def test_chunks_number_their_rows_from_first_row():
    rows = [OK, {**OK, "note_id": None}, {**OK, "note_id": "n3"}]
    notes, quarantined = validate_chunk(rows, first_row=100)
    assert [i for i, _ in notes] == [100, 102]
    assert [q.row_number for q in quarantined] == [101]
    notes, quarantined = validate_chunk(rows)
    assert [i for i, _ in notes] == [0, 2] and quarantined[0].row_number == 1


def _n(note_id: str, patient: str = "p1", text: str = "t") -> Note:
    return Note(note_id, patient, text, {})


def test_an_exact_duplicate_keeps_its_first_row_and_quarantines_the_others_as_e608():
    rows = [(3, _n("a")), (5, _n("b")), (8, _n("a")), (9, _n("a"))]
    kept, quarantined = resolve_duplicates(rows)
    assert [n.note_id for n in kept] == ["a", "b"]
    assert [(q.note_id, q.patient_id, q.stage, q.code, q.row_number) for q in quarantined] == [
        ("a", "p1", "input", "E608", 8),
        ("a", "p1", "input", "E608", 9),
    ]
    assert all("duplicate of row 3" in q.reason and "note a" in q.reason for q in quarantined)


@pytest.mark.parametrize("other", [_n("a", patient="p2"), _n("a", text="u")])
def test_a_conflicting_duplicate_quarantines_every_row_as_e607(other):
    rows = [(3, _n("a")), (5, _n("b")), (8, other), (9, _n("a"))]
    kept, quarantined = resolve_duplicates(rows)
    assert [n.note_id for n in kept] == ["b"]
    assert [(q.note_id, q.code, q.row_number) for q in quarantined] == [("a", "E607", r) for r in (3, 8, 9)]
    assert [q.patient_id for q in quarantined] == ["p1", other.patient_id, "p1"]
    assert all(q.stage == "input" and q.reason.startswith(f"row {q.row_number}: ") for q in quarantined)
    assert all("note_id a appears 3 times" in q.reason for q in quarantined)


def test_quarantined_rows_are_sorted_by_row_number_with_unnumbered_rows_first():
    items = [Quarantined("c", "p", "input", "E601", "r", 5), Quarantined("a", "p", "input", "E601", "r", None)]
    items.append(Quarantined("b", "p", "input", "E601", "r", 0))
    assert [q.note_id for q in sort_quarantined(items)] == ["a", "b", "c"]


def test_validate_rows_accounts_for_every_row_in_row_order():
    rows = [{**OK, "note_id": "x"}, {**OK, "note_id": None}, {**OK, "note_id": "x"}, {**OK, "text": ""}]
    v = validate_rows(rows)
    assert [n.note_id for n in v.notes] == ["x"]
    assert [(q.row_number, q.code) for q in v.quarantined] == [(1, "E601"), (2, "E608"), (3, "E604")]
    assert v.n_rows == 4
    assert validate_rows([{**OK, "text": "x" * 11}], max_chars=10).quarantined[0].code == "E605"


def test_missing_columns_are_named_with_a_hint():
    check_columns(["note_id", "patient_id", "text"])
    with pytest.raises(ConfigError) as e:
        check_columns(["note_id", "body"], table="raw_notes")
    err = e.value
    assert err.code == "E600" and "raw_notes" in err.message
    assert "patient_id, text" in err.message and "note_id" not in err.message.split("column(s)")[1]
    assert "note_id, patient_id, text" in err.hint
    with pytest.raises(ConfigError) as e:
        validate_table(pa.table({"note_id": ["a"], "text": ["t"]}), name="mine")
    assert e.value.code == "E600" and "mine" in e.value.message and "patient_id" in e.value.message
    v = validate_table(pa.table({"note_id": ["a"], "patient_id": ["p"], "text": ["x" * 5]}), max_chars=4)
    assert [q.code for q in v.quarantined] == ["E605"]


def test_the_defaults_are_the_notes_table_and_two_million_characters():
    with pytest.raises(ConfigError) as e:
        check_columns(["note_id"])
    assert "table notes lacks" in e.value.message
    with pytest.raises(ConfigError) as e:
        validate_table(pa.table({"note_id": ["a"]}))
    assert "table notes lacks" in e.value.message
    at, over = "x" * 2_000_000, "x" * 2_000_001
    for text, code in ((at, None), (over, "E605")):
        rows = [{**OK, "text": text}]
        got = [
            validate_rows(rows).quarantined,
            validate_chunk(rows)[1],
            validate_table(pa.table({k: [v] for k, v in rows[0].items()})).quarantined,
        ]
        for quarantined in got:
            assert [q.code for q in quarantined] == ([code] if code else [])
