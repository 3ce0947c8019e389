"""The release-gate policy is the deployment's versioned configuration; weakening it needs an approval.

- ``tide_core.assurance.gate``: ``ReleaseGatePolicy.label``/``approval``, ``describe()`` (a digest
  of the decision fields only) and ``weakens`` (field by field);
- ``tide_core.assurance.gate_policy``: the TOML policy file (bad files refused with a code) and
  ``apply_override`` (a weakening override without an approval is refused, E956);
- ``tide_etl.resources.ReleaseGateResource``: the file (``TIDE_GATE_POLICY``) plus overrides,
  also as Dagster run config;
- the ``release_summary`` asset's code version follows the policy file.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path

import dagster as dg
import pytest

from tide_core.assurance.gate import DEFAULT_LABEL, ReleaseGatePolicy, weakens
from tide_core.assurance.gate_policy import DEFAULT_POLICY, apply_override, load_gate_policy
from tide_core.errors import ConfigError
from tide_etl import build_defs
from tide_etl.catalog import MISSING_MODEL
from tide_etl.resources import (
    ENV_SETTINGS,
    KeyProviderResource,
    ReleaseGateResource,
    TideConfigResource,
    WarehouseResource,
    default_resources,
    resolved,
)

warnings.filterwarnings("ignore", category=dg.BetaWarning)
warnings.filterwarnings("ignore", category=dg.PreviewWarning)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "infra" / "gate_policy.example.toml"

FULL = """
name = "hospital-x"
version = 3
target_rate = 0.005
confidence = 0.99
every_bucket = false
block_on_drift = false
block_on_watch = true
block_on_unknown = true
require_drift = true
"""


def _write(tmp_path: Path, text: str, name: str = "gate.toml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# -- the policy itself --------------------------------------------------------------------------


def test_the_default_policy_is_labelled_and_describes_its_decision_fields():
    p = ReleaseGatePolicy()
    assert p.label == DEFAULT_LABEL == "tide-default@1" and p.approval == ""
    text = p.describe()
    label, digest = text.split(" ")
    assert label == "tide-default@1" and digest.startswith("sha256:") and len(digest) == len("sha256:") + 12
    int(digest[len("sha256:") :], 16)
    # the digest covers every decision field ...
    changed = [
        replace(p, target_rate=0.02),
        replace(p, confidence=0.9),
        replace(p, require_audit=False),
        replace(p, required_buckets=()),
        replace(p, block_on_drift=False),
        replace(p, block_on_watch=True),
        replace(p, block_on_unknown=True),
        replace(p, require_drift=True),
    ]
    digests = {c.describe().split(" ")[1] for c in changed}
    assert len(digests) == len(changed) and digest not in digests
    # ... and neither the label nor the approval; bucket order and int/float spelling do not count
    assert replace(p, label="x@2").describe() == f"x@2 {digest}"
    assert replace(p, approval="DPO A. Example").describe() == text
    assert replace(p, required_buckets=("b", "a")).describe() == replace(p, required_buckets=["a", "b"]).describe()
    assert replace(p, target_rate=0.5).describe() != replace(p, target_rate=0.05).describe()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"target_rate": 0.02}, "target_rate"),
        ({"confidence": 0.9}, "confidence"),
        ({"require_audit": False}, "require_audit"),
        ({"required_buckets": ()}, "required_buckets"),
        ({"required_buckets": ("site1|ehr|progress",)}, "required_buckets"),
        ({"block_on_drift": False}, "block_on_drift"),
        ({"require_drift": False}, "require_drift"),
        ({"block_on_watch": False}, "block_on_watch"),
        ({"block_on_unknown": False}, "block_on_unknown"),
    ],
)
def test_weakens_names_each_weaker_field(change, field):
    base = ReleaseGatePolicy(block_on_watch=True, block_on_unknown=True, require_drift=True)
    assert weakens(base, replace(base, **change)) == [field]
    assert weakens(replace(base, **change), base) == []  # the other way round is stricter


def test_weakens_ignores_stricter_and_equal_policies_and_lists_every_weaker_field():
    base = ReleaseGatePolicy()
    assert weakens(base, base) == []
    stricter = ReleaseGatePolicy(target_rate=0.005, confidence=0.99, block_on_watch=True, require_drift=True)
    assert weakens(base, stricter) == []
    assert weakens(base, replace(base, label="other@9", approval="someone")) == []
    listed = ReleaseGatePolicy(required_buckets=("a", "b"))
    assert weakens(listed, replace(listed, required_buckets=("b", "a", "c"))) == []  # more buckets: stricter
    assert weakens(listed, replace(listed, required_buckets=None)) == []  # every bucket: stricter
    assert weakens(listed, replace(listed, required_buckets=("a",))) == ["required_buckets"]
    everything = ReleaseGatePolicy(
        target_rate=0.5, confidence=0.5, require_audit=False, required_buckets=(), block_on_drift=False
    )
    assert weakens(base, everything) == [
        "target_rate",
        "confidence",
        "require_audit",
        "required_buckets",
        "block_on_drift",
    ]


# -- the policy file ----------------------------------------------------------------------------


def test_no_file_is_the_built_in_policy():
    assert load_gate_policy(None) == ReleaseGatePolicy() == DEFAULT_POLICY
    assert load_gate_policy(None).label == "tide-default@1"


def test_a_policy_file_sets_every_key(tmp_path: Path):
    p = load_gate_policy(_write(tmp_path, FULL))
    assert p == ReleaseGatePolicy(
        target_rate=0.005,
        confidence=0.99,
        required_buckets=(),
        block_on_drift=False,
        block_on_watch=True,
        block_on_unknown=True,
        require_drift=True,
        label="hospital-x@3",
    )
    assert p.describe().startswith("hospital-x@3 sha256:")


def test_a_minimal_file_keeps_the_built_in_values(tmp_path: Path):
    p = load_gate_policy(_write(tmp_path, 'name = "site"\nversion = "2024-06"\n'))
    assert p == replace(ReleaseGatePolicy(), label="site@2024-06")
    assert p.describe().split(" ")[1] == ReleaseGatePolicy().describe().split(" ")[1]


def test_the_shipped_example_loads_and_decides_as_the_default():
    p = load_gate_policy(str(EXAMPLE))
    assert p.label == "example-site@1"
    assert replace(p, label=DEFAULT_LABEL) == ReleaseGatePolicy()


@pytest.mark.parametrize(
    ("text", "code", "words"),
    [
        ('name = "x"\nversion = 1\ntarget_rat = 0.01\n', "E953", "'target_rat'"),
        ('name = "x"\nversion = 1\n[gate]\ntarget_rate = 0.01\n', "E953", "'gate'"),
        ("version = 1\n", "E954", "name"),
        ('name = "x"\n', "E954", "version"),
        ('name = "x"\nversion = 1\ntarget_rate = "0.5"\n', "E954", "target_rate"),
        ('name = "x"\nversion = 1\nconfidence = true\n', "E954", "confidence"),
        ('name = "x"\nversion = 1\nevery_bucket = "yes"\n', "E954", "every_bucket"),
        ('name = "x"\nversion = 1\nblock_on_drift = 1\n', "E954", "block_on_drift"),
        ('name = "x"\nversion = 1.5\n', "E954", "version"),
        ("name = 7\nversion = 1\n", "E954", "name"),
        ('name = "x"\nversion = 1\ntarget_rate = 0.0\n', "E955", "target_rate"),
        ('name = "x"\nversion = 1\ntarget_rate = 1.5\n', "E955", "target_rate"),
        ('name = "x"\nversion = 1\ntarget_rate = nan\n', "E955", "target_rate"),
        ('name = "x"\nversion = 1\nconfidence = 1\n', "E955", "confidence"),
        ('name = "x"\nversion = 0\n', "E955", "version"),
        ('name = ""\nversion = 1\n', "E955", "name"),
        ('name = "a b"\nversion = 1\n', "E955", "name"),
        ('name = "a@b"\nversion = 1\n', "E955", "name"),
        ('name = "x"\nversion = 1\ntarget_rate = \n', "E952", "not valid TOML"),
    ],
)
def test_bad_policy_files_are_refused_with_a_code(tmp_path: Path, text, code, words):
    with pytest.raises(ConfigError) as err:
        load_gate_policy(_write(tmp_path, text))
    assert err.value.code == code and words in err.value.message, str(err.value)


def test_a_missing_file_is_refused(tmp_path: Path):
    with pytest.raises(ConfigError) as err:
        load_gate_policy(str(tmp_path / "nowhere.toml"))
    assert err.value.code == "E951" and "TIDE_GATE_POLICY" in err.value.hint


# -- overrides ----------------------------------------------------------------------------------


def test_no_override_is_the_base():
    base = ReleaseGatePolicy(label="site@1")
    assert apply_override(base) == base


@pytest.mark.parametrize(
    ("override", "fields"),
    [
        ({"target_rate": 0.5}, ["target_rate"]),
        ({"confidence": 0.8}, ["confidence"]),
        ({"every_bucket": False}, ["required_buckets"]),
        (
            {"target_rate": 0.05, "confidence": 0.9, "every_bucket": False},
            ["target_rate", "confidence", "required_buckets"],
        ),
    ],
)
def test_a_weakening_override_without_approval_is_refused(override, fields):
    base = ReleaseGatePolicy(label="site@4")
    for approval in (None, "", "   "):
        with pytest.raises(ConfigError) as err:
            apply_override(base, approval=approval, **override)
        assert err.value.code == "E956"
        for field in fields:
            assert field in err.value.message
        assert "site@4" in err.value.message
        for value in override.values():  # fields are named, values are not
            if not isinstance(value, bool):
                assert str(value) not in str(err.value)
        assert "approval" in err.value.hint and "policy file" in err.value.hint


def test_a_weakening_override_with_approval_is_accepted_and_carries_it():
    base = ReleaseGatePolicy(label="site@4")
    p = apply_override(base, target_rate=0.5, every_bucket=False, approval="  DPO J. Smith, ticket 4411 ")
    assert p.target_rate == 0.5 and p.required_buckets == () and p.label == "site@4"
    assert p.approval == "DPO J. Smith, ticket 4411"
    assert p.describe().split(" ")[1] != base.describe().split(" ")[1]


def test_a_stricter_override_needs_no_approval():
    base = ReleaseGatePolicy(required_buckets=())
    p = apply_override(base, target_rate=0.001, confidence=0.99, every_bucket=True)
    assert (p.target_rate, p.confidence, p.required_buckets, p.approval) == (0.001, 0.99, None, "")
    assert apply_override(base, target_rate=0.01) == base  # the same value is no weakening


def test_overrides_out_of_range_are_refused():
    for kwargs in ({"target_rate": 0.0}, {"target_rate": 2.0}, {"confidence": 1.0}):
        with pytest.raises(ConfigError) as err:
            apply_override(ReleaseGatePolicy(), approval="DPO A. Example", **kwargs)
        assert err.value.code == "E955"


# -- the Dagster resource -----------------------------------------------------------------------


def test_the_resource_without_arguments_is_the_default_policy():
    assert ReleaseGateResource().policy() == ReleaseGatePolicy()


def test_the_resource_refuses_a_weakening_override_without_approval():
    with pytest.raises(ConfigError) as err:
        ReleaseGateResource(target_rate=0.5).policy()
    assert err.value.code == "E956" and "target_rate" in err.value.message
    with pytest.raises(ConfigError):
        ReleaseGateResource(every_bucket=False).policy()
    p = ReleaseGateResource(target_rate=0.5, approval="DPO A. Example").policy()
    assert p.target_rate == 0.5 and p.approval == "DPO A. Example"
    assert ReleaseGateResource(target_rate=0.001).policy().target_rate == 0.001


def test_the_resource_reads_the_policy_file_and_overrides_it(tmp_path: Path, monkeypatch):
    path = _write(tmp_path, FULL)
    monkeypatch.setenv("TIDE_GATE_POLICY", path)  # the deployment's own file
    assert ReleaseGateResource(policy_file=path).policy() == load_gate_policy(path)
    # hospital-x@3 asks for 0.005: the default's 0.01 is a weakening of it
    with pytest.raises(ConfigError) as err:
        ReleaseGateResource(policy_file=path, target_rate=0.01).policy()
    assert err.value.code == "E956" and "hospital-x@3" in err.value.message
    assert ReleaseGateResource(policy_file=path, every_bucket=True).policy().required_buckets is None


def test_a_run_naming_a_weaker_policy_file_needs_an_approval(tmp_path: Path, monkeypatch):
    """Swapping the whole file at launch is an override too: judged against the deployment's file."""
    monkeypatch.delenv("TIDE_GATE_POLICY", raising=False)
    weak = _write(tmp_path, 'name = "lenient"\nversion = 1\ntarget_rate = 0.2\n', "weak.toml")
    with pytest.raises(ConfigError) as err:
        ReleaseGateResource(policy_file=weak).policy()
    assert err.value.code == "E956" and "target_rate" in err.value.message
    approved = ReleaseGateResource(policy_file=weak, approval="DPO A. Example, ticket 7").policy()
    assert approved.target_rate == 0.2 and approved.approval == "DPO A. Example, ticket 7"
    monkeypatch.setenv("TIDE_GATE_POLICY", weak)  # the deployment itself owns the lenient file
    assert ReleaseGateResource(policy_file=weak).policy().approval == ""


