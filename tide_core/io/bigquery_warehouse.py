"""BigQuery warehouse: TIDE tables live in the source dataset, beside the notes table.

Reads go through the BigQuery Storage Read API straight into Arrow (column projection and the
equality filters are pushed into the read session).  When the Storage Read API cannot be reached
the warehouse falls back, once and with a warning, to a parameterised query read over REST,
which is slower but needs nothing beyond the BigQuery REST endpoint.

Writes are load jobs of Parquet built from the Arrow table (no row-by-row streaming inserts, no
pandas round trip).  ``replace_partition`` loads into a short-lived staging table and then runs
one ``MERGE`` that deletes the partition's old rows and inserts the new ones in a single atomic
DML statement, so rerunning a (study) or (study, key) partition replaces its rows and a failure
half way leaves the old rows in place.  ``replace_partitions`` (several tables, all or nothing:
the span cache's spans and recognized-notes rows) stages every table first and then runs one
multi-statement transaction (``BEGIN TRANSACTION; DELETE; INSERT ...; COMMIT TRANSACTION;``).
``replace_partitions_streamed`` does the same with rows that arrive in batches (a published
version, the PHI Guard's scores): each batch is loaded into the stream's staging table as it
comes, so no process holds the whole, and the one transaction runs after the last batch.

For a local emulator (``bqemulator``) pass ``api_endpoint="http://127.0.0.1:9050"``,
``storage_endpoint="127.0.0.1:9060"`` and ``anonymous=True`` (or set ``TIDE_BQ_API_ENDPOINT``,
``TIDE_BQ_STORAGE_ENDPOINT``, ``TIDE_BQ_ANONYMOUS=1``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import io
import logging
import os
import re
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc
import pyarrow as pa
import pyarrow.parquet as pq
from google.api_core import exceptions as gexc
from google.api_core.client_options import ClientOptions
from google.api_core.exceptions import NotFound
from google.auth.credentials import AnonymousCredentials
from google.cloud import bigquery, bigquery_storage_v1
from google.cloud.bigquery_storage_v1 import types
from google.cloud.bigquery_storage_v1.services.big_query_read.transports import BigQueryReadGrpcTransport

from tide_core.errors import ConfigError, WarehouseError
from tide_core.io.shards import ShardRef
from tide_core.io.staging import StagedWrite, StagingTarget, check_publish
from tide_core.io.warehouse import REF, SHARD_ROW, PartitionWrite, ShardSource, check_partition_rows, check_writes

if TYPE_CHECKING:
    from google.cloud import bigquery

log = logging.getLogger("tide.bigquery")

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_DATASET = re.compile(r"^[A-Za-z0-9_]{1,1024}$")

#: Columns TIDE tables are clustered by, in this order, when present (BigQuery allows four).
CLUSTER_COLUMNS = ("study", "key", "note_id")
#: The first of these timestamp columns present becomes the (monthly) time-partitioning column.
PARTITION_TIME_COLUMNS = (
    "created_at",
    "recognized_at",
    "released_at",
    "quarantined_at",
    "started_at",
    "audited_at",
    "decided_at",
)
STAGING_PREFIX = "_tide_stage_"
#: One partition of a commit: (table, partition or None to append, Arrow schema or None, staging table or None).
_Pending = tuple[str, Mapping[str, object] | None, pa.Schema | None, str | None]
SHARD_PREFIX = "_tide_shard_"  # a run's copy of a study, read by Ray workers (expires, dropped at the end)
#: column types a study copy's row order may use (every other column is left out of the ORDER BY)
_ORDERABLE = {
    "STRING",
    "BYTES",
    "INT64",
    "FLOAT64",
    "NUMERIC",
    "BIGNUMERIC",
    "BOOL",
    "DATE",
    "DATETIME",
    "TIME",
    "TIMESTAMP",
}

ENV_API_ENDPOINT = "TIDE_BQ_API_ENDPOINT"
ENV_STORAGE_ENDPOINT = "TIDE_BQ_STORAGE_ENDPOINT"
ENV_ANONYMOUS = "TIDE_BQ_ANONYMOUS"
ENV_LOCATION = "TIDE_BQ_LOCATION"


def _ident(name: str, what: str = "table") -> str:
    if not isinstance(name, str) or not _IDENT.match(name):
        raise ConfigError(
            "E302", f"invalid {what} name {name!r}", hint="use letters, digits and underscores, starting with a letter"
        )
    return name


def _col(name: str) -> str:
    # every column is quoted: `end` and `key`-like names are reserved words in GoogleSQL
    return f"`{_ident(name, 'column')}`"


def parse_url(url: str) -> tuple[str, str]:
    """``bigquery:PROJECT.DATASET`` -> (project, dataset).  The dataset is after the last dot."""
    scheme, _, rest = url.partition(":")
    project, _, dataset = rest.rpartition(".")
    if scheme != "bigquery" or not project or not dataset or not _DATASET.match(dataset):
        raise ConfigError(
            "E320",
            f"invalid BigQuery warehouse url {url!r}",
            hint="write bigquery:PROJECT.DATASET, e.g. bigquery:my-project.clinical_notes",
        )
    return project, dataset


# -- Arrow <-> BigQuery types ---------------------------------------------------------------
def bq_type(t: pa.DataType) -> str:
    """The BigQuery type of an Arrow type in TIDE's tables; E321 for one without a mapping."""
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_null(t) or pa.types.is_dictionary(t):
        return "STRING"
    if pa.types.is_boolean(t):
        return "BOOL"
    if pa.types.is_integer(t):
        return "INT64"
    if pa.types.is_floating(t):
        return "FLOAT64"
    if pa.types.is_decimal(t):
        return "NUMERIC"
    if pa.types.is_timestamp(t):
        return "TIMESTAMP" if t.tz else "DATETIME"
    if pa.types.is_date(t):
        return "DATE"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "BYTES"
    raise ConfigError(
        "E321",
        f"Arrow type {t} has no BigQuery mapping in TIDE tables",
        hint="use string, integer, float, bool, date, timestamp or binary columns",
    )


