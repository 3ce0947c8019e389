import pyarrow as pa
import pytest

from tide_core.engine.validation import check_columns, validate_rows, validate_table
from tide_core.errors import ConfigError


def test_every_row_ends_as_note_or_quarantine():
    rows = [
        {"note_id": "n1", "patient_id": "p1", "text": "Seen on 3/4/2021.", "note_date": "2021-03-04"},
        {"note_id": None, "patient_id": "p1", "text": "x"},
        {"note_id": "n3", "patient_id": None, "text": "x"},
        {"note_id": "n4", "patient_id": "p1", "text": "   "},
        {"note_id": "n5", "patient_id": "p1", "text": None},
        {"note_id": "n6", "patient_id": "p1", "text": b"caf\xe9 latte"},  # latin-1, not UTF-8
        {"note_id": "n7", "patient_id": "p1", "text": "bad \ud800 surrogate"},
        {"note_id": "n8", "patient_id": "p1", "text": "dup", "note_date": None},
        {"note_id": "n8", "patient_id": "p1", "text": "dup"},  # exact duplicate
        {"note_id": "n9", "patient_id": "p1", "text": "a"},
        {"note_id": "n9", "patient_id": "p2", "text": "b"},  # conflicting duplicate
        {"note_id": "n10", "patient_id": "p1", "text": "ok", "note_date": "yesterday"},
        {"note_id": "n11", "patient_id": "p1", "text": "x" * 50},
        {"note_id": 12, "patient_id": 34, "text": "caf\u00e9 ok".encode("utf-8")},
    ]
    v = validate_rows(rows, max_chars=40)
    assert v.n_rows == len(rows)
    assert sorted(n.note_id for n in v.notes) == ["12", "n1", "n8"]
    codes = {q.row_number: q.code for q in v.quarantined}
    assert codes == {
        1: "E601",
        2: "E602",
        3: "E604",
        4: "E604",
        5: "E603",
        6: "E603",
        8: "E608",
        9: "E607",
        10: "E607",
        11: "E606",
        12: "E605",
    }
    n12 = next(n for n in v.notes if n.note_id == "12")
    assert n12.text == "caf\u00e9 ok" and n12.patient_id == "34"


def test_reasons_never_contain_text():
    secret = "Johnathan Q. Secretname"
    v = validate_rows(
        [
            {"note_id": "a", "patient_id": None, "text": secret},
            {"note_id": "b", "patient_id": "p", "text": secret * 100},
        ],
        max_chars=100,
    )
    assert len(v.quarantined) == 2
    for q in v.quarantined:
        assert "Secretname" not in q.reason


def test_missing_columns_is_a_config_error():
    with pytest.raises(ConfigError) as e:
        check_columns(["note_id", "body"])
    assert "patient_id" in str(e.value) and "text" in str(e.value)
    with pytest.raises(ConfigError):
        validate_table(pa.table({"note_id": ["a"]}))


def test_dates_normalised():
    import datetime as dt

    v = validate_rows(
        [
            {"note_id": "a", "patient_id": "p", "text": "t", "note_date": dt.date(2020, 2, 29)},
            {"note_id": "b", "patient_id": "p", "text": "t", "note_date": "2021-01-05T10:00:00"},
        ]
    )
    assert [n.metadata["note_date"] for n in v.notes] == ["2020-02-29", "2021-01-05"]
