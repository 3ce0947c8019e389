"""Opening a DuckDB file another process holds waits for it (one writer at a time is the
warehouse's own guarantee, not only the Dagster pool's), within a bound, and never waits on an
error a wait cannot cure."""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import dagster as dg
import pytest

from tide_core.errors import ConfigError, WarehouseError
from tide_core.io.duckdb_warehouse import (
    DEFAULT_LOCK_WAIT_S,
    LOCK_LOG_EVERY_S,
    LOCK_WAIT_ENV,
    DuckDBWarehouse,
    lock_holder,
    lock_wait_setting,
)

ROOT = Path(__file__).resolve().parents[2]

HOLDER = textwrap.dedent(
    """
    import sys, time
    import duckdb
    con = duckdb.connect(sys.argv[1])
    con.execute("CREATE TABLE IF NOT EXISTS held (n INTEGER)")
    con.execute("INSERT INTO held VALUES (1)")
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
    con.execute("INSERT INTO held VALUES (2)")
    con.close()
    print(repr(time.time()), flush=True)
    """
)


def _hold(path: Path, seconds: float) -> subprocess.Popen[str]:
    """Another process that opens ``path``, writes a row, holds the file ``seconds``, writes another
    row, closes it and prints when it closed."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_process_waits_for_the_lock_and_sees_every_row(tmp_path):
    db = tmp_path / "wh.duckdb"
    holder = _hold(db, 1.5)
    t0 = time.time()
    with DuckDBWarehouse(db, lock_wait_s=60) as wh:
        opened = time.time()
        rows = sorted(r["n"] for r in wh.read_table("held").to_pylist())
    assert holder.stdout is not None
    closed = float(holder.stdout.readline())
    assert holder.wait(30) == 0
    assert opened >= closed, "opened while the other process still held the file"
    assert opened - t0 < 30
    assert rows == [1, 2]  # the holder's last write, made just before it closed, is there


def test_the_wait_is_bounded_and_the_error_names_the_setting(tmp_path):
    db = tmp_path / "wh.duckdb"
    holder = _hold(db, 20)
    try:
        t0 = time.monotonic()
        with pytest.raises(WarehouseError) as err:
            DuckDBWarehouse(db, lock_wait_s=0.6)
        waited = time.monotonic() - t0
        assert err.value.code == "E303"
        assert "another process held its lock for 0.6 s" in str(err.value)
        assert f"PID {holder.pid} (" in str(err.value)  # the error names who held it
        assert LOCK_WAIT_ENV in err.value.hint
        assert 0.6 <= waited < 10
        t0 = time.monotonic()
        with pytest.raises(WarehouseError):
            DuckDBWarehouse(db, lock_wait_s=0)  # 0: refuse at once, as DuckDB does
        assert time.monotonic() - t0 < 2
    finally:
        holder.kill()
        holder.wait(30)


def test_an_error_that_is_not_a_lock_is_not_waited_for(tmp_path):
    bad = tmp_path / "not_a_database.duckdb"
    bad.write_bytes(b"this is not a DuckDB file" * 1000)
    t0 = time.monotonic()
    with pytest.raises(WarehouseError) as err:
        DuckDBWarehouse(bad, lock_wait_s=60)
    assert time.monotonic() - t0 < 10
    assert err.value.code == "E303" and "lock" not in str(err.value)


def test_the_wait_setting(monkeypatch):
    monkeypatch.delenv(LOCK_WAIT_ENV, raising=False)
    assert lock_wait_setting() == DEFAULT_LOCK_WAIT_S
    assert lock_wait_setting(0) == 0.0
    monkeypatch.setenv(LOCK_WAIT_ENV, "12.5")
    assert lock_wait_setting() == 12.5
    assert lock_wait_setting(3) == 3.0  # the caller's value wins
    for bad in ("soon", "-1", "inf", "nan"):
        monkeypatch.setenv(LOCK_WAIT_ENV, bad)
        with pytest.raises(ConfigError) as err:
            lock_wait_setting()
        assert err.value.code == "E343" and LOCK_WAIT_ENV in err.value.hint


def _waits(records: list[logging.LogRecord]) -> list[str]:
    return [
        r.getMessage()
        for r in records
        if r.name == "tide.warehouse"
        and r.levelno == logging.WARNING
        and "waiting for DuckDB file lock" in r.getMessage()
    ]


def test_a_lock_wait_is_logged_with_the_holders_pid_at_its_start_and_every_few_seconds(tmp_path, caplog):
    db = tmp_path / "wh.duckdb"
    holder = _hold(db, LOCK_LOG_EVERY_S + 2.5)
    caplog.set_level(logging.INFO, logger="tide.warehouse")
    try:
        with DuckDBWarehouse(db, lock_wait_s=60) as wh:
            assert wh.read_table("held").num_rows == 2
    finally:
        holder.wait(30)
    waits = _waits(caplog.records)
    assert len(waits) >= 2, waits  # at the start, then again after LOCK_LOG_EVERY_S
    assert all(f"held by PID {holder.pid} (" in m for m in waits), waits
    waited = [int(re.search(r"for (\d+) s ", m).group(1)) for m in waits]  # type: ignore[union-attr]
    assert waited[0] == 0 and waited[1] >= LOCK_LOG_EVERY_S - 1, waited
    assert any("lock acquired after" in r.getMessage() for r in caplog.records)


def test_the_holder_is_read_from_duckdbs_message():
    msg = (
        'IO Error: Could not set lock on file "/x/wh.duckdb": Conflicting lock is held in '
        "/usr/bin/python3.11 (PID 4242). See also https://duckdb.org/docs/stable/connect/concurrency"
    )
    assert lock_holder(Exception(msg)) == (4242, "/usr/bin/python3.11")
    assert lock_holder(Exception("Could not set lock on file")) == (None, "")


def test_a_lock_wait_inside_a_dagster_step_is_in_the_runs_event_log(tmp_path):
    """The instance file (dagster_home/dagster.yaml) hands TIDE's loggers to Dagster, so the wait
    shows in the run's log in the UI, not only on the step's stderr."""
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    db = tmp_path / "wh.duckdb"

    @dg.op
    def open_warehouse() -> int:
        with DuckDBWarehouse(db, lock_wait_s=60) as wh:
            return wh.read_table("held").num_rows

    @dg.job
    def opens():
        open_warehouse()

    holder = _hold(db, 6)  # outlasts the run's start-up
    try:
        with dg.DagsterInstance.from_config(str(home)) as instance:
            result = opens.execute_in_process(instance=instance)
            assert result.success and result.output_for_node("open_warehouse") == 2
            messages = [e.user_message for e in instance.all_logs(result.run_id)]
    finally:
        holder.wait(30)
    assert any(f"waiting for DuckDB file lock held by PID {holder.pid} (" in m for m in messages), messages
