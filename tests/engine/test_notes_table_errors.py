"""Notes tables the way people really make them: views, wrong column types, bytes ids, upper case.

A DuckDB view as the notes table is read and released like a table (views have no ``rowid``;
on Ray workers: ``test_ray_recognize_shards``, which shares its module's Ray session);
a text column of another type is E622 naming the type (was E604 "null or empty"); a note id
that is bytes but not UTF-8 is E623 (was E601); upper-case column names are E600 naming the
columns expected and found.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.release_helpers import fixed_key
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.config import TideConfig
from tide_core.errors import ConfigError
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.runner import anonymize_study, recognize_study

CONFIG = TideConfig.preset("rules")
N = 23


def _raw(wh: DuckDBWarehouse) -> None:
    """23 notes under other column names (a view maps them), with an exact duplicate and an empty text."""
    wh.sql("CREATE TABLE raw (id VARCHAR, pid VARCHAR, s VARCHAR, body VARCHAR, d DATE)")
    wh.sql(
        "INSERT INTO raw SELECT 'n' || i, 'p' || (i % 4), 's', "
        "'Call 617-555-01' || lpad(i::VARCHAR, 2, '0') || ' on 03/0' || (1 + i % 9) || '/2021, note ' || i, "
        "DATE '2021-03-01' + i::INTEGER FROM range(?) t(i)",
        [N],
    )
    wh.sql("INSERT INTO raw SELECT * FROM raw WHERE id = 'n3'")  # exact duplicate: E608
    wh.sql("INSERT INTO raw VALUES ('e1', 'p1', 's', '   ', NULL)")  # empty: E604
    wh.sql("INSERT INTO raw VALUES ('o1', 'p1', 'other', 'Call 617-555-0199', NULL)")  # another study


MAPPING = "SELECT id AS note_id, pid AS patient_id, s AS study, body AS text, d AS note_date FROM raw"


def _released(wh: DuckDBWarehouse) -> list[tuple]:
    return sorted(
        wh.sql("SELECT note_id, text FROM tide_deid_notes WHERE study = 's' AND key = 'k'").to_pylist(),
        key=lambda r: r["note_id"],
    )


def _quarantined(wh: DuckDBWarehouse, key: str = "") -> list[tuple]:
    rows = wh.sql("SELECT note_id, code FROM tide_quarantine WHERE study = 's' AND key = ?", [key]).to_pylist()
    return sorted((r["note_id"], r["code"]) for r in rows)


def _run(wh: DuckDBWarehouse, keys: FileKeyProvider, config: TideConfig = CONFIG, chunk_rows: int = 7):
    rec = recognize_study(wh, "s", config, progress=False, chunk_rows=chunk_rows)
    anon = anonymize_study(wh, "s", "k", keys, config, progress=False, chunk_rows=chunk_rows)
    return rec, anon


@pytest.fixture
def keys(tmp_path: Path) -> FileKeyProvider:
    provider = FileKeyProvider(tmp_path / "keys")
    fixed_key(provider, "s", "k")
    return provider


def test_a_view_is_read_and_released_like_the_table_it_maps(tmp_path, keys):
    with DuckDBWarehouse(tmp_path / "view.duckdb") as view, DuckDBWarehouse(tmp_path / "table.duckdb") as table:
        for wh in (view, table):
            _raw(wh)
        view.sql(f"CREATE VIEW notes AS {MAPPING}")
        table.sql(f"CREATE TABLE notes AS {MAPPING}")
        rec, anon = _run(view, keys)
        assert rec.n_rows == N + 2 and rec.n_valid == N and rec.n_quarantined == 2
        assert anon.n_rows == N + 2 and anon.n_released == N
        assert _quarantined(view) == [("e1", "E604"), ("n3", "E608")]
        released = _released(view)
        assert len(released) == N and not any("617-555-01" in r["text"] for r in released)
        _run(table, keys)
        assert released == _released(table)  # the same release as the table's
        # rerun on the view: every note is a cache hit (the view's row order is stable)
        again = recognize_study(view, "s", CONFIG, progress=False, chunk_rows=5)
        assert again.n_cached == N and again.n_recognized == 0


def test_a_view_reads_in_one_stable_order_by_reference(tmp_path):
    """iter_refs and export_rows (the Ray shard path) agree on a view's row references."""
    with DuckDBWarehouse(tmp_path / "v.duckdb") as wh:
        _raw(wh)
        wh.sql(f"CREATE VIEW notes AS {MAPPING}")
        first = [b.to_pylist() for b in wh.iter_refs("notes", ["note_id"], {"study": "s"}, 4)]
        second = [b.to_pylist() for b in wh.iter_refs("notes", ["note_id"], {"study": "s"}, 9)]
        flat = [r for b in first for r in b]
        assert flat == [r for b in second for r in b] and len(flat) == N + 2
        assert len({r["ref"] for r in flat}) == len(flat)
        picked = flat[5:12]
        out = tmp_path / "shard.parquet"
        wh.export_rows("notes", [r["ref"] for r in picked], list(range(len(picked))), str(out))
        rows = wh.sql(f"SELECT * FROM read_parquet('{out}') ORDER BY _tide_row").to_pylist()
        assert [r["note_id"] for r in rows] == [r["note_id"] for r in picked]
        assert "__tide_view_ref" not in rows[0] and set(rows[0]) >= {"note_id", "patient_id", "text", "note_date"}


