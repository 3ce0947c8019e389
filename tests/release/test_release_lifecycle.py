"""The release lifecycle in Dagster (write, verify, gate, publish), in process, on DuckDB.

A release passes its checks and its gate and is published as version v1; after a recognizer
miss, ``release_job`` re-runs for the same partition, the new candidate leaks a name,
``no_surface_survives`` fails and ``release_summary`` is skipped.  Researchers read the
published version (``released_notes`` in the researcher store, a separate DuckDB file): they
never see the leaked name and keep v1, unchanged, while a re-release is written, blocked or
awaiting audit; ``tide_releases`` never says the leaking candidate passed.

One small study is recognized once (module fixture), and published as v1 once (``Env.publish``,
checked there); each test works on its own copy of one of those warehouses with a fresh Dagster
instance.
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pytest

from tests.release_helpers import audit_every_frame, researchers_see
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.config import TideConfig
from tide_core.errors import InputError
from tide_core.io.open import open_warehouse
from tide_core.release import evidence
from tide_core.store.span_cache import SpanCache

warnings.filterwarnings("ignore", category=dg.BetaWarning)
warnings.filterwarnings("ignore", category=dg.PreviewWarning)

S, K = "s", "k"
NAME = "Stonebridge"
BASE = {"study": S, "site": "site1", "source": "ehr", "note_type": "progress"}
NOTES = [
    dict(
        BASE,
        note_id="a",
        patient_id="p1",
        note_date="2021-03-04",
        text=f"Maria {NAME} seen 03/04/2021 for follow-up. Maria {NAME} is stable.",
    ),
    dict(
        BASE, note_id="b", patient_id="p2", note_date="2021-03-05", text="Call 617-555-0100 re: Robert Ashdown, well."
    ),
]
NEW_NOTE = "Call 617-555-0111 on 03/06/2021: stable, no change."
PATIENTS = [
    {"patient_id": "p1", "first_name": "Maria", "last_name": NAME},
    {"patient_id": "p2", "first_name": "Robert", "last_name": "Ashdown"},
]


@pytest.fixture(scope="module")
def recognized(tmp_path_factory) -> Path:
    """A warehouse whose study is recognized (span cache filled) and a key secret."""
    from tide_core.runner import recognize_study

    root = tmp_path_factory.mktemp("lifecycle")
    with open_warehouse(f"duckdb:{root / 'wh.duckdb'}") as wh:
        wh.replace_table("notes", pa.Table.from_pylist(NOTES))
        wh.replace_table("patients", pa.Table.from_pylist(PATIENTS))
        recognize_study(wh, S, TideConfig.preset("rules"), progress=False)
    FileKeyProvider(root / "keys").create(S, K)
    return root


class Env:
    def __init__(self, base: Path, root: Path):
        from tide_etl import build_defs
        from tide_etl.resources import KeyProviderResource, ReleaseGateResource, TideConfigResource, WarehouseResource

        shutil.copy(base / "wh.duckdb", root / "wh.duckdb")
        if (base / "wh.released.duckdb").exists():  # the researcher store of a published copy
            shutil.copy(base / "wh.released.duckdb", root / "wh.released.duckdb")
        shutil.copytree(base / "keys", root / "keys")
        self.url = f"duckdb:{root / 'wh.duckdb'}"
        self.resources = {
            "warehouse": WarehouseResource(url=self.url),
            "tide_config": TideConfigResource(preset="rules"),
            "key_provider": KeyProviderResource(key_dir=str(root / "keys")),
            "gate": ReleaseGateResource(),
        }
        self.config = TideConfig.preset("rules")
        self.defs = build_defs(self.resources)
        self.instance = dg.DagsterInstance.ephemeral()
        self.instance.add_dynamic_partitions("study", [S])
        self.instance.add_dynamic_partitions("key", [K])

    def wh(self):
        return open_warehouse(self.url)

    def run(self, job: str = "release_job"):
        from tide_etl.partitions import release_key

        return self.defs.resolve_job_def(job).execute_in_process(
            partition_key=release_key(S, K), instance=self.instance, raise_on_error=False
        )

    def audit(self, leaks: int = 0):
        """A reviewer audits the content no round covers yet: one round per frame (a census here)."""
        with self.wh() as wh:
            return audit_every_frame(wh, self.config, S, K, leaks=leaks)

    def researchers_see(self) -> list[dict]:
        """What a researcher reads: released_notes in the researcher store."""
        with self.wh() as wh:
            return researchers_see(wh, S, K)

    def candidate(self) -> list[dict]:
        """The candidate anonymization wrote (operators only; researchers never read it)."""
        with self.wh() as wh:
            return wh.read_table("tide_deid_notes", where={"study": S, "key": K}).to_pylist()

    def release_row(self) -> dict:
        with self.wh() as wh:
            return wh.read_table("tide_releases", where={"study": S, "key": K}).to_pylist()[0]

    def publish(self) -> list[dict]:
        """First release, audit, re-verification: the release is published as v1; what researchers see."""
        self.run()
        self.audit()
        r = self.run("release_checks_job")
        assert r.success, checks(r)
        row = self.release_row()
        assert row["gate_passed"] is True and (row["status"], row["published_version"]) == ("published", "v1")
        seen = self.researchers_see()
        assert len(seen) == 2 and _leaks(seen) == 0 and {r["version"] for r in seen} == {"v1"}
        return seen

    def add_a_note(self) -> None:
        """A nightly increment: one new source note, recognized (the release runs after recognition)."""
        from tide_core.runner import recognize_study

        note = dict(BASE, note_id="c", patient_id="p3", note_date="2021-03-06", text=NEW_NOTE)
        with self.wh() as wh:
            wh.append("notes", pa.Table.from_pylist([note]))
            recognize_study(wh, S, self.config, progress=False)

    def miss_the_repeat_mention(self):
        """A recognizer miss: the second mention of the patient's name is no longer a span."""
        with self.wh() as wh:
            cache = SpanCache(wh, self.config.tables)
            note = next(n for n in _notes(wh, self.config) if n.note_id == "a")
            second = max((s for s in cache.spans(S, ["a"])["a"] if s.label == "PATIENT"), key=lambda s: s.start)
            assert note.text[second.start : second.end] == f"Maria {NAME}"
            cache.add_review(S, note, second.start, second.end, second.label, "reject")
            return note, second


