"""TIDE's Dagster code location on the production instance file with real PostgreSQL storage.

``infra/dagster/dagster.yaml`` is copied unchanged into a fresh ``DAGSTER_HOME``; its storage
reads ``DAGSTER_PG_*`` from the environment, which point at a new database of the server of
tests/postgres_instance.py (the one ``.ci/run`` starts, or a throwaway cluster).  Against it:
the definitions load as a code location, a release run is recorded, a backfill's runs wait for
the ``tide_warehouse`` pool slots the file allows, and a tick of the nightly schedule is stored.
Every check reads back from PostgreSQL, through a new instance or with SQL.

Kept small: one study of three notes recognized beforehand with the ``rules`` preset.
"""

from __future__ import annotations

import datetime as dt
import logging
import multiprocessing
import os
import shutil
import time
import uuid
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import dagster as dg
import dagster._daemon  # before dagster._scheduler, which cannot be imported first (an import cycle)
import psycopg2
import pyarrow as pa
import pytest
import yaml
from dagster._core.remote_origin import InProcessCodeLocationOrigin
from dagster._core.scheduler.instigation import TickStatus
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._core.workspace.load_target import InProcessWorkspaceLoadTarget
from dagster._scheduler.scheduler import launch_scheduled_runs
from dagster_postgres import PostgresEventLogStorage, PostgresRunStorage, PostgresScheduleStorage

import tide_etl.definitions
from postgres_instance import PgServer, pg_database, postgres_server  # noqa: F401 - fixtures
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.config import TideConfig
from tide_core.io.open import open_warehouse
from tide_core.runner import recognize_study
from tide_etl import build_defs
from tide_etl.partitions import release_key
from tide_etl.resources import KeyProviderResource, ReleaseGateResource, TideConfigResource, WarehouseResource

warnings.filterwarnings("ignore", category=dg.BetaWarning)
warnings.filterwarnings("ignore", category=dg.PreviewWarning)

ROOT = Path(__file__).resolve().parents[2]
PROD = ROOT / "infra" / "dagster" / "dagster.yaml"
POOL = "tide_warehouse"
S = "s"
KEYS = ["k1", "k2"]
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


def _sql(server: PgServer, db: str, query: str, args: tuple = ()) -> list[tuple]:
    """Rows of ``query`` read straight from PostgreSQL (not through Dagster)."""
    conn = psycopg2.connect(server.url(db))
    try:
        with conn.cursor() as cur:
            cur.execute(query, args)
            return cur.fetchall()
    finally:
        conn.close()


@pytest.fixture
def pg_home(tmp_path: Path, postgres_server: PgServer, pg_database: str, monkeypatch) -> Path:  # noqa: F811
    """DAGSTER_HOME with the production dagster.yaml, its DAGSTER_PG_* set to a new database."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(PROD, home / "dagster.yaml")
    for name, value in postgres_server.env(pg_database).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    return home


@pytest.fixture(scope="module")
def recognized(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The study's DuckDB warehouse, recognized once for the module (each test gets a copy)."""
    root = tmp_path_factory.mktemp("recognized")
    with open_warehouse(f"duckdb:{root / 'wh.duckdb'}") as wh:
        wh.replace_table("notes", pa.Table.from_pylist(NOTES))
        wh.replace_table("patients", pa.Table.from_pylist(PATIENTS))
        recognize_study(wh, S, TideConfig.preset("rules"), progress=False)
    return root


@pytest.fixture
def study(tmp_path: Path, pg_home: Path, recognized: Path, monkeypatch) -> Path:
    """A recognized study of three notes in a DuckDB warehouse, a key secret per key, the
    partitions in the instance, and the code location's TIDE_* settings pointing at them."""
    for f in recognized.glob("wh.duckdb*"):  # the file (and a write-ahead log, if one was left)
        shutil.copy(f, tmp_path / f.name)
    keys = FileKeyProvider(tmp_path / "keys")
    for k in KEYS:
        keys.create(S, k)
    with dg.DagsterInstance.from_config(str(pg_home)) as instance:
        instance.add_dynamic_partitions("study", [S])
        instance.add_dynamic_partitions("key", KEYS)
    monkeypatch.setenv("TIDE_WAREHOUSE", f"duckdb:{tmp_path / 'wh.duckdb'}")
    monkeypatch.setenv("TIDE_KEY_DIR", str(tmp_path / "keys"))
    monkeypatch.setenv("TIDE_PRESET", "rules")
    return tmp_path


