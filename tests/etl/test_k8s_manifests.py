"""Kubernetes manifests validated offline against the Kubernetes 1.37 schemas (``kubernetes-validate``,
strict: unknown fields are errors), and the key layouts they describe read by TIDE.

* ``infra/k8s/*.yaml`` (the key Secret example, the ``tide run`` Job with its key-install init
  container) are validated whole.
* ``infra/kuberay/raycluster.yaml`` is a custom resource (no offline schema for ``RayCluster``): each
  pod template in it is validated as a ``PodTemplate``.
* ``infra/dagster/helm-values.yaml``: the code location's env, volumes and mounts are validated as a
  ``Pod`` (the official chart is not on PyPI or npm, so it is not rendered here; the instance settings
  are checked in ``tests/etl/test_helm_parity.py``).
* The Secret volumes of the Job and of the Helm values, laid out on disk as the kubelet would from
  their ``items:``, are read through the documented paths (install, or ``TIDE_KEY_DIR`` in place).
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from test_k8s_keys import secret_volume

from tide_core.anonymize.keys import FileKeyProvider, KeyRing
from tide_core.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
K8S_VERSION = "1.37.0"
MANIFESTS = sorted((ROOT / "infra" / "k8s").glob("*.yaml"))
RAYCLUSTER = ROOT / "infra" / "kuberay" / "raycluster.yaml"
HELM = ROOT / "infra" / "dagster" / "helm-values.yaml"
ITEM_PATH = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}/[A-Za-z0-9][A-Za-z0-9_.-]{0,62}\.(key|wrapped)$")


def _validate(doc: dict[str, Any]) -> None:
    kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _by_kind(kind: str) -> dict[str, Any]:
    return next(d for p in MANIFESTS for d in _docs(p) if d["kind"] == kind)


def test_the_validator_runs_offline_and_is_strict():
    assert kubernetes_validate.latest_version() >= K8S_VERSION  # schemas ship in the package
    secret = _by_kind("Secret")
    _validate(secret)
    for broken in (
        {**secret, "stringdata": secret["stringData"]},  # unknown field (strict)
        {**secret, "immutable": "yes"},  # wrong type
    ):
        with pytest.raises(kubernetes_validate.ValidationError):
            _validate(broken)


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_infra_k8s_manifests_are_valid(path):
    docs = _docs(path)
    assert docs
    for doc in docs:
        _validate(doc)


def test_raycluster_pod_templates_are_valid():
    cluster = _docs(RAYCLUSTER)[0]
    assert cluster["kind"] == "RayCluster"
    with pytest.raises(kubernetes_validate.SchemaNotFoundError):  # why it is checked piecewise
        _validate(cluster)
    spec = cluster["spec"]
    templates = [("head", spec["headGroupSpec"]["template"])]
    templates += [(g["groupName"], g["template"]) for g in spec["workerGroupSpecs"]]
    assert len(templates) == 3
    for name, template in templates:
        _validate(
            {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": f"ray-{name}"}, "template": template}
        )


def test_helm_code_location_pod_fields_are_valid():
    dep = yaml.safe_load(HELM.read_text())["dagster-user-deployments"]["deployments"][0]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": dep["name"]},
        "spec": {
            "containers": [
                {
                    "name": dep["name"],
                    "image": f"{dep['image']['repository']}:{dep['image']['tag']}",
                    "imagePullPolicy": dep["image"]["pullPolicy"],
                    "env": dep["env"],
                    "volumeMounts": dep["volumeMounts"],
                    "ports": [{"containerPort": dep["port"]}],
                }
            ],
            "volumes": dep["volumes"],
        },
    }
    _validate(pod)


def _secret_items(volumes: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, str]]]:
    vol = next(v for v in volumes if "secret" in v and v["secret"]["secretName"] == "tide-keys")
    items = vol["secret"]["items"]
    assert items and all(ITEM_PATH.match(i["path"]) for i in items), "items must form <study>/<key>.key"
    return vol["secret"], items


def _materialise(mount: Path, secret: dict[str, Any], items: list[dict[str, str]]) -> dict[str, bytes]:
    """The kubelet's view of the Secret: each item's key becomes the file at its path."""
    known = _by_kind("Secret")["stringData"]
    content = {}
    for item in items:
        assert item["key"] in known, f"{item['key']} is not a key of the example Secret"
        content[item["path"]] = (
            (secrets.token_hex(32) + "\n").encode() if item["path"].endswith(".key") else b"kms-envelope"
        )
    secret_volume(mount, content, file_mode=secret["defaultMode"])
    return content


def test_the_job_init_container_installs_what_the_main_container_reads(tmp_path, capsys):
    job = _by_kind("Job")
    pod = job["spec"]["template"]["spec"]
    secret, items = _secret_items(pod["volumes"])
    assert secret["defaultMode"] == 0o400
    init = pod["initContainers"][0]
    main_c = pod["containers"][0]
    # the Secret is mounted only in the init container; the key directory is a memory emptyDir
    mounts = {m["name"]: m for m in init["volumeMounts"]}
    assert "tide-keys-secret" not in {m["name"] for m in main_c["volumeMounts"]}
    assert next(v for v in pod["volumes"] if v["name"] == "tide-keys")["emptyDir"]["medium"] == "Memory"
    cmd = init["command"]
    assert cmd[:3] == ["tide", "keys", "install"]
    src, dst = cmd[cmd.index("--from") + 1], cmd[cmd.index("--to") + 1]
    assert src == mounts["tide-keys-secret"]["mountPath"]
    key_dir = next(e["value"] for e in main_c["env"] if e["name"] == "TIDE_KEY_DIR")
    assert key_dir == dst and dst.startswith(mounts["tide-keys"]["mountPath"] + "/")
    content = _materialise(tmp_path / src.lstrip("/"), secret, items)
    argv = [*cmd[1:]]
    argv[argv.index("--from") + 1] = str(tmp_path / src.lstrip("/"))
    argv[argv.index("--to") + 1] = str(tmp_path / dst.lstrip("/"))
    assert main(argv) == 0
    assert f"installed {len(items)} key(s)" in capsys.readouterr().out
    provider = FileKeyProvider(tmp_path / key_dir.lstrip("/"))
    for path, text in content.items():
        if path.endswith(".key"):
            study, key = path.removesuffix(".key").split("/")
            expected = KeyRing(study, key, bytes.fromhex(text.decode().strip())).fingerprint
            assert provider.keyring(study, key).fingerprint == expected
        else:
            assert (tmp_path / key_dir.lstrip("/") / path).read_bytes() == text


def test_the_helm_secret_mount_is_read_in_place(tmp_path):
    dep = yaml.safe_load(HELM.read_text())["dagster-user-deployments"]["deployments"][0]
    assert dep["includeConfigInLaunchedRuns"]["enabled"]  # run pods get the same mount
    secret, items = _secret_items(dep["volumes"])
    mount_path = next(m["mountPath"] for m in dep["volumeMounts"] if m["name"] == "tide-keys")
    dockerfile = (ROOT / "infra" / "dagster" / "Dockerfile.code-location").read_text()
    assert f"TIDE_KEY_DIR={mount_path}" in dockerfile
    content = _materialise(tmp_path / mount_path.lstrip("/"), secret, items)
    provider = FileKeyProvider(tmp_path / mount_path.lstrip("/"))
    assert provider.is_secret_volume()
    for path, text in content.items():
        if path.endswith(".key"):
            study, key = path.removesuffix(".key").split("/")
            assert provider.has(study, key)
            expected = KeyRing(study, key, bytes.fromhex(text.decode().strip())).fingerprint
            assert provider.keyring(study, key).fingerprint == expected
