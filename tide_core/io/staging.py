"""Staged writes: a worker writes its own results; the driver publishes them in one commit.

A chunk's output tables can be written by the process that computed them (a Ray worker) instead
of travelling back to the driver.  The worker *stages* each table where the warehouse can take
it without the worker holding the warehouse's write connection, and returns a
:class:`StagedWrite` handle (names, counts and a location, never values).  The driver then
*publishes* every handle of the chunk, with its progress row, through the warehouse's
``publish``: one transaction that replaces each partition, so a reader sees the whole chunk or
none of it, and the staged copies are removed.

* DuckDB (one writer per file): the staged copy is a Parquet file in a staging directory
  (``TIDE_STAGING_DIR``, else ``<database>.staging/`` beside the file).  Workers never open the
  database; the driver, its only writer, loads each file inside its commit.  On a multi-node
  cluster the staging directory must be a path every node and the driver share.
* BigQuery: the staged copy is a staging table that expires on its own (a load job, from the
  worker's own client); ``publish`` runs one multi-statement transaction that deletes each
  partition and inserts from the staging tables, then drops them.

A staged copy that is never published (a worker that died after staging, a run killed before its
commit) changes nothing a reader sees: Parquet files are removed with the run's staging
directory, BigQuery staging tables expire.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import pyarrow as pa
import pyarrow.parquet as pq

from tide_core.errors import ConfigError, WarehouseError
from tide_core.io.warehouse import PartitionWrite, check_partition_rows
from tide_core.plugins import load_dotted

ENV_STAGING_DIR = "TIDE_STAGING_DIR"
BIGQUERY_BACKEND = "tide_core.io.bigquery_warehouse:BigQueryWarehouse"


@dataclass(frozen=True)
class StagingTarget:
    """Where workers stage a run's tables (picklable; holds no credentials and no key)."""

    kind: Literal["parquet", "bigquery"]
    location: str  # parquet: a directory; bigquery: the warehouse URL
    options: tuple[tuple[str, Any], ...] = ()  # bigquery: client options (endpoints, location)

    def for_run(self, run_id: str) -> StagingTarget:
        """A target of one run's own (a Parquet subdirectory; BigQuery staging tables are unique anyway)."""
        if self.kind == "parquet":
            return StagingTarget(self.kind, str(Path(self.location) / run_id), self.options)
        return self


@dataclass(frozen=True)
class StagedWrite:
    """One staged partition replacement: the table, its partition, and where its rows wait."""

    name: str
    partition: Mapping[str, object]
    ref: str  # a Parquet file path, or a BigQuery staging table name
    n_rows: int
    schema: pa.Schema = field(compare=False)


@runtime_checkable
class StagingWarehouse(Protocol):
    """A warehouse whose writes workers can stage (both built-in backends implement it)."""

    def staging_target(self) -> StagingTarget:
        """Where this run's workers stage their chunk results (a directory or a BigQuery dataset)."""

    def publish(self, staged: Sequence[StagedWrite], writes: Sequence[PartitionWrite] = ()) -> int:
        """Commit staged chunk results and in-memory ``writes`` all or nothing; the rows written.

        The driver publishes what workers staged without reading the rows into its own memory.
        """


def check_publish(staged: Sequence[StagedWrite], writes: Sequence[PartitionWrite]) -> None:
    """One commit writes each table once (the caller's bug otherwise)."""
    names = [s.name for s in staged] + [w.name for w in writes]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(
            "E308",
            f"table {twice[0]} appears twice in one publish",
            hint="this is a bug in the caller: write each table once per commit",
        )


def parquet_target(database_path: str) -> StagingTarget:
    """The staging directory of a DuckDB file: ``TIDE_STAGING_DIR``, else ``<file>.staging`` beside it.

    An in-memory database gets a private temporary directory (for a local Ray only).
    """
    root = os.environ.get(ENV_STAGING_DIR)
    if not root:
        if database_path == ":memory:":
            root = tempfile.mkdtemp(prefix="tide-staging-")
        else:
            root = str(Path(database_path).expanduser().resolve()) + ".staging"
    return StagingTarget("parquet", root)


_BIGQUERY: dict[tuple[str, tuple[tuple[str, Any], ...]], Any] = {}


def bigquery_client(target: StagingTarget) -> Any:
    """This process's client of the target's BigQuery dataset (one per worker, reused)."""
    key = (target.location, target.options)
    if key not in _BIGQUERY:
        _BIGQUERY[key] = load_dotted(BIGQUERY_BACKEND).from_url(target.location, **dict(target.options))
    return _BIGQUERY[key]


def stage(target: StagingTarget, name: str, table: pa.Table, partition: Mapping[str, object]) -> StagedWrite:
    """Stage ``table`` as the new rows of ``partition`` of ``name`` (checked: every row belongs to it)."""
    check_partition_rows(name, table, partition)
    if target.kind == "parquet":
        root = Path(target.location)
        path = root / f"{name}-{uuid.uuid4().hex}.parquet"
        tmp = path.with_suffix(".part")
        try:
            root.mkdir(parents=True, exist_ok=True)
            pq.write_table(table, tmp)
            os.replace(tmp, path)  # a reader of the directory never sees half a file
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            raise WarehouseError(
                "E371",
                f"cannot stage {name} rows in {root}: {type(exc).__name__}",
                hint=f"check that {root} is writable from every Ray node ({ENV_STAGING_DIR})",
            ) from None
        return StagedWrite(name, dict(partition), str(path), int(table.num_rows), table.schema)
    if target.kind == "bigquery":
        ref = bigquery_client(target).stage_table(name, table)
        return StagedWrite(name, dict(partition), ref, int(table.num_rows), table.schema)
    raise ConfigError("E372", f"unknown staging kind {target.kind!r}", hint="use parquet or bigquery")


def read_staged(staged: StagedWrite) -> pa.Table:
    """A staged Parquet file's rows (DuckDB's publish loads them inside its transaction)."""
    try:
        return pq.read_table(staged.ref, schema=staged.schema)
    except OSError as exc:
        raise WarehouseError(
            "E373",
            f"staged rows of {staged.name} are missing ({type(exc).__name__}); nothing of this chunk was published",
            hint="rerun: the chunk is not committed and will be redone; on a multi-node Ray cluster set "
            f"{ENV_STAGING_DIR} to a directory the driver and every node share",
            terminal=False,
        ) from None


def discard(target: StagingTarget, staged: Sequence[StagedWrite] = ()) -> None:
    """Remove staged copies (Parquet: the files, or the run's whole directory when none is named)."""
    if target.kind == "parquet":
        if staged:
            for s in staged:
                Path(s.ref).unlink(missing_ok=True)
        else:
            shutil.rmtree(target.location, ignore_errors=True)
            with contextlib.suppress(OSError):  # the shared root too, once no run uses it
                Path(target.location).parent.rmdir()
    elif target.kind == "bigquery":
        bq = bigquery_client(target)
        for s in staged:
            bq.drop(s.ref)