def _notes(wh, config):
    from tide_core.engine.study_input import read_study_input

    return read_study_input(wh, S, config).notes


def checks(result) -> dict[str, tuple[bool, str, dict]]:
    out = {}
    for e in result.all_events:
        if e.event_type_value == "ASSET_CHECK_EVALUATION":
            d = e.event_specific_data
            out[d.check_name] = (d.passed, d.severity.value, {k: v.value for k, v in d.metadata.items()})
    return out


def _leaks(rows: list[dict]) -> int:
    return sum(NAME.casefold() in (r["text"] or "").casefold() for r in rows)


@pytest.fixture
def env(recognized, tmp_path):
    e = Env(recognized, tmp_path)
    yield e
    e.instance.dispose()


@pytest.fixture(scope="module")
def published_base(recognized, tmp_path_factory) -> tuple[Path, list[dict]]:
    """The study after ``Env.publish`` (its first release published as v1), and what researchers see."""
    root = tmp_path_factory.mktemp("published")
    e = Env(recognized, root)
    try:
        return root, e.publish()
    finally:
        e.instance.dispose()


@pytest.fixture
def published(published_base, tmp_path):
    """An Env on a copy of the published study (warehouse, researcher store, keys), and v1."""
    base, v1 = published_base
    e = Env(base, tmp_path)
    assert e.researchers_see() == v1
    yield e, v1
    e.instance.dispose()


