"""Dagster resources: the warehouse, the run configuration, the key provider and the release gate.

Each wraps a ``tide_core`` object so the assets stay thin.  None of them holds key material:
the key provider resource holds a directory path; secrets are read inside the step that needs
them and never reach run config, logs or metadata.

Configuration is Dagster resource config only.  :func:`default_resources` (called when the code
location loads, never at import) binds each setting of :data:`ENV_SETTINGS` to a ``dg.EnvVar``
when that variable is set, so Dagster resolves its value when a run starts and the UI's resource
page names the variable; unset settings keep their defaults here.  Nothing in ``tide_etl`` reads
``os.environ`` at import.

BigQuery clients come from ``dagster_gcp.BigQueryResource`` (:class:`BigQueryClientResource`
adds the endpoint settings an emulator or a private endpoint needs); ``tide_core``'s BigQuery
warehouse stays free of Dagster and is handed the client.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import dagster as dg
import pyarrow as pa
from dagster_gcp import BigQueryResource
from google.api_core.client_options import ClientOptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import bigquery
from pydantic import PrivateAttr

from tide_core.anonymize.keys import provider_from_env
from tide_core.assurance.gate import ReleaseGatePolicy, weakens
from tide_core.assurance.gate_policy import apply_override, load_gate_policy
from tide_core.config import TideConfig
from tide_core.errors import ConfigError
from tide_core.io.bigquery_warehouse import BigQueryOptions, BigQueryWarehouse, parse_url
from tide_core.io.open import open_warehouse

if TYPE_CHECKING:
    from google.cloud import bigquery

    from tide_core.anonymize.keys import ChainKeyProvider
    from tide_core.assurance.gate import ReleaseGatePolicy
    from tide_core.config import TideConfig
    from tide_core.io.warehouse import PartitionWrite, Warehouse

DEFAULT_WAREHOUSE = "duckdb:tide_warehouse.duckdb"

#: Seconds a sensor or schedule tick waits for a DuckDB file another process holds; Dagster
#: times out a tick after 60 s, and a tick that fails is tried again at the next one.
TICK_LOCK_WAIT_S = 20.0

#: (resource, field) -> the environment variable that configures it in the default resources.
ENV_SETTINGS: dict[tuple[str, str], str] = {
    ("warehouse", "url"): "TIDE_WAREHOUSE",
    ("warehouse", "location"): "TIDE_BQ_LOCATION",
    ("warehouse", "api_endpoint"): "TIDE_BQ_API_ENDPOINT",
    ("warehouse", "storage_endpoint"): "TIDE_BQ_STORAGE_ENDPOINT",
    ("warehouse", "gcp_credentials"): "TIDE_BQ_CREDENTIALS",
    ("tide_config", "preset"): "TIDE_PRESET",
    ("tide_config", "config_file"): "TIDE_CONFIG",
    ("tide_config", "executor"): "TIDE_EXECUTOR",
    ("tide_config", "ray_address"): "TIDE_RAY_ADDRESS",
    ("tide_config", "default_study"): "TIDE_DEFAULT_STUDY",
    ("key_provider", "key_dir"): "TIDE_KEY_DIR",
    ("gate", "policy_file"): "TIDE_GATE_POLICY",
}


class BigQueryClientResource(BigQueryResource):
    """``dagster_gcp.BigQueryResource`` (project, location, base64 ``gcp_credentials``) plus the
    endpoint settings of an emulator or a private endpoint: ``api_endpoint`` (REST) and
    ``anonymous`` credentials (emulators only).  Without them it is dagster-gcp's client."""

    api_endpoint: str | None = None
    anonymous: bool = False

    @contextmanager
    def get_client(self) -> Iterator[bigquery.Client]:
        if not self.api_endpoint and not self.anonymous:
            with super().get_client() as client:
                yield client
            return

        kwargs: dict[str, Any] = {"project": self.project, "location": self.location}
        if self.api_endpoint:
            kwargs["client_options"] = ClientOptions(api_endpoint=self.api_endpoint)
        if self.anonymous:
            kwargs["credentials"] = AnonymousCredentials()
        yield bigquery.Client(**kwargs)


#: (table, columns or None for all, the equality filters as sorted (column, repr(value)) pairs)
_ReadKey = tuple[str, tuple[str, ...] | None, tuple[tuple[str, str], ...]]


#: Source rows a run keeps in memory in all (see :class:`SourceReads`).
SOURCE_KEPT_ROWS = 10_000


