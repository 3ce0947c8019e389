"""One pool of long-lived Ray actors that each take a whole chunk of a study (release, or
recognition from a shard), with at most two chunks per actor in flight.

:func:`run_chunks` sizes the pool from the cluster's CPUs, feeds it the jobs' payloads lazily
(the driver reads or plans a bounded number of chunks ahead) and yields ``(chunk, payload)`` as
chunks finish, in any order.  A chunk whose actor died more often than ``max_retries`` comes back
as a ``TideError`` with the caller's code, naming the chunk (a ``TideError`` raised in the worker
comes back as itself), and nothing more is yielded: the caller stops the run, and the chunks
still queued are cancelled.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from tide_core.errors import TideError
from tide_core.execution import ray_actors as ra
from tide_core.execution.ray_session import cluster_resources, ensure_ray


@dataclass(frozen=True)
class RayChunkConfig:
    """Where and how wide chunk actors run on Ray (none of it changes what they write)."""

    address: str | None = None
    num_cpus_per_actor: float = 1.0
    max_actors: int | None = None  # None: one actor per CPU of the cluster
    max_retries: int = 3
    start_timeout_s: float = 600.0
    local_num_cpus: int | None = None
    settle_s: float = 300.0  # a stopped run waits this long for chunks still being staged


def run_chunks(
    stage_cls: Any,
    kwargs: dict[str, Any],
    payloads: Iterable[tuple[int, bytes]],
    rc: RayChunkConfig,
    what: str,
    code: str,
) -> Iterator[tuple[int, bytes | TideError]]:
    """Run ``(chunk index, payload)`` pairs on a pool of ``stage_cls(**kwargs)`` actors."""
    ensure_ray(rc.address, rc.local_num_cpus)
    cpus = cluster_resources()["CPU"]
    per = max(0.05, min(float(rc.num_cpus_per_actor), cpus or 1.0))
    size = rc.max_actors or max(1, int(cpus // per))
    retry = {"max_restarts": rc.max_retries, "max_task_retries": rc.max_retries}
    pools = ra.acquire([ra.PoolRequest(stage_cls, kwargs, size, {"num_cpus": per, **retry})], rc.start_timeout_s)
    chunks: list[int] = []

    def feed() -> Iterator[bytes]:
        for chunk, payload in payloads:
            chunks.append(chunk)
            yield payload

    for i, out in ra.run_chain(feed(), pools, settle_s=rc.settle_s):
        if isinstance(out, BaseException):
            error = ra.find_tide_error(out) or TideError(
                code,
                f"{what} of chunk {chunks[i] + 1} did not come back from the Ray workers "
                f"({type(out).__name__}) after {rc.max_retries} retries",
                hint="rerun: committed chunks are kept and the run resumes; check the Ray worker logs",
                terminal=False,
            )
            yield chunks[i], error
            return
        yield chunks[i], out