def test_run_config_overrides_go_through_the_same_check():
    """What a Launchpad user sets as the gate's resource config at launch."""
    with dg.build_resources(
        {"gate": ReleaseGateResource()}, resource_config={"gate": {"config": {"target_rate": 0.5}}}
    ) as r:
        with pytest.raises(ConfigError) as err:
            r.gate.policy()
    assert err.value.code == "E956"
    config = {"gate": {"config": {"target_rate": 0.5, "approval": "DPO A. Example"}}}
    with dg.build_resources({"gate": ReleaseGateResource()}, resource_config=config) as r:
        assert r.gate.policy().approval == "DPO A. Example"


def test_tide_gate_policy_binds_the_policy_file(tmp_path: Path, monkeypatch):
    assert ENV_SETTINGS[("gate", "policy_file")] == "TIDE_GATE_POLICY"
    path = _write(tmp_path, FULL)
    res = default_resources({"TIDE_GATE_POLICY": path})
    assert isinstance(res["gate"].policy_file, dg.EnvVar)
    assert res["gate"].policy_file.env_var_name == "TIDE_GATE_POLICY"
    monkeypatch.setenv("TIDE_GATE_POLICY", path)
    assert resolved(res["gate"]).policy().label == "hospital-x@3"
    # while the deployment's file is set, a run on the built-in policy weakens it
    with pytest.raises(ConfigError):
        default_resources({})["gate"].policy()
    monkeypatch.delenv("TIDE_GATE_POLICY")
    assert default_resources({})["gate"].policy() == ReleaseGatePolicy()


