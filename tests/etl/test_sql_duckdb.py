"""sql/views and sql/queries run on DuckDB too (tide_etl.sql_files), against release tables
written with the engine's own schemas: a published release, one awaiting audit (never
published), and a published one whose candidate was rewritten by an unverified run.

Researchers' queries (``released_notes``) run on the researcher store, a DuckDB file of its own
that publish creates with the views of ``sql/views``; operators' queries (``tide_*``) run on the
warehouse.
"""

from __future__ import annotations

import datetime as dt
import re

import pyarrow as pa
import pytest

from tests.release_helpers import researchers_see
from tide_core.errors import ConfigError
from tide_core.io.open import open_warehouse
from tide_core.release import publish
from tide_core.release.lifecycle import RELEASES
from tide_core.store import tables
from tide_core.store.release_content import row_hash
from tide_core.store.tables import TableNames
from tide_etl.sql_files import SQL_DIR, render_duckdb, run_duckdb, source

T0 = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)
T1 = T0 + dt.timedelta(hours=1)
NAMES = TableNames()
#: the query files, researchers' and operators'
RESEARCHER_QUERIES = (
    "01_notes_per_patient",
    "02_days_between_notes",
    "04_search_released_text",
)
OPERATOR_QUERIES = ("03_phi_spans_by_label", "05_release_status")


def _deid(key: str, stamp: dt.datetime, text: str = "note {i}") -> pa.Table:
    dates = ["2020-01-01", "2020-01-11", "2020-02-01"]
    rows = []
    for i in range(3):
        row = {
            "study": "s1",
            "key": key,
            "note_id": f"n{i}",
            "note_ref": f"r{i}",
            "patient_ref": "p" if i < 2 else "q",
            "text": f"Started Metformin {i}" if i == 0 else text.format(i=i),
            "note_date": dates[i],
            "note_type": "progress",
            "source": "ehr",
            "site": "x",
            "anonymizer": "tide.anonymizer@3",
            "fingerprint": "fp",
            "released_at": stamp,
        }
        rows.append(dict(row, row_hash=row_hash("s1", key, row)))
    return tables.to_table("deid_notes", rows)


def _release(key: str, status: str, version: str | None) -> pa.Table:
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
        "released_at": T0,
        "published_version": version,
    }
    return pa.Table.from_pylist([row], schema=RELEASES)


@pytest.fixture
def wh(tmp_path):
    w = open_warehouse(f"duckdb:{tmp_path / 'wh.duckdb'}")
    for key, status, version in (("k1", "published", "v1"), ("k2", "awaiting_audit", None), ("k3", "published", "v1")):
        part = {"study": "s1", "key": key}
        w.replace_partition("tide_deid_notes", _deid(key, T0), part)
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
        if version:
            assert publish.publish(w, NAMES, "s1", key).version == version
        w.replace_partition("tide_releases", _release(key, status, version), part)
    # k3's candidate rewritten by a run no check has seen: researchers keep its published version
    w.replace_partition("tide_deid_notes", _deid("k3", T1, "rewritten {i}"), {"study": "s1", "key": "k3"})
    yield w
    w.close()


def test_researchers_see_only_published_versions(wh, tmp_path):
    assert (tmp_path / "wh.released.duckdb").is_file()  # the researcher store: a file of its own
    assert not wh.table_exists("released_notes")  # no researcher view in the warehouse
    with publish.researcher_store(wh) as rs:
        notes = rs.sql("SELECT * FROM released_notes ORDER BY key, note_ref").to_pylist()
        versions = rs.sql("SELECT * FROM released_versions ORDER BY key").to_pylist()
    assert {r["key"] for r in notes} == {"k1", "k3"}  # k2 awaits audit
    assert len(notes) == 6 and tuple(notes[0]) == publish.RESEARCHER_OBJECTS["released_notes"]
    assert "note_id" not in notes[0] and "row_hash" not in notes[0]
    k3 = [r["text"] for r in notes if r["key"] == "k3"]
    assert k3 == ["Started Metformin 0", "note 1", "note 2"]  # the published rows, not the rewritten ones
    assert [(v["key"], v["version"], v["n_notes"]) for v in versions] == [("k1", "v1", 3), ("k3", "v1", 3)]
    assert researchers_see(wh, "s1", "k3") == [r for r in notes if r["key"] == "k3"]
    assert researchers_see(wh, "s1", "k2") == []


