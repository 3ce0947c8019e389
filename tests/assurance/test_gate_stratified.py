"""The release gate judges a richness-stratified audit by its weighted bound, never by the pooled one."""

from __future__ import annotations

import pytest

from tide_core.assurance.audit_strata import DESIGN, parse_leaks, stratified_records
from tide_core.assurance.audit_table import AuditRecord, records_from_table, records_to_table
from tide_core.assurance.bounds import clopper_pearson_upper
from tide_core.assurance.gate import ReleaseGatePolicy, evaluate_release
from tide_core.assurance.stratified import Stratum, stratified_upper_bound
from tide_core.errors import ConfigError

PLAN = {
    "design": DESIGN,
    "study": "s",
    "key": "k",
    "buckets": {
        "b": {
            "strata": [
                {"name": "richness-1", "population": 9000, "sample": 100, "inclusion_probability": 100 / 9000},
                {"name": "richness-2", "population": 1000, "sample": 400, "inclusion_probability": 0.4},
            ]
        }
    },
}


def test_a_stratified_bucket_gets_the_weighted_bound():
    recs = stratified_records(PLAN, "b", {"richness-1": 0, "richness-2": 0})
    decision = evaluate_release(recs, policy=ReleaseGatePolicy(target_rate=0.05))
    b = decision.buckets["b"]
    expected = stratified_upper_bound([Stratum("richness-1", 9000, 100, 0), Stratum("richness-2", 1000, 400, 0)])
    assert b["design"] == "stratified" and b["upper_bound"] == pytest.approx(expected)
    # the pooled shortcut (500 clean patients) would claim far less than the plain stratum allows
    assert clopper_pearson_upper(500, 0, 0.95) < 0.01 < expected
    assert decision.passed and "every" not in (decision.sentence or "")
    strict = evaluate_release(recs, policy=ReleaseGatePolicy(target_rate=0.01))
    assert not strict.passed  # 500 clean patients pooled would pass 1%; the weighted bound does not


def test_rounds_of_a_stratum_add_up_and_survive_the_table():
    recs = stratified_records(PLAN, "b", {"richness-1": 0, "richness-2": 1}) * 2
    back = records_from_table(records_to_table(recs))
    assert [(r.stratum, r.stratum_population) for r in back] == [(r.stratum, r.stratum_population) for r in recs]
    b = evaluate_release(back).buckets["b"]
    expected = stratified_upper_bound([Stratum("richness-1", 9000, 200, 0), Stratum("richness-2", 1000, 800, 2)])
    assert b["upper_bound"] == pytest.approx(expected) and b["n_patients_sampled"] == 1000


def test_simple_rounds_keep_the_exact_pooled_bound():
    recs = [AuditRecord.create("s", "k", "b", 300, 0)]
    b = evaluate_release(recs).buckets["b"]
    assert "design" not in b and b["upper_bound"] == pytest.approx(clopper_pearson_upper(300, 0, 0.95))


def test_every_stratum_must_be_reported():
    with pytest.raises(ConfigError) as e:
        stratified_records(PLAN, "b", {"richness-1": 0})
    assert e.value.code == "E777"
    with pytest.raises(ConfigError):
        stratified_records({"design": "other"}, "b", {})
    assert parse_leaks("richness-1=0, richness-2=3") == {"richness-1": 0, "richness-2": 3}
    with pytest.raises(ConfigError):
        parse_leaks("richness-1")


def test_inconsistent_strata_block_rather_than_crash():
    bad = [
        AuditRecord.create("s", "k", "b", 50, 0, stratum="richness-1", stratum_population=10),
    ]
    decision = evaluate_release(bad, policy=ReleaseGatePolicy(target_rate=0.5))
    assert not decision.passed and any("inconsistent" in r for r in decision.reasons)
