"""A forked child for the kill tests (no interpreter start-up: the child inherits what this
process loaded), waited for with a time limit."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

import pytest


def run_forked(work: Callable[[], None], timeout: float = 300.0) -> int:
    """Run ``work`` in a forked child and return its wait status: exit 0 when ``work`` returns,
    1 when it raises (no cleanup, no atexit); a child still running after ``timeout`` s is killed
    and the test fails."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 0
        try:
            work()
        except BaseException:  # any way out but the kill the test expects
            code = 1
        os._exit(code)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail(f"the child process did not end in {timeout:.0f} s")
        time.sleep(0.02)
