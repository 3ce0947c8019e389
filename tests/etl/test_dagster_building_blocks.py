"""Dagster's building blocks in TIDE's code location (issue 16 item 4, issue 14 item 5).

- configuration through resources bound to ``dg.EnvVar`` (nothing read at import);
- BigQuery clients from ``dagster_gcp.BigQueryResource``;
- catalog metadata: owners, tags, kinds, table names, column schemas, code versions, freshness;
- a backfill policy of one partition per run;
- a release run reads its source partition from the warehouse once (counted on real DuckDB).

Real DuckDB and Dagster in process; the read counter wraps the real ``read_table``.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pytest

from tide_core.anonymize.keys import FileKeyProvider
from tide_core.config import TideConfig
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.io.open import open_warehouse

warnings.filterwarnings("ignore", category=dg.BetaWarning)
warnings.filterwarnings("ignore", category=dg.PreviewWarning)

ROOT = Path(__file__).resolve().parents[2]
S, K = "s", "k"
BASE = {"study": S, "site": "site1", "source": "ehr", "note_type": "progress"}
NOTES = [
    dict(BASE, note_id="a", patient_id="p1", note_date="2021-03-04", text="Maria Stonebridge seen 03/04/2021, stable."),
    dict(BASE, note_id="b", patient_id="p2", note_date="2021-03-05", text="Call 617-555-0100 re: Robert Ashdown."),
    dict(BASE, note_id="c", patient_id="p2", note_date="2021-03-06", text="Robert Ashdown seen, no change."),
]
PATIENTS = [
    {"patient_id": "p1", "first_name": "Maria", "last_name": "Stonebridge"},
    {"patient_id": "p2", "first_name": "Robert", "last_name": "Ashdown"},
]


def _resources(root: Path, **warehouse: object) -> dict:
    from tide_etl.resources import KeyProviderResource, ReleaseGateResource, TideConfigResource, WarehouseResource

    return {
        "warehouse": WarehouseResource(url=f"duckdb:{root / 'wh.duckdb'}", **warehouse),
        "tide_config": TideConfigResource(preset="rules"),
        "key_provider": KeyProviderResource(key_dir=str(root / "keys")),
        "gate": ReleaseGateResource(),
    }


@pytest.fixture
def warehouse_dir(tmp_path: Path) -> Path:
    with open_warehouse(f"duckdb:{tmp_path / 'wh.duckdb'}") as wh:
        wh.replace_table("notes", pa.Table.from_pylist(NOTES))
        wh.replace_table("patients", pa.Table.from_pylist(PATIENTS))
    FileKeyProvider(tmp_path / "keys").create(S, K)
    return tmp_path


# -- configuration ---------------------------------------------------------------------------


def test_importing_the_code_location_reads_no_environment():
    """A fresh interpreter imports tide_etl and its modules with os.environ access recorded."""
    code = (
        "import os, sys\n"
        "seen = []\n"
        "def ours():  # a read by TIDE's own code (third-party imports copy the whole environment)\n"
        "    f = sys._getframe(2)\n"
        "    for _ in range(3):\n"
        "        if f is None: return False\n"
        "        if '/tide_etl/' in f.f_code.co_filename or '/tide_core/' in f.f_code.co_filename: return True\n"
        "        f = f.f_back\n"
        "    return False\n"
        "class Env(type(os.environ)):\n"
        "    def __getitem__(self, k):\n"
        "        if k.startswith('TIDE_') and ours(): seen.append(k)\n"
        "        return super().__getitem__(k)\n"
        "env = Env(os.environ._data, os.environ.encodekey, os.environ.decodekey, os.environ.encodevalue,"
        " os.environ.decodevalue)\n"
        "os.environ = env\n"
        "import tide_etl, tide_etl.jobs, tide_etl.schedules, tide_etl.sensors, tide_etl.assets, tide_etl.checks\n"
        "print('READ', sorted(set(seen)))\n"
        "tide_etl.defs\n"
        "print('LOAD', sorted(set(seen)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "TIDE_WAREHOUSE": "duckdb:x.duckdb", "HOME": str(Path.home())},
    )
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if line.startswith(("READ", "LOAD")))
    assert lines.get("READ") == "[]", out.stdout + out.stderr[-2000:]
    assert "TIDE_WAREHOUSE" in lines.get("LOAD", ""), out.stdout + out.stderr[-2000:]


def test_default_resources_bind_settings_to_env_vars():
    from tide_etl.resources import ENV_SETTINGS, default_resources, resolved

    env = {"TIDE_WAREHOUSE": "bigquery:p.d", "TIDE_PRESET": "rules", "TIDE_KEY_DIR": "/keys"}
    res = default_resources(env)
    assert isinstance(res["warehouse"].url, dg.EnvVar) and res["warehouse"].url.env_var_name == "TIDE_WAREHOUSE"
    assert isinstance(res["tide_config"].preset, dg.EnvVar)
    assert isinstance(res["key_provider"].key_dir, dg.EnvVar)
    assert res["tide_config"].executor is None  # unset: the default, no EnvVar
    unset = default_resources({})
    assert unset["warehouse"].url == "duckdb:tide_warehouse.duckdb" and unset["tide_config"].preset == "default"
    assert set(ENV_SETTINGS.values()) >= {"TIDE_WAREHOUSE", "TIDE_PRESET", "TIDE_CONFIG", "TIDE_KEY_DIR"}
    mp = pytest.MonkeyPatch()
    try:
        mp.setenv("TIDE_WAREHOUSE", "bigquery:proj.ds")
        assert resolved(res["warehouse"]).url == "bigquery:proj.ds"  # resolved from the environment now
    finally:
        mp.undo()


def test_env_var_resolved_when_the_run_starts(warehouse_dir: Path, monkeypatch):
    """The warehouse URL is resolved by Dagster at run start: the run writes where the variable says."""
    from tide_etl import build_defs
    from tide_etl.resources import default_resources

    monkeypatch.setenv("TIDE_WAREHOUSE", f"duckdb:{warehouse_dir / 'wh.duckdb'}")
    monkeypatch.setenv("TIDE_PRESET", "rules")
    defs = build_defs(default_resources())
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("study", [S])
        r = defs.resolve_job_def("recognition_job").execute_in_process(partition_key=S, instance=instance)
    assert r.success
    with open_warehouse(f"duckdb:{warehouse_dir / 'wh.duckdb'}") as wh:
        assert wh.count("tide_recognized_notes", {"study": S}) == len(NOTES)
    monkeypatch.delenv("TIDE_WAREHOUSE")
    with dg.DagsterInstance.ephemeral() as instance:  # the variable is gone: the run says which one
        instance.add_dynamic_partitions("study", [S])
        with pytest.raises(dg.DagsterInvalidConfigError, match="TIDE_WAREHOUSE"):
            defs.resolve_job_def("recognition_job").execute_in_process(partition_key=S, instance=instance)


def test_bigquery_clients_come_from_dagster_gcp():
    from dagster_gcp import BigQueryResource

    from tide_etl.resources import BigQueryClientResource, WarehouseResource

    client_res = WarehouseResource(url="bigquery:my-proj.ds", location="EU").bigquery_client()
    assert isinstance(client_res, BigQueryResource) and isinstance(client_res, BigQueryClientResource)
    assert client_res.project == "my-proj" and client_res.location == "EU"
    emu = WarehouseResource(url="bigquery:p.d", api_endpoint="http://127.0.0.1:1", anonymous=True).bigquery_client()
    with emu.get_client() as client:  # building a client talks to nobody
        assert client.project == "p"
        assert "127.0.0.1:1" in client._connection.API_BASE_URL


# -- catalog -----------------------------------------------------------------------------------


def _node(defs: dg.Definitions, name: str):
    return defs.resolve_asset_graph().get(dg.AssetKey(name))


def test_catalog_metadata_on_duckdb_and_bigquery(tmp_path: Path):
    from tide_core.store.tables import TABLES
    from tide_etl import build_defs

    duck = build_defs(_resources(tmp_path))
    bq = build_defs(
        {
            **_resources(tmp_path),
            "warehouse": _resources(tmp_path)["warehouse"].model_copy(update={"url": "bigquery:proj.clin"}),
        }
    )
    for name in ("source_notes", "recognized_spans", "deidentified_notes", "release_summary"):
        node = _node(duck, name)
        assert node.kinds == {"duckdb"}, name
        assert _node(bq, name).kinds == {"bigquery"}, name
        assert node.owners == ["team:tide-data-engineering"]
        assert node.tags["tide/layer"] and node.code_version
        assert isinstance(node.metadata["dagster/column_schema"], dg.TableSchema)
    rel = _node(bq, "deidentified_notes")
    assert rel.metadata["dagster/table_name"] == "proj.clin.tide_deid_notes"
    assert _node(duck, "deidentified_notes").metadata["dagster/table_name"] == "wh.main.tide_deid_notes"
    cols = [c.name for c in rel.metadata["dagster/column_schema"].columns]
    assert cols == TABLES["deid_notes"].schema.names
    assert [c.name for c in _node(duck, "release_summary").metadata["dagster/column_schema"].columns] == (
        TABLES["releases"].schema.names
    )
    fresh = _node(duck, "release_summary").freshness_policy
    assert fresh is not None and fresh.fail_window.to_timedelta().total_seconds() == 50 * 3600
    assert all(_node(duck, n).freshness_policy is None for n in ("source_notes", "recognized_spans"))


def test_code_versions_follow_recognizers_and_anonymizer(tmp_path: Path):
    from tide_core.anonymize.engine import VERSION
    from tide_etl import build_defs
    from tide_etl.resources import TideConfigResource

    rules = build_defs(_resources(tmp_path))
    other = build_defs({**_resources(tmp_path), "tide_config": TideConfigResource(preset="default")})
    assert _node(rules, "deidentified_notes").code_version.startswith(VERSION + "+")
    assert _node(rules, "recognized_spans").code_version != _node(other, "recognized_spans").code_version
    assert _node(rules, "source_notes").code_version == _node(other, "source_notes").code_version
    again = build_defs(_resources(tmp_path / "elsewhere"))  # paths do not make a new version
    assert _node(again, "recognized_spans").code_version == _node(rules, "recognized_spans").code_version


def test_definitions_load_without_a_trained_default_model_and_say_how_to_fix_it(tmp_path: Path, monkeypatch, caplog):
    """A fresh machine has no trained model yet: the code location still loads (UI, rules preset,
    partitions), the recognition assets' code version says the model is missing, and the log names
    the fix; a run that needs the model stops with E361 (tests/test_model_location)."""
    from tide_etl import build_defs
    from tide_etl.catalog import MISSING_MODEL
    from tide_etl.resources import TideConfigResource

    monkeypatch.setenv("TIDE_MODEL_DIR", str(tmp_path / "no-model-here"))
    with caplog.at_level("WARNING", logger="tide.etl"):
        defs = build_defs({**_resources(tmp_path), "tide_config": TideConfigResource(preset="default")})
    assert _node(defs, "recognized_spans").code_version == MISSING_MODEL
    assert _node(defs, "deidentified_notes").code_version == MISSING_MODEL
    assert any("E361" in r.getMessage() or "train-recognizer" in r.getMessage() for r in caplog.records)
    rules = build_defs(_resources(tmp_path))  # the rules preset needs no model and is unaffected
    assert _node(rules, "recognized_spans").code_version != MISSING_MODEL
    assert _node(defs, "source_notes").code_version == _node(rules, "source_notes").code_version


def test_one_partition_per_backfill_run():
    from tide_etl import build_defs

    defs = build_defs(_resources(Path("/nonexistent")))
    graph = defs.resolve_asset_graph()
    for key in graph.get_all_asset_keys():
        policy = graph.get(key).backfill_policy
        assert policy is not None and policy.max_partitions_per_run == 1, key


# -- the source partition is read once per run ------------------------------------------------


class ReadCounter:
    """Counts the warehouse's real reads of the notes table's rows, whole or streamed (the real
    read still runs); counts and id queries (``count``, ``duplicate_values``) are not row reads."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.n = 0
        read, stream = DuckDBWarehouse.read_table, DuckDBWarehouse.iter_batches

        def counting_read(wh, name, columns=None, where=None):  # type: ignore[no-untyped-def]
            self.n += name == "notes" and columns is None
            return read(wh, name, columns, where)

        def counting_stream(wh, name, columns=None, where=None, batch_rows=1000):  # type: ignore[no-untyped-def]
            self.n += name == "notes" and columns is None
            return stream(wh, name, columns, where, batch_rows)

        monkeypatch.setattr(DuckDBWarehouse, "read_table", counting_read)
        monkeypatch.setattr(DuckDBWarehouse, "iter_batches", counting_stream)

    def take(self) -> int:
        n, self.n = self.n, 0
        return n


