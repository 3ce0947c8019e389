import pyarrow as pa
import pytest

from tide_core.errors import ConfigError, WarehouseError
from tide_core.io.open import open_warehouse


@pytest.fixture
def wh(tmp_path):
    w = open_warehouse(f"duckdb:{tmp_path / 'w.duckdb'}")
    yield w
    w.close()


def _rows(study, key, n):
    return pa.table({"study": [study] * n, "key": [key] * n, "v": list(range(n))})


def test_replace_partition_is_idempotent_and_isolated(wh):
    wh.replace_partition("t", _rows("a", "k1", 3), {"study": "a", "key": "k1"})
    wh.replace_partition("t", _rows("a", "k2", 2), {"study": "a", "key": "k2"})
    wh.replace_partition("t", _rows("a", "k1", 3), {"study": "a", "key": "k1"})
    assert wh.count("t") == 5
    assert wh.count("t", {"study": "a", "key": "k1"}) == 3
    wh.replace_partition("t", _rows("a", "k1", 1), {"study": "a", "key": "k1"})
    assert wh.count("t", {"key": "k1"}) == 1 and wh.count("t", {"key": "k2"}) == 2


def test_replace_partition_rejects_rows_of_other_partitions(wh):
    with pytest.raises(WarehouseError):
        wh.replace_partition("t", _rows("b", "k1", 2), {"study": "a", "key": "k1"})
    assert not wh.table_exists("t") or wh.count("t") == 0


def test_read_filters_and_columns(wh):
    wh.append("t", _rows("a", "k1", 4))
    wh.append("t", _rows("b", "k1", 2))
    t = wh.read_table("t", columns=["v"], where={"study": ["b", "c"]})
    assert t.column_names == ["v"] and sorted(t.column("v").to_pylist()) == [0, 1]
    assert wh.columns("t") == ["study", "key", "v"]
    assert wh.delete("t", {"study": "a"}) == 4 and wh.count("t") == 2


def test_persistence_across_connections(tmp_path):
    url = f"duckdb:{tmp_path / 'p.duckdb'}"
    w = open_warehouse(url)
    w.replace_table("notes", pa.table({"note_id": ["n1"], "text": ["x"]}))
    w.close()
    w2 = open_warehouse(url)
    assert w2.read_table("notes").to_pylist() == [{"note_id": "n1", "text": "x"}]
    w2.close()


def test_bad_names_and_urls(wh):
    with pytest.raises(ConfigError):
        wh.read_table("notes; drop table x")
    with pytest.raises(WarehouseError) as e:
        wh.read_table("missing")
    assert "does not exist" in str(e.value)
    with pytest.raises(ConfigError):
        open_warehouse("sqlite:foo")
    with pytest.raises(ConfigError):
        open_warehouse("foo")


def test_schema_in_url(tmp_path):
    w = open_warehouse(f"duckdb:{tmp_path / 's.duckdb'}#clinical")
    w.replace_table("notes", pa.table({"a": [1]}))
    assert w.table_exists("notes") and w.sql("SELECT count(*) AS n FROM clinical.notes").to_pylist() == [{"n": 1}]
    w.close()


def test_streamed_batches_keep_no_read_open_so_commits_between_them_checkpoint(tmp_path):
    """A study run commits each chunk between two reads of the notes; an open streaming read
    would pin a transaction and DuckDB could not checkpoint, keeping every chunk's writes in
    memory until the end of the run."""
    from tide_core.io.duckdb_warehouse import DuckDBWarehouse

    with DuckDBWarehouse(tmp_path / "w.duckdb") as wh:
        n = 2500
        wh.replace_table("notes", pa.table({"study": ["s"] * n + ["x"], "note_id": [f"n{i}" for i in range(n + 1)]}))
        stream = wh.iter_batches("notes", ["note_id"], {"study": "s"}, batch_rows=1000)
        seen = next(stream).column("note_id").to_pylist()
        wh.append("spans", pa.table({"note_id": seen}))
        wh.sql("CHECKPOINT")  # refused while another transaction is open
        assert not (tmp_path / "w.duckdb.wal").exists() or (tmp_path / "w.duckdb.wal").stat().st_size == 0
        for batch in stream:
            assert batch.num_rows <= 1000
            seen += batch.column("note_id").to_pylist()
        assert seen == [f"n{i}" for i in range(n)]  # storage order, every row once, the filter kept


