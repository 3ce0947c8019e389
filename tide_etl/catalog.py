"""Catalog metadata of TIDE's assets: owners, tags, kinds, table names, column schemas,
code versions, freshness.

Computed when the definitions load from the (resolved) resources, so the catalog shows the
warehouse and configuration the runs use: kinds ``duckdb``/``bigquery`` from the warehouse URL,
``dagster/table_name`` qualified by its schema or dataset, column schemas from the table
registry (``tide_core.store.tables.TABLES``), and ``code_version`` from what decides each
asset's output (recognizer specs and the versioned note steps; the anonymizer's
``name@version``; the gate policy's ``describe()`` -- its ``name@version`` and a digest of what it
decides -- and any approval of a weakening override).  A change there marks the downstream
partitions stale in the UI.  Counts and names only: no note text, no key material.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg

from tide_core.anonymize.engine import VERSION as ANONYMIZER
from tide_core.assurance.gate import ReleaseGatePolicy
from tide_core.config import TideConfig
from tide_core.engine.recognition import note_steps
from tide_core.engine.validation import METADATA_COLUMNS, REQUIRED_COLUMNS
from tide_core.fingerprint import Step, fingerprint, step_fingerprint
from tide_core.release.publish import RESEARCHER_OBJECTS, STORE_ENV, VERSIONS_VIEW_SQL, VIEW_SQL
from tide_core.store.tables import TABLES, TableNames

#: Who answers for TIDE's assets (Dagster owners: an e-mail or ``team:NAME``).
OWNERS = ("team:tide-data-engineering",)

#: A release (study, key) is expected to be decided at least once a day when the nightly
#: schedule runs; the UI warns after ``FRESH_WARN`` and fails after ``FRESH_FAIL``.
FRESH_WARN = dt.timedelta(hours=26)
FRESH_FAIL = dt.timedelta(hours=50)
#: What researchers read is confirmed by every publishing re-release (nightly); new content waits
#: for its audit rounds, so the views warn after a day and fail after ``VIEWS_FRESH_FAIL``.
VIEWS_FRESH_WARN = dt.timedelta(hours=26)
VIEWS_FRESH_FAIL = dt.timedelta(days=8)
#: the researcher views' tags (their table is in the researcher store, not the warehouse)
VIEW_TAGS = {"tide/layer": "researcher", "tide/contains": "de-identified"}

#: asset -> (registry kind of its main table, or None for the source notes), tags.
ASSET_TABLES: dict[str, tuple[str | None, dict[str, str]]] = {
    "source_notes": (None, {"tide/layer": "source", "tide/contains": "phi"}),
    "recognized_spans": ("spans", {"tide/layer": "span-cache", "tide/contains": "offsets-and-labels"}),
    "deidentified_notes": ("deid_notes", {"tide/layer": "release", "tide/contains": "de-identified"}),
    "release_summary": ("releases", {"tide/layer": "release", "tide/contains": "counts"}),
}


@dataclass(frozen=True)
class CatalogContext:
    """What the catalog needs from the resolved resources."""

    scheme: str  # duckdb | bigquery
    namespace: str  # the DuckDB file's schema, or PROJECT.DATASET
    tables: TableNames
    code_versions: Mapping[str, str]
    gate_policy: str = ""  # ReleaseGatePolicy.describe() of the deployment's gate
    gate_approval: str = ""  # the approval of its weakening override, if any
    store_namespace: str = ""  # the researcher store's DuckDB file and schema, or PROJECT.DATASET


def _namespace(url: str) -> str:
    scheme, _, rest = url.partition(":")
    if scheme == "bigquery":
        return rest
    path, _, schema = rest.partition("#")
    return f"{os.path.splitext(os.path.basename(path))[0] or 'memory'}.{schema or 'main'}"


def _store_namespace(url: str) -> str:
    """Where the researcher views live: the dataset on BigQuery, else the store's DuckDB file
    (``TIDE_RELEASE_STORE``, or ``<warehouse>.released.duckdb``; tide_core.release.publish)."""
    scheme, _, rest = url.partition(":")
    if scheme == "bigquery":
        return _namespace(url)
    override = os.environ.get(STORE_ENV)
    if override:
        return _namespace(override if override.startswith("duckdb:") else f"duckdb:{override}")
    path, _, _schema = rest.partition("#")
    stem = os.path.basename(path).removesuffix(".duckdb") or "memory"
    return f"{stem}.released.main"


def view_schema(name: str) -> dg.TableSchema:
    """A researcher view's columns (``RESEARCHER_OBJECTS``) with the store tables' types."""
    types = {f.name: str(f.type) for kind in ("published_content", "published_pointer") for f in TABLES[kind].schema}
    return dg.TableSchema(columns=[dg.TableColumn(c, types.get(c, "string")) for c in RESEARCHER_OBJECTS[name]])


def _spec_identity(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A recognizer spec without machine paths or data (file names stay: a new model dir is a
    new version); known-PHI rows are data, not code."""
    out: dict[str, Any] = {}
    for k, v in spec.items():
        if k == "rows":
            continue
        out[k] = os.path.basename(str(v).rstrip("/")) if isinstance(v, str) and os.sep in v else v
    return out


