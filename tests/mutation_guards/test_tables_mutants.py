"""The table registry's rules (``tide_core/store/tables.py``), recomputed from their definition.

What is pinned: a table spec's default name (``tide_<kind>``), its DDL file (two-digit number), its
BigQuery clustering (the columns ``study``, ``key``, ``note_id`` it has, in that order); the names
TIDE writes to are distinct (E390, for any two of the fourteen), a prefix renames every TIDE table
and ``studies`` but not the input tables; ``of`` answers only the registry's kinds (E391);
``to_table``/``empty`` build tables of exactly the registered schema, missing columns null.
``_spec`` is called directly: ``TABLES`` is built once, at import, before any mutant is switched on.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import fields

import pyarrow as pa
import pytest

from tide_core.errors import ConfigError
from tide_core.store import tables
from tide_core.store.tables import SCHEMAS, TABLES, TableNames, TableSpec

FIELDS = [f.name for f in fields(TableNames)]
DEFAULTS = {
    "notes": "notes",
    "patients": "patients",
    "spans": "tide_spans",
    "recognized_notes": "tide_recognized_notes",
    "deid_notes": "tide_deid_notes",
    "released_spans": "tide_released_spans",
    "quarantine": "tide_quarantine",
    "runs": "tide_runs",
    "review_decisions": "tide_review_decisions",
    "audits": "tide_audits",
    "drift": "tide_drift",
    "releases": "tide_releases",
    "guard_scores": "tide_guard_scores",
    "audit_frames": "tide_audit_frames",
    "published_content": "tide_published_content",
    "published_members": "tide_published_members",
    "published_pointer": "tide_published_pointer",
    "release_versions": "tide_release_versions",
    "chunk_verdicts": "tide_chunk_verdicts",
    "studies": "tide_studies",
}


def schema(*names: str) -> pa.Schema:
    return pa.schema([(n, pa.string()) for n in names])


@pytest.mark.parametrize(
    "columns, cluster",
    [
        (("study", "key", "note_id", "x"), ("study", "key", "note_id")),
        (("note_id", "key", "study"), ("study", "key", "note_id")),  # the registry's order, not the schema's
        (("x", "note_id", "study"), ("study", "note_id")),
        (("key",), ("key",)),
        (("note_id",), ("note_id",)),
        (("run_id", "x"), ()),
    ],
)
def test_a_spec_clusters_by_the_study_key_and_note_columns_it_has(columns, cluster):
    s = schema(*columns)
    spec = tables._spec(3, "thing", s, ("study",), "made_at", "A thing.")
    assert spec == TableSpec("thing", "tide_thing", s, ("study",), cluster, "made_at", "A thing.", "03_tide_thing.sql")


@pytest.mark.parametrize(
    "n, file", [(1, "01_tide_x.sql"), (9, "09_tide_x.sql"), (10, "10_tide_x.sql"), (123, "123_tide_x.sql")]
)
def test_a_spec_ddl_file_is_numbered_with_two_digits(n, file):
    spec = tables._spec(n, "x", schema("study"), (), None, "")
    assert (spec.ddl_file, spec.default_name, spec.time_partition, spec.partition) == (file, "tide_x", None, ())


def test_the_registry_is_numbered_in_order_and_names_each_table_after_its_kind():
    assert [t.ddl_file for t in TABLES.values()] == [f"{i:02d}_tide_{k}.sql" for i, k in enumerate(TABLES, 1)]
    for kind, spec in TABLES.items():
        assert spec.kind == kind and spec.default_name == f"tide_{kind}"
        assert spec.schema is SCHEMAS[kind]
        assert tables.PARTITION_COLUMNS[kind] == spec.partition


def test_the_default_names():
    assert {f: getattr(TableNames(), f) for f in FIELDS} == DEFAULTS


def test_a_prefix_renames_every_tide_table_and_studies_only():
    named = TableNames.with_prefix("site_a.")
    assert {f: getattr(named, f) for f in FIELDS} == {
        **{f: f"site_a.{f}" for f in FIELDS},
        "notes": "notes",
        "patients": "patients",
    }
    other = TableNames.with_prefix("p_", notes="src_notes", patients="src_patients")
    assert (other.notes, other.patients, other.studies, other.spans) == (
        "src_notes",
        "src_patients",
        "p_studies",
        "p_spans",
    )


@pytest.mark.parametrize("first", range(len(FIELDS)))
def test_two_tables_with_one_name_are_e390(first):
    second = (first + 1) % len(FIELDS)
    clash = {FIELDS[first]: DEFAULTS[FIELDS[second]]}
    with pytest.raises(ConfigError) as e:
        TableNames(**clash)
    assert e.value.code == "E390"
    assert "same name" in e.value.message
    assert "TableNames" in e.value.hint
    # the same override with a name nobody else has is accepted
    assert getattr(TableNames(**{FIELDS[first]: "unique_name"}), FIELDS[first]) == "unique_name"


def test_a_prefix_that_makes_two_names_equal_is_e390():
    with pytest.raises(ConfigError) as e:
        TableNames.with_prefix("", notes="spans")
    assert e.value.code == "E390"
    assert TableNames.with_prefix("", notes="src").spans == "spans"


@pytest.mark.parametrize("kind", list(TABLES))
def test_of_answers_the_configured_name_of_each_kind(kind):
    assert TableNames().of(kind) == f"tide_{kind}"
    assert TableNames.with_prefix("q_").of(kind) == f"q_{kind}"


@pytest.mark.parametrize("kind", ["notes", "patients", "studies", "nope", "Spans", ""])
def test_of_an_unknown_kind_is_e391(kind):
    with pytest.raises(ConfigError) as e:
        TableNames().of(kind)
    assert e.value.code == "E391"
    assert repr(kind) in e.value.message
    assert e.value.hint == "use one of " + ", ".join(TABLES)


@pytest.mark.parametrize("kind", list(TABLES))
def test_empty_is_a_table_of_the_schema_without_rows(kind):
    t = tables.empty(kind)
    assert t.num_rows == 0
    assert t.schema.equals(TABLES[kind].schema)


def test_to_table_fills_missing_columns_with_null_and_keeps_row_order():
    when = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    rows = [
        {"study": "s", "note_id": "n2", "start": 3, "end": 7, "label": "DATE", "extra": "ignored"},
        {"study": "s", "note_id": "n1", "score": 1, "created_at": when},
    ]
    t = tables.to_table("spans", rows)
    assert t.schema.equals(TABLES["spans"].schema)
    assert t.to_pylist() == [
        {
            "study": "s",
            "note_id": "n2",
            "start": 3,
            "end": 7,
            "label": "DATE",
            "score": None,
            "recognizer": None,
            "fingerprint": None,
            "origin": None,
            "decision": None,
            "created_at": None,
        },
        {
            "study": "s",
            "note_id": "n1",
            "start": None,
            "end": None,
            "label": None,
            "score": 1.0,
            "recognizer": None,
            "fingerprint": None,
            "origin": None,
            "decision": None,
            "created_at": when,
        },
    ]


@pytest.mark.parametrize("kind", list(TABLES))
def test_to_table_of_no_rows_has_the_schema(kind):
    t = tables.to_table(kind, [])
    assert t.num_rows == 0 and t.schema.equals(TABLES[kind].schema)


def test_to_table_refuses_a_value_of_the_wrong_type():
    with pytest.raises((pa.ArrowInvalid, pa.ArrowTypeError)):
        tables.to_table("spans", [{"start": "three"}])