# -- the code version of release_summary --------------------------------------------------------


def _resources(root: Path, gate: ReleaseGateResource) -> dict:
    return {
        "warehouse": WarehouseResource(url=f"duckdb:{root / 'wh.duckdb'}"),
        "tide_config": TideConfigResource(preset="rules"),
        "key_provider": KeyProviderResource(key_dir=str(root / "keys")),
        "gate": gate,
    }


def _node(defs: dg.Definitions, name: str):
    return defs.resolve_asset_graph().get(dg.AssetKey(name))


def _version(tmp_path: Path, gate: ReleaseGateResource, name: str = "release_summary") -> str:
    return _node(build_defs(_resources(tmp_path, gate)), name).code_version


def test_the_policy_file_is_part_of_the_release_summary_code_version(tmp_path: Path):
    one = _write(tmp_path, 'name = "site"\nversion = 1\ntarget_rate = 0.01\n', "one.toml")
    two = _write(tmp_path, 'name = "site"\nversion = 2\ntarget_rate = 0.005\n', "two.toml")
    same_label = _write(tmp_path, 'name = "site"\nversion = 1\nconfidence = 0.99\n', "same_label.toml")
    v1 = _version(tmp_path, ReleaseGateResource(policy_file=one))
    v2 = _version(tmp_path, ReleaseGateResource(policy_file=two))
    assert v1 != v2
    assert v1 == _version(tmp_path, ReleaseGateResource(policy_file=one))  # the same file, the same version
    assert v1 != _version(tmp_path, ReleaseGateResource(policy_file=same_label))  # values count, not only the label
    assert v1.endswith("+" + load_gate_policy(one).describe())  # the UI names the policy
    assert _version(tmp_path, ReleaseGateResource()).endswith("+" + DEFAULT_POLICY.describe())
    # the recognition and release assets below it do not depend on the gate
    for name in ("recognized_spans", "deidentified_notes"):
        assert _version(tmp_path, ReleaseGateResource(policy_file=one), name) == _version(
            tmp_path, ReleaseGateResource(policy_file=two), name
        )
    node = _node(build_defs(_resources(tmp_path, ReleaseGateResource(policy_file=two))), "release_summary")
    assert node.metadata["tide/gate_policy"] == load_gate_policy(two).describe()