def _defs(root: Path) -> dg.Definitions:
    return build_defs(
        {
            "warehouse": WarehouseResource(url=f"duckdb:{root / 'wh.duckdb'}"),
            "tide_config": TideConfigResource(preset="rules"),
            "key_provider": KeyProviderResource(key_dir=str(root / "keys")),
            "gate": ReleaseGateResource(),
        }
    )


def _step_intervals(instance: dg.DagsterInstance, run_id: str) -> list[tuple[float, float, str, str, str]]:
    """(start, end, step, how it ended, run) of every step attempt of a run, from the event log."""
    starts: dict[str, float] = {}
    out = []
    for entry in instance.all_logs(run_id):
        e = entry.dagster_event
        if e is None:
            continue
        if e.event_type_value in ("STEP_START", "STEP_RESTARTED"):
            starts[e.step_key] = entry.timestamp
        elif e.event_type_value in ("STEP_SUCCESS", "STEP_FAILURE", "STEP_UP_FOR_RETRY"):
            out.append((starts[e.step_key], entry.timestamp, e.step_key, e.event_type_value, run_id))
    return out


# -- the server ----------------------------------------------------------------------------------


def test_the_server_is_postgresql_15_and_ci_does_not_skip(postgres_server: PgServer):  # noqa: F811
    """Where CI_REQUIRE_POSTGRES=1 (.ci/run) the tests ran against the server .ci/run started."""
    (version,) = _sql(postgres_server, postgres_server.db, "SHOW server_version")[0]
    assert version.startswith("15."), version
    if os.environ.get("CI_REQUIRE_POSTGRES") == "1":
        assert postgres_server.source == "env" and os.environ.get("TIDE_TEST_PG_URL"), postgres_server


# -- definitions ---------------------------------------------------------------------------------


def test_the_code_location_loads_on_the_production_instance(
    study: Path,
    pg_home: Path,
    postgres_server: PgServer,  # noqa: F811
    pg_database: str,  # noqa: F811
    monkeypatch,
):
    """``tide_etl.defs`` loads as a code location on the instance of the production file: its
    storage is PostgreSQL, runs are queued, the pool limit is the file's, partitions persist."""
    monkeypatch.setattr(tide_etl.definitions, "_DEFS", None)  # built now, from this test's TIDE_* settings
    prod = yaml.safe_load(PROD.read_text())
    with dg.DagsterInstance.from_config(str(pg_home)) as instance:
        assert isinstance(instance.run_storage, PostgresRunStorage)
        assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
        assert isinstance(instance.schedule_storage, PostgresScheduleStorage)
        assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
        info = instance.event_log_storage.get_concurrency_info(POOL)
        assert info.limit == prod["concurrency"]["pools"]["default_limit"]
        origin = InProcessCodeLocationOrigin(
            LoadableTargetOrigin(module_name="tide_etl", attribute="defs", working_directory=str(ROOT)),
            location_name="tide_etl",
        )
        with WorkspaceProcessContext(instance, InProcessWorkspaceLoadTarget(origin)) as workspace:
            entry = workspace.create_request_context().get_code_location_entries()["tide_etl"]
            assert entry.load_error is None, entry.load_error
            repo = entry.code_location.get_repository("__repository__")
            jobs = {j.name for j in repo.get_all_jobs()}
            assert {"release_job", "recognition_job"} <= jobs, jobs
            assert "nightly_release_schedule" in {s.name for s in repo.get_schedules()}
            assets = {k.to_user_string() for k in repo.asset_graph.get_all_asset_keys()}
            assert {"deidentified_notes", "release_summary"} <= assets, assets
    # the partitions were written through one instance and are rows of the PostgreSQL database
    rows = _sql(postgres_server, pg_database, "SELECT partitions_def_name, partition FROM dynamic_partitions")
    assert sorted(rows) == sorted([("study", S)] + [("key", k) for k in KEYS])


# -- a release run --------------------------------------------------------------------------------


