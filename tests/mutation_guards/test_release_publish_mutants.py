"""Versioned publish, the researcher store and rollback (``tide_core/release/publish.py``), in seconds.

Hand-made candidate rows (``tide_deid_notes`` with valid row hashes) of the asked (study, key) beside rows of
another study; no recognition, no model.  Every test that publishes runs on both stores: a DuckDB warehouse in
memory (the store is the warehouse itself) and a DuckDB file (the store is a separate ``.released.duckdb``
file that holds nothing else).  Fingerprints are recomputed here with hashlib; versions, pointer rows, members,
history actions, what a researcher reads and the error codes are asserted exactly.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

import duckdb
import pytest

from tide_core.errors import ConfigError, InputError
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.io.open import open_warehouse
from tide_core.release import publish as pub
from tide_core.store import tables
from tide_core.store.release_content import row_hash
from tide_core.store.tables import TableNames

NAMES = TableNames.with_prefix("x_")
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
RESEARCHER = ("note_ref", "patient_ref", "note_date", "note_type", "source", "site", "text")


def fp(hashes) -> str:
    h = hashlib.sha256(b"tide-release/1")
    for v in sorted(hashes):
        h.update(v.encode() + b"\n")
    return h.hexdigest()[:24]


def deid(study, key, note_id, text=None, patient="P1", **more):
    row = {
        "study": study,
        "key": key,
        "note_id": note_id,
        "note_ref": f"N-{note_id}",
        "patient_ref": patient,
        "text": text if text is not None else f"released {note_id}",
        "note_date": "2020-02-03",
        "note_type": "consult",
        "source": "ehr",
        "site": "S1",
        "anonymizer": "anon@1",
        "fingerprint": "fp1",
        "released_at": T0,
        **more,
    }
    row["row_hash"] = row_hash(study, key, row)
    return row


def put(wh, rows):
    foreign = [deid("t", "k", "z1"), deid("s", "k2", "z2")]
    wh.replace_table(NAMES.deid_notes, tables.to_table("deid_notes", rows + foreign))
    return rows


@pytest.fixture(autouse=True)
def _no_override(monkeypatch):
    monkeypatch.delenv(pub.STORE_ENV, raising=False)


@pytest.fixture
def wh(request, tmp_path):
    kind = getattr(request, "param", "memory")
    w = DuckDBWarehouse(":memory:") if kind == "memory" else open_warehouse(f"duckdb:{tmp_path / 'w.duckdb'}")
    yield w
    w.close()


#: both stores (a file store opens and closes its DuckDB file per call: about a second per test)
BOTH = pytest.mark.parametrize("wh", ["memory", "file"], indirect=True)


def store_tables(wh):
    """{table: rows} of the researcher store (reads the separate file when there is one)."""
    with pub.researcher_store(wh, create=False) as rs:
        if rs is None:
            return None
        out = {}
        for n in (NAMES.published_content, NAMES.published_members, NAMES.published_pointer):
            out[n] = rs.read_table(n).to_pylist() if rs.table_exists(n) else []
        return out


def members(wh, version, study="s", key="k"):
    rows = store_tables(wh)[NAMES.published_members]
    return sorted(r["row_hash"] for r in rows if (r["study"], r["key"], r["version"]) == (study, key, version))


def hist(wh, study="s", key="k"):
    return [
        (r["action"], r["version"], r["content_fingerprint"], r["n_notes"]) for r in pub.history(wh, NAMES, study, key)
    ]


def seen(wh, study="s", key="k"):
    return sorted((r["note_ref"], r["text"]) for r in pub.researcher_rows(wh, study, key))


V1 = [deid("s", "k", "n1"), deid("s", "k", "n2", patient="P2")]
V2 = [V1[0], deid("s", "k", "n2", text="released n2, re-made", patient="P2"), deid("s", "k", "n3")]


# -- store_url and the store -----------------------------------------------------------------------------------


def test_the_store_of_a_file_warehouse_is_a_separate_file(tmp_path, monkeypatch):
    w = DuckDBWarehouse(str(tmp_path / "w.duckdb"))
    assert pub.store_url(w) == f"duckdb:{tmp_path / 'w.released.duckdb'}"
    w2 = DuckDBWarehouse(str(tmp_path / "plain.db"))
    assert pub.store_url(w2) == f"duckdb:{tmp_path / 'plain.db.released.duckdb'}"
    assert pub.store_url(DuckDBWarehouse(":memory:")) is None
    monkeypatch.setenv(pub.STORE_ENV, str(tmp_path / "r.duckdb"))
    assert pub.store_url(w) == f"duckdb:{tmp_path / 'r.duckdb'}"
    assert pub.store_url(DuckDBWarehouse(":memory:")) == f"duckdb:{tmp_path / 'r.duckdb'}"
    monkeypatch.setenv(pub.STORE_ENV, f"duckdb:{tmp_path / 'q.duckdb'}")
    assert pub.store_url(w) == f"duckdb:{tmp_path / 'q.duckdb'}"
    for same in (str(tmp_path / "w.duckdb"), f"duckdb:{tmp_path / 'w.duckdb'}", f"{tmp_path}/./w.duckdb"):
        monkeypatch.setenv(pub.STORE_ENV, same)
        with pytest.raises(ConfigError) as e:
            pub.store_url(w)
        assert e.value.code == "E934" and pub.STORE_ENV in e.value.hint
    for x in (w, w2):
        x.close()


class FakeBigQuery:
    url = "bigquery:proj.ds"
    project = "proj"
    dataset = "ds"

    def __init__(self):
        self.queries = []

    def table_exists(self, name):
        return name == "released_notes"

    def sql(self, query, params=None):
        import pyarrow as pa

        self.queries.append((query, params))
        return pa.Table.from_pylist([{"text": "t"}])

    def close(self):
        raise AssertionError("the warehouse's own store is never closed")


def test_the_store_of_a_bigquery_warehouse_is_its_dataset(monkeypatch):
    bq = FakeBigQuery()
    assert pub.store_url(bq) is None
    with pub.researcher_store(bq) as rs:
        assert rs is bq
    monkeypatch.setenv(pub.STORE_ENV, "bigquery:other.ds")
    assert pub.store_url(bq) == "bigquery:other.ds"


def test_a_bigquery_researcher_read_is_one_parameterised_query():
    bq = FakeBigQuery()
    assert pub.researcher_rows(bq, "s", "k", "text") == [{"text": "t"}]
    assert bq.queries == [
        ("SELECT text FROM `proj.ds.released_notes` WHERE study = @study AND key = @key", {"study": "s", "key": "k"})
    ]


def test_views_render_for_each_warehouse_with_the_configured_names():
    class Duck:
        url = "duckdb::memory:"
        schema = "rel"

    class NoSchema:
        url = "duckdb::memory:"

    duck = pub.render_view(Duck(), pub.VIEW_SQL, NAMES)
    pt, mb, ct = NAMES.published_pointer, NAMES.published_members, NAMES.published_content
    assert pt != "tide_published_pointer"
    assert f'"rel"."{pt}" p' in duck and f'"rel"."{mb}" m' in duck
    assert f'"rel"."{ct}" c' in duck and '"rel"."released_notes"' in duck
    assert "`" not in duck and "{{" not in duck and 'p."study", p."key", p."version"' in duck
    assert '"main"."released_versions"' in pub.render_view(NoSchema(), pub.VERSIONS_VIEW_SQL, NAMES)
    bq = pub.render_view(FakeBigQuery(), pub.VIEW_SQL, NAMES)
    assert f"`proj.ds.{pt}` p" in bq and "`proj.ds.released_notes`" in bq
    assert f"`proj.ds.{ct}` c" in bq and f"`proj.ds.{mb}` m" in bq
    assert "{{" not in bq and '"' not in bq
    default = pub.render_view(FakeBigQuery(), pub.VIEW_SQL, TableNames())
    assert "`proj.ds.tide_published_pointer` p" in default


def test_a_read_creates_no_store_file(tmp_path):
    w = DuckDBWarehouse(str(tmp_path / "w.duckdb"))
    with pub.researcher_store(w, create=False) as rs:
        assert rs is None
    assert pub.published_version(w, NAMES, "s", "k") is None
    assert pub.researcher_rows(w, "s", "k") == []
    assert not (tmp_path / "w.released.duckdb").exists()
    with pub.researcher_store(w) as rs:
        assert rs is not None and rs is not w and rs.path == str(tmp_path / "w.released.duckdb")
    assert (tmp_path / "w.released.duckdb").exists()
    # the store was closed: another connection can open it read-write
    duckdb.connect(str(tmp_path / "w.released.duckdb")).close()
    with pub.researcher_store(w, create=False) as rs:
        assert rs is not None and rs.table_exists("released_notes") is False
    assert pub.researcher_rows(w, "s", "k") == []
    w.close()


def test_a_store_in_another_schema_is_found_by_its_file(tmp_path, monkeypatch):
    monkeypatch.setenv(pub.STORE_ENV, f"duckdb:{tmp_path / 'r.duckdb'}#rel")
    w = DuckDBWarehouse(str(tmp_path / "w.duckdb"))
    with pub.researcher_store(w, create=False) as rs:
        assert rs is None
    put(w, V1)
    assert pub.publish(w, NAMES, "s", "k").version == "v1"
    with pub.researcher_store(w, create=False) as rs:
        assert rs is not None and rs.schema == "rel"
        assert rs.sql('SELECT count(*) AS n FROM "rel"."released_notes"').to_pylist() == [{"n": 2}]
    w.close()


@BOTH
def test_ensure_store_creates_the_tables_and_views_once(wh):
    with pub.researcher_store(wh) as rs:
        pub.ensure_store(rs, NAMES)
        for n in (NAMES.published_content, NAMES.published_members, NAMES.published_pointer):
            assert rs.table_exists(n) and rs.count(n) == 0
        for view, cols in pub.RESEARCHER_OBJECTS.items():
            assert tuple(rs.sql(f'SELECT * FROM "{view}"').column_names) == cols
        rs.append(NAMES.published_pointer, tables.to_table("published_pointer", [{"study": "s", "key": "k"}]))
        pub.ensure_store(rs, NAMES)  # idempotent: nothing emptied
        assert rs.count(NAMES.published_pointer) == 1
        assert pub.pointer(rs, NAMES, "s", "k")["study"] == "s"
        assert pub.pointer(rs, NAMES, "s", "k2") is None
    assert pub.researcher_rows(wh, "s", "k") == []


def test_pointer_of_a_store_without_tables_is_none():
    w = DuckDBWarehouse(":memory:")
    assert pub.pointer(w, NAMES, "s", "k") is None
    w.close()


# -- publish --------------------------------------------------------------------------------------------------


@BOTH
def test_the_first_publish_is_v1_with_its_pointer_members_content_and_history(wh):
    put(wh, V1)
    before = dt.datetime.now(dt.UTC)
    got = pub.publish(
        wh, NAMES, "s", "k", gate_policy="pol sha256:1", gate_approval="appr", gate_statement="stmt", actor="me"
    )
    f1 = fp(r["row_hash"] for r in V1)
    assert got == pub.Published("v1", f1, 2, True)
    st = store_tables(wh)
    (point,) = st[NAMES.published_pointer]
    assert {k: v for k, v in point.items() if k != "published_at"} == {
        "study": "s",
        "key": "k",
        "version": "v1",
        "content_fingerprint": f1,
        "n_notes": 2,
    }
    assert point["published_at"] >= before
    assert members(wh, "v1") == sorted(r["row_hash"] for r in V1)
    assert sorted(st[NAMES.published_content], key=lambda r: r["note_ref"]) == [
        {"study": "s", "key": "k", "row_hash": r["row_hash"], **{c: r[c] for c in RESEARCHER}} for r in V1
    ]
    (h,) = pub.history(wh, NAMES, "s", "k")
    assert {k: v for k, v in h.items() if k != "decided_at"} == {
        "study": "s",
        "key": "k",
        "version": "v1",
        "action": "publish",
        "content_fingerprint": f1,
        "n_notes": 2,
        "gate_policy": "pol sha256:1",
        "gate_approval": "appr",
        "gate_statement": "stmt",
        "actor": "me",
    }
    assert h["decided_at"] == point["published_at"]
    assert pub.published_version(wh, NAMES, "s", "k") == point
    assert pub.published_version(wh, NAMES, "t", "k") is None
    assert seen(wh) == [("N-n1", "released n1"), ("N-n2", "released n2")]
    rows = pub.researcher_rows(wh, "s", "k")
    assert all(tuple(r) == pub.RESEARCHER_OBJECTS["released_notes"] for r in rows)
    assert {(r["study"], r["key"], r["version"], r["patient_ref"]) for r in rows} == {
        ("s", "k", "v1", "P1"),
        ("s", "k", "v1", "P2"),
    }
    assert pub.researcher_rows(wh, "t", "k") == []
    assert pub.researcher_rows(wh, "s", "k", "text") == [{"text": "released n1"}, {"text": "released n2"}] or sorted(
        r["text"] for r in pub.researcher_rows(wh, "s", "k", "text")
    ) == ["released n1", "released n2"]
    with pub.researcher_store(wh, create=False) as rs:
        (v,) = rs.sql('SELECT * FROM "released_versions"').to_pylist()
        assert tuple(v) == pub.RESEARCHER_OBJECTS["released_versions"]
        assert (v["study"], v["key"], v["version"], v["n_notes"]) == ("s", "k", "v1", 2)


def test_the_researcher_store_of_a_file_warehouse_holds_nothing_of_the_warehouse(tmp_path):
    w = open_warehouse(f"duckdb:{tmp_path / 'w.duckdb'}")
    put(w, V1)
    pub.publish(w, NAMES, "s", "k")
    assert not w.table_exists(NAMES.published_pointer) and not w.table_exists("released_notes")
    assert w.table_exists(NAMES.release_versions)
    w.close()
    rs = duckdb.connect(str(tmp_path / "w.released.duckdb"))
    names = {r[0] for r in rs.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    rs.close()
    assert names == {
        NAMES.published_content,
        NAMES.published_members,
        NAMES.published_pointer,
        "released_notes",
        "released_versions",
    }


def test_a_row_repeated_in_the_candidate_is_one_content_row(wh):
    twin = dict(V1[0], note_id="n1-twin")  # the same researcher columns: the same row hash
    assert twin["row_hash"] == V1[0]["row_hash"]
    put(wh, [*V1, twin])
    got = pub.publish(wh, NAMES, "s", "k")
    assert got.n_notes == 2 and got.content_fingerprint == fp(r["row_hash"] for r in V1)
    assert len(store_tables(wh)[NAMES.published_content]) == 2 and len(members(wh, "v1")) == 2


@BOTH
def test_publishing_the_same_content_again_changes_nothing(wh):
    put(wh, V1)
    first = pub.publish(wh, NAMES, "s", "k")
    before = store_tables(wh)
    again = pub.publish(wh, NAMES, "s", "k", actor="other")
    assert again == pub.Published("v1", first.content_fingerprint, 2, False)
    assert store_tables(wh) == before
    assert hist(wh) == [("publish", "v1", first.content_fingerprint, 2)]


def test_a_pointer_without_its_history_gets_its_publish_row(wh):
    put(wh, V1)
    first = pub.publish(wh, NAMES, "s", "k")
    wh.delete(NAMES.release_versions, {"study": "s"})
    before = dt.datetime.now(dt.UTC)
    again = pub.publish(wh, NAMES, "s", "k", gate_policy="p", gate_approval="ap", gate_statement="st", actor="a")
    assert again == pub.Published("v1", first.content_fingerprint, 2, False)
    (h,) = pub.history(wh, NAMES, "s", "k")
    assert {k: v for k, v in h.items() if k != "decided_at"} == {
        "study": "s",
        "key": "k",
        "version": "v1",
        "action": "publish",
        "content_fingerprint": first.content_fingerprint,
        "n_notes": 2,
        "gate_policy": "p",
        "gate_approval": "ap",
        "gate_statement": "st",
        "actor": "a",
    }
    assert before <= h["decided_at"] <= dt.datetime.now(dt.UTC)


def test_only_a_history_row_of_the_current_version_vouches_for_the_pointer(wh):
    put(wh, V1)
    pub.publish(wh, NAMES, "s", "k")
    put(wh, V2)
    second = pub.publish(wh, NAMES, "s", "k")
    wh.delete(NAMES.release_versions, {"study": "s", "version": "v2"})
    assert pub.publish(wh, NAMES, "s", "k").changed is False
    assert [(a, v) for a, v, *_ in hist(wh)] == [("publish", "v1"), ("publish", "v2")]
    assert hist(wh)[1] == ("publish", "v2", second.content_fingerprint, 3)


def test_a_publish_is_stamped_in_utc_whatever_the_local_zone(wh, monkeypatch):
    import time

    put(wh, V1)
    monkeypatch.setenv("TZ", "Etc/GMT+5")
    time.tzset()
    try:
        before = dt.datetime.now(dt.UTC)
        pub.publish(wh, NAMES, "s", "k")
        after = dt.datetime.now(dt.UTC)
    finally:
        monkeypatch.undo()
        time.tzset()
    assert before <= pub.published_version(wh, NAMES, "s", "k")["published_at"] <= after
    assert before <= pub.history(wh, NAMES, "s", "k")[0]["decided_at"] <= after


def test_a_rollback_row_is_history_enough_for_the_pointer(wh):
    put(wh, V1)
    pub.publish(wh, NAMES, "s", "k")
    put(wh, V2)
    pub.publish(wh, NAMES, "s", "k")
    pub.rollback(wh, NAMES, "s", "k")
    put(wh, V1)
    assert pub.publish(wh, NAMES, "s", "k").changed is False
    assert [a for a, *_ in hist(wh)] == ["publish", "publish", "withdraw", "rollback"]


@BOTH
def test_new_content_is_the_next_version_and_adds_only_its_new_rows(wh):
    put(wh, V1)
    pub.publish(wh, NAMES, "s", "k")
    put(wh, V2)
    got = pub.publish(wh, NAMES, "s", "k")
    f2 = fp(r["row_hash"] for r in V2)
    assert got == pub.Published("v2", f2, 3, True)
    assert members(wh, "v1") == sorted(r["row_hash"] for r in V1)
    assert members(wh, "v2") == sorted(r["row_hash"] for r in V2)
    content = store_tables(wh)[NAMES.published_content]
    assert sorted(r["row_hash"] for r in content) == sorted({r["row_hash"] for r in V1 + V2})
    assert seen(wh) == [("N-n1", "released n1"), ("N-n2", "released n2, re-made"), ("N-n3", "released n3")]
    (point,) = store_tables(wh)[NAMES.published_pointer]
    assert (point["version"], point["content_fingerprint"], point["n_notes"]) == ("v2", f2, 3)
    assert [v for _, v, *_ in hist(wh)] == ["v1", "v2"]


def test_publishing_earlier_content_again_reuses_its_version(wh):
    put(wh, V1)
    pub.publish(wh, NAMES, "s", "k")
    put(wh, V2)
    pub.publish(wh, NAMES, "s", "k")
    put(wh, V1)
    got = pub.publish(wh, NAMES, "s", "k")
    assert got == pub.Published("v1", fp(r["row_hash"] for r in V1), 2, True)
    assert seen(wh) == [("N-n1", "released n1"), ("N-n2", "released n2")]
    assert [(a, v) for a, v, *_ in hist(wh)] == [("publish", "v1"), ("publish", "v2"), ("publish", "v1")]


def test_an_earlier_version_whose_members_are_gone_is_published_as_a_new_one(wh):
    put(wh, V1)
    pub.publish(wh, NAMES, "s", "k")
    put(wh, V2)
    pub.publish(wh, NAMES, "s", "k")
    with pub.researcher_store(wh) as rs:
        rs.delete(NAMES.published_members, {"study": "s", "key": "k", "version": "v1"})
    put(wh, V1)
    assert pub.publish(wh, NAMES, "s", "k").version == "v3"
    assert members(wh, "v3") == sorted(r["row_hash"] for r in V1)


def test_the_next_version_follows_the_highest_recorded_one(wh):
    put(wh, V1)
    pub.publish(wh, NAMES, "s", "k")
    odd = [
        {"study": "s", "key": "k", "version": v, "action": "withdraw", "content_fingerprint": "x", "decided_at": T0}
        for v in ("v7", "w9", "v", "v1a", None)
    ]
    odd.append({"study": "t", "key": "k", "version": "v40", "action": "publish", "decided_at": T0})
    wh.append(NAMES.release_versions, tables.to_table("release_versions", odd))
    put(wh, V2)
    assert pub.publish(wh, NAMES, "s", "k").version == "v8"


def test_the_pointer_counts_when_history_is_lost(wh):
    put(wh, V1)
    pub.publish(wh, NAMES, "s", "k")
    put(wh, V2)
    pub.publish(wh, NAMES, "s", "k")
    wh.delete(NAMES.release_versions, {"study": "s"})
    put(wh, [deid("s", "k", "n9")])
    assert pub.publish(wh, NAMES, "s", "k").version == "v3"


def test_a_publish_of_another_key_starts_its_own_versions(wh):
    put(wh, V1)
    pub.publish(wh, NAMES, "s", "k")
    put(wh, V2)
    pub.publish(wh, NAMES, "s", "k")
    assert pub.publish(wh, NAMES, "s", "k2").version == "v1"
    assert pub.publish(wh, NAMES, "t", "k").version == "v1"
    assert seen(wh, "s", "k2") == [("N-z2", "released z2")]
    assert len(seen(wh)) == 3


def test_nothing_to_publish_is_refused(wh):
    put(wh, [])
    with pytest.raises(InputError) as e:
        pub.publish(wh, NAMES, "s", "k")
    assert e.value.code == "E930" and "s/k" in e.value.message and "run anonymization" in e.value.hint
    assert store_tables(wh) in (
        None,
        {NAMES.published_content: [], NAMES.published_members: [], NAMES.published_pointer: []},
    )


def test_an_edited_candidate_is_refused_before_the_store_is_touched(wh):
    put(wh, [dict(V1[0], text="edited after anonymization"), V1[1]])
    with pytest.raises(InputError) as e:
        pub.publish(wh, NAMES, "s", "k")
    assert e.value.code == "E937"
    put(wh, [dict(V1[0], row_hash=""), V1[1]])
    with pytest.raises(InputError) as e:
        pub.publish(wh, NAMES, "s", "k")
    assert e.value.code == "E932"
    assert pub.published_version(wh, NAMES, "s", "k") is None and hist(wh) == []


@BOTH
def test_a_candidate_changed_after_verification_is_not_published(wh):
    put(wh, V1)
    verified = fp(r["row_hash"] for r in V1)
    put(wh, V2)
    with pytest.raises(InputError) as e:
        pub.publish(wh, NAMES, "s", "k", expect_fingerprint=verified)
    assert e.value.code == "E921" and "s/k" in e.value.message and "decide the release again" in e.value.hint
    assert pub.published_version(wh, NAMES, "s", "k") is None and hist(wh) == []
    got = pub.publish(wh, NAMES, "s", "k", expect_fingerprint=fp(r["row_hash"] for r in V2))
    assert got.version == "v1" and got.changed


# -- rollback and withdrawn content ----------------------------------------------------------------------------


@BOTH
def test_rollback_points_back_and_withdraws_the_content_moved_away_from(wh):
    put(wh, V1)
    pub.publish(wh, NAMES, "s", "k")
    put(wh, V2)
    pub.publish(wh, NAMES, "s", "k")
    f1, f2 = fp(r["row_hash"] for r in V1), fp(r["row_hash"] for r in V2)
    before = dt.datetime.now(dt.UTC)
    assert pub.rollback(wh, NAMES, "s", "k", actor="ops") == "v1"
    (point,) = store_tables(wh)[NAMES.published_pointer]
    assert (point["version"], point["content_fingerprint"], point["n_notes"]) == ("v1", f1, 2)
    assert point["published_at"] >= before
    assert seen(wh) == [("N-n1", "released n1"), ("N-n2", "released n2")]
    assert hist(wh)[:2] == [("publish", "v1", f1, 2), ("publish", "v2", f2, 3)]
    assert sorted(hist(wh)[2:]) == [("rollback", "v1", f1, 2), ("withdraw", "v2", f2, 3)]
    last = pub.history(wh, NAMES, "s", "k")[2:]
    assert {r["actor"] for r in last} == {"ops"} and {r["decided_at"] for r in last} == {point["published_at"]}
    assert {(r["gate_policy"], r["gate_approval"], r["gate_statement"]) for r in last} == {("", "", "")}
    # the withdrawn content is refused, unless reinstated explicitly (as its own version)
    with pytest.raises(InputError) as e:
        pub.publish(wh, NAMES, "s", "k")
    assert e.value.code == "E935" and "--allow-withdrawn" in e.value.hint and "withdrawn" in e.value.message
    assert pub.published_version(wh, NAMES, "s", "k")["version"] == "v1"
    assert pub.publish(wh, NAMES, "s", "k", allow_withdrawn=True) == pub.Published("v2", f2, 3, True)
    assert seen(wh)[-1] == ("N-n3", "released n3")


def test_rollback_to_a_named_version(wh):
    put(wh, V1)
    pub.publish(wh, NAMES, "s", "k")
    put(wh, V2)
    pub.publish(wh, NAMES, "s", "k")
    put(wh, [deid("s", "k", "n7")])
    pub.publish(wh, NAMES, "s", "k")
    assert pub.rollback(wh, NAMES, "s", "k", "v1") == "v1"
    assert seen(wh) == [("N-n1", "released n1"), ("N-n2", "released n2")]
    with pytest.raises(InputError) as e:
        pub.rollback(wh, NAMES, "s", "k", "v9")
    assert e.value.code == "E936" and "named 'v9'" in e.value.message and "tide release status" in e.value.hint
    with pytest.raises(InputError) as e:
        pub.rollback(wh, NAMES, "s", "k", "v1")  # the current version is no target
    assert e.value.code == "E936"
    assert pub.rollback(wh, NAMES, "s", "k", "v2") == "v2"


def test_rollback_with_nothing_earlier_is_refused(wh):
    with pytest.raises(InputError) as e:
        pub.rollback(wh, NAMES, "s", "k")
    assert e.value.code == "E936" and "nothing of s/k is published" in e.value.message
    put(wh, V1)
    pub.publish(wh, NAMES, "s", "k")
    with pytest.raises(InputError) as e:
        pub.rollback(wh, NAMES, "s", "k2")
    assert e.value.code == "E936" and "nothing" in e.value.message
    with pytest.raises(InputError) as e:
        pub.rollback(wh, NAMES, "s", "k")
    assert e.value.code == "E936" and "no earlier published version of s/k to roll back to" == e.value.message
    assert hist(wh) == [("publish", "v1", fp(r["row_hash"] for r in V1), 2)]


def test_rollback_to_a_version_whose_members_are_gone_is_refused(wh):
    put(wh, V1)
    pub.publish(wh, NAMES, "s", "k")
    put(wh, V2)
    pub.publish(wh, NAMES, "s", "k")
    with pub.researcher_store(wh) as rs:
        rs.delete(NAMES.published_members, {"study": "s", "key": "k", "version": "v1"})
    with pytest.raises(InputError) as e:
        pub.rollback(wh, NAMES, "s", "k")
    assert e.value.code == "E936"
    assert pub.published_version(wh, NAMES, "s", "k")["version"] == "v2"


def test_rollback_of_a_file_warehouse_without_a_store_is_refused(tmp_path):
    w = DuckDBWarehouse(str(tmp_path / "w.duckdb"))
    with pytest.raises(InputError) as e:
        pub.rollback(w, NAMES, "s", "k")
    assert e.value.code == "E936"
    assert not Path(tmp_path / "w.released.duckdb").exists()
    w.close()


def test_candidate_content_holds_researcher_columns_and_row_hash_only(wh):
    put(wh, V1)
    t = pub.candidate_content(wh, NAMES, "s", "k")
    assert sorted(t.to_pylist(), key=lambda r: r["note_ref"]) == [
        {"study": "s", "key": "k", "row_hash": r["row_hash"], **{c: r[c] for c in RESEARCHER}} for r in V1
    ]


def test_a_second_rollback_does_not_reinstate_withdrawn_content(wh):
    for rows in (V1, V2, [deid("s", "k", "n7", text="leaks a name")]):
        put(wh, rows)
        pub.publish(wh, NAMES, "s", "k")
    assert pub.rollback(wh, NAMES, "s", "k") == "v2"  # v3 withdrawn
    assert pub.rollback(wh, NAMES, "s", "k") == "v1"  # not v3, the withdrawn content
    with pytest.raises(InputError) as err:  # named: only on purpose
        pub.rollback(wh, NAMES, "s", "k", "v3")
    assert err.value.code == "E935"
    assert pub.rollback(wh, NAMES, "s", "k", "v3", allow_withdrawn=True) == "v3"


def test_a_publish_and_a_rollback_without_gate_or_actor_record_empty_fields(wh):
    put(wh, V1)
    pub.publish(wh, NAMES, "s", "k")
    put(wh, V2)
    pub.publish(wh, NAMES, "s", "k")
    pub.rollback(wh, NAMES, "s", "k")
    rows = pub.history(wh, NAMES, "s", "k")
    assert len(rows) == 4
    assert {(r["gate_policy"], r["gate_approval"], r["gate_statement"], r["actor"]) for r in rows} == {("", "", "", "")}


def test_rollback_reads_only_the_history_of_its_key(wh):
    put(wh, V1)
    pub.publish(wh, NAMES, "s", "k")
    put(wh, V2)
    pub.publish(wh, NAMES, "s", "k")
    pub.publish(wh, NAMES, "s", "k2")  # a later v1 of another key
    assert pub.rollback(wh, NAMES, "s", "k") == "v1"
    point = pub.published_version(wh, NAMES, "s", "k")
    assert (point["content_fingerprint"], point["n_notes"]) == (fp(r["row_hash"] for r in V1), 2)
    assert pub.published_version(wh, NAMES, "s", "k2")["version"] == "v1"


def test_rollback_without_the_members_table_is_refused(wh):
    put(wh, V1)
    pub.publish(wh, NAMES, "s", "k")
    put(wh, V2)
    pub.publish(wh, NAMES, "s", "k")
    wh.sql('DROP VIEW "released_notes"')
    wh.sql(f'DROP TABLE "{NAMES.published_members}"')
    with pytest.raises(InputError) as e:
        pub.rollback(wh, NAMES, "s", "k")
    assert e.value.code == "E936"
    assert pub.published_version(wh, NAMES, "s", "k")["version"] == "v2"


def test_a_rollback_with_unknown_counts_records_zero_notes(wh):
    put(wh, V1)
    pub.publish(wh, NAMES, "s", "k")
    put(wh, V2)
    pub.publish(wh, NAMES, "s", "k")
    wh.sql(f'UPDATE "{NAMES.published_pointer}" SET n_notes = NULL')
    wh.sql(f'UPDATE "{NAMES.release_versions}" SET n_notes = NULL')
    pub.rollback(wh, NAMES, "s", "k")
    assert sorted((a, n) for a, _, _, n in hist(wh)[2:]) == [("rollback", 0), ("withdraw", 0)]


def test_a_rollback_is_stamped_in_utc_whatever_the_local_zone(wh, monkeypatch):
    import time

    put(wh, V1)
    pub.publish(wh, NAMES, "s", "k")
    put(wh, V2)
    pub.publish(wh, NAMES, "s", "k")
    monkeypatch.setenv("TZ", "Etc/GMT+5")
    time.tzset()
    try:
        before = dt.datetime.now(dt.UTC)
        pub.rollback(wh, NAMES, "s", "k")
        after = dt.datetime.now(dt.UTC)
    finally:
        monkeypatch.undo()
        time.tzset()
    assert before <= pub.published_version(wh, NAMES, "s", "k")["published_at"] <= after
    assert all(before <= r["decided_at"] <= after for r in pub.history(wh, NAMES, "s", "k")[2:])


def test_a_store_without_a_url_is_read_as_duckdb():
    class Plain:
        def __init__(self):
            self.inner = DuckDBWarehouse(":memory:")

        def table_exists(self, name):
            return True

        def sql(self, query, params=None):
            return self.inner.sql("SELECT ? AS study, ? AS key", params) if "?" in query else None

    assert pub.researcher_rows(Plain(), "s", "k") == [{"study": "s", "key": "k"}]


def test_table_names_of_any_case_are_qualified():
    class Duck:
        url = "duckdb::memory:"
        schema = "main"

    mixed = TableNames.with_prefix("Rel_")
    sql = pub.render_view(Duck(), pub.VIEW_SQL, mixed)
    assert f'"main"."{mixed.published_pointer}" p' in sql and "{{" not in sql and "`" not in sql


class NoUrl:
    """A warehouse that names no URL (neither built-in backend): it is its own store, read as DuckDB."""

    schema = "main"


def test_a_warehouse_without_a_url_or_path_is_its_own_store():
    assert pub.store_url(NoUrl()) is None
    assert '"main"."released_notes"' in pub.render_view(NoUrl(), pub.VIEW_SQL, NAMES)

    class DuckNoPath:
        url = "duckdb::memory:"

    assert pub.store_url(DuckNoPath()) is None


def test_the_separate_store_refusal_names_duckdb(tmp_path, monkeypatch):
    w = DuckDBWarehouse(str(tmp_path / "w.duckdb"))
    monkeypatch.setenv(pub.STORE_ENV, str(tmp_path / "w.duckdb"))
    with pytest.raises(ConfigError) as e:
        pub.store_url(w)
    assert "separate DuckDB file" in e.value.message
    w.close()


def test_content_of_another_key_is_not_content_of_this_one(wh):
    # a content row of another key with this key's row hash (hand-made: real row hashes are scoped by key)
    put(wh, V1)
    with pub.researcher_store(wh) as rs:
        pub.ensure_store(rs, NAMES)
        other = {"study": "s", "key": "k2", "row_hash": V1[0]["row_hash"], "note_ref": "N-other", "text": "other"}
        rs.append(NAMES.published_content, tables.to_table("published_content", [other]))
    pub.publish(wh, NAMES, "s", "k")
    assert seen(wh) == [("N-n1", "released n1"), ("N-n2", "released n2")]


def test_a_researcher_store_in_its_own_schema_is_read_there(tmp_path, monkeypatch):
    monkeypatch.setenv(pub.STORE_ENV, f"duckdb:{tmp_path / 'released.duckdb'}#rel")
    w = open_warehouse(f"duckdb:{tmp_path / 'w.duckdb'}")
    try:
        put(w, V1)
        pub.publish(w, NAMES, "s", "k")
        rows = pub.researcher_rows(w, "s", "k", "version, text")
    finally:
        w.close()
    assert sorted((r["version"], r["text"]) for r in rows) == sorted(("v1", r["text"]) for r in V1)


def test_a_rollback_stopped_before_its_commit_leaves_the_current_version_and_finishes_on_rerun(wh):
    """Intent first: the withdrawal is recorded before the pointer moves; a kill in between leaves
    researchers the current version, whole; publish does not claim withdrawn content; a rerun finishes."""
    for rows in (V1, V2):
        put(wh, rows)
        pub.publish(wh, NAMES, "s", "k")

    class KilledError(Exception):
        pass

    def die(version):
        raise KilledError

    with pytest.raises(KilledError):
        pub.rollback(wh, NAMES, "s", "k", before_commit=die)
    assert {r["version"] for r in pub.researcher_rows(wh, "s", "k")} == {"v2"}  # unchanged
    with pytest.raises(InputError) as err:  # the withdrawn content is not claimed as published again
        pub.publish(wh, NAMES, "s", "k")
    assert err.value.code == "E935"
    assert pub.rollback(wh, NAMES, "s", "k") == "v1"
    assert sorted(r["text"] for r in pub.researcher_rows(wh, "s", "k")) == sorted(r["text"] for r in V1)
