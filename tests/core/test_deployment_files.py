"""The deployment package is consistent: instance config valid for Dagster, the gRPC code location
and its image agree on the port, and every TIDE variable the Helm values set is one we read."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from dagster._config import validate_config
from dagster._core.instance.config import dagster_instance_config_schema

ROOT = Path(__file__).resolve().parents[2]
INFRA = ROOT / "infra" / "dagster"


def test_instance_configs_are_valid_dagster_instances():
    for path in (INFRA / "dagster.yaml", ROOT / "dagster_home" / "dagster.yaml"):
        result = validate_config(dagster_instance_config_schema(), yaml.safe_load(path.read_text()))
        assert result.success, (path, [e.message for e in result.errors])
        # a slot leaked by a killed run worker would block the one-slot warehouse pool forever
        assert yaml.safe_load(path.read_text())["run_monitoring"]["free_slots_after_run_end_seconds"] > 0, path
    prod = yaml.safe_load((INFRA / "dagster.yaml").read_text())
    assert "postgres" in prod["storage"]  # production state is not on a local disk
    assert all("env" in v for k, v in prod["storage"]["postgres"]["postgres_db"].items() if k not in ("port", "scheme"))
    assert prod["concurrency"]["pools"]["granularity"] == "op"


def test_code_location_port_and_module_agree():
    workspace = yaml.safe_load((INFRA / "workspace.yaml").read_text())
    grpc = workspace["load_from"][0]["grpc_server"]
    docker = (INFRA / "Dockerfile.code-location").read_text()
    cmd = re.search(r"CMD \[(.*)\]", docker).group(1)
    assert f'"{grpc["port"]}"' in cmd and '"tide_etl"' in cmd and f"EXPOSE {grpc['port']}" in docker
    values = yaml.safe_load((INFRA / "helm-values.yaml").read_text())
    dep = values["dagster-user-deployments"]["deployments"][0]
    assert dep["port"] == grpc["port"] and dep["name"] == grpc["host"]
    assert dep["dagsterApiGrpcArgs"] == ["-m", "tide_etl", "-a", "defs"]


def test_helm_sets_only_variables_tide_reads():
    values = yaml.safe_load((INFRA / "helm-values.yaml").read_text())
    env = {e["name"] for e in values["dagster-user-deployments"]["deployments"][0]["env"]}
    sources = "".join(p.read_text() for p in (ROOT / "tide_etl").glob("*.py"))
    sources += "".join(p.read_text() for p in (ROOT / "tide_core").rglob("*.py"))
    for name in env:
        assert f'"{name}"' in sources, f"{name} is set by the Helm values but read nowhere"
    secret = [v for v in values["dagster-user-deployments"]["deployments"][0]["volumes"] if v["name"] == "tide-keys"]
    assert secret and secret[0]["secret"]["defaultMode"] == 0o400  # keys mounted read-only by the owner
