"""Dagster resources: the warehouse, the run configuration and the key provider.

Each wraps a ``tide_core`` object so the assets stay thin.  None of them holds key material:
the key provider resource holds a directory path; secrets are read inside the step that needs
them and never reach run config, logs or metadata.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg

DEFAULT_WAREHOUSE = "duckdb:tide_warehouse.duckdb"


def default_warehouse_url() -> str:
    return os.environ.get("TIDE_WAREHOUSE", DEFAULT_WAREHOUSE)


class WarehouseResource(dg.ConfigurableResource):
    """``duckdb:PATH[#SCHEMA]`` (embedded default) or ``bigquery:PROJECT.DATASET``.

    BigQuery client options (all optional; also read from TIDE_BQ_* environment variables):
    ``api_endpoint``/``storage_endpoint``/``anonymous`` for an emulator, ``location``.
    """

    url: str = DEFAULT_WAREHOUSE
    api_endpoint: str | None = None
    storage_endpoint: str | None = None
    anonymous: bool | None = None
    location: str | None = None

    @property
    def scheme(self) -> str:
        return self.url.partition(":")[0]

    @contextmanager
    def open(self) -> Iterator:
        """Open for the duration of one step: DuckDB files admit one writing process at a time."""
        from tide_core.io.open import open_warehouse

        options = {}
        if self.scheme == "bigquery":
            options = {
                k: v
                for k, v in (
                    ("api_endpoint", self.api_endpoint),
                    ("storage_endpoint", self.storage_endpoint),
                    ("anonymous", self.anonymous),
                    ("location", self.location),
                )
                if v is not None
            }
        wh = open_warehouse(self.url, **options)
        try:
            yield wh
        finally:
            wh.close()


class TideConfigResource(dg.ConfigurableResource):
    """Builds the ``TideConfig``: a preset or a config file, plus the execution layer.

    ``executor="ray"`` runs recognition on Ray (``ray_address`` = an existing cluster, or None
    for a local one started inside the step).
    """

    preset: str = "default"
    config_file: str | None = None
    executor: str | None = None
    ray_address: str | None = None
    batch_size: int | None = None

    def build(self):
        from tide_core.config import TideConfig

        overrides = {
            k: v
            for k, v in (
                ("executor", self.executor),
                ("ray_address", self.ray_address),
                ("batch_size", self.batch_size),
            )
            if v is not None
        }
        if self.config_file:
            return TideConfig.from_file(self.config_file, **overrides)
        return TideConfig.preset(self.preset, **overrides)


class KeyProviderResource(dg.ConfigurableResource):
    """Key secrets: ``key_dir`` (or $TIDE_KEY_DIR) first, then TIDE_KEY_<STUDY>__<KEY> variables."""

    key_dir: str | None = None

    def provider(self):
        from tide_core.anonymize.keys import provider_from_env

        return provider_from_env(self.key_dir)

    def has(self, study: str, key: str) -> bool:
        return self.provider().has(study, key)


def default_resources() -> dict:
    """Resources from the environment (TIDE_WAREHOUSE, TIDE_PRESET, TIDE_CONFIG, TIDE_EXECUTOR, ...)."""
    env = os.environ
    return {
        "warehouse": WarehouseResource(url=default_warehouse_url()),
        "tide_config": TideConfigResource(
            preset=env.get("TIDE_PRESET", "default"),
            config_file=env.get("TIDE_CONFIG") or None,
            executor=env.get("TIDE_EXECUTOR") or None,
            ray_address=env.get("TIDE_RAY_ADDRESS") or None,
        ),
        "key_provider": KeyProviderResource(key_dir=env.get("TIDE_KEY_DIR") or None),
        "gate": ReleaseGateResource(),
    }


class ReleaseGateResource(dg.ConfigurableResource):
    """Release-gate policy (tide_core.assurance.gate.ReleaseGatePolicy): every bucket of a release
    (site|source|note_type) needs audit rounds whose pooled exact bound is below ``target_rate``."""

    target_rate: float = 0.01
    confidence: float = 0.95
    every_bucket: bool = True  # False: audits of any buckets suffice (evaluate_release's default)

    def policy(self):
        """The gate policy.  The gate also reads the newest drift verdict for the release from
        ``tide_drift`` (written by ``tide drift check --warehouse ... --record``): band ``drift``
        blocks; no verdict recorded does not block (the policy's ``require_drift`` is off)."""
        from tide_core.assurance.gate import ReleaseGatePolicy

        return ReleaseGatePolicy(
            target_rate=self.target_rate, confidence=self.confidence, required_buckets=None if self.every_bucket else ()
        )
