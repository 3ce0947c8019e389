"""Freed chunk memory goes back to the system (``tide_core.engine.heap.trim_heap``).

glibc keeps freed pages mapped when live objects sit between them: a run that frees each chunk's
working set still climbs to a resident plateau.  ``trim_heap`` (``malloc_trim(0)``) hands them
back; study runs and release passes call it after every chunk.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import release_study
from release_helpers import fixed_key
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.config import TideConfig
from tide_core.engine import chunk_run, heap, study_chunks
from tide_core.io.open import open_warehouse
from tide_core.release import scan
from tide_core.runner import anonymize_study, recognize_study

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import gc, sys
from tide_core.engine.heap import trim_heap
def rss():
    for ln in open("/proc/self/status"):
        if ln.startswith("VmRSS"):
            return int(ln.split()[1]) / 1024
x = [bytearray(3000) for _ in range(60000)]  # ~180 MB in C-heap blocks
keep = x[::50]  # live objects scattered between the freed ones
del x
gc.collect()
freed = rss()
trimmed = trim_heap()
print(freed, rss(), trimmed)
"""


@pytest.mark.skipif(heap._MALLOC_TRIM is None, reason="not glibc: trim_heap does nothing")
def test_freed_pages_stay_resident_until_trimmed():
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, check=True)
    freed, trimmed, released = out.stdout.split()
    assert released == "True"
    assert float(freed) > 150  # freeing alone leaves the pages resident
    assert float(freed) - float(trimmed) > 120, out.stdout  # trim_heap hands them back


def test_the_release_pass_trims_after_every_chunk(tmp_path, monkeypatch):
    calls = {"n": 0}
    real = heap.trim_heap

    def counted() -> bool:  # the real trim, counted
        calls["n"] += 1
        return real()

    monkeypatch.setattr(scan, "trim_heap", counted)
    monkeypatch.setattr(chunk_run, "trim_heap", counted)
    monkeypatch.setattr(study_chunks, "DEFAULT_CHUNK_ROWS", 10)
    config = TideConfig.preset("rules")
    provider = FileKeyProvider(tmp_path / "keys")
    fixed_key(provider, "big", "k1")
    with open_warehouse(f"duckdb:{tmp_path / 'wh.duckdb'}") as wh:
        release_study.write(wh, 40, 8)
        recognize_study(wh, "big", config, progress=False)
        after_recognition = calls["n"]
        assert after_recognition >= 4  # a trim per committed chunk of recognition
        anonymize_study(wh, "big", "k1", provider, config, progress=False)
        after_anonymization = calls["n"]
        assert after_anonymization - after_recognition >= 4
        chunks = list(scan.iter_release_chunks(wh, config, "big", "k1"))
        assert len(chunks) == 4
        assert calls["n"] - after_anonymization == 4  # one trim after each chunk of a release pass