def test_an_approved_override_is_part_of_the_code_version(tmp_path: Path):
    plain = _version(tmp_path, ReleaseGateResource())
    approved = _version(tmp_path, ReleaseGateResource(target_rate=0.02, approval="DPO A. Example"))
    other = _version(tmp_path, ReleaseGateResource(target_rate=0.02, approval="DPO B. Example"))
    assert len({plain, approved, other}) == 3
    assert "DPO" not in approved  # named in the asset's metadata, only digested in its version
    node = _node(
        build_defs(_resources(tmp_path, ReleaseGateResource(target_rate=0.02, approval="DPO A. Example"))),
        "release_summary",
    )
    assert node.metadata["tide/gate_approval"] == "DPO A. Example"


def test_a_weakening_deployment_config_without_approval_does_not_load(tmp_path: Path):
    with pytest.raises(ConfigError) as err:
        build_defs(_resources(tmp_path, ReleaseGateResource(target_rate=0.5)))
    assert err.value.code == "E956"


def test_without_a_trained_model_the_release_summary_version_still_names_the_policy(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("TIDE_MODEL_DIR", str(tmp_path / "no-model-here"))
    one = _write(tmp_path, 'name = "site"\nversion = 1\n', "one.toml")
    two = _write(tmp_path, 'name = "site"\nversion = 2\n', "two.toml")
    versions = []
    for path in (one, two):
        res = {**_resources(tmp_path, ReleaseGateResource(policy_file=path)), "tide_config": TideConfigResource()}
        versions.append(_node(build_defs(res), "release_summary").code_version)
    assert versions[0] != versions[1]
    assert all(v.startswith(MISSING_MODEL + "+") for v in versions)
