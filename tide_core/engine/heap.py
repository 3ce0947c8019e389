"""Hand the C heap's free pages back to the system between chunks.

A chunk's working set (its notes, spans and cached spans as Python objects, DuckDB's results) is
freed when the chunk is done, but glibc's allocator keeps the freed pages mapped, scattered
between live objects, so a long run's resident memory climbs to a plateau well above what it
holds.  :func:`trim_heap` calls glibc's ``malloc_trim(0)``, which releases every free page of
every arena; study runs and release passes call it after each chunk.  Elsewhere (musl, macOS)
it does nothing.
"""

from __future__ import annotations

import ctypes

try:  # the symbols of the running process: glibc's, where Python runs on glibc
    _MALLOC_TRIM = getattr(ctypes.CDLL(None), "malloc_trim", None)
except OSError:  # pragma: no cover - a platform without dlopen(NULL)
    _MALLOC_TRIM = None
if _MALLOC_TRIM is not None:
    _MALLOC_TRIM.argtypes = [ctypes.c_size_t]
    _MALLOC_TRIM.restype = ctypes.c_int


def trim_heap() -> bool:
    """Release the C heap's free pages to the system; whether any were released."""
    return bool(_MALLOC_TRIM(0)) if _MALLOC_TRIM is not None else False
