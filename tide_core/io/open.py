"""``open_warehouse``: a warehouse URL to its backend.

This is the one module that knows every backend; the backends only import the protocol and
shared helpers in :mod:`tide_core.io.warehouse`, so the arrows point one way
(``open`` -> backends -> ``warehouse``).
"""

from __future__ import annotations

from typing import Any

from tide_core.errors import ConfigError
from tide_core.io.bigquery_warehouse import BigQueryWarehouse
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.io.warehouse import Warehouse

SCHEMES = ("duckdb", "bigquery")


def open_warehouse(url: str, **options: Any) -> Warehouse:
    """Open ``duckdb:PATH[#SCHEMA]`` or ``bigquery:PROJECT.DATASET``."""
    if not isinstance(url, str) or ":" not in url:
        raise ConfigError(
            "E300",
            f"warehouse url {url!r} has no scheme",
            hint="use duckdb:PATH (embedded default) or bigquery:PROJECT.DATASET",
        )
    scheme, _, rest = url.partition(":")
    if scheme == "duckdb":
        path, _, schema = rest.partition("#")
        return DuckDBWarehouse(path or ":memory:", schema=schema or "main", **options)
    if scheme == "bigquery":
        return BigQueryWarehouse.from_url(url, **options)
    raise ConfigError("E301", f"unknown warehouse scheme {scheme!r}", hint=f"use one of: {', '.join(SCHEMES)}")