@pytest.mark.parametrize(
    ("sql_type", "value", "named"),
    [
        ("INTEGER", "42", "INTEGER"),
        ("VARCHAR[]", "['Call 617-555-0199']", "LIST"),
        ("STRUCT(body VARCHAR)", "{'body': 'Call 617-555-0199'}", "STRUCT"),
        ("DOUBLE", "1.5", "FLOAT"),
    ],
)
def test_a_text_column_of_another_type_says_its_type(tmp_path, sql_type, value, named):
    with DuckDBWarehouse(tmp_path / "t.duckdb") as wh:
        wh.sql(f"CREATE TABLE notes (note_id VARCHAR, patient_id VARCHAR, text {sql_type})")
        wh.sql(f"INSERT INTO notes VALUES ('n1', 'p1', {value}), ('n2', 'p1', NULL)")
        rec = recognize_study(wh, "default", CONFIG, progress=False)
        assert rec.n_rows == 2 and rec.n_quarantined == 2
        rows = wh.sql("SELECT note_id, code, reason FROM tide_quarantine ORDER BY note_id").to_pylist()
        assert [(r["note_id"], r["code"]) for r in rows] == [("n1", "E622"), ("n2", "E604")]
        assert named in rows[0]["reason"] and "VARCHAR" in rows[0]["reason"]
        assert "617" not in rows[0]["reason"] and "42" not in rows[0]["reason"]


def test_a_note_id_that_is_not_utf8_says_so(tmp_path):
    with DuckDBWarehouse(tmp_path / "b.duckdb") as wh:
        wh.sql("CREATE TABLE notes (note_id BLOB, patient_id VARCHAR, text VARCHAR)")
        wh.sql(
            "INSERT INTO notes VALUES ('\\xFF\\xFEn1'::BLOB, 'p1', 'Call 617-555-0199'), "
            "('n2'::BLOB, 'p1', 'Call 617-555-0198'), (NULL, 'p1', 'x'), (''::BLOB, 'p1', 'y')"
        )
        rec = recognize_study(wh, "default", CONFIG, progress=False)
        assert rec.n_rows == 4 and rec.n_valid == 1  # the UTF-8 BLOB id is read as text
        rows = wh.sql("SELECT code, reason FROM tide_quarantine ORDER BY row_number").to_pylist()
        assert [r["code"] for r in rows] == ["E623", "E601", "E601"]
        assert "UTF-8" in rows[0]["reason"] and "null or empty" not in rows[0]["reason"]


def test_upper_case_column_names_are_named_in_the_error(tmp_path):
    with DuckDBWarehouse(tmp_path / "u.duckdb") as wh:
        wh.sql('CREATE TABLE notes ("NOTE_ID" VARCHAR, "Patient_Id" VARCHAR, "TEXT" VARCHAR, extra INTEGER)')
        wh.sql("INSERT INTO notes VALUES ('n1', 'p1', 'Call 617-555-0199', 1)")
        with pytest.raises(ConfigError) as err:
            recognize_study(wh, "default", CONFIG, progress=False)
        message = str(err.value)
        assert err.value.code == "E600"
        assert "expected note_id, patient_id, text" in message
        assert "found NOTE_ID, Patient_Id, TEXT, extra" in message
        assert "NOTE_ID -> note_id" in message and "Patient_Id -> patient_id" in message and "TEXT -> text" in message
        # the hint's remedy works: a view with lower-case names
        wh.sql(
            'CREATE VIEW notes_v AS SELECT "NOTE_ID" AS note_id, "Patient_Id" AS patient_id, "TEXT" AS text FROM notes'
        )
        rec = recognize_study(wh, "default", CONFIG, progress=False, notes_table="notes_v")
        assert rec.n_valid == 1 and rec.spans_by_label == {"PHONE": 1}
