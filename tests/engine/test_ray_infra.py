"""The cluster manifests parse and carry what a TIDE Ray cluster needs."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_kuberay_raycluster_manifest():
    doc = yaml.safe_load((ROOT / "infra/kuberay/raycluster.yaml").read_text())
    assert doc["apiVersion"] == "ray.io/v1" and doc["kind"] == "RayCluster"
    spec = doc["spec"]
    assert spec["rayVersion"] == "2.60.0"
    head = spec["headGroupSpec"]["template"]["spec"]["containers"][0]
    assert "tide-etl" in head["image"]
    assert {p["containerPort"] for p in head["ports"]} >= {6379, 10001}
    groups = {g["groupName"]: g for g in spec["workerGroupSpecs"]}
    assert set(groups) == {"cpu-workers", "gpu-workers"}
    gpu = groups["gpu-workers"]["template"]["spec"]["containers"][0]
    assert gpu["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert gpu["image"].endswith("-gpu")
    for g in groups.values():
        assert g["minReplicas"] <= g["replicas"] <= g["maxReplicas"]
        c = g["template"]["spec"]["containers"][0]
        assert {"name": "HF_HUB_OFFLINE", "value": "1"} in c["env"]


def test_gcp_cluster_launcher_config():
    doc = yaml.safe_load((ROOT / "infra/gcp/ray-cluster.yaml").read_text())
    for key in (
        "cluster_name",
        "max_workers",
        "provider",
        "auth",
        "available_node_types",
        "head_node_type",
        "setup_commands",
        "head_start_ray_commands",
        "worker_start_ray_commands",
    ):
        assert key in doc, key
    assert doc["provider"]["type"] == "gcp"
    types = doc["available_node_types"]
    assert doc["head_node_type"] in types
    gpu = [t for t in types.values() if t["resources"].get("GPU")]
    assert gpu, "no GPU worker node type"
    assert gpu[0]["node_config"]["guestAccelerators"][0]["acceleratorCount"] >= 1
    for t in types.values():
        assert 0 <= t["min_workers"] <= t["max_workers"] <= doc["max_workers"]
    setup = " ".join(doc["setup_commands"])
    assert "ray[data" in setup and "2.60.0" in setup and "/opt/tide" in setup
    assert doc["file_mounts"]["/opt/tide"] == "."
    assert any("--head" in c for c in doc["head_start_ray_commands"])


def test_dockerfile_pins_the_driver_ray_version():
    text = (ROOT / "infra/docker/Dockerfile").read_text()
    assert "rayproject/ray:2.60.0-py311" in text and "pip install" in text and "HF_HUB_OFFLINE=1" in text