def _statements(text: str) -> str:
    """SQL without comments, whitespace runs as one space, no trailing semicolon."""
    code = " ".join(line.split("--", 1)[0] for line in text.splitlines())
    return re.sub(r"\s+", " ", code).strip().rstrip(";").strip()


@pytest.mark.parametrize(
    "view, sql", [("released_notes", publish.VIEW_SQL), ("released_versions", publish.VERSIONS_VIEW_SQL)]
)
def test_the_view_files_are_the_views_publish_creates(view, sql):
    assert _statements((SQL_DIR / "views" / f"{view}.sql").read_text(encoding="utf-8")) == _statements(sql)
    assert sorted(p.stem for p in (SQL_DIR / "views").glob("*.sql")) == sorted(publish.RESEARCHER_OBJECTS)


def _run(wh, name: str, params: dict) -> list[dict]:
    path = SQL_DIR / "queries" / f"{name}.sql"
    wanted = {k: v for k, v in params.items() if f"@{k}" in path.read_text(encoding="utf-8")}
    if name in OPERATOR_QUERIES:
        return run_duckdb(wh, path, wanted).to_pylist()
    with publish.researcher_store(wh) as rs:
        return run_duckdb(rs, path, wanted).to_pylist()


PARAMS = {"study": "s1", "key": "k1", "term": "metformin"}


def test_every_query_runs_on_duckdb(wh):
    assert sorted(p.stem for p in (SQL_DIR / "queries").glob("*.sql")) == sorted(RESEARCHER_QUERIES + OPERATOR_QUERIES)
    out = {name: _run(wh, name, PARAMS) for name in RESEARCHER_QUERIES + OPERATOR_QUERIES}
    assert {r["patient_ref"]: r["n_notes"] for r in out["01_notes_per_patient"]} == {"p": 2, "q": 1}
    days = {r["note_ref"]: r["days_since_previous"] for r in out["02_days_between_notes"]}
    assert days == {"r0": None, "r1": 10, "r2": None}
    assert [r["note_ref"] for r in out["04_search_released_text"]] == ["r0"]  # case-insensitive
    status = {r["key"]: r for r in out["05_release_status"]}
    assert status["k1"]["gate_passed"] is True and status["k2"]["gate_passed"] is False


def test_the_spans_by_label_query_runs_on_duckdb(wh):
    out = _run(wh, "03_phi_spans_by_label", PARAMS)
    assert out == [{"label": "DATE", "operator": "date_shift", "n_spans": 1, "n_notes": 1}]


def test_rendering_and_variants():
    sql, names = render_duckdb("SELECT `a` FROM `{{dataset}}.t` WHERE `x` = @study -- @not_a_param", "sch")
    assert sql == 'SELECT "a" FROM "sch"."t" WHERE "x" = ? -- @not_a_param' and names == ["study"]
    q = SQL_DIR / "queries" / "02_days_between_notes.sql"
    assert source(q, "duckdb") == SQL_DIR / "queries" / "duckdb" / q.name
    assert source(q, "bigquery") == q


def test_a_missing_parameter_is_a_coded_error(wh):
    with publish.researcher_store(wh) as rs, pytest.raises(ConfigError) as err:
        run_duckdb(rs, SQL_DIR / "queries" / "01_notes_per_patient.sql", {"study": "s1"})
    assert err.value.code == "E922" and "@key" in str(err.value)
