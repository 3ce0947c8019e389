"""Shared test setup: offline model hubs, quiet Ray, a key directory per test, slow files first.

Tests are laid out by the package they exercise (``tests/<package>/``); mutation guards, the
tests that pin the safety-critical modules' behaviour for ``scripts/mutation.py``, live in
``tests/mutation_guards/`` and carry the ``mutation_guard`` marker (``pytest -m mutation_guard``).
Shared helpers stay at ``tests/`` and every package folder is importable, so a test may take a
fixture from a test file in another folder (the BigQuery emulator, the release study).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
for _folder in sorted(p for p in TESTS.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))):
    if str(_folder) not in sys.path:
        sys.path.append(str(_folder))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("RAY_DEDUP_LOGS", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

#: Test files that take a minute or more, longest first.  ``.ci/run`` spreads files over two
#: pytest-xdist workers (``--dist loadfile``: a file's tests stay together, so module fixtures
#: such as a trained tiny model or a Ray session are built once); handing out the long files
#: first keeps one worker from starting a five-minute file when the other is nearly done.
SLOW_FIRST = (  # by measured time per file, slowest first (two workers, 2026-12-06)
    "test_kill_release.py",
    "test_ray_pipeline.py",
    "test_ui_backfill.py",
    "test_ray_recognize_shards.py",
    "test_ray_release_bigquery.py",
    "test_release_lifecycle.py",
    "test_release_versions.py",
    "test_release_scale.py",
    "test_onnx_runtime.py",
    "test_dagster_postgres.py",
    "test_ray_release.py",
    "test_chunked_runs.py",
    "test_threads.py",
    "test_dagster_pipeline.py",
    "test_fingerprints.py",
    "test_release_metadata_leak.py",
    "test_incremental_release.py",
    "test_notes_table_errors.py",
    "test_cli.py",
    "test_drift_warehouse.py",
    "test_dagster_dev.py",
    "test_span_cache_atomic.py",
    "test_bigquery_chunked.py",
    "test_cli_mutants.py",
    "test_bench_speed.py",
)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run the files of :data:`SLOW_FIRST` first (in that order), the rest in collection order."""
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    order = {id(item): n for n, item in enumerate(items)}
    items.sort(key=lambda item: (rank.get(item.path.name, len(rank)), order[id(item)]))
    guards = TESTS / "mutation_guards"
    for item in items:
        if guards in Path(item.path).parents:
            item.add_marker(pytest.mark.mutation_guard)


@pytest.fixture
def key_provider(tmp_path):
    from tide_core.anonymize.keys import FileKeyProvider

    return FileKeyProvider(tmp_path / "keys")


@pytest.fixture(scope="module")
def local_ray():
    """A fresh local Ray session of 2 CPUs for one test module, stopped after it."""
    import ray

    from tide_core.execution.ray_session import ensure_ray

    if ray.is_initialized():  # a session an earlier module left (and its long-lived actors' CPUs)
        ray.shutdown()
    ensure_ray(num_cpus=2)
    yield ray
    ray.shutdown()
