"""Test helpers: real DuckDB warehouses that record or withhold what the driver may do."""

from __future__ import annotations

from pathlib import Path

from tide_core.io.duckdb_warehouse import DuckDBWarehouse


class NotesReads(DuckDBWarehouse):
    """A DuckDB warehouse that records the columns of every read of the notes table's rows."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.notes_reads: list[tuple[str, ...] | None] = []

    def _seen(self, name: str, columns) -> None:  # type: ignore[no-untyped-def]
        if name == "notes":
            self.notes_reads.append(None if columns is None else tuple(columns))

    def iter_batches(self, name, columns=None, where=None, batch_rows=1000):  # type: ignore[no-untyped-def]
        self._seen(name, columns)
        yield from super().iter_batches(name, columns, where, batch_rows)

    def iter_refs(self, name, columns, where=None, batch_rows=1000):  # type: ignore[no-untyped-def]
        self._seen(name, columns)
        yield from super().iter_refs(name, columns, where, batch_rows)

    def read_table(self, name, columns=None, where=None):  # type: ignore[no-untyped-def]
        self._seen(name, columns)
        return super().read_table(name, columns, where)


class Without:
    """A DuckDB warehouse without some of its methods (``staging_target``/``publish``: no staged
    tables; ``iter_refs``/``export_rows``: no shards, so the driver reads each chunk itself, as on
    BigQuery)."""

    def __init__(self, inner: DuckDBWarehouse, *hidden: str) -> None:
        self._inner = inner
        self._hidden = hidden
        self.url = inner.url

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        if name in self._hidden:
            raise AttributeError(name)
        return getattr(self._inner, name)


class ShardVanishes(DuckDBWarehouse):
    """Exports each shard, then loses the one whose file name ends with ``lost`` before its worker reads it."""

    lost = "chunk-0000002.parquet"

    def export_rows(self, name, refs, row_numbers, path):  # type: ignore[no-untyped-def]
        n = super().export_rows(name, refs, row_numbers, path)
        if path.endswith(self.lost):
            Path(path).unlink()
        return n
