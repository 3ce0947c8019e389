"""Test helper: kill one live actor of a Ray stage pool mid-run (a real SIGKILL of its process)."""

from __future__ import annotations

import os
import signal
from typing import Any

from tide_core.execution import ray_actors as ra


class KillOneActor:
    """An ``on_chunk`` callback that SIGKILLs the first actor of ``stage_cls``'s pool, once."""

    def __init__(self, ray_session: Any, stage_cls: Any) -> None:
        self.ray, self.stage_cls = ray_session, stage_cls
        self.killed: list[int] = []

    def __call__(self, progress: Any) -> None:
        if self.killed:
            return
        pools = [p for p in ra._POOLS.values() if p.stage_cls is self.stage_cls]
        assert pools and pools[0].actors, f"no {self.stage_cls.__name__} actor is alive"
        pid = self.ray.get(pools[0].actors[0].__ray_call__.remote(lambda _self: os.getpid()))
        os.kill(pid, signal.SIGKILL)
        self.killed.append(pid)
