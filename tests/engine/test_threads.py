"""Threads are sized from what a worker owns (tide_core.threads), never from the machine's core count.

The cgroup tests build real cgroup file trees (v2 ``cpu.max``, v1 ``cpu.cfs_quota_us`` /
``cpu.cfs_period_us``, nested cgroups named by a ``/proc/self/cgroup``-style file) in a temporary
directory; the affinity test narrows a real child process's affinity mask; the Ray tests run real
actors on a local Ray session; the in-process test loads the default model in a child process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tide_core.errors import ConfigError
from tide_core.threads import (
    allotment,
    allotted_cpus,
    allotted_threads,
    cgroup_cpus,
    configure_torch,
    env_threads,
)

ROOT = Path(__file__).resolve().parents[2]
HAS_AFFINITY = hasattr(os, "sched_getaffinity")


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text + "\n")
    return root


def _proc(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "proc_self_cgroup"
    p.write_text(text)
    return p


# ------------------------------------------------------------------ cgroup quotas


def test_cgroup_v2_quota_rounds_down_to_whole_cpus(tmp_path):
    root = _tree(tmp_path / "cg", {"cpu.max": "150000 100000"})
    assert cgroup_cpus(root, None) == 1.5
    assert allotted_threads({}, root, None, affinity=8) == 1  # 1.5 CPUs: one thread, not two
    _tree(root, {"cpu.max": "250000 100000"})
    assert allotted_threads({}, root, None, affinity=8) == 2
    _tree(root, {"cpu.max": "50000 100000"})  # half a CPU: still one thread
    assert cgroup_cpus(root, None) == 0.5
    assert allotted_threads({}, root, None, affinity=8) == 1


def test_cgroup_v2_max_is_no_limit(tmp_path):
    root = _tree(tmp_path / "cg", {"cpu.max": "max 100000"})
    assert cgroup_cpus(root, None) is None
    assert allotted_threads({}, root, None, affinity=4) == 4


def test_cgroup_v1_quota_and_unlimited(tmp_path):
    root = _tree(tmp_path / "cg", {"cpu/cpu.cfs_quota_us": "300000", "cpu/cpu.cfs_period_us": "100000"})
    assert cgroup_cpus(root, None) == 3.0
    assert allotted_threads({}, root, None, affinity=16) == 3
    _tree(root, {"cpu/cpu.cfs_quota_us": "-1"})
    assert cgroup_cpus(root, None) is None
    assert allotted_threads({}, root, None, affinity=16) == 16


def test_the_process_own_cgroup_and_every_cgroup_above_it_bind(tmp_path):
    """A limit on the pod's cgroup binds the container below it (v2); v1 reads the ``cpu`` controller's path."""
    root = _tree(
        tmp_path / "cg",
        {"kubepods/pod1/cpu.max": "200000 100000", "kubepods/pod1/ctr/cpu.max": "max 100000"},
    )
    own = _proc(tmp_path, "0::/kubepods/pod1/ctr\n")
    assert cgroup_cpus(root, own) == 2.0
    assert allotted_threads({}, root, own, affinity=64) == 2
    _tree(root, {"kubepods/pod1/ctr/cpu.max": "100000 100000"})
    assert allotted_threads({}, root, own, affinity=64) == 1  # the tighter one, below

    v1 = _tree(
        tmp_path / "v1",
        {
            "cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "150000",
            "cpu,cpuacct/docker/abc/cpu.cfs_period_us": "50000",
        },
    )
    own_v1 = _proc(tmp_path, "4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n0::/\n")
    assert cgroup_cpus(v1, own_v1) == 3.0
    assert cgroup_cpus(v1, None) is None  # the top directory alone has no quota


def test_an_empty_or_garbled_cgroup_tree_says_nothing(tmp_path):
    assert cgroup_cpus(tmp_path / "absent", None) is None
    root = _tree(tmp_path / "cg", {"cpu.max": "lots 100000"})
    assert cgroup_cpus(root, None) is None


# ------------------------------------------------------------------ TIDE_THREADS, affinity, Ray


def test_tide_threads_only_lowers_the_count(tmp_path):
    root = _tree(tmp_path / "cg", {"cpu.max": "400000 100000"})
    assert allotted_threads({"TIDE_THREADS": "1"}, root, None, affinity=8) == 1
    assert allotted_threads({"TIDE_THREADS": "16"}, root, None, affinity=8) == 4  # never above the quota
    assert allotted_threads({"TIDE_THREADS": " "}, root, None, affinity=8) == 4  # empty: unset
    for bad in ("0", "-2", "two", "1.5"):
        with pytest.raises(ConfigError) as e:
            env_threads({"TIDE_THREADS": bad})
        assert e.value.code == "E525"
        assert bad not in str(e.value)


def test_ray_cpus_bind_and_fractions_round_down(tmp_path):
    empty = tmp_path / "none"
    assert allotted_threads({}, empty, None, affinity=8, ray=2.0) == 2
    assert allotted_threads({}, empty, None, affinity=8, ray=0.5) == 1
    assert allotted_threads({}, empty, None, affinity=8, ray=3.7) == 3
    a = allotment({"TIDE_THREADS": "2"}, empty, None, affinity=8, ray=3.0)
    assert a.sources == {"TIDE_THREADS": 2.0, "ray": 3.0, "affinity": 8.0}
    assert (a.threads, a.cpus) == (2, 8)  # a local Ray is sized without TIDE_THREADS or Ray's share


@pytest.mark.skipif(not HAS_AFFINITY, reason="no affinity masks on this platform")
def test_affinity_of_a_real_process_bounds_the_threads(tmp_path):
    empty = tmp_path / "none"
    assert allotted_threads({}, empty, None) == len(os.sched_getaffinity(0))
    one_cpu = min(os.sched_getaffinity(0))
    code = (
        "import os, sys\n"
        f"os.sched_setaffinity(0, {{{one_cpu}}})\n"
        "from pathlib import Path\n"
        "from tide_core.threads import allotted_threads, allotted_cpus\n"
        f"print(allotted_threads({{}}, Path({str(empty)!r}), None), allotted_cpus(Path({str(empty)!r}), None), "
        "os.cpu_count())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    threads, cpus, count = (int(x) for x in out.stdout.split())
    assert (threads, cpus) == (1, 1)
    assert count == os.cpu_count()  # the machine's core count is unchanged; it is not what is used


def test_configure_torch_sets_intra_and_inter_op_threads():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    try:
        assert configure_torch(1, torch) == 1
        assert torch.get_num_threads() == 1
        assert configure_torch(2) == 2  # torch found by its dotted path
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def _child(code: str, env: dict[str, str]) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, **env},
        timeout=300,
    )
    return out.stdout.split()


@pytest.mark.skipif(not HAS_AFFINITY or len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs")
def test_the_in_process_model_sets_torch_threads_from_the_allocation():
    """The default model loaded outside Ray (``tide.hf``, PyTorch runtime) sets torch's threads
    from what the process owns: ``TIDE_THREADS=1`` gives 1 intra-op and 1 inter-op thread where
    torch by itself would start one per core."""
    code = (
        "import torch\n"
        "default = torch.get_num_threads()\n"
        "from tide_core.recognizers.registry import create\n"
        "rec = create({'name': 'tide.hf', 'runtime': 'torch'})\n"
        "rec.load()\n"
        "print(default, torch.get_num_threads(), torch.get_num_interop_threads())\n"
    )
    default, intra, inter = (int(x) for x in _child(code, {"TIDE_THREADS": "1"}))
    assert default >= 2  # torch alone: one thread per core
    assert (intra, inter) == (1, 1)


# ------------------------------------------------------------------ real Ray actors


@pytest.fixture(scope="module")
def ray2(local_ray):
    return local_ray


def test_a_ray_actor_with_one_cpu_runs_one_torch_thread(ray2):
    """On a 2-CPU local Ray, an actor reserving 1 CPU gets 1 torch thread and one reserving 2 gets 2;
    the pipeline's own predict stage, asked for 4 threads, runs as many as its actor owns."""
    pytest.importorskip("torch")
    from tide_core.execution.ray_stages import PredictStage

    @ray2.remote
    class Probe:
        def threads(self) -> tuple[int, int, float]:
            import torch

            from tide_core.threads import allotment, configure_torch

            n = configure_torch()
            return n, torch.get_num_threads(), allotment().sources.get("ray", 0.0)

    @ray2.remote
    class Stage(PredictStage):
        def threads(self) -> int:
            import torch

            return torch.get_num_threads()

    one = Probe.options(num_cpus=1).remote()
    assert ray2.get(one.threads.remote(), timeout=120) == (1, 1, 1.0)
    ray2.kill(one)  # the local session has 2 CPUs: free this one before asking for both
    if HAS_AFFINITY and len(os.sched_getaffinity(0)) >= 2:
        two = Probe.options(num_cpus=2).remote()
        assert ray2.get(two.threads.remote(), timeout=120) == (2, 2, 2.0)
        ray2.kill(two)
    rows = [{"patient_id": "p0", "first_name": "Mara", "last_name": "Quillon"}]  # nothing slow to load
    stage = Stage.options(num_cpus=1).remote([{"name": "tide.known_phi", "rows": rows}], None, [0], threads=4)
    assert ray2.get(stage.threads.remote(), timeout=120) == 1
    ray2.kill(stage)


