"""Exact finite-population (hypergeometric) audit bounds, checked against independent arithmetic.

Every expectation here comes from exact integer arithmetic (``math.comb`` and ``Fraction``)
written in this file, never from the module under test.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from tide_core.assurance.bounds import (
    clopper_pearson_upper,
    finite_population_sample_size,
    hypergeometric_upper_count,
    hypergeometric_upper_rate,
    required_sample_size,
)
from tide_core.errors import ConfigError


def cdf(population: int, d: int, n: int, k: int) -> Fraction:
    """P(X <= k) for X ~ Hypergeometric(population, d marked, n drawn), exactly."""
    hits = sum(math.comb(d, x) * math.comb(population - d, n - x) for x in range(0, min(k, d, n) + 1))
    return Fraction(hits, math.comb(population, n))


def upper_count_bruteforce(population: int, n: int, k: int, alpha: Fraction) -> int:
    """Largest D in [k, population - (n - k)] whose cdf at k is above alpha, by trying every D."""
    return max(d for d in range(k, population - (n - k) + 1) if cdf(population, d, n, k) > alpha)


def supports(population: int, n: int, k: int, target: Fraction, alpha: Fraction) -> bool:
    """k leaks in n of population bound the rate below target (exact, one cdf evaluation).

    The cdf falls as D grows, so the bound is below target exactly when the first D at or above
    target is ruled out (or impossible given the sample).
    """
    d_first_bad = math.ceil(target * population)
    if d_first_bad > population - (n - k):
        return True
    return cdf(population, d_first_bad, n, k) <= alpha


ALPHA_95 = Fraction(1, 20)


@pytest.mark.parametrize(("confidence", "alpha"), [(0.95, Fraction(1, 20)), (0.9, Fraction(1, 10))])
def test_upper_count_is_the_largest_plausible_d_for_every_small_population(confidence, alpha):
    checked = 0
    for population in range(0, 41 if confidence == 0.95 else 26):
        for n in range(0, population + 1):
            for k in range(0, n + 1):
                expected = upper_count_bruteforce(population, n, k, alpha)
                assert hypergeometric_upper_count(population, n, k, confidence) == expected, (population, n, k)
                checked += 1
    assert checked > 3000 if confidence == 0.95 else checked > 800


def test_exact_ties_are_not_above_alpha():
    # 0 leaks in 19 of 20: P(X = 0 | D = 1) = 1/20 = 1 - 0.95 exactly, so D = 1 is ruled out
    assert cdf(20, 1, 19, 0) == ALPHA_95
    assert hypergeometric_upper_count(20, 19, 0) == 0
    assert hypergeometric_upper_count(20, 18, 0) == 1  # P(X = 0 | D = 1) = 2/20 > 1/20
    # the same tie in large populations, where the floating-point cdf alone cannot decide
    for population, n in ((2_000, 1_900), (1_000_000, 950_000)):
        assert cdf(population, 1, n, 0) == ALPHA_95
        assert hypergeometric_upper_count(population, n, 0) == 0
        assert hypergeometric_upper_count(population, n - 1, 0) == 1


def test_large_population_bounds_match_exact_arithmetic():
    for population, n, k in ((1_000_000, 300, 0), (1_000_000, 300, 2), (100_000, 473, 1), (5_000, 290, 0)):
        d = hypergeometric_upper_count(population, n, k)
        assert cdf(population, d, n, k) > ALPHA_95 >= cdf(population, d + 1, n, k), (population, n, k)


def test_a_census_bounds_the_count_at_what_was_found():
    for population in (1, 7, 125, 10_000, 1_000_000):
        assert hypergeometric_upper_count(population, population, 0) == 0
        assert hypergeometric_upper_rate(population, population, 0) == 0.0
        k = min(3, population)
        assert hypergeometric_upper_count(population, population, k, 0.99) == k
    assert hypergeometric_upper_count(0, 0, 0) == 0 and hypergeometric_upper_rate(0, 0, 0) == 0.0
    # nothing reviewed: every patient may be leaky
    assert hypergeometric_upper_count(125, 0, 0) == 125 and hypergeometric_upper_rate(125, 0, 0) == 1.0


def test_rate_is_count_over_population():
    for population, n, k in ((125, 60, 0), (1_000, 200, 3), (40, 10, 1)):
        assert hypergeometric_upper_rate(population, n, k) == hypergeometric_upper_count(population, n, k) / population


def test_bound_never_exceeds_the_binomial_bound():
    settings = [
        (population, n, k)
        for population in (10, 37, 125, 500, 2_000, 100_000)
        for n in sorted({1, 5, 30, 59, 299, 473, population // 2, population})
        if n <= population
        for k in (0, 1, 2, 5)
        if k <= n
    ]
    assert len(settings) > 100
    tighter = 0
    for population, n, k in settings:
        for confidence in (0.9, 0.95, 0.99):
            d = hypergeometric_upper_count(population, n, k, confidence)
            binomial = math.ceil(clopper_pearson_upper(n, k, confidence) * population - 1e-9)
            assert d <= binomial, (population, n, k, confidence)
            tighter += d < binomial
    assert tighter > len(settings)  # and it is often strictly sharper


def test_sample_size_is_minimal_for_small_populations():
    for target in (Fraction(1, 100), Fraction(1, 20), Fraction(1, 10)):
        for max_leaks in (0, 1, 2):
            for population in range(1, 41):
                got = finite_population_sample_size(population, float(target), 0.95, max_leaks)
                ns = [
                    n for n in range(max_leaks, population + 1) if supports(population, n, max_leaks, target, ALPHA_95)
                ]
                assert got == (ns[0] if ns else None), (target, max_leaks, population)
                if got is not None:  # and it agrees with the bound function
                    assert hypergeometric_upper_count(population, got, max_leaks) / population < target


@pytest.mark.parametrize("population", [50, 100, 101, 120, 125, 200, 300, 500, 1_000, 5_000, 100_000])
@pytest.mark.parametrize(("target", "max_leaks"), [(0.01, 0), (0.05, 0), (0.01, 1)])
def test_sample_size_passes_and_one_less_fails(population, target, max_leaks):
    n = finite_population_sample_size(population, target, 0.95, max_leaks)
    exact_target = Fraction(repr(target))
    if max_leaks / population >= target:
        assert n is None
        return
    assert n is not None and max_leaks <= n <= population
    assert supports(population, n, max_leaks, exact_target, ALPHA_95)
    if n > max_leaks:
        assert not supports(population, n - 1, max_leaks, exact_target, ALPHA_95)
    assert n <= required_sample_size(target, 0.95, max_leaks)


def test_worked_sample_sizes():
    # 0 leaks, 1%: 120 patients allow D <= 1 and 93 rule out D = 2: 27*26 / (120*119) <= 1/20 < 28*27 / (120*119)
    assert finite_population_sample_size(120, 0.01) == 93
    # under 20 patients only a census rules out D = 1 ((N - n) / N <= 1/20 needs n = N)
    assert [finite_population_sample_size(n, 0.01) for n in (1, 5, 19)] == [1, 5, 19]
    assert finite_population_sample_size(20, 0.01) == 19
    # 1 leak, 1%: 101 patients allow D <= 1 and need 99 to rule out D = 2 (n(n-1) >= 0.95 * 101 * 100)
    assert finite_population_sample_size(101, 0.01, max_leaks=1) == 99
    # even a census cannot support the claim when max_leaks / N >= target
    assert finite_population_sample_size(100, 0.01, max_leaks=1) is None
    assert finite_population_sample_size(50, 0.01, max_leaks=1) is None
    assert finite_population_sample_size(0, 0.01) is None


def test_sample_size_shrinks_with_the_population():
    # along populations where target * N is a whole number the size never grows as N shrinks
    for target, step in ((0.01, 100), (0.05, 20)):
        for max_leaks in (0, 1):
            sizes = [
                finite_population_sample_size(n, target, 0.95, max_leaks) for n in range(step * 2, step * 121, step)
            ]
            assert all(a is not None and b is not None and a <= b for a, b in zip(sizes, sizes[1:], strict=False))
            assert sizes[0] < sizes[-1] <= required_sample_size(target, 0.95, max_leaks)
    # between such populations the whole-number count of allowed leaky patients makes it jump:
    # 21 patients allow D <= 1 at 5% (20 allow only D = 0), so 16 suffice where 20 needed 19
    assert finite_population_sample_size(20, 0.05) == 19
    assert finite_population_sample_size(21, 0.05) == 16


def test_large_population_approaches_the_binomial_rule():
    binomial = required_sample_size(0.01, 0.95, 0)
    assert binomial == 299
    n = finite_population_sample_size(1_000_000, 0.01, 0.95, 0)
    assert n is not None and binomial - 2 <= n <= binomial
    n1 = finite_population_sample_size(1_000_000, 0.01, 0.95, 1)
    assert n1 is not None and required_sample_size(0.01, 0.95, 1) - 2 <= n1 <= required_sample_size(0.01, 0.95, 1)
    assert finite_population_sample_size(1_000_000, 0.05) == required_sample_size(0.05) == 59


def test_many_leaks_in_a_large_population():
    d = hypergeometric_upper_count(1_000_000, 100_000, 5_000)
    assert 50_000 < d <= math.ceil(clopper_pearson_upper(100_000, 5_000) * 1_000_000)


@pytest.mark.parametrize(
    ("call", "code"),
    [
        (lambda: hypergeometric_upper_count(100, 10, 11), "E740"),
        (lambda: hypergeometric_upper_count(100, 10, -1), "E740"),
        (lambda: hypergeometric_upper_count(100, -1, 0), "E740"),
        (lambda: hypergeometric_upper_count(10, 11, 0), "E748"),
        (lambda: hypergeometric_upper_count(-1, 0, 0), "E748"),
        (lambda: hypergeometric_upper_count(100, 10, 0, 1.0), "E741"),
        (lambda: hypergeometric_upper_count(100, 10, 0, 0.0), "E741"),
        (lambda: hypergeometric_upper_rate(10, 11, 0), "E748"),
        (lambda: finite_population_sample_size(100, 0.0), "E742"),
        (lambda: finite_population_sample_size(100, 1.0), "E742"),
        (lambda: finite_population_sample_size(100, 0.01, 1.5), "E741"),
        (lambda: finite_population_sample_size(100, 0.01, 0.95, -1), "E740"),
        (lambda: finite_population_sample_size(-5, 0.01), "E748"),
    ],
)
def test_invalid_inputs_raise_coded_errors(call, code):
    with pytest.raises(ConfigError) as err:
        call()
    assert err.value.code == code