def test_a_leaking_re_release_never_reaches_researchers(published: tuple[Env, list[dict]]):
    env, v1 = published

    env.miss_the_repeat_mention()
    r = env.run()  # the re-release: the new candidate leaks the name, the surface checks block it
    assert not r.success
    assert checks(r)["no_surface_survives"][0] is False
    assert checks(r)["known_phi_survives"][0] is False  # the name is the patient's, in the patients table
    assert _leaks(env.candidate()) == 1  # the leak is in the candidate (what the checks found) ...
    assert env.researchers_see() == v1  # ... researchers keep the version published before, unchanged
    row = env.release_row()
    assert row["gate_passed"] is False and row["status"] == "blocked" and row["published_version"] == "v1"
    assert "no_surface_survives" in row["gate_reasons"] and NAME not in row["gate_reasons"]


def test_the_repaired_re_release_is_published_again(published: tuple[Env, list[dict]]):
    env, v1 = published
    note, second = env.miss_the_repeat_mention()
    assert not env.run().success
    with env.wh() as wh:  # the reviewer undoes the wrong decision; the release reruns
        SpanCache(wh, env.config.tables).undo_review(S, note.note_id, second.start, second.end, second.label)
    r = env.run()
    assert r.success, checks(r)
    # the repaired candidate is the audited content of v1 again: published, as v1, no new version
    row = env.release_row()
    assert (row["status"], row["gate_passed"], row["published_version"]) == ("published", True, "v1")
    assert env.researchers_see() == v1 and _leaks(env.candidate()) == 0


def test_researchers_keep_the_published_version_while_the_candidate_is_rewritten(published: tuple[Env, list[dict]]):
    """A candidate written by an anonymization run that no check has seen (here: the engine called
    directly, as ``tide run`` does) never shows: researchers read the published version only."""
    from tide_core.runner import anonymize_study

    env, v1 = published
    env.miss_the_repeat_mention()
    with env.wh() as wh:
        anonymize_study(
            wh, S, K, FileKeyProvider(Path(env.resources["key_provider"].key_dir)), env.config, progress=False
        )
    assert _leaks(env.candidate()) == 1
    assert env.researchers_see() == v1
    row = env.release_row()  # the row still names the verified, published content only
    assert (row["status"], row["published_version"]) == ("published", "v1")


def test_release_summary_alone_does_not_publish_unchecked_rows(published: tuple[Env, list[dict]]):
    env, v1 = published
    env.miss_the_repeat_mention()
    from tide_core.runner import anonymize_study

    with env.wh() as wh:
        anonymize_study(
            wh, S, K, FileKeyProvider(Path(env.resources["key_provider"].key_dir)), env.config, progress=False
        )
    from tide_etl.partitions import release_key

    r = dg.materialize(
        [a for a in env.defs.assets if dg.AssetKey("release_summary") in getattr(a, "keys", ())],
        partition_key=release_key(S, K),
        instance=env.instance,
        resources=env.resources,
        raise_on_error=False,
    )
    assert not r.success  # it recorded a blocked decision, then failed its step: the partition shows failed
    row = env.release_row()
    assert row["status"] == "blocked" and row["gate_passed"] is False and row["published_version"] == "v1"
    assert "no_surface_survives" in row["gate_reasons"]
    assert env.researchers_see() == v1


def test_a_first_release_awaiting_audit_is_a_warning_not_a_failed_run(env: Env):
    r = env.run()
    assert r.success, checks(r)
    passed, severity, md = checks(r)["release_gate"]
    assert passed is False and severity == "WARN" and md["status"] == "awaiting_audit"
    assert md["awaiting_audit"] is True
    assert all(checks(r)[c][:2] == (True, "ERROR") for c in ("rows_accounted", "no_surface_survives"))
    row = env.release_row()
    assert row["status"] == "awaiting_audit" and row["gate_passed"] is False and row["published_version"] is None
    assert env.researchers_see() == []  # not published before its audit


