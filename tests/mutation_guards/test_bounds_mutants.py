"""The exact audit bounds that the release gate relies on, at their edges.

A bound that is too low would let a leaky release through, so each property is checked against
its definition (scipy's binomial distribution), not against the formula in the module.
"""

from __future__ import annotations

import math

import pytest
from scipy.stats import binom

from tide_core.assurance.bounds import (
    AuditBound,
    audit_bound,
    clopper_pearson_lower,
    clopper_pearson_upper,
    pass_probability,
    required_sample_size,
)
from tide_core.errors import ConfigError


@pytest.mark.parametrize("n,k,c", [(500, 1, 0.95), (120, 7, 0.9), (40, 0, 0.99), (1000, 30, 0.8)])
def test_the_upper_bound_is_the_rate_at_which_k_or_fewer_leaks_have_probability_alpha(n, k, c):
    ub = clopper_pearson_upper(n, k, c)
    assert 0 < ub < 1
    assert binom.cdf(k, n, ub) == pytest.approx(1 - c, rel=1e-6)
    assert binom.cdf(k, n, ub * 0.99) > 1 - c  # any lower rate would still explain the audit


@pytest.mark.parametrize("n,k,c", [(500, 5, 0.95), (120, 7, 0.9), (40, 40, 0.99), (10, 1, 0.8)])
def test_the_lower_bound_is_the_rate_at_which_k_or_more_leaks_have_probability_alpha(n, k, c):
    lb = clopper_pearson_lower(n, k, c)
    assert 0 < lb < k / n or (k == n and 0 < lb < 1)
    assert binom.sf(k - 1, n, lb) == pytest.approx(1 - c, rel=1e-6)


def test_bounds_at_zero_and_all_leaks():
    assert clopper_pearson_lower(300, 0) == 0.0
    assert clopper_pearson_upper(300, 300) == 1.0 and clopper_pearson_upper(0, 0) == 1.0
    assert clopper_pearson_upper(1, 0) == pytest.approx(0.95)  # 1 - 0.05 ** (1 / 1)
    assert clopper_pearson_upper(300, 299) < 1.0
    assert clopper_pearson_lower(300, 300) == pytest.approx(0.05 ** (1 / 300))


@pytest.mark.parametrize(
    "n,k,confidence,code",
    [
        (-1, 0, 0.95, "E740"),
        (10, -1, 0.95, "E740"),
        (10, 11, 0.95, "E740"),
        (10, 0, 0.0, "E741"),
        (10, 0, 1.0, "E741"),
        (10, 0, 1.5, "E741"),
        (10, 10, 0.5, None),
        (0, 0, 0.01, None),
    ],
)
def test_counts_and_confidence_are_checked(n, k, confidence, code):
    message = {
        "E740": (f"invalid audit counts: {k} leaks in {n} sampled", "need 0 <= leaks <= sampled"),
        "E741": (f"confidence {confidence} outside (0, 1)", "use e.g. 0.95"),
    }
    for fn in (clopper_pearson_upper, clopper_pearson_lower):
        if code is None:
            assert 0.0 <= fn(n, k, confidence) <= 1.0
        else:
            with pytest.raises(ConfigError) as e:
                fn(n, k, confidence)
            assert (e.value.code, e.value.message, e.value.hint) == (code, *message[code])


@pytest.mark.parametrize(
    "target,confidence,max_leaks",
    [
        (0.01, 0.95, 0),
        (0.05, 0.95, 0),
        (0.01, 0.95, 1),
        (0.02, 0.99, 2),
        (0.3, 0.8, 0),
        (0.5, 0.5, 0),
        (0.96, 0.95, 0),  # one patient suffices: 0 in 1 bounds the rate at 95%
        (clopper_pearson_upper(2, 0), 0.95, 0),  # a target equal to a bound is not "below" it
        (clopper_pearson_upper(8, 0), 0.95, 0),
        (clopper_pearson_upper(9, 1), 0.95, 1),
    ],
)
def test_required_sample_size_is_the_smallest_that_supports_the_target(target, confidence, max_leaks):
    n = required_sample_size(target, confidence, max_leaks)
    assert clopper_pearson_upper(n, max_leaks, confidence) < target
    assert clopper_pearson_upper(n - 1, max_leaks, confidence) >= target


@pytest.mark.parametrize("target", [0.0, 1.0, -0.1, 1.5])
def test_a_target_rate_outside_zero_one_is_refused(target):
    with pytest.raises(ConfigError) as e:
        required_sample_size(target)
    assert (e.value.code, e.value.message, e.value.hint) == (
        "E742",
        f"target leak rate {target} outside (0, 1)",
        "use e.g. 0.01",
    )


def test_an_unreachable_target_is_refused_not_looped():
    assert required_sample_size(0.001, limit=4096) == 2995
    with pytest.raises(ConfigError) as e:
        required_sample_size(0.001, limit=4095)
    assert (e.value.code, e.value.message, e.value.hint) == (
        "E742",
        "no practical sample size reaches that target",
        "raise the target rate or lower the confidence",
    )
    with pytest.raises(ConfigError) as e:
        required_sample_size(0.01, confidence=1.0)
    assert e.value.code == "E741"
    with pytest.raises(ConfigError):
        required_sample_size(0.01, max_leaks=-1)


@pytest.mark.parametrize("n,k,rate", [(300, 0, 0.0013), (500, 1, 0.0013), (50, 3, 0.1)])
def test_pass_probability_is_the_binomial_cdf(n, k, rate):
    assert pass_probability(n, k, rate) == pytest.approx(binom.cdf(k, n, rate), rel=1e-12)


def test_audit_bound_object():
    b = audit_bound(500, 2, 0.9)
    assert b == AuditBound(500, 2, 0.9, clopper_pearson_upper(500, 2, 0.9), clopper_pearson_lower(500, 2, 0.9))
    assert b.point_estimate == 2 / 500
    assert b.supports(b.upper_bound + 1e-9) and not b.supports(b.upper_bound)  # strictly below
    assert b.to_dict() == {
        "n_sampled": 500,
        "n_leaks": 2,
        "confidence": 0.9,
        "upper_bound": b.upper_bound,
        "lower_bound": b.lower_bound,
        "point_estimate": 0.004,
    }
    empty = audit_bound(0, 0)
    assert math.isnan(empty.point_estimate) and empty.to_dict()["point_estimate"] is None
    assert empty.upper_bound == 1.0 and not empty.supports(1.0)
    assert audit_bound(300, 0).confidence == 0.95