def _run(defs: dg.Definitions, instance: dg.DagsterInstance, job: str, partition: object) -> dg.ExecuteInProcessResult:
    return defs.resolve_job_def(job).execute_in_process(
        partition_key=partition, instance=instance, raise_on_error=False
    )


def test_a_release_run_reads_its_source_partition_once(warehouse_dir: Path, monkeypatch):
    from tide_etl import build_defs
    from tide_etl.partitions import release_key

    counter = ReadCounter(monkeypatch)
    before = build_defs(_resources(warehouse_dir, source_tables=[]))  # no run-scoped reads: today's behaviour
    after = build_defs(_resources(warehouse_dir))
    reads: dict[str, dict[str, int]] = {}
    released: dict[str, list] = {}
    for name, defs in (("before", before), ("after", after)):
        with dg.DagsterInstance.ephemeral() as instance:
            instance.add_dynamic_partitions("study", [S])
            instance.add_dynamic_partitions("key", [K])
            counter.take()
            assert _run(defs, instance, "recognition_job", S).success
            rec = counter.take()
            r = _run(defs, instance, "release_job", release_key(S, K))
            rel = counter.take()
            steps = {e.step_key for e in r.all_events if e.event_type_value == "STEP_SUCCESS"}
            assert len(steps) == 4, steps  # deidentified_notes, the 5 checks in one step, release_summary, views
            reads[name] = {"recognition": rec, "release": rel}
        with open_warehouse(f"duckdb:{warehouse_dir / 'wh.duckdb'}") as wh:
            released[name] = sorted(
                (r["note_id"], r["text"]) for r in wh.read_table("tide_deid_notes", ["note_id", "text"]).to_pylist()
            )
            status = wh.read_table("tide_releases", ["status"]).column("status").to_pylist()
        assert status == ["awaiting_audit"]
    print(f"\nsource partition reads per run: {reads}")
    assert reads["before"]["release"] > 1 and reads["before"]["recognition"] > 1
    assert reads["after"] == {"recognition": 1, "release": 1}
    assert released["before"] == released["after"]  # same release, fewer reads


def test_source_reads_are_forgotten_when_the_source_is_written(warehouse_dir: Path):
    """Outside a run every open reads afresh; inside one, a write to the source drops what was kept."""
    from tide_etl.resources import WarehouseResource

    res = WarehouseResource(url=f"duckdb:{warehouse_dir / 'wh.duckdb'}")
    with res.open() as wh:
        assert wh.read_table("notes").num_rows == len(NOTES)
        wh.append("notes", pa.Table.from_pylist([dict(NOTES[0], note_id="z")]))
        assert wh.read_table("notes").num_rows == len(NOTES) + 1
    with res.open() as wh:
        assert wh.read_table("notes").num_rows == len(NOTES) + 1
    assert TideConfig.preset("rules").tables.notes in res.source_tables
