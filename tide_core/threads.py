"""How many threads a worker may run: sized from the CPUs it owns, never from the machine's core count.

torch and ONNX Runtime start one intra-op thread per core they see by default.  A worker that
owns one CPU of a shared node (a Ray actor with ``num_cpus=1``, a Kubernetes pod with a CPU
limit, a Dagster run worker beside other runs) then runs two or more busy threads per core; their
barriers wait on whichever thread the scheduler has just parked, and the model's throughput
falls far below one thread's.  :func:`allotted_threads` is the thread count to use instead: the
smallest of what is known about this process, each figure rounded **down** to whole CPUs, at
least 1:

1. ``TIDE_THREADS``: a positive integer set by the operator.  It can only lower the count (a
   value above the allocation gives the allocation); anything else is refused with E525;
2. the Ray actor's or task's CPUs (``num_cpus``, from ``ray.get_runtime_context()
   .get_assigned_resources()``) when this code runs inside a Ray worker; an actor that reserved no
   CPU says nothing here;
3. the cgroup CPU quota of this process's cgroup and every cgroup above it: cgroup v2 ``cpu.max``
   (``"<quota> <period>"``; ``max`` is no limit), cgroup v1 ``cpu.cfs_quota_us`` /
   ``cpu.cfs_period_us`` (``-1`` is no limit).  A Kubernetes CPU limit and ``docker --cpus`` are
   such quotas;
4. the CPUs this process may run on (``os.sched_getaffinity``: ``taskset``, cpusets, Kubernetes'
   static CPU manager).  ``os.cpu_count()`` is read only on a platform without affinity
   masks, and only when nothing else is known.

Fractions round down (a quota of 1.5 CPUs gives 1 thread, 0.5 gives 1): a thread on a fraction
of a CPU is throttled at the end of every quota period, and every parallel region waits for it.

:func:`configure_torch` applies the count to torch (intra-op threads; inter-op threads 1, as
TIDE never runs independent torch operators side by side).  This module imports neither torch nor
Ray at its top (torch is loaded by its dotted path when a caller asks to configure it; Ray is read
only when the process has already imported it).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tide_core.errors import ConfigError
from tide_core.plugins import load_dotted

THREADS_ENV = "TIDE_THREADS"
CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")


@dataclass(frozen=True)
class Allotment:
    """What is known about this process's CPUs; ``None``: that source says nothing."""

    env: int | None = None  # TIDE_THREADS
    ray: float | None = None  # the Ray actor's or task's num_cpus
    cgroup: float | None = None  # quota / period, the smallest along the cgroup path
    affinity: int | None = None  # len(os.sched_getaffinity(0))
    fallback: int | None = None  # os.cpu_count(), only where there is no affinity mask
    sources: dict[str, float] = field(default_factory=dict)

    @property
    def threads(self) -> int:
        """The smallest known figure, rounded down, at least 1 (1 when nothing is known)."""
        known = [v for v in (self.env, self.ray, self.cgroup, self.affinity) if v is not None]
        if not known and self.fallback is not None:
            known = [self.fallback]
        return max(1, math.floor(min(known))) if known else 1

    @property
    def cpus(self) -> int:
        """The process's CPUs without ``TIDE_THREADS``: cgroup quota and affinity (sizes a local Ray)."""
        known = [v for v in (self.cgroup, self.affinity) if v is not None]
        if not known and self.fallback is not None:
            known = [self.fallback]
        return max(1, math.floor(min(known))) if known else 1


def env_threads(environ: Mapping[str, str] | None = None) -> int | None:
    """``TIDE_THREADS`` as a positive integer, None when unset or empty; E525 for anything else."""
    raw = (os.environ if environ is None else environ).get(THREADS_ENV, "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigError(
            "E525",
            f"{THREADS_ENV} must be a positive whole number of threads",
            hint=f"set {THREADS_ENV} to e.g. 1, or unset it to size threads from the CPUs this process owns",
        )
    return value


def ray_cpus() -> float | None:
    """The CPUs Ray assigned to the actor or task this code runs in; None outside a Ray worker
    (the driver included) or when the actor reserved none."""
    ray = sys.modules.get("ray")  # never imported here: a process that runs Ray code has it loaded
    if ray is None or not getattr(ray, "is_initialized", lambda: False)():
        return None
    try:
        ctx = ray.get_runtime_context()
        if ctx.worker.mode != ray.WORKER_MODE:
            return None
        cpus = float(ctx.get_assigned_resources().get("CPU", 0.0))
    except Exception:  # an API change or a disconnected worker: this source says nothing
        return None
    return cpus if cpus > 0 else None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None


def _v2_quota(d: Path) -> float | None:
    text = _read(d / "cpu.max")
    if not text:
        return None
    parts = text.split()
    if parts[0] == "max":
        return None
    try:
        quota = int(parts[0])
        period = int(parts[1]) if len(parts) > 1 else 100_000
    except ValueError:
        return None
    return quota / period if quota > 0 and period > 0 else None