class SourceReads:
    """A run's reads of the source tables (the notes and patients TIDE never writes), kept for
    the run: every step of a run reads the same source partition, so the warehouse serves it once
    -- whole (``read_table``) or streamed (``iter_batches``: a stream read to its end is kept too).
    At most ``max_rows`` rows are kept in all (a small study is read once per run; a larger one
    is streamed by every step, so a run's memory does not grow with the study).
    ``reads`` counts the reads the warehouse served, ``hits`` the reads served from memory."""

    def __init__(self, tables: Sequence[str], max_rows: int = SOURCE_KEPT_ROWS) -> None:
        self.tables = frozenset(tables)
        self.max_rows = max_rows
        self._rows: dict[_ReadKey, pa.Table] = {}
        self.reads = 0
        self.hits = 0

    @staticmethod
    def key(name: str, columns: Sequence[str] | None, where: Mapping[str, object] | None) -> _ReadKey:
        cols = None if columns is None else tuple(columns)
        return (name, cols, tuple(sorted((k, repr(v)) for k, v in (where or {}).items())))

    def kept(self, key: _ReadKey) -> pa.Table | None:
        hit = self._rows.get(key)
        if hit is not None:
            self.hits += 1
        return hit

    @property
    def n_kept(self) -> int:
        return sum(t.num_rows for t in self._rows.values())

    def keep(self, key: _ReadKey, table: pa.Table) -> None:
        if self.n_kept + table.num_rows <= self.max_rows:
            self._rows[key] = table

    def read(
        self, wh: Warehouse, name: str, columns: Sequence[str] | None, where: Mapping[str, object] | None
    ) -> pa.Table:
        if name not in self.tables:
            return wh.read_table(name, columns, where)
        key = self.key(name, columns, where)
        hit = self.kept(key)
        if hit is not None:
            return hit
        self.reads += 1
        table = wh.read_table(name, columns, where)
        self.keep(key, table)
        return table

    def stream(
        self,
        wh: Any,
        name: str,
        columns: Sequence[str] | None,
        where: Mapping[str, object] | None,
        batch_rows: int,
    ) -> Iterator[pa.RecordBatch]:
        if name not in self.tables:
            yield from wh.iter_batches(name, columns, where, batch_rows)
            return
        key = self.key(name, columns, where)
        hit = self.kept(key)
        if hit is not None:
            yield from hit.to_batches(max_chunksize=batch_rows)
            return
        self.reads += 1
        batches: list[pa.RecordBatch] | None = []
        n = 0
        for batch in wh.iter_batches(name, columns, where, batch_rows):
            n += batch.num_rows
            if batches is not None and self.n_kept + n <= self.max_rows:
                batches.append(batch)
            else:
                batches = None
            yield batch
        if batches:
            self.keep(key, pa.Table.from_batches(batches))

    def forget(self, name: str) -> None:
        """A write to a source table (never by TIDE; tests and demos do) drops what was kept."""
        self._rows = {k: v for k, v in self._rows.items() if k[0] != name}

    def clear(self) -> None:
        self._rows.clear()


class RunScopedWarehouse:
    """The step's warehouse with source reads served by the run's :class:`SourceReads`; every
    other call goes to the warehouse itself (writes to a source table forget its kept reads)."""

    _WRITES = ("replace_table", "append", "replace_partition", "delete", "drop")

    def __init__(self, wh: Warehouse, reads: SourceReads) -> None:
        self._wh = wh
        self._reads = reads

    def read_table(
        self, name: str, columns: Sequence[str] | None = None, where: Mapping[str, object] | None = None
    ) -> pa.Table:
        return self._reads.read(self._wh, name, columns, where)

    def iter_batches(
        self,
        name: str,
        columns: Sequence[str] | None = None,
        where: Mapping[str, object] | None = None,
        batch_rows: int = 1000,
    ) -> Iterator[pa.RecordBatch]:
        return self._reads.stream(self._wh, name, columns, where, batch_rows)

    def replace_partitions(self, writes: Sequence[PartitionWrite]) -> int:
        for w in writes:
            self._reads.forget(w.name)
        return int(self._wh.replace_partitions(writes))

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._wh, attr)
        if attr in self._WRITES and callable(value):

            def write(name: str, *args: Any, **kwargs: Any) -> Any:
                self._reads.forget(name)
                return value(name, *args, **kwargs)

            return write
        return value

    def __repr__(self) -> str:
        return f"<run-scoped {self._wh!r}>"