def test_a_release_run_is_recorded_in_postgres(
    study: Path,
    pg_home: Path,
    postgres_server: PgServer,  # noqa: F811
    pg_database: str,  # noqa: F811
):
    """release_job for one (study, key) partition succeeds; its run, materialization and check
    results are in PostgreSQL, and the release waits for its audit."""
    with dg.DagsterInstance.from_config(str(pg_home)) as instance:
        r = (
            _defs(study)
            .resolve_job_def("release_job")
            .execute_in_process(partition_key=release_key(S, KEYS[0]), instance=instance, raise_on_error=False)
        )
    assert r.success
    partition = f"{KEYS[0]}|{S}"
    with dg.DagsterInstance.from_config(str(pg_home)) as instance:  # a new instance: read back
        run = instance.get_run_by_id(r.run_id)
        assert run is not None and run.status == dg.DagsterRunStatus.SUCCESS
        assert run.tags["dagster/partition"] == partition
        mats = instance.fetch_materializations(dg.AssetKey("deidentified_notes"), limit=10).records
        assert [m.partition_key for m in mats] == [partition]
        steps = [i[2] for i in _step_intervals(instance, r.run_id)]
        assert len(steps) == len(set(steps)) and {"deidentified_notes", "release_summary"} <= set(steps), steps
    assert _sql(postgres_server, pg_database, "SELECT status FROM runs WHERE run_id = %s", (r.run_id,)) == [
        ("SUCCESS",)
    ]
    checks = _sql(
        postgres_server,
        pg_database,
        "SELECT check_name, execution_status FROM asset_check_executions WHERE run_id = %s",
        (r.run_id,),
    )
    assert {"rows_accounted", "no_surface_survives"} <= {name for name, _ in checks}, checks
    with open_warehouse(f"duckdb:{study / 'wh.duckdb'}") as wh:
        status = {row["key"]: row["status"] for row in wh.read_table("tide_releases").to_pylist()}
    assert status == {KEYS[0]: "awaiting_audit"}


# -- a backfill and the pool ----------------------------------------------------------------------


def _release_in_a_process(root: str, home: str, key: str, tag: str) -> tuple[bool, str]:
    """One run of release_job for (S, key) in its own process, as a backfill launches one run per
    partition, on the instance of ``home`` (DAGSTER_PG_* come with the environment)."""
    warnings.filterwarnings("ignore")
    with dg.DagsterInstance.from_config(home) as instance:
        r = (
            _defs(Path(root))
            .resolve_job_def("release_job")
            .execute_in_process(
                partition_key=release_key(S, key), instance=instance, raise_on_error=False, tags={BACKFILL_TAG: tag}
            )
        )
        return r.success, r.run_id


BACKFILL_TAG = "tide/test-backfill"


def _started_steps(instance: dg.DagsterInstance, run_ids: list[str]) -> list[str]:
    return [
        e.dagster_event.step_key
        for run_id in run_ids
        for e in instance.all_logs(run_id)
        if e.dagster_event is not None and e.dagster_event.event_type_value == "STEP_START"
    ]


