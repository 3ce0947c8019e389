"""``open_warehouse``: a warehouse URL to its backend.

This is the one module that knows every backend; the backends only import the protocol and
shared helpers in :mod:`tide_core.io.warehouse`, so the arrows point one way
(``open`` -> backends -> ``warehouse``).  The BigQuery backend imports the Google Cloud client
libraries (seconds), so it is loaded by its dotted path (:func:`tide_core.plugins.load_dotted`)
only for a ``bigquery:`` URL; a DuckDB run never imports them.
"""

from __future__ import annotations

from typing import Any

from tide_core.errors import ConfigError
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.io.warehouse import Warehouse
from tide_core.plugins import load_dotted

SCHEMES = ("duckdb", "bigquery")
BIGQUERY_BACKEND = "tide_core.io.bigquery_warehouse:BigQueryWarehouse"


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
        wh: Warehouse = load_dotted(BIGQUERY_BACKEND).from_url(url, **options)
        return wh
    raise ConfigError("E301", f"unknown warehouse scheme {scheme!r}", hint=f"use one of: {', '.join(SCHEMES)}")
