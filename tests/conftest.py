"""Shared test setup: offline model hubs, quiet Ray, a key directory per test."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("RAY_DEDUP_LOGS", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import pytest  # noqa: E402


@pytest.fixture
def key_provider(tmp_path):
    from tide_core.anonymize.keys import FileKeyProvider

    return FileKeyProvider(tmp_path / "keys")