class WarehouseResource(dg.ConfigurableResource):
    """``duckdb:PATH[#SCHEMA]`` (embedded) or ``bigquery:PROJECT.DATASET``.

    BigQuery settings (all optional): ``location``; ``gcp_credentials`` (base64 service-account
    JSON; default: the environment's application-default credentials, e.g. workload identity);
    ``api_endpoint``/``storage_endpoint``/``anonymous`` for an emulator or a private endpoint.

    ``source_tables`` are read once per run (see :class:`SourceReads`): a run executes in one
    process (``tide_etl.definitions``), and this resource lives for the run.
    """

    url: str = DEFAULT_WAREHOUSE
    api_endpoint: str | None = None
    storage_endpoint: str | None = None
    anonymous: bool | None = None
    location: str | None = None
    gcp_credentials: str | None = None
    source_tables: list[str] = ["notes", "patients"]
    source_max_rows: int = SOURCE_KEPT_ROWS

    _reads: SourceReads | None = PrivateAttr(default=None)

    @property
    def scheme(self) -> str:
        return self.url.partition(":")[0]

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        self._reads = SourceReads(self.source_tables, self.source_max_rows)

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._reads is not None:
            self._reads.clear()

    @property
    def source_reads(self) -> SourceReads:
        """This run's source reads; outside a run (a sensor tick, the CLI) each ``open`` gets its own."""
        return self._reads if self._reads is not None else SourceReads(self.source_tables, self.source_max_rows)

    def bigquery_client(self) -> BigQueryClientResource:
        """The dagster-gcp client resource for this warehouse's project."""

        project, _dataset = parse_url(self.url)
        return BigQueryClientResource(
            project=project,
            location=self.location or None,
            gcp_credentials=self.gcp_credentials or None,
            api_endpoint=self.api_endpoint or None,
            anonymous=bool(self.anonymous),
        )

    @contextmanager
    def open(self, lock_wait_s: float | None = None) -> Iterator[Warehouse]:
        """Open for the duration of one step: DuckDB files admit one writing process at a time.

        A DuckDB file another process holds is waited for up to ``lock_wait_s`` seconds (default:
        ``TIDE_DUCKDB_LOCK_WAIT_S``, else 300); sensor and schedule ticks pass a short wait, as
        Dagster times out a tick after a minute.  BigQuery has no such lock and ignores it.
        """
        if self.scheme == "bigquery":
            with self._open_bigquery() as wh:
                yield wh
            return

        wh = open_warehouse(self.url, lock_wait_s=lock_wait_s)
        try:
            yield RunScopedWarehouse(wh, self.source_reads)
        finally:
            wh.close()

    @contextmanager
    def _open_bigquery(self) -> Iterator[Warehouse]:

        project, dataset = parse_url(self.url)
        options = BigQueryOptions(
            project=project,
            dataset=dataset,
            location=self.location or None,
            api_endpoint=self.api_endpoint or None,
            storage_endpoint=self.storage_endpoint or None,
            anonymous=bool(self.anonymous),
        )
        with self.bigquery_client().get_client() as client:
            wh = BigQueryWarehouse(options, client=client)
            try:
                yield RunScopedWarehouse(wh, self.source_reads)
            finally:
                wh.close()


class TideConfigResource(dg.ConfigurableResource):
    """Builds the ``TideConfig``: a preset or a config file, plus the execution layer.

    ``executor="ray"`` runs recognition on Ray (``ray_address`` = an existing cluster, or None
    for a local one started inside the step).  ``default_study`` names the one study of a notes
    table without a ``study`` column.
    """

    preset: str = "default"
    config_file: str | None = None
    executor: str | None = None
    ray_address: str | None = None
    batch_size: int | None = None
    default_study: str = "default"

    def build(self) -> TideConfig:

        overrides = {
            k: v
            for k, v in (
                ("executor", self.executor or None),
                ("ray_address", self.ray_address or None),
                ("batch_size", self.batch_size),
            )
            if v is not None
        }
        if self.config_file:
            return TideConfig.from_file(self.config_file, **overrides)
        return TideConfig.preset(self.preset or "default", **overrides)