def _v1_quota(d: Path) -> float | None:
    quota, period = _read(d / "cpu.cfs_quota_us"), _read(d / "cpu.cfs_period_us")
    if quota is None or period is None:
        return None
    try:
        q, p = int(quota), int(period)
    except ValueError:
        return None
    return q / p if q > 0 and p > 0 else None


def _own_cgroups(proc_cgroup: Path) -> tuple[str | None, str | None]:
    """This process's cgroup v2 path and its v1 ``cpu`` controller path, from ``/proc/self/cgroup``."""
    v2 = v1 = None
    for line in (_read(proc_cgroup) or "").splitlines():
        hid, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if hid == "0" and controllers == "":
            v2 = path
        elif "cpu" in controllers.split(","):
            v1 = path
    return v2, v1


def _with_ancestors(base: Path, rel: str | None) -> list[Path]:
    """``base/rel`` and each directory above it up to ``base`` (a limit anywhere above binds too)."""
    parts = [p for p in (rel or "").split("/") if p]
    return [base.joinpath(*parts[:k]) for k in range(len(parts), -1, -1)]


def cgroup_cpus(root: Path = CGROUP_ROOT, proc_cgroup: Path | None = PROC_CGROUP) -> float | None:
    """The cgroup CPU quota in CPUs (the smallest along this process's cgroup path), None when unlimited.

    ``root`` is the cgroup mount (a test passes a directory of its own).  Looked at: cgroup v2
    ``cpu.max`` under ``root`` (a unified mount, or ``root/unified`` on a hybrid host), and cgroup
    v1 ``cpu.cfs_quota_us``/``cpu.cfs_period_us`` under ``root/cpu``, ``root/cpu,cpuacct`` or
    ``root`` itself; each at this process's own cgroup (``proc_cgroup``; None: only the mount's
    top directory) and every cgroup above it.
    """
    v2_rel, v1_rel = _own_cgroups(proc_cgroup) if proc_cgroup is not None else (None, None)
    found: list[float] = []
    for base in (root, root / "unified"):
        for d in _with_ancestors(base, v2_rel):
            q = _v2_quota(d)
            if q is not None:
                found.append(q)
    for base in (root / "cpu", root / "cpu,cpuacct", root):
        for d in _with_ancestors(base, v1_rel):
            q = _v1_quota(d)
            if q is not None:
                found.append(q)
    return min(found) if found else None


def affinity_cpus() -> int | None:
    """The CPUs this process may run on; None where the OS has no affinity mask."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return None


def allotment(
    environ: Mapping[str, str] | None = None,
    cgroup_root: Path = CGROUP_ROOT,
    proc_cgroup: Path | None = PROC_CGROUP,
    affinity: int | None = None,
    ray: float | None = None,
) -> Allotment:
    """Every source read once (see the module docstring).  ``affinity`` and ``ray`` override what
    the process would report (tests); ``cgroup_root``/``proc_cgroup`` point at another cgroup tree."""
    env = env_threads(environ)
    ray_n = ray if ray is not None else ray_cpus()
    cg = cgroup_cpus(cgroup_root, proc_cgroup)
    aff = affinity if affinity is not None else affinity_cpus()
    fallback = (os.cpu_count() or 1) if aff is None else None
    named = {"TIDE_THREADS": env, "ray": ray_n, "cgroup": cg, "affinity": aff, "cpu_count": fallback}
    return Allotment(env, ray_n, cg, aff, fallback, {k: float(v) for k, v in named.items() if v is not None})


def allotted_threads(
    environ: Mapping[str, str] | None = None,
    cgroup_root: Path = CGROUP_ROOT,
    proc_cgroup: Path | None = PROC_CGROUP,
    affinity: int | None = None,
    ray: float | None = None,
) -> int:
    """The intra-op thread count for this process or Ray worker (see the module docstring)."""
    return allotment(environ, cgroup_root, proc_cgroup, affinity, ray).threads


def allotted_cpus(cgroup_root: Path = CGROUP_ROOT, proc_cgroup: Path | None = PROC_CGROUP) -> int:
    """Whole CPUs this process owns (cgroup quota, affinity), without ``TIDE_THREADS`` or Ray:
    the size of a local Ray session started by this process."""
    return allotment({}, cgroup_root, proc_cgroup, ray=None).cpus


def configure_torch(threads: int | None = None, torch: Any = None) -> int:
    """Set torch's intra-op threads to ``threads`` (default :func:`allotted_threads`) and its
    inter-op threads to 1 where torch still allows it; returns the intra-op count.

    ``torch`` is the module when the caller has it; otherwise it is imported here by its dotted
    path (:func:`tide_core.plugins.load_dotted`), so that this module stays light."""
    if torch is None:
        load_dotted("torch:set_num_threads")  # imports torch once; the module is then in sys.modules
        torch = sys.modules["torch"]
    n = max(1, int(threads)) if threads else allotted_threads()
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
    if torch.get_num_interop_threads() != 1:
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:  # torch allows it once, before any inter-op work; the count stays
            pass
    return n