def test_a_leak_found_by_the_audit_is_an_error_that_blocks_publish(env: Env):
    env.run()
    plans = env.audit(leaks=1)  # a census of the one frame (2 patients) finds one leaking patient
    assert [(p.n_patients, p.sample_size) for p in plans] == [(2, 2)]
    r = env.run("release_checks_job")
    assert not r.success
    passed, severity, md = checks(r)["release_gate"]
    assert passed is False and severity == "ERROR" and md["awaiting_audit"] is False
    assert "1 leaks in 2 patients" in md["reasons"]
    assert env.release_row()["status"] == "blocked"
    assert env.researchers_see() == []
    # no redraw of the same content (the failed round is never outweighed): it has to be re-made
    with env.wh() as wh:
        with pytest.raises(InputError) as e:
            evidence.record_round(wh, env.config.tables, S, K, plans[0].frame_id, 2, 0, reviewer="test")
        assert e.value.code == "E769"
        with pytest.raises(InputError) as e:
            audit_every_frame(wh, env.config, S, K, everything=True)
        assert e.value.code == "E769"


def test_a_re_release_awaits_the_audit_of_its_new_content_and_then_publishes_a_new_version(
    published: tuple[Env, list[dict]],
):
    """A nightly increment: the new note is a batch of its own that no round covers, so the
    re-release awaits audit and researchers keep v1; the earlier notes keep their evidence, and
    once the new note's frame is audited the release is published as v2."""
    env, v1 = published
    env.add_a_note()
    r = env.run()
    assert r.success, checks(r)
    passed, severity, md = checks(r)["release_gate"]
    assert (passed, severity, md["status"]) == (False, "WARN", "awaiting_audit")
    assert (md["n_batches"], md["n_batches_unaudited"]) == (2, 1)
    row = env.release_row()
    assert (row["status"], row["published_version"]) == ("awaiting_audit", "v1")
    assert env.researchers_see() == v1  # awaiting audit publishes nothing
    plans = env.audit()  # only the new content is planned
    assert [(p.n_notes, p.n_patients) for p in plans] == [(1, 1)]
    r = env.run("release_checks_job")
    assert r.success, checks(r)
    seen = env.researchers_see()
    assert len(seen) == 3 and {r["version"] for r in seen} == {"v2"} and _leaks(seen) == 0
    assert {r["note_ref"] for r in v1} < {r["note_ref"] for r in seen}
    assert env.release_row()["published_version"] == "v2"


def test_a_leak_in_a_re_releases_new_content_blocks_it_and_researchers_keep_the_previous_version(
    published: tuple[Env, list[dict]],
):
    env, v1 = published
    env.add_a_note()
    assert env.run().success  # awaiting the audit of the new note
    env.audit(leaks=1)
    r = env.run("release_checks_job")
    assert not r.success
    passed, severity, md = checks(r)["release_gate"]
    assert (passed, severity, md["awaiting_audit"]) == (False, "ERROR", False)
    row = env.release_row()
    assert (row["status"], row["published_version"]) == ("blocked", "v1")
    assert env.researchers_see() == v1


def test_a_drift_band_is_an_error_that_blocks_publish(published: tuple[Env, list[dict]]):
    import datetime as dt
    import json

    from tide_core.assurance.drift_table import DRIFT
    from tide_core.assurance.drift_table import TABLE_NAME as DRIFT_TABLE

    env, v1 = published
    row = {
        "study": S,
        "key": K,
        "band": "drift",
        "n_docs": 2,
        "low_confidence": False,
        "worst_component": "mix",
        "worst_band": "drift",
        "n_components": 1,
        "reference_name": "ref",
        "checked_at": dt.datetime.now(dt.UTC),
        "result_json": json.dumps({"band": "drift"}),
    }
    with env.wh() as wh:
        wh.append(DRIFT_TABLE, pa.Table.from_pylist([row], schema=DRIFT))
    r = env.run("release_checks_job")
    assert not r.success
    passed, severity, md = checks(r)["release_gate"]
    assert passed is False and severity == "ERROR" and md["awaiting_audit"] is False
    assert "drift monitor band is 'drift'" in md["reasons"]
    row = env.release_row()
    assert (row["status"], row["published_version"]) == ("blocked", "v1")
    assert env.researchers_see() == v1  # what was published before the drift verdict stays