class KeyProviderResource(dg.ConfigurableResource):
    """Key secrets: files under ``key_dir`` first, then TIDE_KEY_<STUDY>__<KEY> variables (read when
    a key is asked for, never listed or logged)."""

    key_dir: str | None = None

    def provider(self) -> ChainKeyProvider:

        return provider_from_env(self.key_dir or os.path.join(".tide", "keys"))

    def has(self, study: str, key: str) -> bool:
        return bool(self.provider().has(study, key))


class ReleaseGateResource(dg.ConfigurableResource):
    """The release-gate policy (``tide_core.assurance.gate.ReleaseGatePolicy``): every bucket of a
    release (site|source|note_type) needs audit rounds whose pooled exact bound is below the
    policy's ``target_rate``.

    The policy is the deployment's: ``policy_file`` (``TIDE_GATE_POLICY``, a versioned TOML file,
    see ``tide_core.assurance.gate_policy``), else the built-in ``tide-default@1``.  The other
    fields override it for a run; an override that weakens it (a higher ``target_rate``, a lower
    ``confidence``, ``every_bucket`` off) is refused unless ``approval`` names who approved it.
    """

    policy_file: str | None = None
    target_rate: float | None = None
    confidence: float | None = None
    every_bucket: bool | None = None  # False: audits of any buckets suffice
    approval: str | None = None  # who approved a weakening override, and where it is recorded

    def policy(self) -> ReleaseGatePolicy:
        """The gate policy: the deployment's file with this resource's overrides (E95x when the
        file is bad or an override weakens it without an approval).  The gate also reads the newest
        drift verdict for the release from ``tide_drift`` (written by ``tide drift check
        --warehouse ... --record``): band ``drift`` blocks; no verdict recorded does not block
        unless the policy sets ``require_drift``."""

        policy = apply_override(
            load_gate_policy(self.policy_file or None),
            target_rate=self.target_rate,
            confidence=self.confidence,
            every_bucket=self.every_bucket,
            approval=self.approval,
        )
        # a run that names another policy file is an override too: it may not weaken the
        # deployment's policy (TIDE_GATE_POLICY of the process that runs it) without an approval
        deployment = load_gate_policy(os.environ.get(ENV_SETTINGS[("gate", "policy_file")]) or None)
        weaker = weakens(deployment, policy)
        if weaker and not policy.approval:
            raise ConfigError(
                "E956",
                f"the run's gate policy {policy.label} weakens the deployment's {deployment.label} "
                f"({', '.join(weaker)}) without an approval",
                hint="set the gate resource's approval (who approved it, and where it is recorded), "
                "or use the deployment's policy file",
            )
        return policy


def _setting(resource: str, field: str, default: Any, environ: Mapping[str, str]) -> Any:
    name = ENV_SETTINGS[(resource, field)]
    return dg.EnvVar(name) if environ.get(name) else default


def default_resources(environ: Mapping[str, str] | None = None) -> dict[str, dg.ConfigurableResource]:
    """The code location's resources: each setting of :data:`ENV_SETTINGS` is a ``dg.EnvVar`` when
    that variable is set in ``environ`` (default: the loading process's environment), else the
    default.  Called when the definitions load, not at import."""
    env = os.environ if environ is None else environ
    return {
        "warehouse": WarehouseResource(
            url=_setting("warehouse", "url", DEFAULT_WAREHOUSE, env),
            location=_setting("warehouse", "location", None, env),
            api_endpoint=_setting("warehouse", "api_endpoint", None, env),
            storage_endpoint=_setting("warehouse", "storage_endpoint", None, env),
            gcp_credentials=_setting("warehouse", "gcp_credentials", None, env),
        ),
        "tide_config": TideConfigResource(
            preset=_setting("tide_config", "preset", "default", env),
            config_file=_setting("tide_config", "config_file", None, env),
            executor=_setting("tide_config", "executor", None, env),
            ray_address=_setting("tide_config", "ray_address", None, env),
            default_study=_setting("tide_config", "default_study", "default", env),
        ),
        "key_provider": KeyProviderResource(key_dir=_setting("key_provider", "key_dir", None, env)),
        "gate": ReleaseGateResource(policy_file=_setting("gate", "policy_file", None, env)),
    }


def resolved(resource: dg.ConfigurableResource) -> Any:
    """A copy of ``resource`` with its ``EnvVar`` settings resolved (when definitions load: the
    catalog metadata and the CLI need values; runs resolve them again when they start)."""
    fields = {}
    for name, value in resource._get_non_default_public_field_values().items():
        fields[name] = value.get_value() if isinstance(value, dg.EnvVar) else value
    return type(resource)(**fields)
