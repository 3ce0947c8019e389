"""Which runtime the default model runs on, and the runtime names users and benchmarks give.

A runtime name is one of the HF token classifier's runtimes (``torch``, ``onnx``, ``onnx-int8``)
or ``torch-bfloat16`` / ``torch-float16`` (PyTorch at that ``dtype``).  The default is chosen once,
where the configuration is built (the driver of a Ray run), and the chosen options travel in the
recognizer spec, so every worker runs what the recognition fingerprint says:

1. ``$TIDE_MODEL_RUNTIME`` when set (pin it on a cluster whose machines differ);
2. ``torch-bfloat16`` on a CPU with AMX-BF16 (Intel Xeon Sapphire Rapids and later): PyTorch runs
   bfloat16 matrix products on the AMX tiles, 1.8x ONNX Runtime int8 there, and its spans stay
   closer to the float32 reference (docs/results/speed.md, run 7);
3. ``onnx-int8`` elsewhere, the fastest runtime within the quality bound on CPUs without AMX.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any

from tide_core.errors import ConfigError
from tide_core.inference.onnx_export import RUNTIMES

RUNTIME_ENV = "TIDE_MODEL_RUNTIME"
HALF_DTYPES = ("float16", "bfloat16")
#: PyTorch weight/activation precisions of the ``torch`` runtime; float32 is the reference.
DTYPES: tuple[str, ...] = ("float32", *HALF_DTYPES)
RUNTIME_NAMES: tuple[str, ...] = RUNTIMES + tuple(f"torch-{d}" for d in HALF_DTYPES)
AMX_RUNTIME, PORTABLE_RUNTIME = "torch-bfloat16", "onnx-int8"
CPUINFO = Path("/proc/cpuinfo")


def runtime_options(name: str) -> dict[str, Any]:
    """The ``tide.hf`` options of runtime ``name``, ``{"runtime": ..., "dtype": ...}`` (both, so
    that they replace a spec's earlier choice whole); ConfigError E364 for a name not in
    :data:`RUNTIME_NAMES`."""
    if name in RUNTIMES:
        return {"runtime": name, "dtype": "float32"}
    runtime, _, dtype = name.partition("-")
    if runtime == "torch" and dtype in HALF_DTYPES:
        return {"runtime": "torch", "dtype": dtype}
    raise ConfigError("E364", f"unknown inference runtime {name!r}", hint=f"use one of {', '.join(RUNTIME_NAMES)}")


def cpu_flags(cpuinfo: Path = CPUINFO) -> frozenset[str]:
    """The CPU feature flags the kernel reports (empty where there is no ``/proc/cpuinfo``)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


@cache
def _this_cpu() -> frozenset[str]:
    """This machine's flags, read once per process (a configuration is built more than once)."""
    return cpu_flags(CPUINFO)


def default_runtime_name(flags: frozenset[str] | None = None, environ: dict[str, str] | None = None) -> str:
    """The default model's runtime on this machine (see the module docstring)."""
    env = os.environ if environ is None else environ
    pinned = env.get(RUNTIME_ENV, "").strip()
    if pinned:
        if pinned not in RUNTIME_NAMES:
            raise ConfigError(
                "E364", f"{RUNTIME_ENV}={pinned!r} is not a runtime", hint=f"use one of {', '.join(RUNTIME_NAMES)}"
            )
        return pinned
    return AMX_RUNTIME if "amx_bf16" in (_this_cpu() if flags is None else flags) else PORTABLE_RUNTIME