def gate_version(policy: ReleaseGatePolicy) -> str:
    """The gate's part of ``release_summary``'s code version: ``describe()`` (``name@version
    sha256:...``), plus a digest of the approval when the policy carries one."""
    if not policy.approval:
        return policy.describe()
    return f"{policy.describe()} approved:{fingerprint(policy.approval)[:12]}"


def code_versions(config: TideConfig, gate_policy: ReleaseGatePolicy) -> dict[str, str]:
    """Per asset: a fingerprint of what decides its output (tide_core.fingerprint); the release
    summary's reads ``<fingerprint>+<gate policy>`` so the UI names the policy."""

    steps = [step_fingerprint(s) if isinstance(s, Step) else repr(s) for s in note_steps(None)]
    recognition = fingerprint({"recognizers": [_spec_identity(s) for s in config.recognizers], "steps": steps})
    release = f"{ANONYMIZER}+{recognition}"
    return {
        "source_notes": fingerprint({"max_note_chars": config.max_note_chars}),
        "recognized_spans": recognition,
        "deidentified_notes": release,
        "release_summary": f"{fingerprint(release)}+{gate_version(gate_policy)}",
        "researcher_views": fingerprint({"views": [VIEW_SQL, VERSIONS_VIEW_SQL]}),
    }


def schema_of(kind: str | None) -> dg.TableSchema:
    """Column schema from the table registry (source notes: the columns TIDE reads)."""
    if kind is None:
        cols = [dg.TableColumn(c, "string", description="required") for c in REQUIRED_COLUMNS]
        cols += [dg.TableColumn(c, "string", description="optional") for c in ("study", *METADATA_COLUMNS)]
        return dg.TableSchema(columns=cols)
    return dg.TableSchema(columns=[dg.TableColumn(f.name, str(f.type)) for f in TABLES[kind].schema])


def table_name(ctx: CatalogContext, kind: str | None) -> str:
    name = ctx.tables.notes if kind is None else ctx.tables.of(kind)
    return f"{ctx.namespace}.{name}"


def annotate(assets: Sequence[dg.AssetsDefinition], ctx: CatalogContext) -> list[dg.AssetsDefinition]:
    """The assets with owners, tags, kinds, table names, schemas, code versions and freshness."""

    def spec(s: dg.AssetSpec) -> dg.AssetSpec:
        name = s.key.to_user_string()
        if name in RESEARCHER_OBJECTS:
            return s.replace_attributes(
                owners=list(OWNERS),
                tags={**{k: v for k, v in s.tags.items() if not k.startswith("dagster/kind/")}, **VIEW_TAGS},
                kinds={ctx.scheme},
                metadata={
                    **s.metadata,
                    "dagster/table_name": f"{ctx.store_namespace}.{name}",
                    "dagster/column_schema": view_schema(name),
                },
                code_version=ctx.code_versions["researcher_views"],
                freshness_policy=dg.FreshnessPolicy.time_window(
                    fail_window=VIEWS_FRESH_FAIL, warn_window=VIEWS_FRESH_WARN
                ),
            )
        kind, tags = ASSET_TABLES[name]
        metadata = {
            **s.metadata,
            "dagster/table_name": table_name(ctx, kind),
            "dagster/column_schema": schema_of(kind),
        }
        if kind is not None:
            metadata["tide/table_description"] = TABLES[kind].description
        changes: dict[str, Any] = {
            "owners": list(OWNERS),
            "tags": {**{k: v for k, v in s.tags.items() if not k.startswith("dagster/kind/")}, **tags},
            "kinds": {ctx.scheme},
            "metadata": metadata,
            "code_version": ctx.code_versions[name],
        }
        if name == "release_summary":
            metadata["tide/gate_policy"] = ctx.gate_policy
            if ctx.gate_approval:
                metadata["tide/gate_approval"] = ctx.gate_approval
            changes["freshness_policy"] = dg.FreshnessPolicy.time_window(fail_window=FRESH_FAIL, warn_window=FRESH_WARN)
        return s.replace_attributes(**changes)

    return [a for a in dg.map_asset_specs(spec, assets) if isinstance(a, dg.AssetsDefinition)]


#: the code version of assets whose recognizers cannot be known yet (the default model is not trained)
MISSING_MODEL = "default-model-missing"


def catalog_context(
    warehouse_url: str, config: TideConfig, gate_policy: ReleaseGatePolicy, missing_model: bool = False
) -> CatalogContext:
    """``missing_model``: the configured default model is not trained yet, so the recognition
    assets' code versions say so (they change, and mark the assets stale, once it is); the
    release summary's still names the gate policy."""
    versions = code_versions(config, gate_policy)
    if missing_model:
        for name in ("recognized_spans", "deidentified_notes"):
            versions[name] = MISSING_MODEL
        versions["release_summary"] = f"{MISSING_MODEL}+{gate_version(gate_policy)}"
    return CatalogContext(
        scheme=warehouse_url.partition(":")[0],
        namespace=_namespace(warehouse_url),
        tables=config.tables,
        code_versions=versions,
        gate_policy=gate_policy.describe(),
        gate_approval=gate_policy.approval,
        store_namespace=_store_namespace(warehouse_url),
    )
