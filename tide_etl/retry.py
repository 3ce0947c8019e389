"""Concurrency pool and retries shared by every asset and check that touches the warehouse.

* ``POOL`` (``tide_warehouse``): every step that opens the warehouse claims a slot of this
  Dagster pool, whatever launches it (a job, a schedule, a sensor, a UI backfill or a lone
  materialization).  ``dagster_home/dagster.yaml`` limits pools to 1 slot: an embedded DuckDB
  file admits one writing process.  On BigQuery raise it
  (``dagster instance concurrency set tide_warehouse 8``).
* ``TRANSIENT_RETRY``: exponential backoff with jitter, for errors that may pass (a DuckDB file
  locked by another process, a write-write conflict, a lost connection, a BigQuery 429/5xx, a
  TIDE error marked not terminal).  ``transient_only`` turns every other error into a
  ``dg.Failure`` that is not retried: bad data or configuration fails the same way every time.
* ``ONE_PARTITION_PER_RUN``: the backfill policy of every asset.  A backfill of many small
  (study, key) partitions becomes one small run per partition, each its own write-audit-publish
  unit: a failed partition is retried or re-executed alone and never holds back or re-writes the
  others; the run queue (``max_concurrent_runs``) and the pool bound how many are in flight.
  Several partitions per run do not work for the release assets in Dagster 1.13: a run over a
  partition range records the partitioned checks without a partition, and one failing blocking
  check would stop ``release_summary`` for every cell of the run.  Many small cells are released
  in one launched run by ``release_batch_job`` instead (tide_etl/batch.py).
"""

from __future__ import annotations

from contextlib import contextmanager

import dagster as dg

from tide_core.errors import TideError

POOL = "tide_warehouse"

ONE_PARTITION_PER_RUN = dg.BackfillPolicy.multi_run(max_partitions_per_run=1)

TRANSIENT_RETRY = dg.RetryPolicy(max_retries=4, delay=1.0, backoff=dg.Backoff.EXPONENTIAL, jitter=dg.Jitter.PLUS_MINUS)

_TRANSIENT_NAMES = {
    "TransactionException",  # duckdb: write-write conflict
    "ServiceUnavailable",  # google.api_core: 503
    "TooManyRequests",  # 429
    "InternalServerError",  # 500
    "GatewayTimeout",
    "DeadlineExceeded",
    "RetryError",
}


def is_transient(exc: BaseException) -> bool:
    """True for errors a retry may cure; never reads note text (only types and error codes)."""

    if isinstance(exc, TideError):
        # E303: a DuckDB file that cannot be opened, most often because another process holds its lock
        return exc.code == "E303" or not exc.terminal
    if isinstance(exc, ConnectionError | TimeoutError):
        return True
    name = type(exc).__name__
    if name in _TRANSIENT_NAMES:
        return True
    if name == "IOException" and type(exc).__module__.lstrip("_").startswith("duckdb"):
        return "lock" in str(exc).lower()  # "Could not set lock on file ...": another process writes
    return False


@contextmanager
def transient_only():
    """Let transient errors through (the step's RetryPolicy retries them); make others final."""
    try:
        yield
    except dg.Failure:
        raise
    except Exception as exc:
        if is_transient(exc):
            raise

        what = str(exc) if isinstance(exc, TideError) else f"{type(exc).__name__} (see the step's error chain)"
        raise dg.Failure(description=f"not retried: {what}", allow_retries=False) from exc