def bq_schema(schema: pa.Schema) -> list[bigquery.SchemaField]:
    """The BigQuery schema of an Arrow schema: every column NULLABLE, as Parquet loads produce."""
    return [bigquery.SchemaField(f.name, bq_type(f.type), mode="NULLABLE") for f in schema]


def _normalise(table: pa.Table) -> pa.Table:
    """Cast the few Arrow types Parquet loads cannot express the BigQuery way."""
    cols, changed = [], False
    for f, col in zip(table.schema, table.columns, strict=True):
        if pa.types.is_null(f.type) or pa.types.is_dictionary(f.type) or pa.types.is_large_string(f.type):
            col, changed = col.cast(pa.string()), True
        elif pa.types.is_timestamp(f.type) and f.type.unit == "ns":
            col, changed = col.cast(pa.timestamp("us", tz=f.type.tz)), True
        cols.append(col)
    if not changed:
        return table
    return pa.table(cols, names=table.column_names)


# -- filters --------------------------------------------------------------------------------
def _param(name: str, value: object) -> bigquery.ScalarQueryParameter:
    if isinstance(value, bool):
        return bigquery.ScalarQueryParameter(name, "BOOL", value)
    if isinstance(value, int):
        return bigquery.ScalarQueryParameter(name, "INT64", value)
    if isinstance(value, float):
        return bigquery.ScalarQueryParameter(name, "FLOAT64", value)
    if isinstance(value, dt.datetime):
        return bigquery.ScalarQueryParameter(name, "TIMESTAMP", value)
    if isinstance(value, dt.date):
        return bigquery.ScalarQueryParameter(name, "DATE", value)
    return bigquery.ScalarQueryParameter(name, "STRING", str(value))


def _array_param(name: str, values: list[Any]) -> bigquery.ArrayQueryParameter:
    scalar = _param(name, values[0])
    return bigquery.ArrayQueryParameter(name, scalar.type_, values)


def where_sql(
    where: Mapping[str, object] | None, alias: str = ""
) -> tuple[str, list[bigquery.ScalarQueryParameter | bigquery.ArrayQueryParameter]]:
    """Equality filters as a GoogleSQL predicate with named parameters (list/tuple -> IN UNNEST)."""
    if not where:
        return "TRUE", []
    clauses: list[str] = []
    params: list[bigquery.ScalarQueryParameter | bigquery.ArrayQueryParameter] = []
    prefix = f"{alias}." if alias else ""
    for i, (col, value) in enumerate(where.items()):
        ref = prefix + _col(col)
        name = f"w{i}"
        if isinstance(value, (list, tuple, set, frozenset)):
            values = list(value)
            if not values:
                clauses.append("FALSE")
                continue
            clauses.append(f"{ref} IN UNNEST(@{name})")
            params.append(_array_param(name, values))
        elif value is None:
            clauses.append(f"{ref} IS NULL")
        else:
            clauses.append(f"{ref} = @{name}")
            params.append(_param(name, value))
    return " AND ".join(clauses), params