def _limit_bytes(w) -> float:
    """DuckDB's current memory_limit in bytes (it reports e.g. '244.1 MiB')."""
    value, unit = w.sql("SELECT current_setting('memory_limit') AS m").to_pylist()[0]["m"].split()
    return float(value) * {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30}[unit]


def test_buffer_pool_is_capped_by_default_by_env_and_by_argument(tmp_path, monkeypatch):
    """DuckDB's own default (80% of RAM) let a study run's memory grow with the database; TIDE caps it."""
    from tide_core.io.duckdb_warehouse import DEFAULT_MEMORY_LIMIT, MEMORY_LIMIT_ENV, DuckDBWarehouse

    monkeypatch.delenv(MEMORY_LIMIT_ENV, raising=False)
    assert DEFAULT_MEMORY_LIMIT == "64MB"
    with open_warehouse(f"duckdb:{tmp_path / 'a.duckdb'}") as w:
        assert 60 * 2**20 < _limit_bytes(w) < 65 * 2**20
    monkeypatch.setenv(MEMORY_LIMIT_ENV, "1GB")
    with DuckDBWarehouse(tmp_path / "b.duckdb") as w:
        assert 0.9 * 10**9 < _limit_bytes(w) < 1.1 * 10**9
    with DuckDBWarehouse(tmp_path / "c.duckdb", memory_limit="32MB") as w:  # an argument wins over the env
        assert 30 * 2**20 < _limit_bytes(w) < 33 * 10**6
    with DuckDBWarehouse(tmp_path / "c.duckdb") as w:  # a plain connection beside it still opens
        w.append("t", pa.table({"a": [1]}))
        import duckdb

        other = duckdb.connect(str(tmp_path / "c.duckdb"))
        assert other.execute("SELECT count(*) FROM t").fetchone() == (1,)
        other.close()
    with DuckDBWarehouse(tmp_path / "ro.duckdb") as w:
        w.append("t", pa.table({"a": [1]}))
    with DuckDBWarehouse(tmp_path / "ro.duckdb", read_only=True, memory_limit="32MB") as w:
        assert w.read_table("t").num_rows == 1 and 30 * 2**20 < _limit_bytes(w) < 33 * 10**6
    monkeypatch.setenv(MEMORY_LIMIT_ENV, "lots")
    with pytest.raises(ConfigError) as e:
        DuckDBWarehouse(tmp_path / "d.duckdb")
    assert e.value.code == "E326" and MEMORY_LIMIT_ENV in e.value.hint
    assert not (tmp_path / "d.duckdb").exists()  # refused before anything is created


def test_refresh_reopens_a_file_keeps_its_data_and_its_limit_and_leaves_memory_alone(tmp_path):
    from tide_core.io.duckdb_warehouse import DuckDBWarehouse

    with DuckDBWarehouse(tmp_path / "r.duckdb", memory_limit="32MB") as w:
        w.append("t", pa.table({"a": [1, 2, 3]}))
        before = w._con
        assert w.refresh() is True
        assert w._con is not before  # a new connection
        assert w.read_table("t").column("a").to_pylist() == [1, 2, 3]
        assert 30 * 2**20 < _limit_bytes(w) < 33 * 10**6  # the reopened connection keeps the cap
        w.append("t", pa.table({"a": [4]}))
    with DuckDBWarehouse(tmp_path / "r.duckdb") as w:
        assert sorted(w.read_table("t").column("a").to_pylist()) == [1, 2, 3, 4]
    with DuckDBWarehouse(":memory:") as m:  # reopening would lose an in-memory database: not done
        m.append("t", pa.table({"a": [1]}))
        assert m.refresh() is False
        assert m.read_table("t").num_rows == 1
