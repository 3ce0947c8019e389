"""Long-lived Ray actor pools for the pipeline's stages.

A stage (:mod:`tide_core.execution.ray_stages`) is a callable class that builds and loads its
recognizers once.  Each pool here holds ``size`` actors of one stage with one set of constructor
arguments, and is kept for the driver's Ray session: every wave of a run, every chunk of a study
and every later run with the same stage arguments reuses the loaded actors, instead of starting
new worker processes (and loading a model again) per execution as a Ray Data pipeline does.

* :func:`acquire` returns a run's pools, reusing the cached pool of each ``(stage, arguments,
  resources)`` and stopping every other cached pool (another model, other recognizer options),
  so cached actors never hold the CPUs a new pool was sized for.  A chunk's known-PHI rows are
  not constructor arguments: they travel with the note groups, so every chunk shares the pools.
* :func:`run_chain` streams groups through a chain of pools (one stage per pool, Ray passing each
  result to the next actor without a trip through the driver), keeps a bounded number of groups
  in flight and yields ``(index, payload bytes or exception)`` as groups finish.
* Fault tolerance is Ray's: ``max_restarts`` restarts a killed actor (constructor again) and
  ``max_task_retries`` re-runs the task that was on it, so a retried group is computed once more
  and never returned twice.  A group whose retries are exhausted comes back as the exception
  (``ActorDiedError``, naming the actor); the pool replaces that actor before the next group is
  submitted to its slot.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import ray
from ray import cloudpickle

from tide_core.errors import TideError

log = logging.getLogger(__name__)

#: errors that mean "this group's actor died" (as opposed to a value the stage returned)
LOST_ERRORS: tuple[type[BaseException], ...] = (
    ray.exceptions.RayActorError,
    ray.exceptions.WorkerCrashedError,
    ray.exceptions.ObjectLostError,
    ray.exceptions.OwnerDiedError,
    ray.exceptions.RayTaskError,
)


@ray.remote
class StageActor:
    """One stage instance in a worker process; ``run`` maps one pickled group to one."""

    def __init__(self, stage_cls: Any, kwargs: dict[str, Any]) -> None:
        self.stage = stage_cls(**kwargs)

    def ready(self) -> bool:
        return True

    def run(self, payload: bytes) -> bytes:
        out = self.stage({"gid": [0], "payload": [payload]})  # the group's id travels inside it
        return bytes(out["payload"][0])


@dataclass
class StagePool:
    """``size`` actors of one stage; round-robin submission, dead actors replaced."""

    key: str
    stage_cls: Any
    kwargs: dict[str, Any]  # the constructor arguments (restarts rebuild the stage from them)
    options: dict[str, Any]
    actors: list[Any] = field(default_factory=list)
    _next: int = 0

    def grow(self, size: int) -> None:
        while len(self.actors) < size:
            self.actors.append(self._new())

    def _new(self) -> Any:
        return StageActor.options(**self.options).remote(self.stage_cls, self.kwargs)  # type: ignore[attr-defined]

    def submit(self, payload: Any) -> Any:
        """Submit one group (its bytes, or the ObjectRef of the previous stage's output)."""
        slot = self._next % len(self.actors)
        self._next += 1
        return self.actors[slot].run.remote(payload)

    def replace(self, actor_id: str | None) -> bool:
        """Replace the actor ``actor_id`` (dead for good: its restarts ran out); False if not ours."""
        for i, a in enumerate(self.actors):
            if actor_id is not None and a._actor_id.hex() == actor_id:
                try:
                    ray.kill(a, no_restart=True)
                except Exception:  # already gone
                    pass
                self.actors[i] = self._new()
                log.warning("replaced a dead %s actor", getattr(self.stage_cls, "__name__", "stage"))
                return True
        return False

    def stop(self) -> None:
        for a in self.actors:
            try:
                ray.kill(a, no_restart=True)
            except Exception:  # already gone
                pass
        self.actors = []


_POOLS: dict[str, StagePool] = {}
_SESSION: list[str] = []


def _session_id() -> str:
    """This driver's Ray session: the job id alone repeats after ``ray.shutdown()`` and a new
    ``ray.init()`` (each new cluster numbers its jobs from 1), so the driver's node id is part of it."""
    ctx = ray.get_runtime_context()
    return f"{ctx.get_node_id()}:{ctx.get_job_id()}"


def pool_key(stage_cls: Any, kwargs: dict[str, Any], options: dict[str, Any]) -> str:
    """Identity of a pool: stage class, constructor arguments and actor options (by content)."""
    blob = cloudpickle.dumps((stage_cls.__module__, stage_cls.__qualname__, kwargs, sorted(options.items())))
    return hashlib.sha256(blob).hexdigest()


@dataclass(frozen=True)
class PoolRequest:
    """One stage pool a run needs: ``size`` actors of ``stage_cls(**kwargs)`` with ``options``."""

    stage_cls: Any
    kwargs: dict[str, Any]
    size: int
    options: dict[str, Any]


def acquire(requests: Sequence[PoolRequest], start_timeout_s: float = 600.0) -> list[StagePool]:
    """The pools of one run, in order: cached ones are reused (grown if needed), every other
    cached pool is stopped first, so the actors of an earlier run never hold the CPUs or GPUs
    this run's stages were sized for.  One run at a time per driver process.

    New actors must answer within ``start_timeout_s`` (their recognizers loaded): an actor the
    cluster cannot place (too few CPUs or GPUs free) would otherwise leave the run waiting
    forever, so the run stops with ``E517`` and the new pools are stopped.
    """
    session = _session_id()
    if _SESSION != [session]:  # a new Ray session: handles of the old one are void
        _POOLS.clear()
        _SESSION[:] = [session]
    keys = [pool_key(r.stage_cls, r.kwargs, r.options) for r in requests]
    for key in [k for k in _POOLS if k not in keys]:
        _POOLS.pop(key).stop()
    out = []
    started: list[tuple[StagePool, Any]] = []
    for key, r in zip(keys, requests, strict=True):
        pool = _POOLS.get(key)
        if pool is None:
            pool = _POOLS[key] = StagePool(key, r.stage_cls, r.kwargs, dict(r.options))
        before = len(pool.actors)
        pool.grow(max(1, r.size))
        started.extend((pool, a) for a in pool.actors[before:])
        out.append(pool)
    _await_started(started, start_timeout_s)
    return out


def _await_started(started: Sequence[tuple[StagePool, Any]], timeout_s: float) -> None:
    if not started:
        return
    pings = [a.ready.remote() for _, a in started]
    _, waiting = ray.wait(pings, num_returns=len(pings), timeout=timeout_s)
    if not waiting:
        return
    late = [pool for (pool, _), ping in zip(started, pings, strict=True) if ping in waiting]
    stuck = sorted({getattr(pool.stage_cls, "__name__", "stage") for pool in late})
    needs = sorted({str({k: v for k, v in pool.options.items() if k in ("num_cpus", "num_gpus")}) for pool in late})
    free = {k: round(v, 2) for k, v in ray.available_resources().items() if k in ("CPU", "GPU")}
    for key in [k for k, pool in _POOLS.items() if any(pool is p for p, _ in started)]:
        _POOLS.pop(key).stop()
    raise TideError(
        "E517",
        f"{len(waiting)} of {len(pings)} new Ray actors ({', '.join(stuck)}) did not start within {timeout_s:g} s; "
        f"each asks for {', '.join(needs)}, the cluster has {free} free",
        hint="add or free CPUs/GPUs, lower max_actors or num_gpus_per_actor, or raise start_timeout_s "
        "(model loading on a slow node)",
        terminal=False,
    )


def release_all() -> None:
    """Stop every cached pool (frees their CPUs/GPUs; the next run starts new actors)."""
    for pool in _POOLS.values():
        pool.stop()
    _POOLS.clear()


def run_chain(
    payloads: Iterable[bytes],
    pools: Sequence[StagePool],
    in_flight: int | None = None,
    settle_s: float = 0.0,
) -> Iterator[tuple[int, bytes | BaseException]]:
    """Push every payload through ``pools`` in order; yield ``(index, result)`` as groups finish.

    ``payloads`` is read lazily, one payload per free slot (a generator may read its input as it goes).

    ``result`` is the last stage's payload, or the exception that ended the group (its actor died
    and its retries ran out).  At most ``in_flight`` groups are in the pools at once.  When the
    caller stops early, queued groups are cancelled; with ``settle_s`` the groups already running
    are also waited for (up to that long), for stages whose tasks leave side effects (staged files)
    that the caller cleans up afterwards.
    """
    limit = in_flight or max(2, 2 * sum(len(p.actors) for p in pools))
    pending: dict[Any, int] = {}
    todo = iter(enumerate(payloads))

    def submit_next() -> bool:
        nxt = next(todo, None)
        if nxt is None:
            return False
        i, ref = nxt
        for pool in pools:  # Ray hands each stage's output to the next actor directly
            ref = pool.submit(ref)
        pending[ref] = i
        return True

    while len(pending) < limit and submit_next():
        pass
    try:
        yield from _drain(pending, pools, submit_next, limit)
    finally:
        for ref in pending:  # the caller stopped early (an error): drop what is still queued
            try:
                ray.cancel(ref)
            except Exception:  # finished or gone
                pass
        if pending and settle_s > 0:  # let running tasks finish, so nothing they write comes later
            ray.wait(list(pending), num_returns=len(pending), timeout=settle_s)


def _drain(
    pending: dict[Any, int], pools: Sequence[StagePool], submit_next: Any, limit: int
) -> Iterator[tuple[int, bytes | BaseException]]:
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            i = pending.pop(ref)
            result: bytes | BaseException
            try:
                result = ray.get(ref)
            except LOST_ERRORS as exc:
                died = exc if isinstance(exc, ray.exceptions.ActorDiedError) else None
                if died is not None:  # a chained group carries its upstream actor's error
                    any(pool.replace(died.actor_id) for pool in pools)
                result = exc
            yield i, result
        while len(pending) < limit and submit_next():
            pass


def find_tide_error(exc: BaseException) -> TideError | None:
    """The TideError a Ray error carries (its cause chain), if any: its message is PHI-free."""
    seen: set[int] = set()
    stack: list[BaseException | None] = [exc]
    while stack:
        e = stack.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, TideError):
            return e
        stack.extend([getattr(e, "cause", None), e.__cause__, e.__context__])
    return None