def _literal(value: object) -> str:
    """A GoogleSQL literal (the Storage Read API's row restriction takes no parameters)."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return repr(float(value))
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP '{value.isoformat()}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    text = str(value)
    for a, b in (("\\", "\\\\"), ("'", "\\'"), ("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t")):
        text = text.replace(a, b)
    return f"'{text}'"


def row_restriction(where: Mapping[str, object] | None) -> str:
    """A Storage Read API ``row_restriction`` for ``where`` (empty: every row).

    The Storage Read API takes no query parameters, so values are written as escaped literals
    (:func:`_literal`); column names are checked identifiers.
    """
    if not where:
        return ""
    clauses = []
    for col, value in where.items():
        if isinstance(value, (list, tuple, set, frozenset)):
            values = list(value)
            clauses.append(f"{_col(col)} IN ({', '.join(_literal(v) for v in values)})" if values else "FALSE")
        elif value is None:
            clauses.append(f"{_col(col)} IS NULL")
        else:
            clauses.append(f"{_col(col)} = {_literal(value)}")
    return " AND ".join(clauses)


@dataclass(frozen=True)
class BigQueryOptions:
    """Client settings.  Endpoints and anonymous credentials exist for emulators and VPC-SC proxies."""

    project: str
    dataset: str
    location: str | None = None
    api_endpoint: str | None = None  # REST, e.g. http://127.0.0.1:9050 (emulator)
    storage_endpoint: str | None = None  # Storage Read API host:port; with anonymous -> insecure gRPC
    anonymous: bool = False  # AnonymousCredentials (emulators only)
    use_storage_api: bool = True  # False forces the REST query path
    staging_expiration_hours: int = 6  # staging tables expire even if a process dies mid-write

    @classmethod
    def from_env(cls, project: str, dataset: str, **overrides: Any) -> BigQueryOptions:
        """Options for ``project.dataset`` with the ``TIDE_BQ_*`` variables, then ``overrides``, applied."""
        env = os.environ
        values: dict[str, Any] = {
            "location": env.get(ENV_LOCATION) or None,
            "api_endpoint": env.get(ENV_API_ENDPOINT) or None,
            "storage_endpoint": env.get(ENV_STORAGE_ENDPOINT) or None,
            "anonymous": env.get(ENV_ANONYMOUS, "").lower() in ("1", "true", "yes"),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        try:
            return cls(project=project, dataset=dataset, **values)
        except TypeError as exc:
            raise ConfigError(
                "E322",
                f"unknown BigQuery warehouse option: {exc}",
                hint="options: location, api_endpoint, storage_endpoint, anonymous, "
                "use_storage_api, staging_expiration_hours",
            ) from None


class BigQueryWarehouse:
    """The Warehouse protocol on one BigQuery dataset (see ``tide_core.io.warehouse``)."""

    def __init__(self, options: BigQueryOptions, client: Any = None, read_client: Any = None) -> None:
        self.options = options
        self.project, self.dataset = options.project, options.dataset
        self.url = f"bigquery:{self.project}.{self.dataset}"
        if client is None:
            kwargs: dict[str, Any] = {"project": self.project, "location": options.location}
            if options.api_endpoint:
                kwargs["client_options"] = ClientOptions(api_endpoint=options.api_endpoint)
            if options.anonymous:
                kwargs["credentials"] = AnonymousCredentials()
            client = bigquery.Client(**kwargs)
        self.client: bigquery.Client = client
        self._read_client = read_client
        self._storage_ok: bool | None = None if options.use_storage_api else False
        self._lock = threading.RLock()
        self.read_path = "storage" if options.use_storage_api else "rest"

    @classmethod
    def from_url(cls, url: str, **options: Any) -> BigQueryWarehouse:
        """The warehouse of ``bigquery:PROJECT.DATASET`` (``client``/``read_client`` may be injected)."""
        project, dataset = parse_url(url)
        client = options.pop("client", None)
        read_client = options.pop("read_client", None)
        return cls(BigQueryOptions.from_env(project, dataset, **options), client=client, read_client=read_client)

    # -- names -----------------------------------------------------------------------------
    def table_id(self, name: str) -> str:
        """``project.dataset.name`` of a checked table name."""
        return f"{self.project}.{self.dataset}.{_ident(name)}"

    def _q(self, name: str) -> str:
        return f"`{self.table_id(name)}`"

    def ensure_dataset(self) -> None:
        """Create the dataset if missing (tests and first-time setup; production datasets exist)."""
        ds = bigquery.Dataset(f"{self.project}.{self.dataset}")
        if self.options.location:
            ds.location = self.options.location
        self.client.create_dataset(ds, exists_ok=True)

    # -- metadata ----------------------------------------------------------------------------
    def _get_table(self, name: str) -> bigquery.Table | None:
        try:
            return self.client.get_table(self.table_id(name))
        except NotFound:
            return None

    def table_exists(self, name: str) -> bool:
        """Whether the table exists (one metadata call)."""
        return self._get_table(name) is not None

    def columns(self, name: str) -> list[str]:
        """Column names in schema order; E304 for a missing table."""
        return [f.name for f in self._require(name).schema]

    def _require(self, name: str) -> bigquery.Table:
        t = self._get_table(name)
        if t is None:
            raise WarehouseError(
                "E304",
                f"table {self.dataset}.{name} does not exist in {self.url}",
                hint="load the notes table first or check the table names in the config",
            )
        return t

    def _create(
        self, name: str, schema: pa.Schema, expires: dt.datetime | None = None, layout: bool = True
    ) -> bigquery.Table:
        t = bigquery.Table(self.table_id(name), schema=bq_schema(schema))
        names = set(schema.names)
        if layout:
            cluster = [c for c in CLUSTER_COLUMNS if c in names]
            if cluster:
                t.clustering_fields = cluster
            for c in PARTITION_TIME_COLUMNS:
                if c in names and bq_type(schema.field(c).type) == "TIMESTAMP":
                    t.time_partitioning = bigquery.TimePartitioning(type_=bigquery.TimePartitioningType.MONTH, field=c)
                    break
        if expires is not None:
            t.expires = expires
        return self.client.create_table(t, exists_ok=True)

    def _ensure(self, name: str, schema: pa.Schema) -> bigquery.Table:
        """Create the table from the Arrow schema, or add columns the rows carry and it lacks."""
        existing = self._get_table(name)
        if existing is None:
            return self._create(name, schema)
        have = {f.name: f for f in existing.schema}
        missing = [f for f in bq_schema(schema) if f.name not in have]
        for f in bq_schema(schema):
            if f.name in have and have[f.name].field_type not in _compatible(f.field_type):
                raise WarehouseError(
                    "E323",
                    f"column {name}.{f.name} is {have[f.name].field_type} in BigQuery "
                    f"but the rows carry {f.field_type}",
                    hint="migrate the table (see sql/ddl) or drop it so TIDE recreates it",
                )
        if missing:
            adds = ", ".join(f"ADD COLUMN IF NOT EXISTS {_col(f.name)} {f.field_type}" for f in missing)
            self._query(f"ALTER TABLE {self._q(name)} {adds}")
            existing = self._require(name)
        return existing

    # -- reads -------------------------------------------------------------------------------
    def read_table(
        self, name: str, columns: Sequence[str] | None = None, where: Mapping[str, object] | None = None
    ) -> pa.Table:
        """The matching rows through the Storage Read API, else through a REST query.

        When the Storage Read API is unreachable once, this warehouse logs it and reads through the REST
        query path from then on (``read_path`` says which).
        """
        t = self._require(name)
        cols = [_ident(c, "column") for c in columns] if columns else [f.name for f in t.schema]
        if self._storage_ok is not False:
            try:
                out = self._read_storage(name, cols, where)
                self._storage_ok = True
                return out
            except _StorageUnavailableError as exc:
                self._storage_ok = False
                self.read_path = "rest"
                log.warning(
                    "BigQuery Storage Read API not reachable (%s); reading %s through the REST "
                    "query path from now on (slower)",
                    exc,
                    self.url,
                )
        return self._read_rest(name, cols, where)

    def _storage_client(self) -> Any:
        if self._read_client is None:
            if self.options.storage_endpoint and self.options.anonymous:
                channel = grpc.insecure_channel(self.options.storage_endpoint)
                self._read_client = bigquery_storage_v1.BigQueryReadClient(
                    transport=BigQueryReadGrpcTransport(channel=channel)
                )
            elif self.options.storage_endpoint:
                self._read_client = bigquery_storage_v1.BigQueryReadClient(
                    credentials=self.client._credentials,
                    client_options=ClientOptions(api_endpoint=self.options.storage_endpoint),
                )
            elif self.options.api_endpoint:
                # a custom REST endpoint without a storage endpoint: do not talk to Google's
                raise _StorageUnavailableError("no storage_endpoint configured beside a custom api_endpoint")
            else:
                self._read_client = bigquery_storage_v1.BigQueryReadClient(credentials=self.client._credentials)
        return self._read_client

    def _read_session(
        self,
        name: str,
        cols: list[str],
        where: Mapping[str, object] | None,
        max_streams: int,
        restriction: str | None = None,
    ) -> tuple[Any, Any]:
        """(read client, Storage Read API session) over ``name``; _StorageUnavailableError when the API is not.

        ``restriction`` (a row restriction of the caller's, e.g. a range) replaces the one of ``where``.
        """
        rc = self._storage_client()
        request = types.ReadSession(
            table=f"projects/{self.project}/datasets/{self.dataset}/tables/{_ident(name)}",
            data_format=types.DataFormat.ARROW,
            read_options=types.ReadSession.TableReadOptions(
                selected_fields=cols, row_restriction=row_restriction(where) if restriction is None else restriction
            ),
        )
        try:
            session = rc.create_read_session(
                parent=f"projects/{self.project}",
                read_session=request,
                max_stream_count=max_streams,
                retry=None,
                timeout=60,
            )
        except (
            gexc.ServiceUnavailable,
            gexc.RetryError,
            gexc.DeadlineExceeded,
            gexc.MethodNotImplemented,
            gexc.PermissionDenied,
        ) as exc:
            raise _StorageUnavailableError(type(exc).__name__) from None
        return rc, session

    def _read_storage(
        self, name: str, cols: list[str], where: Mapping[str, object] | None, restriction: str | None = None
    ) -> pa.Table:
        rc, session = self._read_session(name, cols, where, max_streams=4, restriction=restriction)
        schema = None
        if session.arrow_schema.serialized_schema:
            schema = pa.ipc.read_schema(pa.py_buffer(session.arrow_schema.serialized_schema))
        streams = list(session.streams)

        def read(stream: Any) -> pa.Table:
            # decode the Arrow IPC record batches directly (the reader's to_arrow() is deprecated)
            batches = [
                pa.ipc.read_record_batch(pa.py_buffer(r.arrow_record_batch.serialized_record_batch), schema)
                for r in rc.read_rows(stream.name)
                if r.arrow_record_batch.serialized_record_batch
            ]
            return pa.Table.from_batches(batches, schema=schema)

        if not streams:
            parts: list[pa.Table] = []
        elif len(streams) == 1:
            parts = [read(streams[0])]
        else:
            with ThreadPoolExecutor(len(streams)) as pool:
                parts = list(pool.map(read, streams))
        parts = [p for p in parts if p.num_columns]
        if parts:
            out = pa.concat_tables(parts, promote_options="default") if len(parts) > 1 else parts[0]
        elif schema is not None:
            out = schema.empty_table()
        else:
            out = self._empty(name, cols)
        return out.select(cols)

    def _empty(self, name: str, cols: list[str]) -> pa.Table:
        t = self._require(name)
        by_name = {f.name: f for f in t.schema}
        return pa.schema([(c, _arrow_type(by_name[c].field_type)) for c in cols]).empty_table()

    def _read_rest(self, name: str, cols: list[str], where: Mapping[str, object] | None) -> pa.Table:
        clause, params = where_sql(where)
        sql = f"SELECT {', '.join(_col(c) for c in cols)} FROM {self._q(name)} WHERE {clause}"
        out = self._query(sql, params).to_arrow(create_bqstorage_client=False)
        if out.num_rows == 0 and out.num_columns == 0:
            return self._empty(name, cols)
        return out.select(cols)

    def _query(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        job = self.client.query(sql, job_config=bigquery.QueryJobConfig(query_parameters=params or []))
        try:
            return job.result()
        except Exception as exc:
            raise WarehouseError(
                "E324",
                f"BigQuery job {job.job_id} failed: {type(exc).__name__}",
                hint="see the job in the BigQuery console; the query text names no PHI",
                terminal=False,
            ) from exc

    def count(self, name: str, where: Mapping[str, object] | None = None) -> int:
        """``COUNT(*)`` of the matching rows (0 for a missing table)."""
        if not self.table_exists(name):
            return 0
        clause, params = where_sql(where)
        rows = list(self._query(f"SELECT COUNT(*) AS n FROM {self._q(name)} WHERE {clause}", params))
        return int(rows[0]["n"])

    def sql(self, query: str, params: Mapping[str, object] | None = None) -> pa.Table:
        """Escape hatch for reports and researcher queries: named parameters ``@name``."""
        qp = []
        for k, v in (params or {}).items():
            qp.append(_array_param(k, list(v)) if isinstance(v, (list, tuple)) else _param(k, v))
        return self._query(query, qp).to_arrow(create_bqstorage_client=False)

    def run_sql_file(self, path: str | os.PathLike[str], params: Mapping[str, object] | None = None) -> pa.Table:
        """Run one file of ``sql/`` (DDL, views, example queries) with ``{{dataset}}`` filled in."""
        text = Path(path).read_text().replace("{{dataset}}", f"{self.project}.{self.dataset}")
        return self.sql(text, params)

    # -- writes ------------------------------------------------------------------------------
    def _load(self, table_id: str, table: pa.Table, disposition: str, schema: Sequence[bigquery.SchemaField]) -> int:
        buf = io.BytesIO()
        pq.write_table(_normalise(table), buf, compression="snappy")
        size = buf.tell()
        buf.seek(0)
        cfg = bigquery.LoadJobConfig(
            source_format=bigquery.SourceFormat.PARQUET, write_disposition=disposition, schema=schema
        )
        job = self.client.load_table_from_file(buf, table_id, job_config=cfg, size=size, rewind=True)
        try:
            job.result()
        except Exception as exc:
            raise WarehouseError(
                "E325",
                f"BigQuery load job {job.job_id} into {table_id} failed: {type(exc).__name__}",
                hint="check the table schema against tide_core.store.tables",
                terminal=False,
            ) from exc
        return int(table.num_rows)

    def append(self, name: str, table: pa.Table) -> int:
        """A ``WRITE_APPEND`` load job into the table (created when missing)."""
        with self._lock:
            target = self._ensure(name, table.schema)
            if table.num_rows == 0:
                return 0
            return self._load(self.table_id(name), table, "WRITE_APPEND", target.schema)

    def replace_table(self, name: str, table: pa.Table) -> int:
        """A ``WRITE_TRUNCATE`` load job; a table whose schema differs is dropped and created anew.

        An empty ``table`` empties the table with one ``DELETE``.
        """
        with self._lock:
            existing = self._get_table(name)
            wanted = bq_schema(table.schema)
            if existing is not None and [(f.name, _std(f.field_type)) for f in existing.schema] != [
                (f.name, _std(f.field_type)) for f in wanted
            ]:
                self.client.delete_table(self.table_id(name), not_found_ok=True)
                existing = None
            target = existing or self._create(name, table.schema)
            if table.num_rows == 0:
                self._query(f"DELETE FROM {self._q(name)} WHERE TRUE")
                return 0
            return self._load(self.table_id(name), table, "WRITE_TRUNCATE", target.schema)

    def replace_partition(self, name: str, table: pa.Table, partition: Mapping[str, object]) -> int:
        """Load the rows into an expiring staging table, then one ``MERGE`` replaces the partition.

        One statement is atomic in BigQuery: a reader sees the old partition or the new one, never a mix.
        """
        check_partition_rows(name, table, partition)
        with self._lock:
            self._ensure(name, table.schema)
            if table.num_rows == 0:
                clause, params = where_sql(partition)
                self._query(f"DELETE FROM {self._q(name)} WHERE {clause}", params)
                return 0
            stage = f"{STAGING_PREFIX}{name}_{uuid.uuid4().hex[:12]}"
            expires = dt.datetime.now(dt.UTC) + dt.timedelta(hours=self.options.staging_expiration_hours)
            staged = self._create(stage, table.schema, expires=expires, layout=False)
            try:
                self._load(self.table_id(stage), table, "WRITE_TRUNCATE", staged.schema)
                clause, params = where_sql(partition, alias="T")
                cols = ", ".join(_col(c) for c in table.column_names)
                vals = ", ".join(f"S.{_col(c)}" for c in table.column_names)
                # One statement: atomic in BigQuery.  ON FALSE = no row matches, so every target row
                # of the partition is "not matched by source" (deleted) and every staged row inserted.
                self._query(
                    f"MERGE {self._q(name)} T USING {self._q(stage)} S ON FALSE "
                    f"WHEN NOT MATCHED BY SOURCE AND {clause} THEN DELETE "
                    f"WHEN NOT MATCHED THEN INSERT ({cols}) VALUES ({vals})",
                    params,
                )
            finally:
                self.client.delete_table(self.table_id(stage), not_found_ok=True)
        return int(table.num_rows)

    def replace_partitions(self, writes: Sequence[PartitionWrite]) -> int:
        """Replace several partitions all or nothing (:meth:`publish` with nothing staged)."""
        return self.publish((), writes)

    # -- staged writes (tide_core.io.staging) ----------------------------------------------
    def staging_target(self) -> StagingTarget:
        """Workers stage into expiring tables of this dataset with their own client."""
        opts = {k: v for k, v in dataclasses.asdict(self.options).items() if k not in ("project", "dataset")}
        return StagingTarget("bigquery", self.url, tuple(sorted(opts.items())))

    def stage_table(self, name: str, table: pa.Table) -> str:
        """Load ``table`` into a new staging table (expires after ``staging_expiration_hours``); its name."""
        stage = f"{STAGING_PREFIX}{_ident(name)}_{uuid.uuid4().hex[:12]}"
        expires = dt.datetime.now(dt.UTC) + dt.timedelta(hours=self.options.staging_expiration_hours)
        with self._lock:
            staged = self._create(stage, table.schema, expires=expires, layout=False)
            if table.num_rows:
                self._load(self.table_id(stage), table, "WRITE_TRUNCATE", staged.schema)
        return stage

    def publish(self, staged: Sequence[StagedWrite], writes: Sequence[PartitionWrite] = ()) -> int:
        """Replace every staged and in-memory partition all or nothing.

        In-memory rows are loaded into short-lived staging tables first (load jobs are not DML
        and cannot join a transaction), beside the tables workers staged; then ONE
        multi-statement query runs ``BEGIN TRANSACTION; DELETE ...; INSERT ... SELECT FROM
        staging; ... COMMIT TRANSACTION;``.  The script runs server-side (a client killed after
        submitting it does not interrupt it); a statement that fails, or a cancelled job, rolls
        the whole transaction back, so readers see either every old partition or every new one.
        A process killed while staging has not touched the targets (staging tables expire after
        ``staging_expiration_hours``).  Every staging table is dropped afterwards.
        """
        check_writes(writes)
        check_publish(staged, writes)
        stages = [s.ref for s in staged]
        try:
            with self._lock:
                pending: list[_Pending] = [(s.name, s.partition, s.schema, s.ref if s.n_rows else None) for s in staged]
                for w in writes:
                    ref = self.stage_table(w.name, w.table) if w.table.num_rows else None
                    if ref is not None:
                        stages.append(ref)
                    pending.append((w.name, w.partition, w.table.schema, ref))
                self._transact(pending)
        finally:
            for stage in stages:
                self.client.delete_table(self.table_id(stage), not_found_ok=True)
        return sum(s.n_rows for s in staged) + sum(int(w.table.num_rows) for w in writes)

    def _transact(self, pending: Sequence[_Pending]) -> None:
        """Run ONE multi-statement transaction over the pending partitions.

        Per (table, partition, schema, staging table or None): ``DELETE`` the partition (none:
        append) and ``INSERT ... SELECT`` the staged rows.
        """
        statements = ["BEGIN TRANSACTION;"]
        for name, partition, schema, ref in pending:
            if schema is None:  # a stream that yielded nothing: only its partition goes
                if partition is None or not self.table_exists(name):
                    continue
            else:
                self._ensure(name, schema)
            # partition values as escaped literals (``_literal``): query parameters do not
            # reach every statement of a script on every BigQuery-API implementation
            if partition is not None:
                statements.append(f"DELETE FROM {self._q(name)} WHERE {row_restriction(partition)};")
            if ref is None or schema is None:
                continue
            cols = ", ".join(_col(f.name) for f in schema)
            keep = f" WHERE {row_restriction(partition)}" if partition is not None else ""
            statements.append(f"INSERT INTO {self._q(name)} ({cols}) SELECT {cols} FROM {self._q(ref)}{keep};")
        statements.append("COMMIT TRANSACTION;")
        self._query("\n".join(statements))

    def replace_partitions_streamed(
        self,
        streams: Sequence[tuple[str, Mapping[str, object] | None, Callable[[], Iterator[pa.Table]]]],
        writes: Sequence[PartitionWrite] = (),
    ) -> int:
        """:meth:`replace_partitions` with rows that arrive in batches (``StreamedWriteWarehouse``).

        Each stream is (table, partition or ``None`` to append, a callable that yields its tables).
        Its batches are loaded as they come into one expiring staging table of its own
        (``WRITE_APPEND`` load jobs: the caller holds one batch at a time), the in-memory
        ``writes`` are staged too, then ONE multi-statement transaction deletes each partition and
        inserts from the staging tables, as :meth:`publish` does: readers see every old partition
        until it commits, then every new one.  A generator that raises, a load that fails or a
        process killed while staging leaves the targets untouched (the staging tables are dropped
        here, or expire).  A generator may read this warehouse (nothing is locked while it runs).
        """
        check_writes(writes)
        names = [n for n, _, _ in streams] + [w.name for w in writes]
        if len(set(names)) != len(names):
            raise ConfigError("E308", "a table appears twice in one commit", hint="this is a bug in the caller")
        stages: list[str] = []
        pending: list[_Pending] = []
        n = 0
        try:
            for name, partition, batches in streams:
                ref: str | None = None
                schema: pa.Schema | None = None
                staged_schema: Sequence[bigquery.SchemaField] = ()
                for table in batches():
                    if partition is not None:
                        check_partition_rows(name, table, partition)
                    schema = schema or table.schema
                    if not table.num_rows:
                        continue
                    with self._lock:
                        if ref is None:
                            ref = self.stage_table(name, table)
                            stages.append(ref)
                            staged_schema = self._require(ref).schema
                        else:
                            self._load(self.table_id(ref), table, "WRITE_APPEND", staged_schema)
                    n += int(table.num_rows)
                pending.append((name, partition, schema, ref))
            with self._lock:
                for w in writes:
                    wref = self.stage_table(w.name, w.table) if w.table.num_rows else None
                    if wref is not None:
                        stages.append(wref)
                    pending.append((w.name, w.partition, w.table.schema, wref))
                    n += int(w.table.num_rows)
                self._transact(pending)
        finally:
            for stage in stages:
                self.client.delete_table(self.table_id(stage), not_found_ok=True)
        return n

    def delete(self, name: str, where: Mapping[str, object]) -> int:
        """One ``DELETE`` query job; the number of rows it removed."""
        if not self.table_exists(name):
            return 0
        clause, params = where_sql(where)
        with self._lock:
            job = self.client.query(f"DELETE FROM {self._q(name)} WHERE {clause}", job_config=_job_config(params))
            job.result()
        return int(job.num_dml_affected_rows or 0)

    # -- streaming reads (StreamingWarehouse, issue 13) ---------------------------------------
    def iter_batches(
        self,
        name: str,
        columns: Sequence[str] | None = None,
        where: Mapping[str, object] | None = None,
        batch_rows: int = 1000,
    ) -> Iterator[pa.RecordBatch]:
        """Stream rows as Arrow record batches of at most ``batch_rows`` rows.

        Storage Read API: one read session with ONE stream (its blocks in one order for an
        unchanged table), decoded batch by batch; without it, a query's result pages.  Memory
        holds one server batch plus one yielded batch.
        """
        t = self._require(name)
        cols = [_ident(c, "column") for c in columns] if columns else [f.name for f in t.schema]
        rows = max(1, int(batch_rows))
        if self._storage_ok is not False:
            try:
                yield from self._stream_storage(name, cols, where, rows)
                self._storage_ok = True
                return
            except _StorageUnavailableError as exc:
                self._storage_ok = False
                self.read_path = "rest"
                log.warning("BigQuery Storage Read API not reachable (%s); streaming %s through REST pages", exc, name)
        clause, params = where_sql(where)
        sql = f"SELECT {', '.join(_col(c) for c in cols)} FROM {self._q(name)} WHERE {clause}"
        yield from self._query_pages(sql, params, cols, rows)

    def iter_ordered(
        self,
        name: str,
        columns: Sequence[str],
        order_by: Sequence[str],
        where: Mapping[str, object] | None = None,
        batch_rows: int = 1000,
        bounds: Sequence[object] = (),
    ) -> Iterator[pa.RecordBatch]:
        """The matching rows sorted by ``order_by`` (ascending, nulls first), ``batch_rows`` at a time.

        Result pages of one query: BigQuery sorts on its servers, so ``bounds`` (a hint for
        backends that sort in this process) are not needed; GoogleSQL orders STRING by code point.
        """
        self._require(name)
        cols = [_ident(c, "column") for c in columns]
        order = ", ".join(f"{_col(c)} ASC NULLS FIRST" for c in order_by)
        clause, params = where_sql(where)
        sql = f"SELECT {', '.join(_col(c) for c in cols)} FROM {self._q(name)} WHERE {clause} ORDER BY {order}"
        yield from self._query_pages(sql, params, cols, max(1, int(batch_rows)))

    def _query_pages(self, sql: str, params: Sequence[Any], cols: list[str], rows: int) -> Iterator[pa.RecordBatch]:
        """A query's result as record batches of at most ``rows`` rows (REST result pages)."""
        result = self.client.query(sql, job_config=_job_config(params)).result(page_size=rows)
        for batch in result.to_arrow_iterable(bqstorage_client=None):
            for piece in pa.Table.from_batches([batch]).select(cols).to_batches(max_chunksize=rows):
                if piece.num_rows:
                    yield piece

    def _stream_storage(
        self, name: str, cols: list[str], where: Mapping[str, object] | None, rows: int
    ) -> Iterator[pa.RecordBatch]:
        rc, session = self._read_session(name, cols, where, max_streams=1)
        if not session.streams:
            return
        schema = pa.ipc.read_schema(pa.py_buffer(session.arrow_schema.serialized_schema))
        for r in rc.read_rows(session.streams[0].name):
            if not r.arrow_record_batch.serialized_record_batch:
                continue
            batch = pa.ipc.read_record_batch(pa.py_buffer(r.arrow_record_batch.serialized_record_batch), schema)
            for piece in pa.Table.from_batches([batch]).select(cols).to_batches(max_chunksize=rows):
                if piece.num_rows:
                    yield piece

    def duplicate_values(self, name: str, column: str, where: Mapping[str, object] | None = None) -> list[str]:
        """Values of ``column`` (cast to STRING and trimmed) that occur more than once, sorted."""
        self._require(name)
        clause, params = where_sql(where)
        key = f"TRIM(CAST({_col(column)} AS STRING))"
        sql = (
            f"SELECT k FROM (SELECT {key} AS k FROM {self._q(name)} WHERE {clause}) "
            "WHERE k IS NOT NULL AND k != '' GROUP BY k HAVING COUNT(*) > 1"
        )
        return sorted(str(r["k"]) for r in self._query(sql, params))

    def delete_absent(
        self,
        name: str,
        where: Mapping[str, object],
        column: str,
        source: str,
        source_column: str,
        source_where: Mapping[str, object] | None = None,
    ) -> int:
        """One DML statement (atomic): delete ``name`` rows whose id is no longer in ``source``."""
        if not self.table_exists(name):
            return 0
        self._require(source)
        clause = row_restriction(where) or "TRUE"
        src_clause = row_restriction(source_where) or "TRUE"
        sql = (
            f"DELETE FROM {self._q(name)} T WHERE {clause} AND T.{_col(column)} IS NOT NULL "
            f"AND T.{_col(column)} NOT IN (SELECT TRIM(CAST({_col(source_column)} AS STRING)) "
            f"FROM {self._q(source)} WHERE {src_clause} AND {_col(source_column)} IS NOT NULL)"
        )
        with self._lock:
            job = self.client.query(sql)
            job.result()
        return int(job.num_dml_affected_rows or 0)

    # -- shards (tide_core.io.shards): Ray workers read their own chunks ------------------
    def open_shards(self, name: str, where: Mapping[str, object] | None = None) -> ShardSource:
        """Copy the study once into an expiring table with a study-wide row number, clustered by it.

        Rows are numbered in one order that an unchanged table always gives (trimmed note id, then
        every orderable column), so a rerun plans the same chunks.  A worker then reads its chunk
        from the copy through a row restriction on ``_tide_row`` (:meth:`shard_rows`): one scan
        of the source per run, not one per chunk.
        """
        t = self._require(name)
        if SHARD_ROW in [f.name for f in t.schema]:
            raise ConfigError("E328", f"table {name} has a column named {SHARD_ROW}", hint=f"rename {SHARD_ROW}")
        order = ["TRIM(CAST(`note_id` AS STRING))"] + [
            _col(f.name) for f in t.schema if _std(f.field_type) in _ORDERABLE and f.mode != "REPEATED"
        ]
        copy = f"{SHARD_PREFIX}{uuid.uuid4().hex[:12]}"
        hours = int(self.options.staging_expiration_hours)
        clause, params = where_sql(where)
        self._query(
            f"CREATE TABLE {self._q(copy)} CLUSTER BY {SHARD_ROW} "
            f"OPTIONS (expiration_timestamp = TIMESTAMP_ADD(CURRENT_TIMESTAMP(), INTERVAL {hours} HOUR)) AS "
            f"SELECT *, ROW_NUMBER() OVER (ORDER BY {', '.join(order)}) - 1 AS {SHARD_ROW} "
            f"FROM {self._q(name)} WHERE {clause}",
            params,
        )
        return ShardSource(copy, None, owned=True)

    def iter_refs(
        self,
        name: str,
        columns: Sequence[str],
        where: Mapping[str, object] | None = None,
        batch_rows: int = 1000,
    ) -> Iterator[pa.RecordBatch]:
        """``columns`` of a study copy (:meth:`open_shards`) in row-number order, with ``ref`` first."""
        t = self._require(name)
        if SHARD_ROW not in [f.name for f in t.schema]:
            raise ConfigError(
                "E377", f"table {name} is not a study copy made by open_shards", hint="a bug in the caller"
            )
        cols = ", ".join(_col(c) for c in columns)
        clause, params = where_sql(where)
        sql = f"SELECT {SHARD_ROW} AS {REF}, {cols} FROM {self._q(name)} WHERE {clause} ORDER BY {SHARD_ROW}"
        yield from self._query_pages(sql, params, [REF, *columns], max(1, int(batch_rows)))

    def export_shard(
        self, source: ShardSource, refs: Sequence[int], row_numbers: Sequence[int], target: StagingTarget, chunk: int
    ) -> ShardRef:
        """No copy: a chunk is rows of the study copy, which the worker reads with its own client."""
        if list(refs) != list(row_numbers):
            raise ConfigError("E327", "a BigQuery shard's references are its row numbers", hint="a bug in the caller")
        return ShardRef("bigquery", source.table, tuple(int(n) for n in row_numbers))

    def shard_rows(self, name: str, row_numbers: Sequence[int]) -> pa.Table:
        """The rows ``row_numbers`` of a study copy, with ``_tide_row`` (a worker reading its chunk)."""
        if not row_numbers:
            return self.read_table(name, where={SHARD_ROW: []})
        lo, hi = min(row_numbers), max(row_numbers)
        if hi - lo + 1 == len(row_numbers):  # a contiguous chunk: a range the clustering prunes to
            return self._range(name, lo, hi)
        return self.read_table(name, where={SHARD_ROW: sorted(int(n) for n in row_numbers)})

    def _range(self, name: str, lo: int, hi: int) -> pa.Table:
        table = self._require(name)
        cols = [f.name for f in table.schema]
        if self._storage_ok is not False:
            try:
                return self._read_storage(name, cols, None, restriction=f"{SHARD_ROW} BETWEEN {int(lo)} AND {int(hi)}")
            except _StorageUnavailableError:
                self._storage_ok = False
        sql = f"SELECT * FROM {self._q(name)} WHERE {SHARD_ROW} BETWEEN @lo AND @hi"
        params = [bigquery.ScalarQueryParameter("lo", "INT64", lo), bigquery.ScalarQueryParameter("hi", "INT64", hi)]
        return self.client.query(sql, job_config=_job_config(params)).result().to_arrow(bqstorage_client=None)

    def close_shards(self, source: ShardSource) -> None:
        """Drop the run's study copy (it also expires on its own)."""
        if source.owned:
            self.drop(source.table)

    def drop(self, name: str) -> None:
        """Drop table ``name`` if it exists."""
        self.client.delete_table(self.table_id(name), not_found_ok=True)

    def close(self) -> None:
        """Close both clients (best effort: a client that fails to close is ignored)."""
        try:
            self.client.close()
        except Exception:  # pragma: no cover - closing is best effort
            pass
        rc, self._read_client = self._read_client, None
        if rc is not None:
            try:
                rc.transport.close()
            except Exception:  # pragma: no cover
                pass

    def __enter__(self) -> BigQueryWarehouse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<BigQueryWarehouse {self.url} read={self.read_path}>"


class _StorageUnavailableError(Exception):
    pass


def _job_config(params: Sequence[Any] | None) -> bigquery.QueryJobConfig:
    return bigquery.QueryJobConfig(query_parameters=params or [])


_COMPATIBLE = {"INT64": {"INT64", "INTEGER"}, "FLOAT64": {"FLOAT64", "FLOAT"}, "BOOL": {"BOOL", "BOOLEAN"}}


def _std(t: str) -> str:
    """REST reports legacy type names (INTEGER, FLOAT, BOOLEAN); compare GoogleSQL names."""
    return {"INTEGER": "INT64", "FLOAT": "FLOAT64", "BOOLEAN": "BOOL"}.get(t, t)


def _compatible(t: str) -> set[str]:
    return _COMPATIBLE.get(t, {t})


def _arrow_type(bq: str) -> pa.DataType:
    return {
        "STRING": pa.string(),
        "INT64": pa.int64(),
        "INTEGER": pa.int64(),
        "FLOAT64": pa.float64(),
        "FLOAT": pa.float64(),
        "BOOL": pa.bool_(),
        "BOOLEAN": pa.bool_(),
        "TIMESTAMP": pa.timestamp("us", tz="UTC"),
        "DATETIME": pa.timestamp("us"),
        "DATE": pa.date32(),
        "BYTES": pa.binary(),
        "NUMERIC": pa.decimal128(38, 9),
    }.get(bq, pa.string())
