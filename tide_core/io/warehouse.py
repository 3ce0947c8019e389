"""The warehouse interface: where notes come from and where TIDE writes its tables.

Every backend implements the same small protocol on Arrow tables, so the engine never sees
SQL dialects.  ``replace_partition`` is the idempotency primitive: rerunning a (study) or
(study, key) partition replaces exactly its rows.  ``replace_partitions`` replaces several
partitions (of different tables) all or nothing: the span cache writes its spans and its
recognized-notes rows through it, so a crash never leaves a note marked recognized without its
spans (DuckDB: one ``BEGIN``/``COMMIT``; BigQuery: staged tables, then one multi-statement
transaction).

Backends import this module (the protocol and shared helpers) and nothing above it;
``open_warehouse`` (URL -> backend) lives in :mod:`tide_core.io.open`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import pyarrow as pa

from tide_core.errors import ConfigError, WarehouseError


@dataclass(frozen=True)
class PartitionWrite:
    """One partition replacement of an atomic ``replace_partitions`` commit."""

    name: str
    table: pa.Table
    #: column -> value; a list value selects several values (``note_id IN (...)``: one chunk's rows)
    partition: Mapping[str, object]


def check_writes(writes: Sequence[PartitionWrite]) -> None:
    """Validate every write of a ``replace_partitions`` commit before anything is written."""
    seen = set()
    for w in writes:
        check_partition_rows(w.name, w.table, w.partition)
        if w.name in seen:
            raise ConfigError(
                "E308",
                f"table {w.name} appears twice in one replace_partitions commit",
                hint="this is a bug in the caller: write each table once per commit",
            )
        seen.add(w.name)


@runtime_checkable
class Warehouse(Protocol):
    """The tables a study run reads and writes, whatever the backend.

    Every method takes and returns Arrow tables and plain values, so recognition and release code is
    the same on DuckDB and BigQuery.  Table and column names are checked identifiers; row filters
    are ``where`` mappings (column -> value, a list value meaning ``IN``), never SQL text, so no
    caller builds SQL from data.
    """

    url: str

    def table_exists(self, name: str) -> bool:
        """Whether table ``name`` exists (a view counts on DuckDB)."""

    def columns(self, name: str) -> list[str]:
        """The column names of ``name`` in table order (E304 when it does not exist)."""

    def read_table(
        self, name: str, columns: Sequence[str] | None = None, where: Mapping[str, object] | None = None
    ) -> pa.Table:
        """The rows of ``name`` matching ``where``, with ``columns`` (all when ``None``).

        Reads everything into memory: study-sized reads use :class:`StreamingWarehouse` instead.
        """

    def replace_table(self, name: str, table: pa.Table) -> int:
        """Replace the whole table ``name`` by ``table`` (created when missing); the rows written."""

    def append(self, name: str, table: pa.Table) -> int:
        """Append ``table`` to ``name`` (created when missing); the rows written."""

    def replace_partition(self, name: str, table: pa.Table, partition: Mapping[str, object]) -> int:
        """Atomically replace the rows of ``name`` that match ``partition`` by ``table``; the rows written.

        The idempotency primitive: rerunning a (study) or (study, key) partition replaces exactly its
        rows.  Rows outside ``partition`` are refused (:func:`check_partition_rows`).
        """

    def replace_partitions(self, writes: Sequence[PartitionWrite]) -> int:
        """Replace several partitions, of different tables, all or nothing; the rows written.

        The span cache commits a chunk's spans and recognized-notes rows this way, so a crash never
        leaves a note marked recognized without its spans.
        """

    def delete(self, name: str, where: Mapping[str, object]) -> int:
        """Delete the rows of ``name`` matching ``where``; the number deleted (0 for a missing table)."""

    def count(self, name: str, where: Mapping[str, object] | None = None) -> int:
        """The number of rows of ``name`` matching ``where`` (0 for a missing table)."""

    def close(self) -> None:
        """Release the connection; the warehouse is not used afterwards."""


def check_partition_rows(name: str, table: pa.Table, partition: Mapping[str, object]) -> None:
    """Refuse a ``replace_partition`` whose rows do not all belong to ``partition``."""
    if not partition:
        raise ConfigError(
            "E305",
            "replace_partition needs at least one partition column",
            hint="use replace_table to replace a whole table",
        )
    for col, value in partition.items():
        if col not in table.column_names:
            raise ConfigError("E306", f"partition column {col!r} missing from the rows written to {name}")
        if isinstance(value, (list, tuple, set, frozenset)):
            if table.num_rows and not set(table.column(col).to_pylist()) <= set(value):
                raise WarehouseError(
                    "E307",
                    f"rows written to a chunk of {name} carry {col} values outside the chunk",
                    hint="this is a bug in the caller",
                )
            continue
        if table.num_rows and set(table.column(col).to_pylist()) != {value}:
            raise WarehouseError(
                "E307",
                f"rows written to partition {dict(partition)} of {name} carry other {col} values",
                hint="this is a bug in the caller",
            )


@runtime_checkable
class StreamingWarehouse(Protocol):
    """Reads a study in bounded memory (both built-in backends implement it).

    ``iter_batches`` yields a table's rows as Arrow record batches of at most ``batch_rows``
    rows, in one deterministic order for an unchanged table; ``iter_ordered`` yields them sorted
    by the warehouse (a digest of sorted values in bounded memory); ``duplicate_values`` returns the
    (trimmed, string) values of ``column`` that occur more than once; ``delete_absent`` deletes
    the rows of ``name`` matching ``where`` whose ``column`` is not among the (trimmed, string)
    ``source_column`` values of ``source`` rows matching ``source_where``: the warehouse does
    the anti-join, so no process holds every id of a study.
    """

    def iter_batches(
        self,
        name: str,
        columns: Sequence[str] | None = None,
        where: Mapping[str, object] | None = None,
        batch_rows: int = 1000,
    ) -> Iterator[pa.RecordBatch]:
        """The rows of ``name`` matching ``where`` as record batches of at most ``batch_rows`` rows.

        The order is deterministic for an unchanged table, so a resumed run reads the same chunks.
        """

    def iter_ordered(
        self,
        name: str,
        columns: Sequence[str],
        order_by: Sequence[str],
        where: Mapping[str, object] | None = None,
        batch_rows: int = 1000,
        bounds: Sequence[object] = (),
    ) -> Iterator[pa.RecordBatch]:
        """The rows of ``name`` matching ``where`` sorted by ``order_by``, ``batch_rows`` at a time.

        Ascending, nulls first, text in code-point order.  The warehouse sorts: the caller holds
        one batch, whatever the size of the table.  ``bounds``, ascending values of the first
        ``order_by`` column, let a backend that sorts in the caller's process sort one range at
        a time (the stream is the same).  Consume it in one go: the read may hold one snapshot
        open while it lasts.
        """

    def duplicate_values(self, name: str, column: str, where: Mapping[str, object] | None = None) -> list[str]:
        """The trimmed text values of ``column`` that occur more than once among the rows matching ``where``."""

    def delete_absent(
        self,
        name: str,
        where: Mapping[str, object],
        column: str,
        source: str,
        source_column: str,
        source_where: Mapping[str, object] | None = None,
    ) -> int:
        """Delete the rows of ``name`` matching ``where`` whose ``column`` is absent from ``source``.

        The warehouse does the anti-join, so no process holds every id of a study; the number deleted.
        """


def sorted_batches(
    wh: Warehouse,
    name: str,
    columns: Sequence[str],
    order_by: Sequence[str],
    where: Mapping[str, object] | None = None,
    batch_rows: int = 1000,
    bounds: Sequence[object] = (),
) -> Iterator[pa.RecordBatch]:
    """The rows of ``name`` sorted by ``order_by`` (ascending, nulls first, text by code point).

    :meth:`StreamingWarehouse.iter_ordered` where the backend has it, else one read sorted by
    Arrow (a plugin backend without streaming reads), in batches of ``batch_rows``.
    """
    if isinstance(wh, StreamingWarehouse):
        yield from wh.iter_ordered(name, list(columns), list(order_by), where, batch_rows, bounds)
        return
    table = wh.read_table(name, list(columns), where)
    yield from table.sort_by([(c, "ascending") for c in order_by], null_placement="at_start").to_batches(batch_rows)


@runtime_checkable
class StreamedWriteWarehouse(Protocol):
    """A warehouse that commits partitions whose rows arrive in batches (DuckDB, BigQuery).

    One transaction, one batch in the caller's memory at a time; see
    ``DuckDBWarehouse.replace_partitions_streamed`` and ``BigQueryWarehouse.replace_partitions_streamed``.
    """

    def replace_partitions_streamed(
        self,
        streams: Sequence[tuple[str, Mapping[str, object] | None, Callable[[], Iterator[pa.Table]]]],
        writes: Sequence[PartitionWrite] = (),
    ) -> int:
        """:meth:`Warehouse.replace_partitions` with rows that arrive as a stream of tables.

        Each stream is (table, partition or ``None`` to append, a callable that yields its tables); the
        in-memory ``writes`` commit in the same transaction.
        """


@runtime_checkable
class RefreshableWarehouse(Protocol):
    """A warehouse whose connection may be reopened between chunks to hand back memory (DuckDB).

    ``refresh`` returns whether it reopened anything.  A study run calls it every
    ``REFRESH_EVERY_CHUNKS`` committed chunks, when no read or write is open.
    """

    def refresh(self) -> bool:
        """Reopen the connection when that hands memory back; whether anything was reopened."""


#: The row-reference column of :meth:`ShardingWarehouse.iter_refs` batches.
REF = "ref"
#: The study-wide row number column of an exported shard (never a user column: it starts with ``_tide``).
SHARD_ROW = "_tide_row"


@dataclass(frozen=True)
class ShardSource:
    """Where a run's chunks are planned and read from (:meth:`ShardingWarehouse.open_shards`)."""

    table: str
    where: Mapping[str, object] | None = None
    owned: bool = False  # made for this run: :meth:`ShardingWarehouse.close_shards` drops it


