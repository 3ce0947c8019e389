"""Every read of the released tables (``tide_core/store/release_store.py``), on a real DuckDB in about a second.

A read returns exactly the rows of the configured (prefixable) table that belong to the asked study, key
and notes, with the asked columns; a table that does not exist reads as empty (the empty schema for Arrow
reads).  The derived reads: the output ranges of each note's replaced spans, the study's key names (never
empty ones), the distinct release stamps (a missing stamp last), the newest drift verdict with its result
parsed, the PHI Guard's review pile (held notes only, by rank then note id).  Each table below holds rows of
another study, another key and another note beside the ones asked for, so a read that drops one of its
filters returns too much.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.store import tables
from tide_core.store.release_store import ReleaseStore
from tide_core.store.tables import SCHEMAS, TABLES, TableNames

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
T1 = dt.datetime(2026, 2, 1, tzinfo=dt.UTC)
T2 = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
NAMES = TableNames.with_prefix("x_")


def _put(wh, kind, rows, names=NAMES):
    wh.replace_table(names.of(kind), tables.to_table(kind, rows))


def _deid(study, key, note_id, at=T0, **more):
    return {"study": study, "key": key, "note_id": note_id, "text": f"released {note_id}", "released_at": at, **more}


@pytest.fixture
def wh():
    w = DuckDBWarehouse(":memory:")
    _put(
        w,
        "deid_notes",
        [
            _deid("s", "k", "n1"),
            _deid("s", "k", "n2", at=T1),
            _deid("s", "k", "n3", at=T1),
            _deid("s", "k2", "n1", at=T2),
            _deid("t", "k", "n1", at=T2),
            _deid("s", "", "n9", at=T2),
            _deid("s", None, "n8", at=T2),
        ],
    )
    yield w
    w.close()


def _ids(rows):
    return sorted((r["key"], r["note_id"]) for r in rows)


def test_the_default_names_are_the_registry_names(wh):
    assert ReleaseStore(wh).names == TableNames()
    assert ReleaseStore(wh, NAMES).names is NAMES
    assert ReleaseStore(wh).wh is wh
    assert ReleaseStore(wh).deid_notes("s", "k") == []  # tide_deid_notes does not exist: empty
    _put(wh, "deid_notes", [_deid("s", "k", "d1")], names=TableNames())
    assert [r["note_id"] for r in ReleaseStore(wh).deid_notes("s", "k")] == ["d1"]


def test_rows_are_those_of_the_study_and_the_key(wh):
    store = ReleaseStore(wh, NAMES)
    assert _ids(store.deid_notes("s", "k")) == [("k", "n1"), ("k", "n2"), ("k", "n3")]
    assert _ids(store.rows("deid_notes", "s", "k")) == [("k", "n1"), ("k", "n2"), ("k", "n3")]
    assert _ids(store.rows("deid_notes", "s", "")) == [("", "n9")]  # the empty key is a key
    every = store.rows("deid_notes", "s")  # no key: every key of the study
    assert sorted(("-" if r["key"] is None else r["key"], r["note_id"]) for r in every) == [
        ("", "n9"),
        ("-", "n8"),
        ("k", "n1"),
        ("k", "n2"),
        ("k", "n3"),
        ("k2", "n1"),
    ]
    assert store.rows("deid_notes", "nobody", "k") == []


def test_rows_of_some_notes(wh):
    store = ReleaseStore(wh, NAMES)
    assert _ids(store.deid_notes("s", "k", note_ids="n2")) == [("k", "n2")]  # one id, not its characters
    assert _ids(store.deid_notes("s", "k", note_ids=["n1", "n3"])) == [("k", "n1"), ("k", "n3")]
    assert _ids(store.deid_notes("s", "k", note_ids=("n3",))) == [("k", "n3")]
    assert _ids(store.deid_notes("s", "k", note_ids=(i for i in ["n1"]))) == [("k", "n1")]  # any iterable
    assert store.deid_notes("s", "k", note_ids=[]) == []  # no notes: no rows


def test_rows_with_some_columns(wh):
    store = ReleaseStore(wh, NAMES)
    assert store.deid_notes("s", "k", ["note_id"], "n2") == [{"note_id": "n2"}]
    assert store.deid_notes("s", "k", ("note_id", "text"), ["n2"]) == [{"note_id": "n2", "text": "released n2"}]
    (full,) = store.deid_notes("s", "k", note_ids="n2")
    assert list(full) == SCHEMAS["deid_notes"].names  # every column by default
    assert isinstance(store.rows("deid_notes", "s", "k"), list)


def test_released_spans_and_surrogate_ranges(wh):
    spans = [
        {"study": "s", "key": "k", "note_id": "n1", "start": 0, "end": 4, "out_start": 0, "out_end": 5},
        {"study": "s", "key": "k", "note_id": "n1", "start": 9, "end": 12, "out_start": 10, "out_end": 14},
        {"study": "s", "key": "k", "note_id": "n2", "start": 1, "end": 2, "out_start": 1, "out_end": 3},
        {"study": "s", "key": "k2", "note_id": "n1", "start": 0, "end": 1, "out_start": 0, "out_end": 2},
        {"study": "t", "key": "k", "note_id": "n3", "start": 0, "end": 1, "out_start": 0, "out_end": 2},
    ]
    _put(wh, "released_spans", spans)
    store = ReleaseStore(wh, NAMES)
    assert store.surrogate_ranges("s", "k") == {"n1": [(0, 5), (10, 14)], "n2": [(1, 3)]}
    assert store.surrogate_ranges("s", "none") == {}
    assert store.released_spans("s", "k", ["note_id", "out_end"], "n2") == [{"note_id": "n2", "out_end": 3}]
    assert len(store.released_spans("s", "k")) == 3
    assert ReleaseStore(wh).surrogate_ranges("s", "k") == {}  # no such table under the default names


def test_quarantine_rows(wh):
    rows = [
        {"study": "s", "key": "k", "note_id": "q1", "code": "E601"},
        {"study": "s", "key": "k", "note_id": "q2", "code": "E405"},
        {"study": "s", "key": "k2", "note_id": "q1", "code": "E602"},
        {"study": "t", "key": "k", "note_id": "q1", "code": "E603"},
    ]
    _put(wh, "quarantine", rows)
    store = ReleaseStore(wh, NAMES)
    assert store.quarantine("s", "k", ["code"], "q1") == [{"code": "E601"}]
    assert sorted(r["code"] for r in store.quarantine("s", "k")) == ["E405", "E601"]
    assert sorted(r["code"] for r in store.quarantine("s", "k", note_ids=["q1", "q2"])) == ["E405", "E601"]
    assert store.count("quarantine", "s", "k") == 2
    assert store.count("quarantine", "s", "k2") == 1
    assert store.count("quarantine", "u", "k") == 0
    assert type(store.count("quarantine", "s", "k")) is int
    assert store.count("audits", "s", "k") == 0  # no such table


def test_keys_are_the_non_empty_keys_of_the_study(wh):
    store = ReleaseStore(wh, NAMES)
    assert store.keys("s") == ["k", "k2"]  # sorted, distinct, never "" or a missing key
    assert store.keys("t") == ["k"]
    assert store.keys("u") == []
    assert ReleaseStore(wh).keys("s") == []


def test_stamps_are_the_distinct_release_times_a_missing_one_last(wh):
    store = ReleaseStore(wh, NAMES)
    assert store.stamps("s", "k") == [T0, T1]
    _put(wh, "deid_notes", [_deid("s", "k", "a", at=T2), _deid("s", "k", "b", at=None), _deid("s", "k", "c", at=T0)])
    assert store.stamps("s", "k") == [T0, T2, None]
    assert store.stamps("s", "other") == []


def test_runs_are_every_run_of_the_study(wh):
    runs = [
        {"run_id": "r1", "study": "s", "key": "k", "stage": "anonymization", "started_at": T0},
        {"run_id": "r2", "study": "s", "key": "", "stage": "recognition", "started_at": T1},
        {"run_id": "r3", "study": "s", "key": None, "stage": "recognition", "started_at": T1},
        {"run_id": "r4", "study": "t", "key": "k", "stage": "anonymization", "started_at": T2},
    ]
    _put(wh, "runs", runs)
    store = ReleaseStore(wh, NAMES)
    assert sorted(r["run_id"] for r in store.runs("s")) == ["r1", "r2", "r3"]  # whatever their key
    assert sorted(store.runs("s", ["run_id", "stage"]), key=lambda r: r["run_id"])[0] == {
        "run_id": "r1",
        "stage": "anonymization",
    }
    assert set(store.runs("s")[0]) == set(SCHEMAS["runs"].names)


def test_release_is_the_row_of_the_study_and_key(wh):
    store = ReleaseStore(wh, NAMES)
    assert store.release("s", "k") is None  # no table
    rows = [
        {"study": "s", "key": "k", "status": "published", "n_in": 3},
        {"study": "s", "key": "k2", "status": "blocked", "n_in": 4},
        {"study": "t", "key": "k", "status": "pending", "n_in": 5},
    ]
    _put(wh, "releases", rows)
    got = store.release("s", "k")
    assert (got["status"], got["n_in"]) == ("published", 3)
    assert set(got) == set(SCHEMAS["releases"].names)
    assert store.release("s", "k3") is None


def test_audits_are_the_rounds_of_the_study_and_key_in_arrow(wh):
    store = ReleaseStore(wh, NAMES)
    empty = store.audits("s", "k")
    assert empty.num_rows == 0 and empty.schema.equals(TABLES["audits"].schema)
    rounds = [
        {"study": "s", "key": "k", "bucket": "a", "n_leaks": 0, "audited_at": T0},
        {"study": "s", "key": "k", "bucket": "b", "n_leaks": 1, "audited_at": T1},
        {"study": "s", "key": "k2", "bucket": "c", "n_leaks": 2, "audited_at": T1},
        {"study": "t", "key": "k", "bucket": "d", "n_leaks": 3, "audited_at": T1},
    ]
    _put(wh, "audits", rounds)
    got = store.audits("s", "k")
    assert sorted(got.column("bucket").to_pylist()) == ["a", "b"]
    assert got.column_names == SCHEMAS["audits"].names
    assert sorted(store.table("audits", "s").column("bucket").to_pylist()) == ["a", "b", "c"]  # no key: all keys
    assert store.table("audits", "s", "k2").column("bucket").to_pylist() == ["c"]
    missing = store.table("guard_scores", "s", "k")
    assert missing.num_rows == 0 and missing.schema.equals(SCHEMAS["guard_scores"])


def test_latest_drift_is_the_newest_verdict_with_its_result(wh):
    store = ReleaseStore(wh, NAMES)
    assert store.latest_drift("s", "k") is None  # no table
    verdicts = [
        {"study": "s", "key": "k", "band": "old", "checked_at": T0, "result_json": json.dumps({"v": 0})},
        {"study": "s", "key": "k", "band": "new", "checked_at": T2, "result_json": json.dumps({"v": 2})},
        {"study": "s", "key": "k", "band": "mid", "checked_at": T1, "result_json": json.dumps({"v": 1})},
        {"study": "s", "key": "k2", "band": "other key", "checked_at": dt.datetime(2027, 1, 1, tzinfo=dt.UTC)},
        {"study": "t", "key": "k", "band": "other study", "checked_at": dt.datetime(2027, 1, 1, tzinfo=dt.UTC)},
        {"study": "s", "key": "", "band": "no key", "checked_at": T0, "result_json": ""},
    ]
    _put(wh, "drift", verdicts)
    got = store.latest_drift("s", "k")
    assert (got["band"], got["result"], got["result_json"]) == ("new", {"v": 2}, json.dumps({"v": 2}))
    assert set(got) == set(SCHEMAS["drift"].names) | {"result"}
    other = store.latest_drift("s", "k2")
    assert (other["band"], other["result"]) == ("other key", None)  # no result_json: no result
    nokey = store.latest_drift("s", "")
    assert (nokey["band"], nokey["result"]) == ("no key", None)  # an empty result_json: no result
    assert store.latest_drift("s", None)["band"] == "no key"  # no key reads the key-less verdicts
    assert store.latest_drift("s", "k3") is None


def test_the_review_pile_is_the_held_notes_riskiest_first(wh):
    store = ReleaseStore(wh, NAMES)
    assert store.review_pile("s", "k") == [] and store.guard_scores("s", "k") == []
    scores = [
        {"study": "s", "key": "k", "note_id": "c", "held": True, "rank": 2},
        {"study": "s", "key": "k", "note_id": "a", "held": True, "rank": 3},
        {"study": "s", "key": "k", "note_id": "b", "held": True, "rank": 2},
        {"study": "s", "key": "k", "note_id": "z", "held": True, "rank": 1},
        {"study": "s", "key": "k", "note_id": "f", "held": False, "rank": 0},
        {"study": "s", "key": "k2", "note_id": "y", "held": True, "rank": 0},
        {"study": "t", "key": "k", "note_id": "x", "held": True, "rank": 0},
    ]
    _put(wh, "guard_scores", scores)
    assert store.review_pile("s", "k") == ["z", "b", "c", "a"]  # by rank, then note id; "f" is not held
    assert sorted(r["note_id"] for r in store.guard_scores("s", "k")) == ["a", "b", "c", "f", "z"]
    assert store.review_pile("s", "k2") == ["y"]
