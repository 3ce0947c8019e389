"""Audit planning: how many *patients* to review per bucket, which ones, and what to claim.

Why patients, not notes: notes of one patient repeat the same name, MRN and dates, so a leak
in one note predicts leaks in the others; counting notes as independent trials would overstate
the evidence.  The sampling unit is the patient, a patient's notes in the bucket are reviewed
together, and the bound is on the share of patients with at least one leaked identifier.

Why buckets: a bucket (site × source × note type) groups notes with one risk profile, and each
bucket gets its own verdict so a weak source cannot hide inside a good average.  A patient with
notes in two buckets is eligible in both.

The sample size depends on the claim (target rate, confidence, allowed leaks) and on the number
N of eligible patients in the bucket: a bucket is a known, finite set of patients sampled without
replacement, so the exact hypergeometric bound applies and a small bucket needs fewer reviews
than the 299 of an infinite population (0 leaks, "< 1%", 95%); a bucket small enough is reviewed
in full (census).  As N grows the size approaches the binomial one.
The sampler is deterministic: a bucket's draw depends only on the seed, the bucket name and the
sorted set of eligible patient ids.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tide_core.assurance.bounds import (
    AuditBound,
    finite_population_sample_size,
    pass_probability,
    required_sample_size,
)
from tide_core.errors import ConfigError

BUCKET_KEYS = ("site", "source", "note_type")


def bucket_of(metadata: Mapping[str, object], keys: Sequence[str] = BUCKET_KEYS) -> str:
    """Bucket name ``site|source|note_type`` (missing values read ``?``)."""
    return "|".join(str(metadata.get(k) or "?") for k in keys)


def buckets_from_notes(notes: Iterable[Any], keys: Sequence[str] = BUCKET_KEYS) -> dict[str, list[str]]:
    """Eligible patient ids per bucket from Notes (or anything with patient_id and metadata)."""
    out: dict[str, set[str]] = defaultdict(set)
    for note in notes:
        out[bucket_of(note.metadata or {}, keys)].add(str(note.patient_id))
    return {b: sorted(p) for b, p in sorted(out.items())}


@dataclass(frozen=True)
class BucketPlan:
    bucket: str
    n_patients: int  # eligible patients in the bucket
    n_sample: int  # patients to review
    census: bool  # every eligible patient is reviewed
    pass_probability_at: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "bucket": self.bucket,
            "n_patients": self.n_patients,
            "n_sample": self.n_sample,
            "census": self.census,
            "pass_probability": self.pass_probability_at,
        }


@dataclass(frozen=True)
class AuditPlan:
    target_rate: float
    confidence: float
    max_leaks: int
    required_per_bucket: int
    buckets: tuple[BucketPlan, ...]

    @property
    def total_sample(self) -> int:
        return sum(b.n_sample for b in self.buckets)

    def __getitem__(self, bucket: str) -> BucketPlan:
        for b in self.buckets:
            if b.bucket == bucket:
                return b
        raise KeyError(bucket)

    def to_dict(self) -> dict[str, Any]:
        return {
            "target_rate": self.target_rate,
            "confidence": self.confidence,
            "max_leaks": self.max_leaks,
            "required_per_bucket": self.required_per_bucket,
            "total_sample": self.total_sample,
            "buckets": [b.to_dict() for b in self.buckets],
        }


def plan_audit(
    patient_buckets: Mapping[str, Iterable[str]],
    target_rate: float = 0.01,
    confidence: float = 0.95,
    max_leaks: int = 0,
    true_rates: Sequence[float] = (0.001, 0.005, 0.01),
) -> AuditPlan:
    """Patients to review per bucket so that ≤ ``max_leaks`` leaks supports ``< target_rate``.

    ``patient_buckets`` maps a bucket name to its eligible patient ids (duplicates are ignored).
    Each bucket of N patients is sized with ``finite_population_sample_size`` (exact
    hypergeometric bound); a bucket where even a census with ``max_leaks`` leaks cannot support
    the target is reviewed in full.  ``required_per_bucket`` is the binomial size of an infinite
    population, the most any bucket needs.  ``pass_probability`` per bucket tells how often a
    bucket whose true rate is each of ``true_rates`` would pass the rule -- a zero-leak rule
    rejects good buckets often.
    """
    n_req = required_sample_size(target_rate, confidence, max_leaks)
    plans = []
    for bucket in sorted(patient_buckets):
        n_pat = len(set(patient_buckets[bucket]))
        n_fin = finite_population_sample_size(n_pat, target_rate, confidence, max_leaks) if n_pat else 0
        n = n_pat if n_fin is None else n_fin
        census = n == n_pat
        probs = {f"{r:g}": pass_probability(n, max_leaks, r) for r in true_rates} if n else {}
        plans.append(BucketPlan(bucket, n_pat, n, census, probs))
    return AuditPlan(target_rate, confidence, max_leaks, n_req, tuple(plans))


def _bucket_seed(seed: int, bucket: str) -> list[int]:
    digest = hashlib.sha256(bucket.encode("utf-8")).digest()
    return [int(seed), int.from_bytes(digest[:8], "big")]


def sample_patients(
    patient_buckets: Mapping[str, Iterable[str]], plan: AuditPlan, seed: int = 42
) -> dict[str, list[str]]:
    """Deterministic simple random sample (without replacement) of patients per bucket."""
    out: dict[str, list[str]] = {}
    for bp in plan.buckets:
        if bp.bucket not in patient_buckets:
            raise ConfigError(
                "E743",
                f"bucket {bp.bucket!r} is in the plan but not in the patient buckets",
                hint="sample from the same buckets the plan was made for",
            )
        pool = sorted(set(str(p) for p in patient_buckets[bp.bucket]))
        rng = np.random.default_rng(_bucket_seed(seed, bp.bucket))
        idx: Sequence[int] | np.ndarray = (
            rng.choice(len(pool), size=min(bp.n_sample, len(pool)), replace=False) if pool else []
        )
        out[bp.bucket] = sorted(pool[i] for i in idx)
    return out


def _ceil_pct(rate: float, digits: int = 1) -> str:
    """Round a bound *up* (a claim must never be stronger than the bound)."""
    scale = 10**digits
    return f"{math.ceil(rate * 100 * scale - 1e-9) / scale:.{digits}f}%"


def release_sentence(
    bound: AuditBound,
    population: str = "this release",
    unit: str = "patients",
    claim_bound: float | None = None,
    scope: str = "",
) -> str:
    """The plain-language claim that ships with a passing bucket or release.

    ``claim_bound`` overrides the stated bound (e.g. the weakest bucket's, with
    ``scope=" in every bucket"``); the bound is always rounded up, never down.

    >>> from tide_core.assurance.bounds import audit_bound
    >>> print(release_sentence(audit_bound(300, 0), "the cardiology notes of site A"))  # doctest: +NORMALIZE_WHITESPACE
    In an audit of 300 patients sampled from the cardiology notes of site A, 0 leaked identifiers
    were found; with 95% confidence the per-patient leak rate is below 1.0%.
    """
    singular = unit[:-1] if unit.endswith("s") else unit
    conf = f"{bound.confidence * 100:g}%"
    if bound.n_leaks == 0:
        found = "0 leaked identifiers were found"
    else:
        found = f"leaked identifiers were found for {bound.n_leaks} {singular if bound.n_leaks == 1 else unit}"
    return (
        f"In an audit of {bound.n_sampled} {unit} sampled from {population}, {found}; "
        f"with {conf} confidence the per-{singular} leak rate is below "
        f"{_ceil_pct(bound.upper_bound if claim_bound is None else claim_bound)}{scope}."
    )