def test_an_edit_of_the_candidate_after_publication_never_reaches_researchers(published: tuple[Env, list[dict]]):
    """Published content is a copy of its own, written once: an edit of the candidate table (by
    hand, or a bug) changes nothing researchers read, and re-verification blocks the candidate."""
    env, v1 = published
    with env.wh() as wh:
        wh.sql(
            "UPDATE tide_deid_notes SET text = text || ' ' || ? WHERE study = ? AND key = ? AND note_id = 'a'",
            [f"Maria {NAME}", S, K],
        )
    assert _leaks(env.candidate()) == 1
    assert env.researchers_see() == v1
    r = env.run("release_checks_job")
    assert not r.success and checks(r)["no_surface_survives"][0] is False
    row = env.release_row()
    assert (row["status"], row["published_version"]) == ("blocked", "v1")
    assert env.researchers_see() == v1


def test_an_old_releases_table_gains_the_lifecycle_columns(env: Env):
    from tide_core.release.lifecycle import RELEASES

    lifecycle = ("status", "released_at", "content_fingerprint", "published_version", "gate_policy", "gate_approval")
    old = pa.schema([f for f in RELEASES if f.name not in lifecycle])
    with env.wh() as wh:
        wh.replace_table("tide_releases", old.empty_table())
    env.publish()
    row = env.release_row()
    assert (
        row["status"] == "published" and row["content_fingerprint"] and row["gate_policy"].startswith("tide-default@")
    )


# -- pools and retries ----------------------------------------------------------------------


def test_every_warehouse_step_is_in_the_pool_with_transient_retries():
    from tide_etl import defs
    from tide_etl.retry import POOL

    graph = defs.resolve_asset_graph()
    for key in graph.get_all_asset_keys():
        assert graph.get(key).pools == {POOL}, key
    job = defs.resolve_job_def("release_job")
    for node in job.graph.node_dict.values():
        assert node.definition.pool == POOL, node.name
        policy = node.definition.retry_policy
        assert policy is not None and policy.backoff == dg.Backoff.EXPONENTIAL, node.name
    import yaml

    instance_yaml = yaml.safe_load((Path(__file__).parents[2] / "dagster_home" / "dagster.yaml").read_text())
    assert instance_yaml["concurrency"]["pools"]["default_limit"] == 1


@pytest.mark.parametrize(
    "exc,transient",
    [
        ("lock", True),
        ("E303", True),
        ("terminal", False),
        ("not_terminal", True),
        ("value", False),
        ("timeout", True),
    ],
)
def test_only_transient_errors_are_retried(exc, transient):
    import duckdb

    from tide_core.errors import InputError, WarehouseError
    from tide_etl.retry import is_transient, transient_only

    error = {
        "lock": duckdb.IOException('Could not set lock on file "x.duckdb": Conflicting lock is held'),
        "E303": WarehouseError("E303", "cannot open DuckDB file x: IOException"),
        "terminal": InputError("E200", "bad row"),
        "not_terminal": WarehouseError("E300", "network", terminal=False),
        "value": ValueError("bad value"),
        "timeout": TimeoutError(),
    }[exc]
    assert is_transient(error) is transient
    with pytest.raises(type(error) if transient else dg.Failure) as raised:
        with transient_only():
            raise error
    if not transient:
        assert raised.value.allow_retries is False
        assert "bad value" not in raised.value.description  # only TIDE's coded messages are echoed


def _release_in_a_process(root: str, home: str, key: str) -> tuple[bool, list]:
    """One run of release_job for (S, key) in its own process, on the instance of ``home``."""
    import dagster as dg

    from tide_etl import build_defs
    from tide_etl.partitions import release_key
    from tide_etl.resources import KeyProviderResource, ReleaseGateResource, TideConfigResource, WarehouseResource

    warnings.filterwarnings("ignore")
    defs = build_defs(
        {
            "warehouse": WarehouseResource(url=f"duckdb:{Path(root) / 'wh.duckdb'}"),
            "tide_config": TideConfigResource(preset="rules"),
            "key_provider": KeyProviderResource(key_dir=str(Path(root) / "keys")),
            "gate": ReleaseGateResource(),
        }
    )
    with dg.DagsterInstance.from_config(home) as instance:
        r = defs.resolve_job_def("release_job").execute_in_process(
            partition_key=release_key(S, key), instance=instance, raise_on_error=False
        )
        starts, intervals = {}, []
        for entry in instance.all_logs(r.run_id):
            e = entry.dagster_event
            if e is None:
                continue
            if e.event_type_value in ("STEP_START", "STEP_RESTARTED"):
                starts[e.step_key] = entry.timestamp
            elif e.event_type_value in ("STEP_SUCCESS", "STEP_FAILURE", "STEP_UP_FOR_RETRY"):
                intervals.append((starts[e.step_key], entry.timestamp, key, e.step_key, e.event_type_value))
        return r.success, intervals


