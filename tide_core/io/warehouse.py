"""The warehouse interface: where notes come from and where TIDE writes its tables.

Every backend implements the same small protocol on Arrow tables, so the engine never sees
SQL dialects.  ``replace_partition`` is the idempotency primitive: rerunning a (study) or
(study, key) partition replaces exactly its rows.

Backends import this module (the protocol and shared helpers) and nothing above it;
``open_warehouse`` (URL -> backend) lives in :mod:`tide_core.io.open`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

import pyarrow as pa

from tide_core.errors import ConfigError, WarehouseError


@runtime_checkable
class Warehouse(Protocol):
    url: str

    def table_exists(self, name: str) -> bool: ...

    def columns(self, name: str) -> list[str]: ...

    def read_table(
        self, name: str, columns: Sequence[str] | None = None, where: Mapping[str, object] | None = None
    ) -> pa.Table: ...

    def replace_table(self, name: str, table: pa.Table) -> int: ...

    def append(self, name: str, table: pa.Table) -> int: ...

    def replace_partition(self, name: str, table: pa.Table, partition: Mapping[str, str]) -> int: ...

    def delete(self, name: str, where: Mapping[str, object]) -> int: ...

    def count(self, name: str, where: Mapping[str, object] | None = None) -> int: ...

    def close(self) -> None: ...


def check_partition_rows(name: str, table: pa.Table, partition: Mapping[str, str]) -> None:
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
        if table.num_rows and set(table.column(col).to_pylist()) != {value}:
            raise WarehouseError(
                "E307",
                f"rows written to partition {dict(partition)} of {name} carry other {col} values",
                hint="this is a bug in the caller",
            )
