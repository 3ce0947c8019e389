"""Shards: a chunk planned from row references and read back from its Parquet shard is the chunk
that reading the whole rows gives (validation, duplicates, id-less rows), and the driver's plan
reads no text."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from tide_core.cli.cmd_demo import load_demo
from tide_core.config import TideConfig
from tide_core.engine.study_chunks import ChunkPlan, chunk_from_rows, iter_chunks, iter_plans, open_source
from tide_core.errors import InputError, WarehouseError
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.io.shards import ShardRef, read_shard
from tide_core.io.warehouse import SHARD_ROW


def _study(wh: DuckDBWarehouse) -> None:
    load_demo(wh, seed=3)
    rows = wh.read_table("notes").to_pylist()[:30]
    rows += [
        dict(rows[0]),  # exact duplicate (E608), far from its first row
        dict(rows[11], text=rows[11]["text"] + " (amended)"),  # conflicting duplicate (E607)
        dict(rows[2], note_id=None),  # no id (E601)
        dict(rows[4], note_id="  "),  # blank id (E601)
        dict(rows[5], note_id="empty-1", text="   "),  # empty text (E604)
        dict(rows[6], note_id="nodate-1", note_date="yesterday"),  # bad date (E606)
        dict(rows[7], note_id="dup-bad", text=""),  # duplicated id whose rows are both bad
        dict(rows[7], note_id="dup-bad", text=""),
    ]
    wh.replace_table("notes", pa.Table.from_pylist(rows, schema=wh.read_table("notes").schema))


@pytest.mark.parametrize("chunk_rows", [4, 7, 50])
def test_a_chunk_read_from_its_shard_equals_the_chunk_read_whole(tmp_path: Path, chunk_rows: int) -> None:
    with DuckDBWarehouse(tmp_path / "s.duckdb") as wh:
        _study(wh)
        src = open_source(wh, "s1", TideConfig.preset("rules"), chunk_rows=chunk_rows)
        whole = list(iter_chunks(src))
        planned = []
        for plan in iter_plans(src, wh.open_shards(src.table, src.where)):
            path = str(tmp_path / "shards" / f"{plan.index}.parquet")
            assert wh.export_rows(src.table, plan.refs, plan.row_numbers, path) == len(plan.refs)
            planned.append(chunk_from_rows(plan, read_shard(ShardRef("parquet", path)), src.max_note_chars))
    assert len(whole) == len(planned) == src.n_chunks
    assert planned == whole
    codes = sorted(q.code for c in planned for q in [*c.quarantined, *c.null_id_rows])
    assert codes == sorted(["E601", "E601", "E604", "E604", "E604", "E606", "E607", "E607", "E608"])


def test_a_plan_reads_no_text(tmp_path: Path) -> None:
    class Recording(DuckDBWarehouse):
        def __init__(self, path: Path) -> None:
            super().__init__(path)
            self.read: list[tuple[str, tuple[str, ...] | None]] = []

        def iter_refs(self, name, columns, where=None, batch_rows=1000):  # type: ignore[no-untyped-def]
            self.read.append((name, tuple(columns)))
            yield from super().iter_refs(name, columns, where, batch_rows)

        def iter_batches(self, name, columns=None, where=None, batch_rows=1000):  # type: ignore[no-untyped-def]
            self.read.append((name, None if columns is None else tuple(columns)))
            yield from super().iter_batches(name, columns, where, batch_rows)

    with Recording(tmp_path / "s.duckdb") as wh:
        _study(wh)
        src = open_source(wh, "s1", TideConfig.preset("rules"), chunk_rows=5)
        plans = list(iter_plans(src, wh.open_shards(src.table, src.where)))
        assert sum(len(p.refs) for p in plans) == src.n_source_rows
        assert wh.read == [("notes", ("note_id", "patient_id"))]
        wh.read.clear()
        list(iter_chunks(src))
        assert wh.read == [("notes", None)]  # the reference path does read every column


def test_a_shard_with_other_rows_than_planned_is_refused(tmp_path: Path) -> None:
    with DuckDBWarehouse(tmp_path / "s.duckdb") as wh:
        _study(wh)
        src = open_source(wh, "s1", TideConfig.preset("rules"), chunk_rows=6)
        plan = next(iter_plans(src, wh.open_shards(src.table, src.where)))
        path = str(tmp_path / "a.parquet")
        wh.export_rows(src.table, plan.refs[:-1], plan.row_numbers[:-1], path)  # one row short
        with pytest.raises(InputError) as e:
            chunk_from_rows(plan, read_shard(ShardRef("parquet", path)), src.max_note_chars)
        assert e.value.code == "E613" and "chunk 1/" in e.value.message
        wh.export_rows(src.table, plan.refs, plan.row_numbers, path)
        other = ChunkPlan(plan.index, plan.n_chunks, plan.refs, plan.row_numbers, ("someone-else",))
        with pytest.raises(InputError) as e:
            chunk_from_rows(other, read_shard(ShardRef("parquet", path)), src.max_note_chars)  # owns other note ids
        assert e.value.code == "E613"


def test_export_refuses_a_table_with_the_row_number_column_and_a_missing_shard_names_the_fix(tmp_path: Path) -> None:
    with DuckDBWarehouse(tmp_path / "s.duckdb") as wh:
        wh.replace_table("t", pa.table({"note_id": ["a"], SHARD_ROW: [1]}))
        with pytest.raises(Exception) as e:
            wh.export_rows("t", [0], [0], str(tmp_path / "t.parquet"))
        assert getattr(e.value, "code", None) == "E328"
    with pytest.raises(WarehouseError) as e2:
        read_shard(ShardRef("parquet", str(tmp_path / "gone.parquet")))
    assert e2.value.code == "E376" and "TIDE_STAGING_DIR" in e2.value.hint
