"""Staged writes on DuckDB: a worker stages Parquet files without opening the database, the
driver publishes them with in-memory writes in one transaction (all or nothing)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from tide_core.errors import ConfigError, WarehouseError
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.io.staging import ENV_STAGING_DIR, StagingTarget, discard, stage
from tide_core.io.warehouse import PartitionWrite


def _rows(note_ids: list[str], tag: str) -> pa.Table:
    return pa.table({"study": ["s"] * len(note_ids), "note_id": note_ids, "v": [tag] * len(note_ids)})


def _v(wh: DuckDBWarehouse, name: str) -> list[tuple[str, str]]:
    return sorted((r["note_id"], r["v"]) for r in wh.read_table(name).to_pylist())


@pytest.fixture()
def wh(tmp_path: Path):
    w = DuckDBWarehouse(tmp_path / "w.duckdb")
    w.replace_table("a", _rows(["n1", "n2", "n3"], "old"))
    w.replace_table("b", _rows(["n1", "n2", "n3"], "old"))
    yield w
    w.close()


def test_a_staged_partition_replaces_exactly_its_rows_and_its_file_is_gone(wh, tmp_path):
    target = wh.staging_target().for_run("run1")
    assert Path(target.location) == tmp_path / "w.duckdb.staging" / "run1"
    part = {"study": "s", "note_id": ["n1", "n2"]}
    staged = stage(target, "a", _rows(["n1"], "new"), part)  # n2 leaves the chunk, n3 is another chunk's
    assert Path(staged.ref).is_file() and staged.n_rows == 1
    progress = PartitionWrite("b", _rows(["n2"], "new"), {"study": "s", "note_id": ["n2"]})
    assert wh.publish([staged], [progress]) == 2
    assert _v(wh, "a") == [("n1", "new"), ("n3", "old")]
    assert _v(wh, "b") == [("n1", "old"), ("n2", "new"), ("n3", "old")]
    assert not Path(staged.ref).exists()
    discard(target)
    assert not (tmp_path / "w.duckdb.staging").exists()


def test_a_missing_staged_file_rolls_back_every_table_of_the_commit(wh):
    target = wh.staging_target().for_run("run2")
    part = {"study": "s", "note_id": ["n1"]}
    first = stage(target, "b", _rows(["n1"], "new"), part)  # published before the missing one
    lost = stage(target, "a", _rows(["n1"], "new"), part)
    Path(lost.ref).unlink()
    with pytest.raises(WarehouseError) as e:
        wh.publish([first, lost])
    assert e.value.code == "E373" and "nothing of this chunk was published" in e.value.message
    assert "FileNotFoundError" in e.value.message and ENV_STAGING_DIR in (e.value.hint or "")
    assert e.value.terminal is False  # a rerun redoes the chunk
    assert _v(wh, "a") == _v(wh, "b") == [("n1", "old"), ("n2", "old"), ("n3", "old")]


def test_rows_outside_the_chunk_are_refused_when_staged_and_when_published(wh):
    target = wh.staging_target().for_run("run3")
    with pytest.raises(WarehouseError) as e:
        stage(target, "a", _rows(["n1", "n3"], "new"), {"study": "s", "note_id": ["n1"]})
    assert e.value.code == "E307"
    # a handle whose partition was narrowed after staging: the driver checks the file's rows again
    staged = stage(target, "a", _rows(["n1", "n3"], "new"), {"study": "s", "note_id": ["n1", "n3"]})
    narrowed = type(staged)(staged.name, {"study": "s", "note_id": ["n1"]}, staged.ref, staged.n_rows, staged.schema)
    with pytest.raises(WarehouseError) as e:
        wh.publish([narrowed])
    assert e.value.code == "E307"
    assert _v(wh, "a") == [("n1", "old"), ("n2", "old"), ("n3", "old")]


def test_one_table_twice_in_one_publish_is_refused_before_anything_is_written(wh):
    target = wh.staging_target().for_run("run4")
    part = {"study": "s", "note_id": ["n1"]}
    staged = stage(target, "a", _rows(["n1"], "new"), part)
    with pytest.raises(ConfigError) as e:
        wh.publish([staged], [PartitionWrite("a", _rows(["n1"], "other"), part)])
    assert e.value.code == "E308" and "table a appears twice" in e.value.message and e.value.hint
    assert _v(wh, "a")[0] == ("n1", "old")


def test_a_new_table_is_created_from_the_staged_schema(wh):
    target = wh.staging_target().for_run("run5")
    staged = stage(target, "fresh", _rows(["n9"], "new"), {"study": "s", "note_id": ["n9"]})
    wh.publish([staged])
    assert _v(wh, "fresh") == [("n9", "new")]


def test_staging_directory_comes_from_the_environment_or_a_private_one_for_memory(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV_STAGING_DIR, raising=False)
    with DuckDBWarehouse() as mem:
        private = Path(mem.staging_target().location)
        assert private.is_dir() and private.name.startswith("tide-staging-")
        private.rmdir()
        monkeypatch.setenv(ENV_STAGING_DIR, str(tmp_path / "shared"))
        assert mem.staging_target() == StagingTarget("parquet", str(tmp_path / "shared"))
    with DuckDBWarehouse(tmp_path / "f.duckdb") as f:
        assert f.staging_target() == StagingTarget("parquet", str(tmp_path / "shared"))  # the environment wins


def test_an_unwritable_staging_directory_is_a_clear_error(tmp_path):
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("x")
    target = StagingTarget("parquet", str(blocker / "run"))
    with pytest.raises(WarehouseError) as e:
        stage(target, "a", _rows(["n1"], "new"), {"study": "s", "note_id": ["n1"]})
    assert e.value.code == "E371" and "not_a_dir" in e.value.message


def test_discard_is_safe_on_missing_files_and_leaves_other_runs_alone(tmp_path):
    root = StagingTarget("parquet", str(tmp_path / "db.staging"))
    never = root.for_run("never-staged")
    discard(never)  # a run whose chunks all resumed staged nothing: nothing to remove, no error
    part = {"study": "s", "note_id": ["n1"]}
    mine, other = root.for_run("mine"), root.for_run("other")
    a = stage(mine, "a", _rows(["n1"], "new"), part)
    b = stage(mine, "b", _rows(["n1"], "new"), part)
    kept = stage(other, "a", _rows(["n1"], "new"), part)
    Path(a.ref).unlink()
    discard(mine, [a, b])  # one file already gone (a worker's half-staged chunk): no error
    assert not Path(b.ref).exists() and Path(kept.ref).exists()
    discard(mine)
    assert not Path(mine.location).exists() and Path(kept.ref).exists()  # the shared root stays in use
    discard(other)
    assert not (tmp_path / "db.staging").exists()