def test_a_backfill_waits_for_the_pool_slots_of_the_production_file(study: Path, pg_home: Path):
    """With every slot of the ``tide_warehouse`` pool (the file's ``default_limit``) held, a
    backfill's release runs start and wait: no step starts until the slots are freed; then every
    run succeeds with each step done once, never more steps at once than the limit."""
    limit = yaml.safe_load(PROD.read_text())["concurrency"]["pools"]["default_limit"]
    holder = f"holder-{uuid.uuid4()}"
    tag = str(uuid.uuid4())
    with dg.DagsterInstance.from_config(str(pg_home)) as instance:
        storage = instance.event_log_storage
        assert storage.initialize_concurrency_limit_to_default(POOL)  # as a step's first claim does
        for i in range(limit):
            assert storage.claim_concurrency_slot(POOL, holder, f"hold{i}").is_claimed
        info = storage.get_concurrency_info(POOL)
        assert info.slot_count == limit and len(info.claimed_slots) == limit
        with ProcessPoolExecutor(len(KEYS), mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = [pool.submit(_release_in_a_process, str(study), str(pg_home), k, tag) for k in KEYS]
            deadline = time.time() + 300
            while True:  # until every run has asked for a slot (or a step started without one)
                runs = instance.get_runs(filters=dg.RunsFilter(tags={BACKFILL_TAG: tag}))
                run_ids = [r.run_id for r in runs]
                pending = {p.run_id for p in storage.get_concurrency_info(POOL).pending_steps}
                started = _started_steps(instance, run_ids)
                if started or (len(runs) == len(KEYS) and pending >= set(run_ids)):
                    break
                assert time.time() < deadline and not any(f.done() for f in futures), (runs, pending)
                time.sleep(0.2)
            time.sleep(1.5)  # and they keep waiting
            assert _started_steps(instance, run_ids) == []
            assert {r.status for r in instance.get_runs(filters=dg.RunsFilter(tags={BACKFILL_TAG: tag}))} == {
                dg.DagsterRunStatus.STARTED
            }
            freed = time.time()
            storage.free_concurrency_slots_for_run(holder)
            results = [f.result(timeout=600) for f in futures]
    assert all(ok for ok, _ in results), results
    with dg.DagsterInstance.from_config(str(pg_home)) as instance:  # read back from PostgreSQL
        runs = instance.get_runs(filters=dg.RunsFilter(tags={BACKFILL_TAG: tag}))
        assert sorted(r.tags["dagster/partition"] for r in runs) == sorted(f"{k}|{S}" for k in KEYS)
        assert {r.status for r in runs} == {dg.DagsterRunStatus.SUCCESS}
        intervals = [i for r in runs for i in _step_intervals(instance, r.run_id)]
        assert instance.event_log_storage.get_concurrency_info(POOL).claimed_slots == []
    # every step of every run done once (none retried), all after the slots were freed
    assert {i[3] for i in intervals} == {"STEP_SUCCESS"}, intervals
    assert len({(i[4], i[2]) for i in intervals}) == len(intervals) >= len(KEYS) * 4, intervals
    assert min(i[0] for i in intervals) >= freed  # no step ran while the slots were held
    edges = sorted([(i[0], 1) for i in intervals] + [(i[1], -1) for i in intervals], key=lambda e: (e[0], e[1]))
    in_flight = peak = 0
    for _, d in edges:
        in_flight += d
        peak = max(peak, in_flight)
    assert peak <= limit


# -- a schedule tick ------------------------------------------------------------------------------


def test_a_nightly_schedule_tick_is_stored_in_postgres(
    study: Path,
    pg_home: Path,
    postgres_server: PgServer,  # noqa: F811
    pg_database: str,  # noqa: F811
    monkeypatch,
):
    """The scheduler evaluates the nightly schedule of the loaded code location at its next cron
    time: a new note makes it request one recognition run, queued by the QueuedRunCoordinator;
    the tick and the run are rows of the PostgreSQL database."""
    monkeypatch.setattr(tide_etl.definitions, "_DEFS", None)
    with open_warehouse(f"duckdb:{study / 'wh.duckdb'}") as wh:
        new = dict(BASE, note_id="d", patient_id="p1", note_date="2021-03-07", text="Maria Stonebridge called.")
        wh.replace_table("notes", pa.Table.from_pylist([*NOTES, new]))
    origin = InProcessCodeLocationOrigin(
        LoadableTargetOrigin(module_name="tide_etl", attribute="defs", working_directory=str(ROOT)),
        location_name="tide_etl",
    )
    with (
        dg.DagsterInstance.from_config(str(pg_home)) as instance,
        WorkspaceProcessContext(instance, InProcessWorkspaceLoadTarget(origin)) as workspace,
    ):
        entry = workspace.create_request_context().get_code_location_entries()["tide_etl"]
        schedule = entry.code_location.get_repository("__repository__").get_schedule("nightly_release_schedule")
        instance.start_schedule(schedule)
        now = dt.datetime.now(dt.UTC)
        tick_time = (now + dt.timedelta(days=1)).replace(hour=2, minute=0, second=0, microsecond=0)
        if tick_time - now > dt.timedelta(days=1):
            tick_time -= dt.timedelta(days=1)
        list(
            launch_scheduled_runs(
                workspace, logging.getLogger("test.scheduler"), tick_time + dt.timedelta(seconds=30), iteration_times={}
            )
        )
    with dg.DagsterInstance.from_config(str(pg_home)) as instance:  # a new instance: read back
        ticks = instance.get_ticks(schedule.get_remote_origin_id(), schedule.selector_id)
        assert [t.status for t in ticks] == [TickStatus.SUCCESS], [t.tick_data for t in ticks]
        assert ticks[0].timestamp == tick_time.timestamp()
        (run_id,) = ticks[0].run_ids
        run = instance.get_run_by_id(run_id)
        assert run is not None and run.job_name == "recognition_job"
        assert run.status == dg.DagsterRunStatus.QUEUED  # the daemon's run queue would launch it
        assert run.tags["tide/trigger"] == "nightly" and run.tags["tide/new_notes"] == "1"
        assert run.tags["dagster/partition"] == S
    assert _sql(postgres_server, pg_database, "SELECT status FROM runs WHERE run_id = %s", (run_id,)) == [("QUEUED",)]
    stored = _sql(postgres_server, pg_database, "SELECT status, type FROM job_ticks")
    assert stored == [("SUCCESS", "SCHEDULE")], stored
