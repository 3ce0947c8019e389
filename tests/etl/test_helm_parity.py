"""The Helm values and the instance file they mirror configure the same Dagster instance.

``infra/dagster/helm-values.yaml`` is rendered into instance settings the way the official
``dagster/dagster`` chart's templates do (``templates/configmap-instance.yaml`` and
``templates/helpers/instance/_concurrency.tpl`` / ``_run-coordinator.tpl`` in the dagster-io/dagster
repository: ``concurrency.pools`` / ``concurrency.runs``, ``dagsterDaemon.runRetries`` and
``dagsterDaemon.runMonitoring``), then both sides are loaded by Dagster itself and compared on what
the instance actually applies: pools (default limit, granularity), run limits and tag limits, run
retries (``retry_on_asset_or_op_failure: false``: a blocked release is never re-run) and run
monitoring (``free_slots_after_run_end_seconds``).  Changing either file alone fails this test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from dagster import DagsterInstance
from dagster._config import validate_config
from dagster._core.instance.config import dagster_instance_config_schema

ROOT = Path(__file__).resolve().parents[2]
HELM = ROOT / "infra" / "dagster" / "helm-values.yaml"
PROD = ROOT / "infra" / "dagster" / "dagster.yaml"
LAPTOP = ROOT / "dagster_home" / "dagster.yaml"
SECTIONS = ("run_coordinator", "concurrency", "run_retries", "run_monitoring", "telemetry")

#: Keys of the chart's values models for the sections rendered here (helm/dagster/schema: daemon.py
#: ``RunRetries``, ``QueuedRunCoordinatorConfig``; concurrency.py; the ``runMonitoring`` keys the
#: instance template reads).  A misspelt key would be ignored by the chart: refuse it here.
CHART_KEYS = {
    "runRetries": {"enabled", "maxRetries", "retryOnAssetOrOpFailure"},
    "runMonitoring": {
        "enabled",
        "startTimeoutSeconds",
        "cancelTimeoutSeconds",
        "maxResumeRunAttempts",
        "pollIntervalSeconds",
        "freeSlotsAfterRunEndSeconds",
    },
    "queuedRunCoordinator": {
        "maxConcurrentRuns",
        "tagConcurrencyLimits",
        "dequeueIntervalSeconds",
        "dequeueNumWorkers",
        "dequeueUseThreads",
        "blockOpConcurrencyLimitedRuns",
    },
    "concurrency": {"enabled", "pools", "runs"},
    "pools": {"defaultLimit", "granularity", "opGranularityRunBuffer"},
    "runs": {"maxConcurrentRuns", "tagConcurrencyLimits"},
}


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict)
    return data


def _set(out: dict[str, Any], name: str, value: Any) -> None:
    if value is not None:  # the chart's `kindIs "invalid"` guards: an unset value is not rendered
        out[name] = value


def render_instance(values: dict[str, Any]) -> dict[str, Any]:
    """The instance sections the chart renders from ``values`` (and its conflict checks)."""
    out: dict[str, Any] = {}
    daemon = values["dagsterDaemon"]
    qrc: dict[str, Any] = {}
    if daemon["enabled"] and daemon["runCoordinator"]["enabled"]:
        assert daemon["runCoordinator"]["type"] == "QueuedRunCoordinator"
        qrc = daemon["runCoordinator"]["config"].get("queuedRunCoordinator") or {}
        coordinator: dict[str, Any] = {"module": "dagster.core.run_coordinator", "class": "QueuedRunCoordinator"}
        config: dict[str, Any] = {}
        _set(config, "max_concurrent_runs", qrc.get("maxConcurrentRuns"))
        _set(config, "tag_concurrency_limits", qrc.get("tagConcurrencyLimits") or None)
        _set(config, "dequeue_interval_seconds", qrc.get("dequeueIntervalSeconds"))
        if config:
            coordinator["config"] = config
        out["run_coordinator"] = coordinator
    concurrency = values.get("concurrency") or {}
    if concurrency.get("enabled"):
        pools, runs = concurrency.get("pools") or {}, concurrency.get("runs") or {}
        if runs.get("maxConcurrentRuns") is not None and qrc.get("maxConcurrentRuns") is not None:
            raise ValueError("Cannot set both concurrency.runs.maxConcurrentRuns and queuedRunCoordinator's")
        if runs.get("tagConcurrencyLimits") and qrc.get("tagConcurrencyLimits"):
            raise ValueError("Cannot set both concurrency.runs.tagConcurrencyLimits and queuedRunCoordinator's")
        rendered: dict[str, Any] = {}
        p: dict[str, Any] = {}
        _set(p, "default_limit", pools.get("defaultLimit"))
        _set(p, "granularity", pools.get("granularity"))
        _set(p, "op_granularity_run_buffer", pools.get("opGranularityRunBuffer"))
        if p:
            rendered["pools"] = p
        r: dict[str, Any] = {}
        _set(r, "max_concurrent_runs", runs.get("maxConcurrentRuns"))
        if runs.get("tagConcurrencyLimits"):
            r["tag_concurrency_limits"] = [
                {
                    k: v
                    for k, v in (("key", t["key"]), ("value", t.get("value")), ("limit", t["limit"]))
                    if v is not None
                }
                for t in runs["tagConcurrencyLimits"]
            ]
        if r:
            rendered["runs"] = r
        out["concurrency"] = rendered
    monitoring = daemon.get("runMonitoring") or {}
    if daemon["enabled"] and monitoring.get("enabled"):
        m: dict[str, Any] = {"enabled": True}
        _set(m, "start_timeout_seconds", monitoring.get("startTimeoutSeconds"))
        _set(m, "cancel_timeout_seconds", monitoring.get("cancelTimeoutSeconds"))
        _set(m, "max_resume_run_attempts", monitoring.get("maxResumeRunAttempts"))
        _set(m, "poll_interval_seconds", monitoring.get("pollIntervalSeconds"))
        _set(m, "free_slots_after_run_end_seconds", monitoring.get("freeSlotsAfterRunEndSeconds"))
        out["run_monitoring"] = m
    retries = daemon.get("runRetries") or {}
    if daemon["enabled"] and retries.get("enabled"):
        rr: dict[str, Any] = {"enabled": True}
        _set(rr, "max_retries", retries.get("maxRetries"))
        _set(rr, "retry_on_asset_or_op_failure", retries.get("retryOnAssetOrOpFailure"))
        out["run_retries"] = rr
    out["telemetry"] = {"enabled": values["telemetry"]["enabled"]}
    return out


def _effective(sections: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """What a Dagster instance built from these sections applies (storage left local)."""
    home = tmp_path / f"home{len(list(tmp_path.iterdir()))}"
    home.mkdir()
    (home / "dagster.yaml").write_text(yaml.safe_dump({k: sections[k] for k in SECTIONS if k in sections}))
    instance = DagsterInstance.from_config(str(home))
    try:
        cc = instance.get_concurrency_config()
        return {
            "pool_granularity": cc.pool_config.pool_granularity,
            "pool_default_limit": cc.pool_config.default_pool_limit,
            "max_concurrent_runs": cc.run_queue_config.max_concurrent_runs if cc.run_queue_config else None,
            "tag_concurrency_limits": cc.run_queue_config.tag_concurrency_limits if cc.run_queue_config else None,
            "run_retries": (
                instance.run_retries_enabled,
                instance.run_retries_max_retries,
                instance.run_retries_retry_on_asset_or_op_failure,
            ),
            "run_monitoring": dict(instance.run_monitoring_settings),
            "run_coordinator": type(instance.run_coordinator).__name__,
        }
    finally:
        instance.dispose()


def test_helm_values_render_the_instance_file():
    rendered, prod = render_instance(_load(HELM)), _load(PROD)
    for section in SECTIONS:
        assert rendered.get(section) == prod.get(section), (
            f"{section}: helm {rendered.get(section)} != {prod.get(section)}"
        )
    # the rendered instance is a valid Dagster instance (with the production storage)
    result = validate_config(dagster_instance_config_schema(), {**rendered, "storage": prod["storage"]})
    assert result.success, [e.message for e in result.errors]


@pytest.fixture(scope="module")
def prod_effective(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _effective(_load(PROD), tmp_path_factory.mktemp("prod"))


def test_dagster_applies_the_same_settings_from_both(tmp_path, prod_effective):
    helm = _effective(render_instance(_load(HELM)), tmp_path)
    assert helm == prod_effective
    # what the parity protects: a failed check or blocked release is not re-run, leaked slots are freed
    assert helm["run_retries"] == (True, 1, False)
    assert helm["run_monitoring"]["free_slots_after_run_end_seconds"] > 0
    assert helm["pool_default_limit"] is not None and helm["pool_granularity"].value == "op"
    assert helm["run_coordinator"] == "QueuedRunCoordinator"
    assert {"key": "tide/stage", "value": "recognition", "limit": 2} in helm["tag_concurrency_limits"]


def test_the_laptop_instance_keeps_the_same_policies(tmp_path, prod_effective):
    """dagster_home/dagster.yaml has smaller limits on purpose (one DuckDB writer), the same policies."""
    prod, laptop = prod_effective, _effective(_load(LAPTOP), tmp_path)
    for name in ("pool_granularity", "run_retries", "run_coordinator"):
        assert laptop[name] == prod[name], name
    for name in ("enabled", "free_slots_after_run_end_seconds"):  # start timeouts matter for pods only
        assert laptop["run_monitoring"][name] == prod["run_monitoring"][name], name
    assert [(t["key"], t["value"]) for t in laptop["tag_concurrency_limits"]] == [
        (t["key"], t["value"]) for t in prod["tag_concurrency_limits"]
    ]
    assert laptop["pool_default_limit"] == 1  # an embedded DuckDB file admits one writing process


def test_helm_values_use_only_keys_the_chart_reads():
    values = _load(HELM)
    daemon = values["dagsterDaemon"]
    found = {
        "runRetries": daemon["runRetries"],
        "runMonitoring": daemon["runMonitoring"],
        "queuedRunCoordinator": daemon["runCoordinator"]["config"]["queuedRunCoordinator"],
        "concurrency": values["concurrency"],
        "pools": values["concurrency"]["pools"],
        "runs": values["concurrency"]["runs"],
    }
    for name, block in found.items():
        assert set(block) <= CHART_KEYS[name], f"{name}: {set(block) - CHART_KEYS[name]} unknown to the chart"


@pytest.mark.parametrize(
    ("path", "change"),
    [
        (("dagsterDaemon", "runRetries", "retryOnAssetOrOpFailure"), True),
        (("dagsterDaemon", "runMonitoring", "freeSlotsAfterRunEndSeconds"), 0),
        (("concurrency", "pools", "defaultLimit"), 5),
        (("concurrency", "runs", "maxConcurrentRuns"), 9),
    ],
)
def test_a_change_on_one_side_is_caught(tmp_path, prod_effective, path, change):
    values = _load(HELM)
    block = values
    for name in path[:-1]:
        block = block[name]
    block[path[-1]] = change
    assert _effective(render_instance(values), tmp_path) != prod_effective


def test_the_chart_refuses_run_limits_in_two_places():
    values = _load(HELM)
    values["dagsterDaemon"]["runCoordinator"]["config"]["queuedRunCoordinator"] = {"maxConcurrentRuns": 8}
    with pytest.raises(ValueError, match="Cannot set both"):
        render_instance(values)
