"""sql/views and sql/queries run on DuckDB too (tide_etl.sql_files), against release tables
written with the engine's own schemas: published, awaiting audit, and published but rewritten
by an unverified run."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from tide_core.cache import tables
from tide_core.errors import ConfigError
from tide_core.io.open import open_warehouse
from tide_core.release.lifecycle import RELEASES
from tide_etl.sql_files import SQL_DIR, render_duckdb, run_duckdb, source

T0 = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)
T1 = T0 + dt.timedelta(hours=1)


def _deid(key: str, stamp: dt.datetime) -> pa.Table:
    dates = ["2020-01-01", "2020-01-11", "2020-02-01"]
    rows = [
        {
            "study": "s1",
            "key": key,
            "note_id": f"n{i}",
            "note_ref": f"r{i}",
            "patient_ref": "p" if i < 2 else "q",
            "text": f"Started Metformin {i}" if i == 0 else f"note {i}",
            "note_date": dates[i],
            "note_type": "progress",
            "source": "ehr",
            "site": "x",
            "anonymizer": "tide.anonymizer@3",
            "fingerprint": "fp",
            "released_at": stamp,
        }
        for i in range(3)
    ]
    return tables.to_table("deid_notes", rows)


def _release(key: str, status: str, stamp: dt.datetime) -> pa.Table:
    row = {
        "study": "s1",
        "key": key,
        "n_in": 3,
        "n_released": 3,
        "n_quarantined": 0,
        "n_spans": 1,
        "spans_by_label": "{}",
        "gate_passed": status == "published",
        "decided_at": T0,
        "status": status,
        "released_at": stamp,
    }
    return pa.Table.from_pylist([row], schema=RELEASES)


@pytest.fixture
def wh(tmp_path):
    w = open_warehouse(f"duckdb:{tmp_path / 'wh.duckdb'}")
    for key, status, rows_stamp in (("k1", "published", T0), ("k2", "awaiting_audit", T0), ("k3", "published", T1)):
        part = {"study": "s1", "key": key}
        w.replace_partition("tide_deid_notes", _deid(key, rows_stamp), part)
        spans = [
            {
                "study": "s1",
                "key": key,
                "note_id": "n0",
                "start": 0,
                "end": 2,
                "out_start": 0,
                "out_end": 4,
                "label": "DATE",
                "operator": "date_shift",
                "recognizer": "tide.regex@1",
            }
        ]
        w.replace_partition("tide_released_spans", tables.to_table("released_spans", spans), part)
        w.replace_partition("tide_releases", _release(key, status, T0), part)
    for f in sorted((SQL_DIR / "views").glob("*.sql")):
        run_duckdb(w, f)
    yield w
    w.close()


def test_views_show_only_published_verified_rows(wh):
    notes = wh.sql("SELECT * FROM released_notes").to_pylist()
    assert {r["key"] for r in notes} == {"k1"}  # k2 awaits audit; k3's rows are not the verified run's
    assert len(notes) == 3 and "note_id" not in notes[0]
    spans = wh.sql("SELECT * FROM released_spans").to_pylist()
    assert [(r["key"], r["label"]) for r in spans] == [("k1", "DATE")]


def test_every_query_runs_on_duckdb(wh):
    params = {"study": "s1", "key": "k1", "term": "metformin"}
    out = {f.stem: run_duckdb(wh, f, params).to_pylist() for f in sorted((SQL_DIR / "queries").glob("*.sql"))}
    assert {r["patient_ref"]: r["n_notes"] for r in out["01_notes_per_patient"]} == {"p": 2, "q": 1}
    days = {r["note_ref"]: r["days_since_previous"] for r in out["02_days_between_notes"]}
    assert days == {"r0": None, "r1": 10, "r2": None}
    assert out["03_phi_spans_by_label"] == [{"label": "DATE", "operator": "date_shift", "n_spans": 1, "n_notes": 1}]
    assert [r["note_ref"] for r in out["04_search_released_text"]] == ["r0"]  # case-insensitive
    status = {r["key"]: r for r in out["05_release_status"]}
    assert status["k1"]["gate_passed"] is True and status["k2"]["gate_passed"] is False


def test_rendering_and_variants():
    sql, names = render_duckdb("SELECT `a` FROM `{{dataset}}.t` WHERE `x` = @study -- @not_a_param", "sch")
    assert sql == 'SELECT "a" FROM "sch"."t" WHERE "x" = ? -- @not_a_param' and names == ["study"]
    q = SQL_DIR / "queries" / "02_days_between_notes.sql"
    assert source(q, "duckdb") == SQL_DIR / "queries" / "duckdb" / q.name
    assert source(q, "bigquery") == q


def test_a_missing_parameter_is_a_coded_error(wh):
    with pytest.raises(ConfigError) as err:
        run_duckdb(wh, SQL_DIR / "queries" / "01_notes_per_patient.sql", {"study": "s1"})
    assert err.value.code == "E922" and "@key" in str(err.value)
