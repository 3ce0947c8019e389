"""One table registry: names (prefixable), schemas, partitions and clustering in tide_core.store.tables;
sql/ddl generated from it; every read of the released tables through ReleaseStore."""

from __future__ import annotations

import datetime as dt
from dataclasses import fields
from pathlib import Path

import pyarrow as pa
import pytest

from tide_core.io.open import open_warehouse
from tide_core.store import ddl, tables
from tide_core.store.release_store import ReleaseStore
from tide_core.store.tables import TABLES, TableNames

DDL_DIR = Path(__file__).resolve().parents[2] / "sql" / "ddl"


def test_checked_in_ddl_equals_the_generated_ddl():
    generated = ddl.rendered()
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in sorted(DDL_DIR.glob("*.sql"))}
    assert sorted(on_disk) == sorted(generated), "run `python -m tide_core.store.ddl`"
    for name, text in generated.items():
        assert on_disk[name] == text, f"{name} differs from the registry: run `python -m tide_core.store.ddl`"


def test_every_tide_table_is_in_the_registry_and_in_table_names():
    names = {f.name for f in fields(TableNames)}
    assert set(TABLES) | {"notes", "patients", "studies"} == names
    for kind, spec in TABLES.items():
        assert getattr(TableNames(), kind) == spec.default_name
        assert set(spec.partition) <= set(spec.schema.names), kind
        assert set(spec.cluster) <= set(spec.schema.names), kind
    for kind in ("audits", "drift", "releases", "review_decisions", "quarantine", "guard_scores"):
        assert kind in TABLES


def test_writers_use_the_registry_schemas():
    from tide_core.assurance.audit_table import AUDITS
    from tide_core.assurance.drift_table import DRIFT
    from tide_core.release.lifecycle import RELEASES

    assert AUDITS is TABLES["audits"].schema
    assert DRIFT is TABLES["drift"].schema
    assert RELEASES is TABLES["releases"].schema


def test_a_prefix_applies_to_every_tide_table():
    named = TableNames.with_prefix("x_")
    for kind in TABLES:
        assert getattr(named, kind) == f"x_{kind}"
    assert named.studies == "x_studies"
    assert (named.notes, named.patients) == ("notes", "patients")


def test_clustering_is_what_the_bigquery_warehouse_creates():
    from tide_core.io.bigquery_warehouse import CLUSTER_COLUMNS, PARTITION_TIME_COLUMNS

    for kind, spec in TABLES.items():
        assert spec.cluster == tuple(c for c in CLUSTER_COLUMNS if c in spec.schema.names), kind
        engine = next((c for c in PARTITION_TIME_COLUMNS if c in spec.schema.names), None)
        if kind == "releases":
            # known difference: the DDL partitions tide_releases by decided_at (never null), while a
            # table the BigQuery warehouse creates itself takes the first listed column, released_at
            assert (spec.time_partition, engine) == ("decided_at", "released_at")
        else:
            assert spec.time_partition == engine, kind


def _deid_row(study: str, key: str, note_id: str) -> dict[str, object]:
    return {
        "study": study,
        "key": key,
        "note_id": note_id,
        "note_ref": f"ref-{note_id}",
        "patient_ref": "p1",
        "text": "released text",
        "released_at": dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    }


def test_release_store_reads_the_configured_tables_only(tmp_path):
    wh = open_warehouse(f"duckdb:{tmp_path / 'w.duckdb'}")
    try:
        named = TableNames.with_prefix("x_")
        wh.replace_partition(
            named.deid_notes, tables.to_table("deid_notes", [_deid_row("s", "k", "n1")]), {"study": "s", "key": "k"}
        )
        wh.replace_partition(
            named.deid_notes, tables.to_table("deid_notes", [_deid_row("s", "k2", "n2")]), {"study": "s", "key": "k2"}
        )
        store = ReleaseStore(wh, named)
        assert [r["note_id"] for r in store.deid_notes("s", "k", ["note_id"])] == ["n1"]
        assert store.keys("s") == ["k", "k2"]
        assert store.stamps("s", "k") == [dt.datetime(2026, 1, 1, tzinfo=dt.UTC)]
        assert ReleaseStore(wh).deid_notes("s", "k") == []  # default names: nothing there
        assert store.release("s", "k") is None and store.latest_drift("s", "k") is None
        assert store.audits("s", "k").schema.equals(TABLES["audits"].schema)
        assert store.count("quarantine", "s", "k") == 0
    finally:
        wh.close()


def test_unknown_table_kind_is_a_coded_error():
    from tide_core.errors import ConfigError

    with pytest.raises(ConfigError) as e:
        TableNames().of("nope")
    assert e.value.code == "E391"
    assert isinstance(tables.empty("guard_scores"), pa.Table)
