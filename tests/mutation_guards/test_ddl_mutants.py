"""The BigQuery DDL renderer (``tide_core/store/ddl.py``), checked against its exact output in milliseconds.

Each table of the registry is written as one ``CREATE TABLE IF NOT EXISTS`` statement: a comment with
the description, a comment naming the registry entry and the command, one backquoted column per line
with its BigQuery type, then ``PARTITION BY`` (only with a time-partition column), ``CLUSTER BY`` (only
with clustering columns) and the description as an option.  Negative cases differ in one property.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from tide_core.store import ddl
from tide_core.store.tables import TABLES, TableSpec

ROOT = Path(__file__).resolve().parents[2]

SCHEMA = pa.schema(
    [
        ("study", pa.string()),
        ("n", pa.int64()),
        ("score", pa.float64()),
        ("held", pa.bool_()),
        ("at", pa.timestamp("us", tz="UTC")),
        ("local", pa.timestamp("us")),
    ]
)


def _spec(time_partition: str | None, cluster: tuple[str, ...]) -> TableSpec:
    return TableSpec("guard", "tide_guard", SCHEMA, ("study",), cluster, time_partition, "Guard table.", "99_g.sql")


FULL = (
    "-- Guard table.\n"
    "-- Generated from tide_core.store.tables.TABLES['guard'] by `python -m tide_core.store.ddl`; "
    "replace {{dataset}} with PROJECT.DATASET (the source dataset).\n"
    "CREATE TABLE IF NOT EXISTS `{{dataset}}.tide_guard` (\n"
    "  `study` STRING,\n"
    "  `n` INT64,\n"
    "  `score` FLOAT64,\n"
    "  `held` BOOL,\n"
    "  `at` TIMESTAMP,\n"
    "  `local` DATETIME\n"
    ")\n"
    "PARTITION BY TIMESTAMP_TRUNC(`at`, MONTH)\n"
    "CLUSTER BY study, n\n"
    'OPTIONS (description = "Guard table.");\n'
)


@pytest.mark.parametrize(
    "arrow, bigquery",
    [
        (pa.string(), "STRING"),
        (pa.int64(), "INT64"),
        (pa.float64(), "FLOAT64"),
        (pa.bool_(), "BOOL"),
        (pa.timestamp("us", tz="UTC"), "TIMESTAMP"),  # an instant
        (pa.timestamp("us"), "DATETIME"),  # the same without a time zone: a wall-clock time
        (pa.timestamp("ms", tz="Europe/Paris"), "TIMESTAMP"),
    ],
)
def test_each_arrow_type_has_its_bigquery_type(arrow, bigquery):
    assert ddl.column_type(arrow) == bigquery


@pytest.mark.parametrize("arrow", [pa.int32(), pa.large_string(), pa.date32(), pa.binary()])
def test_a_type_without_a_bigquery_mapping_is_refused(arrow):
    with pytest.raises(KeyError):
        ddl.column_type(arrow)


def test_a_table_is_rendered_exactly():
    assert ddl.render(_spec("at", ("study", "n"))) == FULL


def test_partition_and_cluster_clauses_only_when_the_spec_has_them():
    no_partition = FULL.replace("PARTITION BY TIMESTAMP_TRUNC(`at`, MONTH)\n", "")
    assert ddl.render(_spec(None, ("study", "n"))) == no_partition
    assert ddl.render(_spec("", ("study", "n"))) == no_partition
    no_cluster = FULL.replace("CLUSTER BY study, n\n", "")
    assert ddl.render(_spec("at", ())) == no_cluster
    one = FULL.replace("CLUSTER BY study, n\n", "CLUSTER BY study\n")
    assert ddl.render(_spec("at", ("study",))) == one


def test_rendered_is_every_registry_table_under_its_file_name():
    out = ddl.rendered()
    assert list(out) == [spec.ddl_file for spec in TABLES.values()]
    for spec in TABLES.values():
        assert out[spec.ddl_file] == ddl.render(spec)
        assert out[spec.ddl_file].isascii()  # so the files are the same bytes in any ASCII-compatible encoding
    assert out["03_tide_deid_notes.sql"].startswith("-- Release candidate: de-identified notes")


def test_the_default_directory_is_sql_ddl_of_the_repository():
    assert ddl.DDL_DIR == ROOT / "sql" / "ddl"


def test_main_writes_every_file_into_the_given_directory(tmp_path, capsys):
    out = tmp_path / "a" / "b"  # missing parents are created
    assert ddl.main([str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"wrote {len(TABLES)} DDL files to {out}"
    written = {p.name: p.read_bytes() for p in out.iterdir()}
    assert written == {name: text.encode("utf-8") for name, text in ddl.rendered().items()}
    (out / "01_tide_spans.sql").write_text("stale", encoding="utf-8")
    assert ddl.main([str(out)]) == 0  # an existing directory is fine; its files are rewritten
    assert (out / "01_tide_spans.sql").read_text(encoding="utf-8") == ddl.rendered()["01_tide_spans.sql"]


def test_main_reads_the_command_line_and_defaults_to_ddl_dir(tmp_path, monkeypatch, capsys):
    cli = tmp_path / "cli"
    monkeypatch.setattr("sys.argv", ["ddl", str(cli)])
    assert ddl.main() == 0
    assert sorted(p.name for p in cli.iterdir()) == sorted(ddl.rendered())
    default = tmp_path / "default"
    monkeypatch.setattr(ddl, "DDL_DIR", default)
    monkeypatch.setattr("sys.argv", ["ddl", str(cli / "ignored")])
    assert ddl.main([]) == 0  # an explicit empty argv: the default directory, not sys.argv
    assert sorted(p.name for p in default.iterdir()) == sorted(ddl.rendered())
    assert not (cli / "ignored").exists()
    assert capsys.readouterr().out.count("wrote ") == 2
