"""Audits that spend review time where PHI is: richness strata, known weights, a valid bound.

Sampling. Patients (or documents) are split into strata by PHI Guard richness (expected PHI
tokens per 100 tokens; ``tide_core.assurance.guard_model``). A stratum's sample size is
proportional to its size times its mean richness, so PHI-rich material is reviewed more often,
with at least one unit per stratum and never more than the stratum holds. The inclusion
probability of a unit of stratum *h* is ``n_h / N_h``: known in advance, written in the plan.

Estimator and bound. The leak share of the release is ``p = sum_h (N_h / N) p_h``. Each stratum
gets an exact Clopper-Pearson upper bound at the Šidák-adjusted level ``1 - (1 - c)^(1/H)`` (a
stratum reviewed in full contributes its exact share), and the bound is their weighted sum.
When every stratum's bound holds, which happens with probability at least ``c`` because the
strata are sampled independently, the weighted sum is at least ``p``: the bound is valid at
confidence ``c`` whatever the allocation. A pooled bound that treats the stratified sample as one
simple random sample is not (it undercovers when leaks sit in an under-sampled stratum);
:func:`coverage` measures both by simulation.

Rules and rounds. "At most k leaks in n" has the operating characteristic
:func:`operating_characteristic`. Rounds add up (:class:`AuditLedger`: ten clean rounds of 300
are one sample of 3,000) and a redraw after a failed round is refused until the release changes.
A second reviewer re-checks a sample of reviewed units (:func:`recheck_agreement`).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import binom, hypergeom

from tide_core.assurance.bounds import clopper_pearson_upper
from tide_core.errors import ConfigError


@dataclass(frozen=True)
class Stratum:
    """One richness stratum: its population, the sample drawn and the leaks found there."""

    name: str
    population: int
    sample: int
    leaks: int = 0

    @property
    def inclusion_probability(self) -> float:
        return self.sample / self.population if self.population else 0.0

    @property
    def census(self) -> bool:
        return self.sample >= self.population


@dataclass(frozen=True)
class StratifiedPlan:
    strata: tuple[Stratum, ...]
    members: dict[str, tuple[str, ...]] = field(default_factory=dict)  # stratum -> unit ids

    @property
    def total_sample(self) -> int:
        return sum(s.sample for s in self.strata)

    def to_dict(self) -> dict[str, Any]:
        return {
            "strata": [
                {
                    "name": s.name,
                    "population": s.population,
                    "sample": s.sample,
                    "inclusion_probability": round(s.inclusion_probability, 6),
                }
                for s in self.strata
            ],
            "total_sample": self.total_sample,
        }


def allocate(richness: Mapping[str, float], n_total: int, n_strata: int = 3) -> StratifiedPlan:
    """Richness strata (equal-count by rank) and a sample size per stratum ∝ size x mean richness."""
    if n_total < 1:
        raise ConfigError("E765", "an audit needs a sample of at least 1", hint="raise --n")
    units = sorted(richness, key=lambda u: (richness[u], u))
    if not units:
        raise ConfigError("E766", "nothing to audit: no scored units", hint="score the release with the guard first")
    if n_total > len(units):
        raise ConfigError(
            "E767",
            f"a sample of {n_total} exceeds the {len(units)} units in the release",
            hint="review them all (census) or lower --n",
        )
    n_strata = max(1, min(n_strata, len(units)))
    bounds = [round(i * len(units) / n_strata) for i in range(n_strata + 1)]
    groups = [units[bounds[i] : bounds[i + 1]] for i in range(n_strata)]
    weight = [len(g) * max(float(np.mean([richness[u] for u in g])), 1e-6) for g in groups]
    raw = [n_total * w / sum(weight) for w in weight]
    sizes = [min(len(g), max(1, math.floor(r))) for g, r in zip(groups, raw, strict=True)]
    # hand out what rounding left, largest remainder first, never beyond a stratum's size
    order = sorted(range(n_strata), key=lambda i: -(raw[i] - math.floor(raw[i])))
    while sum(sizes) < n_total:
        grown = False
        for i in order:
            if sum(sizes) < n_total and sizes[i] < len(groups[i]):
                sizes[i] += 1
                grown = True
        if not grown:
            break
    while sum(sizes) > n_total:  # the minimum of one per stratum can overshoot a tiny n
        i = max(range(n_strata), key=lambda j: sizes[j])
        sizes[i] -= 1
    strata = tuple(Stratum(f"richness-{i + 1}", len(g), sizes[i]) for i, g in enumerate(groups))
    return StratifiedPlan(strata, {s.name: tuple(g) for s, g in zip(strata, groups, strict=True)})


def draw(plan: StratifiedPlan, seed: int) -> dict[str, list[str]]:
    """The seeded sample of each stratum (deterministic: seed, stratum name and its members)."""
    out = {}
    for s in plan.strata:
        members = sorted(plan.members.get(s.name, ()))
        key = lambda u, name=s.name: hashlib.sha256(f"{seed}|{name}|{u}".encode()).hexdigest()  # noqa: E731
        out[s.name] = sorted(sorted(members, key=key)[: s.sample])
    return out


def stratified_upper_bound(strata: Sequence[Stratum], confidence: float = 0.95) -> float:
    """Valid upper bound on the population leak share from a stratified sample (see module doc)."""
    live = [s for s in strata if s.population > 0]
    if not live:
        raise ConfigError("E766", "nothing to audit: every stratum is empty")
    for s in live:
        if not 0 <= s.leaks <= s.sample <= s.population:
            raise ConfigError(
                "E768",
                f"stratum {s.name}: need 0 <= leaks <= sample <= population",
                hint="record the review of the drawn sample only",
            )
    sampled = [s for s in live if not s.census]
    level = confidence ** (1.0 / len(sampled)) if sampled else 1.0  # Šidák: all hold with prob >= confidence
    total = sum(s.population for s in live)
    bound = 0.0
    for s in live:
        share = s.leaks / s.population if s.census else clopper_pearson_upper(s.sample, s.leaks, level)
        bound += s.population / total * share
    return min(1.0, bound)


def pooled_upper_bound(strata: Sequence[Stratum], confidence: float = 0.95) -> float:
    """The invalid shortcut, for comparison only: one Clopper-Pearson bound on the pooled sample."""
    return clopper_pearson_upper(sum(s.sample for s in strata), sum(s.leaks for s in strata), confidence)


def coverage(
    populations: Sequence[int],
    samples: Sequence[int],
    leak_rates: Sequence[float],
    n_sims: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
    bound: Callable[..., float] = stratified_upper_bound,
) -> float:
    """Share of simulated releases whose bound covers the true leak share.

    Each stratum holds exactly ``round(rate x N_h)`` leaking units; a sample without replacement
    finds a hypergeometric number of them.
    """
    rng = np.random.default_rng(seed)
    leaking = [round(r * n) for r, n in zip(leak_rates, populations, strict=True)]
    truth = sum(leaking) / sum(populations)
    hits = 0
    for _ in range(n_sims):
        strata = []
        for i, (big_n, n, k) in enumerate(zip(populations, samples, leaking, strict=True)):
            x = int(hypergeom.rvs(big_n, k, n, random_state=rng)) if n else 0
            strata.append(Stratum(f"s{i}", big_n, n, x))
        hits += bound(strata, confidence) >= truth
    return hits / n_sims


def operating_characteristic(n: int, max_leaks: int, rates: Sequence[float]) -> list[tuple[float, float]]:
    """(true rate, probability that "at most max_leaks leaks in n" passes) for each rate."""
    return [(r, float(binom.cdf(max_leaks, n, r))) for r in rates]


@dataclass
class AuditLedger:
    """Audit rounds of one release (one study, key and bucket): they add up, and fail closed.

    A round is recorded with the release version it reviewed. After a failed round (more leaks
    than the rule allows) another round of the same release version is refused: drawing again
    until a sample looks clean would make the bound meaningless. A new release version (the
    pipeline was fixed and the release re-made) starts a new ledger.
    """

    max_leaks_per_round: int = 0
    rounds: list[tuple[str, int, int]] = field(default_factory=list)  # (release version, n, leaks)

    def add_round(self, release_version: str, n: int, leaks: int) -> None:
        if n < 1 or not 0 <= leaks <= n:
            raise ConfigError("E768", "an audit round needs n >= 1 and 0 <= leaks <= n")
        if self.rounds and self.rounds[-1][0] != release_version:
            self.rounds = []  # a new release: earlier rounds reviewed other text
        if any(k > self.max_leaks_per_round for _, _, k in self.rounds):
            raise ConfigError(
                "E769",
                "a round of this release already failed; another draw of the same release is refused",
                hint="fix the pipeline, re-make the release (new version), then audit it afresh",
            )
        self.rounds.append((release_version, int(n), int(leaks)))

    @property
    def pooled(self) -> tuple[int, int]:
        return sum(n for _, n, _ in self.rounds), sum(k for _, _, k in self.rounds)

    def upper_bound(self, confidence: float = 0.95) -> float:
        n, k = self.pooled
        if not n:
            raise ConfigError("E766", "no audit round recorded")
        return clopper_pearson_upper(n, k, confidence)


def recheck_agreement(first: Mapping[str, bool], second: Mapping[str, bool]) -> dict[str, float]:
    """Agreement of a second reviewer with the first on the re-checked units (leak yes/no).

    Returns the number re-checked, the share of agreement and Cohen's kappa.
    """
    common = sorted(set(first) & set(second))
    if not common:
        raise ConfigError("E770", "the second reviewer re-checked none of the first reviewer's units")
    a = np.array([bool(first[u]) for u in common])
    b = np.array([bool(second[u]) for u in common])
    agree = float(np.mean(a == b))
    expected = float(a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean()))
    kappa = 1.0 if expected >= 1.0 else (agree - expected) / (1 - expected)
    return {"n_rechecked": float(len(common)), "agreement": agree, "kappa": kappa}
