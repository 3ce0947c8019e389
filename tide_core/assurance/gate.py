"""The release gate: may this (study, key) release go out?

A release passes only with evidence:

- every required bucket has at least one audit record (no audit → blocked: "unvalidated");
- for every audited bucket, all its rounds pooled (sum of patients, sum of leaks) give an exact
  upper bound below ``policy.target_rate`` at ``policy.confidence`` -- recomputed here from
  the counts, never read from the stored ``upper_bound``; a bucket audited with a sample
  stratified by PHI Guard richness (rounds with a ``stratum``) is judged by the weighted bound
  of ``tide_core.assurance.stratified`` over its strata instead (valid whatever the allocation);
- the drift verdict, when given, is not ``drift`` (``watch``/``unknown`` block only when the
  policy says so; ``require_drift`` makes a missing drift check block).

A drift alert alone does not revoke an earlier determination, but a release made after one,
without looking, has nothing behind it -- hence the default of blocking on ``drift``.
The decision lists every reason, and carries the release sentence only when it passes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tide_core.assurance.audit import release_sentence
from tide_core.assurance.audit_table import AuditRecord, records_from_table
from tide_core.assurance.bounds import audit_bound
from tide_core.assurance.stratified import Stratum, stratified_upper_bound
from tide_core.errors import TideError


@dataclass(frozen=True)
class ReleaseGatePolicy:
    target_rate: float = 0.01
    confidence: float = 0.95
    require_audit: bool = True
    required_buckets: Sequence[str] | None = None  # buckets that must each have an audit
    block_on_drift: bool = True
    block_on_watch: bool = False
    block_on_unknown: bool = False
    require_drift: bool = False


@dataclass
class GateDecision:
    passed: bool
    reasons: list[str]
    sentence: str | None
    buckets: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "reasons": self.reasons, "sentence": self.sentence, "buckets": self.buckets}


def _drift_band(drift_result: Any) -> str | None:
    if drift_result is None:
        return None
    if isinstance(drift_result, str):
        return drift_result
    if isinstance(drift_result, dict):
        return drift_result.get("band")
    return getattr(drift_result, "band", None)


def _strata_by_bucket(records: Sequence[AuditRecord]) -> dict[str, list[Stratum]]:
    """The strata of each bucket audited with a stratified design: rounds of a stratum add up
    (patients and leaks summed), its size is the largest recorded for it."""
    acc: dict[str, dict[str, list[int]]] = defaultdict(dict)
    for r in records:
        if not r.stratum:
            continue
        n, k, pop = acc[r.bucket].setdefault(r.stratum, [0, 0, 0])
        acc[r.bucket][r.stratum] = [n + r.n_patients_sampled, k + r.n_leaks, max(pop, r.stratum_population or 0)]
    return {b: [Stratum(name, pop, n, k) for name, (n, k, pop) in sorted(s.items())] for b, s in acc.items()}


def evaluate_release(
    audit_records: Iterable[AuditRecord] | Any,
    drift_result: Any = None,
    policy: ReleaseGatePolicy = ReleaseGatePolicy(),
    population: str | None = None,
) -> GateDecision:
    """Decide a release from its audit records (list or Arrow table) and an optional drift result."""
    if hasattr(audit_records, "column_names"):
        audit_records = records_from_table(audit_records)
    records = list(audit_records or [])
    reasons: list[str] = []
    pooled: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    studies = sorted({(r.study, r.key) for r in records})
    for r in records:
        acc = pooled[r.bucket]
        acc[0] += int(r.n_patients_sampled)
        acc[1] += int(r.n_leaks)
        acc[2] += 1
    if not records and policy.require_audit:
        reasons.append("no audit records: the release is unvalidated (run `tide audit plan`, review, record)")
    if len(studies) > 1:
        reasons.append(f"audit records mix {len(studies)} (study, key) pairs; gate one release at a time")
    for bucket in policy.required_buckets or ():
        if bucket not in pooled:
            reasons.append(f"bucket {bucket!r} has no audit: unvalidated")
    buckets: dict[str, dict[str, Any]] = {}
    worst = None
    worst_stratified = 0.0
    strata = _strata_by_bucket(records)
    for bucket in sorted(pooled):
        n, k, rounds = pooled[bucket]
        b = audit_bound(n, k, policy.confidence)
        upper, design = b.upper_bound, "simple"
        if bucket in strata:  # a richness-stratified audit: its weighted bound, never the pooled one
            design = "stratified"
            try:
                upper = stratified_upper_bound(strata[bucket], policy.confidence)
            except TideError as exc:
                upper = 1.0
                reasons.append(f"bucket {bucket!r}: stratified audit rounds are inconsistent ({exc.code})")
            worst_stratified = max(worst_stratified, upper)
        ok = upper < policy.target_rate
        buckets[bucket] = {
            "n_patients_sampled": n,
            "n_leaks": k,
            "rounds": rounds,
            "upper_bound": upper,
            "passed": ok,
        }
        if design != "simple":
            buckets[bucket]["design"] = design
        if not ok:
            reasons.append(
                f"bucket {bucket!r}: {k} leaks in {n} patients gives an upper bound of "
                f"{upper * 100:.4f}% at {policy.confidence * 100:g}% confidence, not below "
                f"{policy.target_rate * 100:g}%"
            )
        if worst is None or b.upper_bound > worst.upper_bound:
            worst = b
    band = _drift_band(drift_result)
    if band is None and policy.require_drift:
        reasons.append("no drift check for this batch (policy requires one)")
    elif band == "drift" and policy.block_on_drift:
        reasons.append("drift monitor band is 'drift': the batch differs from the validated reference")
    elif band == "watch" and policy.block_on_watch:
        reasons.append("drift monitor band is 'watch' (policy blocks on watch)")
    elif band == "unknown" and policy.block_on_unknown:
        reasons.append("drift monitor could not compute every component (policy blocks on unknown)")
    passed = not reasons
    sentence = None
    if passed and worst is not None:
        total_n = sum(v["n_patients_sampled"] for v in buckets.values())
        total_k = sum(v["n_leaks"] for v in buckets.values())
        where = population or (
            f"{len(buckets)} bucket{'s' if len(buckets) != 1 else ''}"
            + (f" of study {studies[0][0]}" if studies else "")
        )
        pooled_bound = audit_bound(total_n, total_k, policy.confidence)
        claim = max(v["upper_bound"] for v in buckets.values())
        if worst_stratified:  # state the weighted bound (the weakest bucket's), not the pooled one
            sentence = release_sentence(
                pooled_bound, where, claim_bound=claim, scope=" in every bucket" if len(buckets) > 1 else ""
            )
        elif len(buckets) == 1:
            sentence = release_sentence(pooled_bound, where)
        else:  # the claim is per bucket: state the weakest bucket's bound
            sentence = release_sentence(pooled_bound, where, claim_bound=worst.upper_bound, scope=" in every bucket")
    return GateDecision(passed, reasons, sentence, buckets)
