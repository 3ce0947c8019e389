"""Where notes come from and where TIDE writes: the warehouse protocol and its backends.

:mod:`~tide_core.io.warehouse` holds the protocol on Arrow tables (so the engine never sees a SQL
dialect), :mod:`~tide_core.io.duckdb_warehouse` and :mod:`~tide_core.io.bigquery_warehouse` the two
built-in backends, :mod:`~tide_core.io.open` the URL that picks one, and
:mod:`~tide_core.io.staging` / :mod:`~tide_core.io.shards` what Ray workers write and read
without passing rows through the driver.
"""
