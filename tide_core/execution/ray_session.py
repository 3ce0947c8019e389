"""Connecting to Ray: a local single-machine session by default, a cluster when an address is set.

``RAY_ADDRESS`` (or ``RayRecognitionConfig.address``) selects an existing cluster
(``ray://head:10001`` through Ray Client, or ``auto`` on a cluster node).  Without one we start a
quiet local Ray with a private temp dir (several runs on one machine must not share
``/tmp/ray``), no dashboard, and as many CPUs as this process owns (``TIDE_RAY_NUM_CPUS``, else
the cgroup CPU quota and affinity mask, :func:`tide_core.threads.allotted_cpus`).  A session
that is already initialised is reused as is.
"""

from __future__ import annotations

import logging
import os
import tempfile
from typing import Any

import ray

from tide_core.errors import ConfigError
from tide_core.threads import allotted_cpus

log = logging.getLogger(__name__)


#: Worker environment: never reach a model hub, no per-load progress bars in the driver's log.
WORKER_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "RAY_DATA_DISABLE_PROGRESS_BARS": "1",
}


def ray_address(address: str | None = None) -> str | None:
    return address or os.environ.get("RAY_ADDRESS") or None


def ensure_ray(address: str | None = None, num_cpus: int | None = None, num_gpus: int | None = None) -> Any:
    """Return the ``ray`` module with a session initialised (reusing a running one)."""
    if ray.is_initialized():
        return ray
    addr = ray_address(address)
    kwargs: dict[str, Any] = {
        "logging_level": logging.WARNING,
        "log_to_driver": True,
        "configure_logging": True,
        "runtime_env": {"env_vars": dict(WORKER_ENV)},
    }
    if addr:
        log.info("connecting to the Ray cluster at %s", addr.split("@")[-1])
        try:
            ray.init(address=addr, **kwargs)
        except Exception as exc:
            raise ConfigError(
                "E511",
                f"cannot connect to the Ray cluster at {addr}: {type(exc).__name__}",
                hint="check RAY_ADDRESS (ray://HEAD:10001) and that the head node is up",
            ) from exc
    else:
        tmp = os.environ.get("RAY_TMPDIR") or tempfile.mkdtemp(prefix="tide-ray-")
        # the CPUs this process owns (cgroup quota, affinity), never the machine's core count
        cpus = num_cpus if num_cpus is not None else int(os.environ.get("TIDE_RAY_NUM_CPUS", 0)) or allotted_cpus()
        ray.init(num_cpus=cpus, num_gpus=num_gpus, include_dashboard=False, _temp_dir=tmp, **kwargs)
    return ray


def cluster_resources() -> dict[str, float]:
    res = ray.cluster_resources()
    return {"CPU": float(res.get("CPU", 0.0)), "GPU": float(res.get("GPU", 0.0))}
