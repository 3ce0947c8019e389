"""Release status where a data engineer looks: the partition status and the partitioned asset check
``release_gate`` that the Dagster instance records, for a published, an awaiting-audit and a blocked
(study, key) release, in process on DuckDB, read back through the instance API the UI reads.

The release study and its environment are those of tests/release/test_release_lifecycle.py (one small
recognized study, a fresh Dagster instance per test).
"""

from __future__ import annotations

import warnings

import dagster as dg
import pytest
from dagster._core.event_api import PartitionKeyFilter
from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionRecordStatus
from dagster._core.storage.partition_status_cache import AssetPartitionStatus
from test_release_lifecycle import Env, K, S, checks, recognized  # noqa: F401 - recognized: a fixture

from tide_etl.partitions import release_key, release_partitions

warnings.filterwarnings("ignore", category=dg.BetaWarning)
warnings.filterwarnings("ignore", category=dg.PreviewWarning)

SUMMARY = dg.AssetKey("release_summary")
GATE = dg.AssetCheckKey(SUMMARY, "release_gate")


@pytest.fixture
def env(recognized, tmp_path):  # noqa: F811 - the module fixture of tests/release/test_release_lifecycle.py
    e = Env(recognized, tmp_path)
    yield e
    e.instance.dispose()


def partition_status(e: Env) -> AssetPartitionStatus | None:
    key = str(release_key(S, K))
    status = e.instance.get_status_by_partition(SUMMARY, [key], release_partitions)
    assert status is not None
    return status[key]


def gate_record(e: Env):
    """The instance's latest release_gate evaluation of the partition: (status, severity, metadata)."""
    key = str(release_key(S, K))
    infos = e.instance.event_log_storage.get_asset_check_partition_info([GATE], partition_keys=[key])
    assert [i.partition_key for i in infos] == [key]
    records = e.instance.event_log_storage.get_asset_check_execution_history(
        GATE, limit=1, partition_filter=PartitionKeyFilter(key=key)
    )
    evaluation = records[0].event.asset_check_evaluation
    md = {k: v.value for k, v in evaluation.metadata.items()}
    return infos[0].latest_execution_status, evaluation.severity, md


def test_a_published_release_is_green(env: Env):
    env.publish()
    assert partition_status(env) == AssetPartitionStatus.MATERIALIZED
    status, severity, md = gate_record(env)
    assert status == AssetCheckExecutionRecordStatus.SUCCEEDED
    assert md["release_status"] == "published" and md["published_version"] == "v1"
    assert md["n_released"] == 2 and md["content_fingerprint"]
    assert env.release_row()["status"] == "published"


def test_awaiting_audit_is_a_warning_on_the_partition(env: Env):
    r = env.run()
    assert r.success  # awaiting audit is the normal state of new content: the run is green
    assert partition_status(env) == AssetPartitionStatus.MATERIALIZED
    status, severity, md = gate_record(env)
    assert status == AssetCheckExecutionRecordStatus.FAILED and severity == dg.AssetCheckSeverity.WARN
    assert md["release_status"] == "awaiting_audit" and md["published_version"] == "none"
    assert env.release_row()["status"] == "awaiting_audit"


def test_a_blocked_release_fails_its_partition_and_is_not_retried(env: Env):
    """A leak found by the audit: release_summary records ``blocked``, reports release_gate as an
    ERROR and fails its step once (no retry), so the partition shows failed; the failure's
    metadata is counts and ids."""
    env.publish()
    assert partition_status(env) == AssetPartitionStatus.MATERIALIZED
    env.add_a_note()
    env.run()
    env.audit(leaks=1)  # the new content's audit finds a leak
    r = env.run("release_checks_job")
    assert not r.success
    assert env.release_row()["status"] == "blocked"
    assert partition_status(env) == AssetPartitionStatus.FAILED
    status, severity, md = gate_record(env)
    assert status == AssetCheckExecutionRecordStatus.FAILED and severity == dg.AssetCheckSeverity.ERROR
    assert md["release_status"] == "blocked" and md["published_version"] == "v1"  # researchers keep v1
    assert checks(r)["release_gate"][:2] == (False, "ERROR")
    failures = [e for e in r.all_events if e.event_type_value == "STEP_FAILURE"]
    assert [e.step_key for e in failures] == ["release_summary"]
    assert not [e for e in r.all_events if e.event_type_value == "STEP_UP_FOR_RETRY"]
    fmd = {k: v.value for k, v in failures[0].step_failure_data.user_failure_data.metadata.items()}
    assert fmd["release_status"] == "blocked" and fmd["n_released"] == 3 and fmd["published_version"] == "v1"
    assert "Maria" not in str(fmd) and "Stonebridge" not in str(fmd)
    # the decision recorded in the instance matches tide_releases
    assert env.release_row()["content_fingerprint"] == md["content_fingerprint"] == fmd["content_fingerprint"]