@runtime_checkable
class ShardingWarehouse(Protocol):
    """A warehouse whose chunks Ray workers read themselves (both built-in backends).

    The driver opens the study as a :class:`ShardSource` (DuckDB: the notes table itself;
    BigQuery: one expiring copy of the study with a study-wide row number ``_tide_row``, clustered
    by it), lists each chunk's row references with light columns only (``iter_refs``: a ``ref``
    column plus e.g. ``note_id``) and turns a chunk into a shard (``export_shard``): DuckDB
    copies the chunk's rows to a Parquet file (a DuckDB file cannot be opened by other processes
    while its one writer holds it); BigQuery needs no copy, the shard names the rows of the study
    copy, which a worker reads with its own client.  The note text never passes through the
    driver's Python.  ``close_shards`` drops what ``open_shards`` made.
    """

    def open_shards(self, name: str, where: Mapping[str, object] | None = None) -> ShardSource:
        """Open the study's rows of ``name`` as a :class:`ShardSource` that chunks are planned on."""

    def iter_refs(
        self,
        name: str,
        columns: Sequence[str],
        where: Mapping[str, object] | None = None,
        batch_rows: int = 1000,
    ) -> Iterator[pa.RecordBatch]:
        """Batches of a ``ref`` column (row references) plus light ``columns``, in a deterministic order.

        The driver plans chunks from these without ever reading note text.
        """

    def export_shard(
        self, source: ShardSource, refs: Sequence[int], row_numbers: Sequence[int], target: Any, chunk: int
    ) -> Any:
        """Turn one chunk's rows into a shard a Ray worker reads itself (``target``: the run's staging target).

        ``row_numbers`` are the rows' study-wide numbers, kept beside the rows so results map back.
        """

    def close_shards(self, source: ShardSource) -> None:
        """Drop what :meth:`open_shards` made for this run (nothing when the source was not ``owned``)."""