def test_a_multi_partition_backfill_runs_one_warehouse_step_at_a_time(recognized, tmp_path):
    """Three (study, key) partitions launched at once in three processes, as a UI backfill
    launches one run per partition, on an instance configured by dagster_home/dagster.yaml:
    every run succeeds and no step fails or is retried on the DuckDB file's lock.

    Their steps claim the one-slot tide_warehouse pool, but on the SQLite instance storage the
    pool is not a reliable mutex when three processes claim it at the same instant (CI once saw
    three steps start within 10 ms and two fail with E303).  One writer at a time is therefore
    the warehouse's own doing: opening a DuckDB file another process holds waits for it
    (tests/io/test_duckdb_lock_wait.py), so no run needs a retry, whatever the pool did."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    shutil.copy(recognized / "wh.duckdb", tmp_path / "wh.duckdb")
    shutil.copytree(recognized / "keys", tmp_path / "keys")
    keys = ["k1", "k2", "k3"]
    provider = FileKeyProvider(tmp_path / "keys")
    for k in keys:
        provider.create(S, k)
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(Path(__file__).parents[2] / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(home)) as instance:
        instance.add_dynamic_partitions("study", [S])
        instance.add_dynamic_partitions("key", keys)
    # forked, not spawned: each run is its own process with its own DuckDB connection and instance,
    # without three fresh interpreters importing Dagster and loading the recognizers again
    with ProcessPoolExecutor(len(keys), mp_context=multiprocessing.get_context("fork")) as pool:
        futures = {k: pool.submit(_release_in_a_process, str(tmp_path), str(home), k) for k in keys}
        results = {k: f.result(timeout=600) for k, f in futures.items()}
    assert {k: ok for k, (ok, _) in results.items()} == {k: True for k in keys}
    intervals = sorted(i for _, iv in results.values() for i in iv)
    # one attempt per step, per run: deidentified_notes, its 5 checks (one step), release_summary, the views
    assert len(intervals) == 3 * 4, [(i[2], i[3], i[4]) for i in intervals]
    assert {i[4] for i in intervals} == {"STEP_SUCCESS"}, [(i[2], i[3], i[4]) for i in intervals]
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert instance.event_log_storage.get_concurrency_info("tide_warehouse").slot_count == 1
    with open_warehouse(f"duckdb:{tmp_path / 'wh.duckdb'}") as wh:
        status = {r["key"]: r["status"] for r in wh.read_table("tide_releases").to_pylist()}
    assert status == {k: "awaiting_audit" for k in keys}


def test_the_gate_is_evaluated_once_per_release_run(env: Env, monkeypatch):
    """release_summary evaluates the gate; the release_gate check reports that decision."""
    from tide_core.release import lifecycle

    calls: list[tuple[str, str]] = []
    real = lifecycle.gate

    def counted(wh, config, study, key, *args, **kwargs):
        calls.append((study, key))
        return real(wh, config, study, key, *args, **kwargs)

    monkeypatch.setattr(lifecycle, "gate", counted)
    env.run()
    env.audit()
    r = env.run("release_checks_job")
    assert r.success, checks(r)
    assert calls == [(S, K), (S, K)]  # one evaluation per run, two runs
    passed, severity, md = checks(r)["release_gate"]
    assert passed is True and md["passed"] is True and md["status"] == "published"
    assert (md["n_batches"], md["n_batches_unaudited"], md["n_rounds_counted"]) == (1, 0, 1)
    assert md["published_version"] == "v1" and md["worst_upper_bound"] == 0.0  # a census with no leak