# -- the five blocking checks: one step, one pass, one source summary ---------------------------------------------

DEID = dg.AssetKey("deidentified_notes")


def check_partition_status(e: Env, name: str):
    """The instance's latest execution status of blocking check ``name`` for the partition (what the UI shows)."""
    key = str(release_key(S, K))
    infos = e.instance.event_log_storage.get_asset_check_partition_info(
        [dg.AssetCheckKey(DEID, name)], partition_keys=[key]
    )
    assert [i.partition_key for i in infos] == [key], name
    return infos[0].latest_execution_status


def test_the_five_blocking_checks_are_one_step_that_reads_the_study_once(env: Env, monkeypatch):
    from tide_core.release import scan
    from tide_core.release.lifecycle import BLOCKING_CHECKS
    from tide_etl.checks import CHECKS, release_checks
    from tide_etl.retry import POOL, TRANSIENT_RETRY

    assert CHECKS == [release_checks]
    specs = list(release_checks.check_specs)
    assert [s.name for s in specs] == list(BLOCKING_CHECKS)
    assert all(s.blocking and s.asset_key == DEID and s.partitions_def == release_partitions for s in specs)
    assert release_checks.op.pool == POOL and release_checks.op.retry_policy == TRANSIENT_RETRY
    job = env.defs.resolve_job_def("release_checks_job")
    assert sorted(job.graph.node_dict) == ["release_checks", "release_summary", "researcher_views"]

    passes: list[str] = []  # every streamed pass over the study's chunks, whoever runs it
    real = scan.iter_release_chunks

    def counted(*args, **kwargs):
        passes.append(str(args[2]))
        return real(*args, **kwargs)

    monkeypatch.setattr(scan, "iter_release_chunks", counted)
    env.run()
    env.audit()
    r = env.run("release_checks_job")
    assert r.success, checks(r)
    assert passes == [S] * 4  # per run: one for the five checks, one for release_summary's decision
    results = checks(r)
    assert all(results[name][0] for name in BLOCKING_CHECKS), results
    # every check carries the run's one source summary: the content its verdict covered
    row = env.release_row()
    assert row["status"] == "published" and row["content_fingerprint"]
    for name in BLOCKING_CHECKS:
        md = results[name][2]
        assert md["candidate/content_fingerprint"] == row["content_fingerprint"], name
        assert (md["source/n_rows"], md["candidate/n_released"], md["candidate/n_quarantined"]) == (2, 2, 0)
        assert check_partition_status(env, name) == AssetCheckExecutionRecordStatus.SUCCEEDED


def test_failing_checks_block_in_one_write_and_release_summary_does_not_run(env: Env):
    """A name put back into a published release's candidate: the surface and known-PHI checks fail
    in the one step, each by name in the partition's check records, the release is blocked at once
    naming both, release_summary does not run, and researchers keep v1."""
    from tide_core.release.lifecycle import BLOCKING_CHECKS

    v1 = env.publish()
    with env.wh() as wh:
        wh.sql("UPDATE tide_deid_notes SET text = text || ' Maria Stonebridge' WHERE note_id = 'a'")
    r = env.run("release_checks_job")
    assert not r.success
    results = checks(r)
    failed = {name for name in BLOCKING_CHECKS if not results[name][0]}
    assert failed == {"no_surface_survives", "known_phi_survives"}, results
    assert all(results[name][1] == "ERROR" for name in BLOCKING_CHECKS)
    for name in BLOCKING_CHECKS:
        want = AssetCheckExecutionRecordStatus.FAILED if name in failed else AssetCheckExecutionRecordStatus.SUCCEEDED
        assert check_partition_status(env, name) == want, name
    steps = {e.step_key: e.event_type_value for e in r.all_events if e.event_type_value.startswith("STEP_")}
    assert "release_summary" not in steps and steps["release_checks"] == "STEP_FAILURE"
    row = env.release_row()
    assert row["status"] == "blocked" and row["published_version"] == "v1"
    assert "check no_surface_survives failed" in row["gate_reasons"]
    assert "check known_phi_survives failed" in row["gate_reasons"]
    assert env.researchers_see() == v1
    assert "Stonebridge" not in str([md for _, _, md in results.values()])  # counts and digests only