def test_outside_ray_the_driver_reads_no_ray_share(ray2):
    assert allotment().ray is None  # the driver is not a worker: Ray says nothing about its CPUs
    assert allotted_cpus() >= 1


def test_the_bench_reports_its_allotment_as_json():
    a = allotment()
    assert json.loads(json.dumps(a.sources))  # plain numbers only
    assert "affinity" in a.sources or "cpu_count" in a.sources


def test_an_onnx_session_without_threads_runs_what_the_process_owns(tmp_path, monkeypatch):
    """ONNX Runtime's intra-op threads come from the allocation (``TIDE_THREADS`` lowers them), inter-op 1."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    from tide_core.inference.onnx_session import OnnxTokenClassifier

    # the smallest token classifier: logits[b, t, :] = [0, input_id] (argmax 1 where an id > 0)
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", "t"])
    mask = helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["b", "t"])
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["b", "t", 2])
    nodes = [
        helper.make_node("Cast", ["input_ids"], ["f"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["f", "axis"], ["u"]),
        helper.make_node("Mul", ["u", "zero_one"], ["logits"]),
    ]
    init = [
        helper.make_tensor("axis", TensorProto.INT64, [1], [-1]),
        helper.make_tensor("zero_one", TensorProto.FLOAT, [2], [0.0, 1.0]),
    ]
    graph = helper.make_graph(nodes, "tiny", [ids, mask], [out], init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    path = tmp_path / "tiny.onnx"
    onnx.save(model, str(path))

    monkeypatch.setenv("TIDE_THREADS", "1")
    session = OnnxTokenClassifier(path)
    assert session.threads == 1
    tags, _ = session.forward([[3, 0, 5]], pad_id=0)
    assert tags.tolist() == [[1, 0, 1]]
    monkeypatch.delenv("TIDE_THREADS")
    assert OnnxTokenClassifier(path).threads == allotted_threads()
    assert OnnxTokenClassifier(path, threads=3).threads == 3  # an explicit count is kept


# ------------------------------------------------------------------ OpenMP threads wait passively


def _openmp_settings(env: dict[str, str], code: str) -> dict[str, str]:
    """The OpenMP runtime's own settings (``OMP_DISPLAY_ENV=VERBOSE`` prints them as torch loads it)."""
    child_env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    child_env.update(env, OMP_DISPLAY_ENV="VERBOSE")
    out = subprocess.run([sys.executable, "-c", code], env=child_env, capture_output=True, text=True, check=True)
    pairs = (line.strip().split(" = ", 1) for line in out.stderr.splitlines() if " = " in line)
    return {k: v.strip("'") for k, v in pairs}


def test_importing_tide_core_makes_torch_threads_wait_without_spinning():
    """tide_core sets OMP_WAIT_POLICY=PASSIVE before torch loads: the runtime then spins 0 turns."""
    settings = _openmp_settings({}, "import tide_core, torch; torch.ones(64, 64) @ torch.ones(64, 64)")
    assert settings["OMP_WAIT_POLICY"] == "PASSIVE"
    assert settings["GOMP_SPINCOUNT"] == "0"
    # the runtime's own default, for contrast: it spins 300,000 turns at every barrier
    assert _openmp_settings({}, "import torch")["GOMP_SPINCOUNT"] == "300000"


def test_an_operator_chosen_wait_policy_is_kept():
    settings = _openmp_settings({"OMP_WAIT_POLICY": "ACTIVE"}, "import tide_core, torch")
    assert settings["OMP_WAIT_POLICY"] == "ACTIVE"
    assert settings["GOMP_SPINCOUNT"] != "0"
