"""Exact binomial bounds for audit results.

If ``k`` of ``n`` randomly sampled patients had a leaked identifier, the one-sided
Clopper–Pearson upper bound at confidence ``c`` is the rate ``p`` with
``P(X <= k | n, p) = 1 - c``, i.e. the ``c`` quantile of Beta(k + 1, n - k)
(for k = 0 this is ``1 - (1 - c) ** (1 / n)``).  It is exact, never below the true coverage,
and needs no normal approximation -- which matters because audits are small and leaks rare.

Worked figures at 95%: 0 leaks in 299 patients bounds the rate below 1% (0.99692%), 0 in 298
does not (1.00024%); 0 in 300 gives 0.99361%; 0 in 59 supports "below 5%"; 1 leak in 500
supports "below 1%" (0.9452%; 473 patients suffice for that rule).  The sample size depends on
the claim, not on the release size.

The binomial bound treats the audited patients as a sample from an infinite population.  When
the population is a known, finite set of N patients (a bucket of a study) and the sample is
drawn without replacement, the exact hypergeometric bound on the *number* D of leaky patients
is sharper: ``hypergeometric_upper_count`` is the largest D with P(X <= k | N, D, n) > 1 - c,
and a census (n == N) bounds D at exactly k.  At 95%, 0 leaks in 290 of 5,000 patients support
"below 1%", and a clean census of any size bounds the rate at 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from scipy.special import gammaln
from scipy.stats import beta, binom

from tide_core.errors import ConfigError


def _check(n: int, k: int, confidence: float) -> None:
    if n < 0 or k < 0 or k > n:
        raise ConfigError("E740", f"invalid audit counts: {k} leaks in {n} sampled", hint="need 0 <= leaks <= sampled")
    if not 0.0 < confidence < 1.0:
        raise ConfigError("E741", f"confidence {confidence} outside (0, 1)", hint="use e.g. 0.95")


def clopper_pearson_upper(n: int, k: int, confidence: float = 0.95) -> float:
    """One-sided exact upper confidence bound on a binomial rate (1.0 when n == 0 or k == n)."""
    _check(n, k, confidence)
    if n == 0 or k >= n:
        return 1.0
    return float(beta.ppf(confidence, k + 1, n - k))


def clopper_pearson_lower(n: int, k: int, confidence: float = 0.95) -> float:
    _check(n, k, confidence)
    if k == 0:
        return 0.0
    return float(beta.ppf(1.0 - confidence, k, n - k + 1))


def required_sample_size(
    target_rate: float, confidence: float = 0.95, max_leaks: int = 0, limit: int = 10_000_000
) -> int:
    """Smallest n whose bound with ``max_leaks`` leaks is strictly below ``target_rate``."""
    if not 0.0 < target_rate < 1.0:
        raise ConfigError("E742", f"target leak rate {target_rate} outside (0, 1)", hint="use e.g. 0.01")
    _check(max_leaks, max_leaks, confidence)
    lo, hi = max_leaks + 1, max_leaks + 2
    while clopper_pearson_upper(hi, max_leaks, confidence) >= target_rate:
        lo, hi = hi, hi * 2
        if hi > limit:
            raise ConfigError(
                "E742",
                "no practical sample size reaches that target",
                hint="raise the target rate or lower the confidence",
            )
    while lo < hi:  # smallest n in (lo, hi] with bound < target (the bound falls with n)
        mid = (lo + hi) // 2
        if clopper_pearson_upper(mid, max_leaks, confidence) < target_rate:
            hi = mid
        else:
            lo = mid + 1
    return hi


def pass_probability(n: int, max_leaks: int, true_rate: float) -> float:
    """Chance that an audit rule 'at most max_leaks in n' passes when the true rate is true_rate."""
    return float(binom.cdf(max_leaks, n, true_rate))


@dataclass(frozen=True)
class AuditBound:
    n_sampled: int
    n_leaks: int
    confidence: float
    upper_bound: float
    lower_bound: float

    @property
    def point_estimate(self) -> float:
        return self.n_leaks / self.n_sampled if self.n_sampled else float("nan")

    def supports(self, target_rate: float) -> bool:
        return self.upper_bound < target_rate

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_sampled": self.n_sampled,
            "n_leaks": self.n_leaks,
            "confidence": self.confidence,
            "upper_bound": self.upper_bound,
            "lower_bound": self.lower_bound,
            "point_estimate": self.point_estimate if self.n_sampled else None,
        }


def audit_bound(n_sampled: int, n_leaks: int, confidence: float = 0.95) -> AuditBound:
    """Exact (Clopper–Pearson) bounds on the per-patient leak rate from one audit."""
    return AuditBound(
        n_sampled,
        n_leaks,
        confidence,
        clopper_pearson_upper(n_sampled, n_leaks, confidence),
        clopper_pearson_lower(n_sampled, n_leaks, confidence),
    )


# --- exact finite-population (hypergeometric) bounds -----------------------------------------


def _check_population(population: int, n: int) -> None:
    if population < 0 or n > population:
        raise ConfigError(
            "E748",
            f"invalid audit population: {n} sampled from {population} patients",
            hint="need 0 <= sampled <= population",
        )


def _log_comb(a: int, b: np.ndarray) -> np.ndarray:
    return np.asarray(gammaln(a + 1.0) - gammaln(b + 1.0) - gammaln(a - b + 1.0))


def _hyper_support(population: int, d: int, n: int, k: int) -> tuple[int, int, bool]:
    """Range of x summed by P(X <= k) and whether it covers the whole support (cdf == 1)."""
    lo = max(0, n - (population - d))
    return lo, min(k, d), k >= min(n, d)


def _hyper_log_cdf(population: int, d: int, n: int, k: int) -> float:
    """log P(X <= k) for X ~ Hypergeometric(population, d leaky, n drawn), in floating point."""
    lo, hi, whole = _hyper_support(population, d, n, k)
    if whole:
        return 0.0
    if lo > hi:
        return -math.inf
    x = np.arange(lo, hi + 1, dtype=float)
    log_pmf = _log_comb(d, x) + _log_comb(population - d, n - x) - float(gammaln(population + 1.0))
    log_pmf += float(gammaln(n + 1.0) + gammaln(population - n + 1.0))
    top = float(log_pmf.max())
    return top + math.log(math.fsum(np.exp(log_pmf - top).tolist()))


def _hyper_cdf_exceeds_exact(population: int, d: int, n: int, k: int, alpha: Fraction) -> bool:
    """P(X <= k) > alpha, in exact integer arithmetic."""
    lo, hi, whole = _hyper_support(population, d, n, k)
    if whole:
        return 1 > alpha
    hits = sum(math.comb(d, x) * math.comb(population - d, n - x) for x in range(lo, hi + 1))
    return hits * alpha.denominator > alpha.numerator * math.comb(population, n)


class _HyperCdfTest:
    """Decides P(X <= k | population, d, n) > alpha: fast in log space, exact near a tie."""

    def __init__(self, population: int, confidence: float):
        self.population = population
        # the confidence is read as the decimal it is written as (0.95 -> 19/20), so that an exact
        # tie (cdf == 1 - confidence) is decided the way the definition says: not above alpha
        self.alpha = 1 - Fraction(repr(float(confidence)))
        self.log_alpha = math.log(float(self.alpha))
        # rounding error of the lgamma sums grows with their size (about lgamma(population + 1))
        self.tol = 1e-9 + 1e-12 * math.lgamma(population + 2.0)

    def exceeds(self, d: int, n: int, k: int) -> bool:
        log_cdf = _hyper_log_cdf(self.population, d, n, k)
        if log_cdf > self.log_alpha + self.tol:
            return True
        if log_cdf < self.log_alpha - self.tol:
            return False
        return _hyper_cdf_exceeds_exact(self.population, d, n, k, self.alpha)

    def upper_count(self, n: int, k: int) -> int:
        lo, hi = k, self.population - (n - k)  # lo always qualifies: P(X <= k | D = k) = 1
        while lo < hi:  # the cdf falls as D grows: find the last D above alpha
            mid = (lo + hi + 1) // 2
            if self.exceeds(mid, n, k):
                lo = mid
            else:
                hi = mid - 1
        return lo


def hypergeometric_upper_count(population: int, n: int, k: int, confidence: float = 0.95) -> int:
    """Exact one-sided upper confidence bound on the number of leaky patients in a finite population.

    ``k`` leaky patients were found in a simple random sample of ``n`` drawn without replacement
    from ``population`` patients.  Returns the largest D in [k, population - (n - k)] with
    P(X <= k | population, D, n) > 1 - confidence; a census (n == population) returns k.
    """
    _check(n, k, confidence)
    _check_population(population, n)
    return _HyperCdfTest(population, confidence).upper_count(n, k)


def hypergeometric_upper_rate(population: int, n: int, k: int, confidence: float = 0.95) -> float:
    """``hypergeometric_upper_count`` as a share of the population (0.0 for an empty population)."""
    count = hypergeometric_upper_count(population, n, k, confidence)
    return count / population if population else 0.0


def finite_population_sample_size(
    population: int, target_rate: float, confidence: float = 0.95, max_leaks: int = 0
) -> int | None:
    """Smallest n for which ``max_leaks`` leaks in n of ``population`` patients bound the rate below target.

    The bound is ``hypergeometric_upper_count(population, n, max_leaks, confidence) / population``.
    Returns None when even a census cannot support the claim (max_leaks / population >= target).
    """
    if not 0.0 < target_rate < 1.0:
        raise ConfigError("E742", f"target leak rate {target_rate} outside (0, 1)", hint="use e.g. 0.01")
    _check(max_leaks, max_leaks, confidence)
    _check_population(population, 0)
    if population == 0 or max_leaks / population >= target_rate:
        return None
    test = _HyperCdfTest(population, confidence)
    lo, hi = max_leaks, population  # the census (hi) qualifies; the bound falls as n grows
    while lo < hi:
        mid = (lo + hi) // 2
        if test.upper_count(mid, max_leaks) / population < target_rate:
            hi = mid
        else:
            lo = mid + 1
    return hi
