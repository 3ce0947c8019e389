"""Shards: one chunk of a study's input, where the Ray worker that takes the chunk reads it itself.

With ``--executor ray`` the driver plans each chunk from light columns (row references, note
and patient ids) and sends the worker a :class:`ShardRef`, never the rows
(:class:`~tide_core.io.warehouse.ShardingWarehouse`):

* DuckDB (a file other processes cannot open while its writer holds it): the database copies
  the chunk's rows to a Parquet file in the run's staging directory; the driver removes it once
  the chunk is committed, and the run's directory at the end either way.
* BigQuery: the chunk's row numbers in the run's copy of the study, which the worker reads with
  its own client (a Storage Read row restriction).

So the note text goes from the warehouse to the worker without becoming Python objects in the
driver.  :func:`read_shard` is the worker's side.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from tide_core.errors import ConfigError, WarehouseError
from tide_core.io.staging import ENV_STAGING_DIR, StagingTarget, bigquery_client
from tide_core.io.warehouse import SHARD_ROW


@dataclass(frozen=True)
class ShardRef:
    """One chunk's rows, where a worker reads them (no values: a file, or a table and row numbers)."""

    kind: Literal["parquet", "bigquery"]
    location: str  # parquet: the file; bigquery: the run's copy of the study
    row_numbers: tuple[int, ...] = ()  # bigquery: the chunk's rows (``_tide_row`` values)


def shard_path(target: StagingTarget, chunk: int) -> str:
    """Where chunk ``chunk`` of a run is exported (inside the run's own staging directory)."""
    return str(Path(target.location) / "shards" / f"chunk-{chunk:07d}.parquet")


def numbered_rows(table: pa.Table) -> list[tuple[int, dict[str, Any]]]:
    """A shard's rows as (study-wide row number, row without it), in row order."""
    numbers = table.column(SHARD_ROW).to_pylist()
    rows = table.drop_columns([SHARD_ROW]).to_pylist()
    return sorted(zip(numbers, rows, strict=True), key=lambda nr: nr[0])


def read_shard(ref: ShardRef, target: StagingTarget | None = None) -> list[tuple[int, dict[str, Any]]]:
    """A shard's rows as (study-wide row number, row), in row order.

    On BigQuery they are read with the worker's own client of ``target``, the run's staging target.
    """
    if ref.kind == "bigquery":
        if target is None or target.kind != "bigquery":
            raise ConfigError("E378", "a BigQuery shard is read through the run's BigQuery target", hint="a bug")
        return numbered_rows(bigquery_client(target).shard_rows(ref.location, ref.row_numbers))
    try:
        table = pq.read_table(ref.location)
    except OSError as exc:
        raise WarehouseError(
            "E376",
            f"the shard of a chunk cannot be read ({type(exc).__name__}); nothing of this chunk was published",
            hint="rerun: the chunk is not committed and will be redone; on a multi-node Ray cluster set "
            f"{ENV_STAGING_DIR} to a directory the driver and every node share",
            terminal=False,
        ) from None
    return numbered_rows(table)


def remove_shard(ref: ShardRef) -> None:
    """Delete a committed chunk's shard file (a BigQuery shard is rows of the study copy: nothing to do)."""
    if ref.kind == "parquet":
        Path(ref.location).unlink(missing_ok=True)
