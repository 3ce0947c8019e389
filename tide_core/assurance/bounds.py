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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
