"""Stratified audits: known inclusion weights, a bound whose coverage is checked by simulation,
rounds that add up and fail closed, and second-reviewer agreement."""

from __future__ import annotations

import pytest

from tide_core.assurance.bounds import clopper_pearson_upper
from tide_core.assurance.stratified import (
    AuditLedger,
    Stratum,
    allocate,
    coverage,
    draw,
    operating_characteristic,
    pooled_upper_bound,
    recheck_agreement,
    stratified_upper_bound,
)
from tide_core.errors import ConfigError

POP = (600, 300, 100)  # plain, medium and PHI-rich strata
SAMPLE = (40, 60, 60)  # rich material oversampled


def test_allocation_oversamples_rich_strata_with_known_inclusion_probabilities():
    richness = {f"p{i:03d}": (0.5 if i < 60 else 5.0 if i < 90 else 20.0) for i in range(120)}
    plan = allocate(richness, 30, n_strata=3)
    assert plan.total_sample == 30
    probs = [s.inclusion_probability for s in plan.strata]
    assert probs == sorted(probs) and probs[0] < probs[-1]  # richer strata reviewed more often
    assert [s.population for s in plan.strata] == [40, 40, 40]
    sample = draw(plan, seed=7)
    assert sample == draw(plan, seed=7) != draw(plan, seed=8)
    for s in plan.strata:
        assert len(sample[s.name]) == s.sample and set(sample[s.name]) <= set(plan.members[s.name])


def test_allocation_refuses_a_sample_larger_than_the_release():
    with pytest.raises(ConfigError) as e:
        allocate({"a": 1.0, "b": 2.0}, 3)
    assert e.value.code == "E767"
    assert allocate({"a": 1.0, "b": 2.0}, 2).total_sample == 2  # one unit fewer is accepted


@pytest.mark.parametrize(
    "rates",
    [
        (0.0, 0.0, 0.05),  # leaks only in the rich stratum
        (0.01, 0.0, 0.0),  # leaks only where sampling is thinnest
        (0.005, 0.01, 0.03),
    ],
)
def test_the_weighted_bound_covers_the_true_leak_share(rates):
    assert coverage(POP, SAMPLE, rates, n_sims=1500, seed=1) >= 0.95


def test_the_pooled_shortcut_undercovers_when_leaks_sit_in_the_thin_stratum():
    # the same simulated releases; only the estimator differs
    pop, sample, rates = (900, 100), (20, 100), (0.1, 0.0)  # the big plain stratum is barely sampled
    pooled = coverage(pop, sample, rates, n_sims=1500, seed=1, bound=pooled_upper_bound)
    weighted = coverage(pop, sample, rates, n_sims=1500, seed=1)
    assert pooled < 0.95 <= weighted


def test_a_census_stratum_contributes_its_exact_share():
    strata = [Stratum("a", 100, 100, 3), Stratum("b", 100, 50, 0)]
    level = 0.95  # one sampled stratum: no adjustment
    assert stratified_upper_bound(strata) == pytest.approx(0.5 * 0.03 + 0.5 * clopper_pearson_upper(50, 0, level))


def test_sidak_level_applies_when_several_strata_are_sampled():
    strata = [Stratum("a", 100, 50, 0), Stratum("b", 100, 50, 0)]
    per = clopper_pearson_upper(50, 0, 0.95**0.5)
    assert stratified_upper_bound(strata) == pytest.approx(per)
    assert per > clopper_pearson_upper(50, 0, 0.95)


def test_inconsistent_counts_are_refused():
    with pytest.raises(ConfigError) as e:
        stratified_upper_bound([Stratum("a", 10, 5, 6)])
    assert e.value.code == "E768"


def test_operating_characteristic_of_zero_leaks_in_299():
    oc = dict(operating_characteristic(299, 0, [0.0, 0.01, 0.02]))
    assert oc[0.0] == 1.0
    assert oc[0.01] == pytest.approx(0.99**299) and oc[0.01] < 0.05
    assert oc[0.02] < oc[0.01]


def test_rounds_add_up_and_a_redraw_after_failure_is_refused():
    ledger = AuditLedger(max_leaks_per_round=0)
    for _ in range(10):
        ledger.add_round("v1", 300, 0)
    assert ledger.pooled == (3000, 0)
    assert ledger.upper_bound() == pytest.approx(clopper_pearson_upper(3000, 0, 0.95))
    ledger.add_round("v1", 300, 1)  # a failed round is recorded ...
    with pytest.raises(ConfigError) as e:  # ... and no further draw of that release is accepted
        ledger.add_round("v1", 300, 0)
    assert e.value.code == "E769"
    ledger.add_round("v2", 300, 0)  # a re-made release starts afresh
    assert ledger.pooled == (300, 0)


def test_a_round_within_the_rule_does_not_block_the_next():
    ledger = AuditLedger(max_leaks_per_round=1)
    ledger.add_round("v1", 473, 1)  # one leak is within "at most 1 in 473"
    ledger.add_round("v1", 473, 0)
    assert ledger.pooled == (946, 1)


def test_second_reviewer_agreement_and_kappa():
    first = {"a": True, "b": False, "c": False, "d": True}
    assert recheck_agreement(first, dict(first)) == {"n_rechecked": 4.0, "agreement": 1.0, "kappa": 1.0}
    second = dict(first, d=False)
    r = recheck_agreement(first, second)
    assert r["agreement"] == 0.75 and 0 < r["kappa"] < 1
    with pytest.raises(ConfigError):
        recheck_agreement(first, {"z": True})
