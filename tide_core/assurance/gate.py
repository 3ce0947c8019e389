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

A policy is named (``label``, ``name@version``; a deployment's comes from its policy file, see
``tide_core.assurance.gate_policy``) and ``describe()`` adds a digest of what it decides;
``weakens(base, other)`` lists the fields in which ``other`` demands less, which an override may
do only with a named ``approval``.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tide_core.assurance.audit import release_sentence
from tide_core.assurance.audit_table import AuditRecord, records_from_table
from tide_core.assurance.bounds import audit_bound
from tide_core.assurance.stratified import Stratum, stratified_upper_bound
from tide_core.errors import TideError
from tide_core.fingerprint import canonical_json

#: The label of the built-in policy (the dataclass's defaults).
DEFAULT_LABEL = "tide-default@1"

#: The fields that decide a release (``label`` and ``approval`` name the policy, they decide nothing).
DECISION_FIELDS = (
    "target_rate",
    "confidence",
    "require_audit",
    "required_buckets",
    "block_on_drift",
    "block_on_watch",
    "block_on_unknown",
    "require_drift",
)

#: Hex digits of the decision digest in :meth:`ReleaseGatePolicy.describe`.
DIGEST_HEX = 12


@dataclass(frozen=True)
class ReleaseGatePolicy:
    """What the gate demands.  ``required_buckets``: None = every bucket of the release (the
    Dagster gate fills them in), a tuple = exactly those.  ``label`` is the policy's
    ``name@version``; ``approval`` names who approved an override that weakens it (empty: none)."""

    target_rate: float = 0.01
    confidence: float = 0.95
    require_audit: bool = True
    required_buckets: Sequence[str] | None = None  # buckets that must each have an audit
    block_on_drift: bool = True
    block_on_watch: bool = False
    block_on_unknown: bool = False
    require_drift: bool = False
    label: str = DEFAULT_LABEL
    approval: str = ""

    def decision_fields(self) -> dict[str, Any]:
        """The fields that decide a release, in a canonical JSON-able form."""
        buckets = None if self.required_buckets is None else sorted(set(self.required_buckets))
        return {
            "target_rate": float(self.target_rate),
            "confidence": float(self.confidence),
            "require_audit": bool(self.require_audit),
            "required_buckets": buckets,
            "block_on_drift": bool(self.block_on_drift),
            "block_on_watch": bool(self.block_on_watch),
            "block_on_unknown": bool(self.block_on_unknown),
            "require_drift": bool(self.require_drift),
        }

    def describe(self) -> str:
        """``"<label> sha256:<12 hex>"``: the digest covers every decision field (not the label,
        not the approval), so two policies that decide alike describe alike under one label."""
        digest = hashlib.sha256(canonical_json(self.decision_fields()).encode("utf-8")).hexdigest()
        return f"{self.label} sha256:{digest[:DIGEST_HEX]}"


def weakens(base: ReleaseGatePolicy, other: ReleaseGatePolicy) -> list[str]:
    """The fields of ``other`` that demand less than ``base`` (empty: ``other`` is as strict or
    stricter): a higher ``target_rate``, a lower ``confidence``, ``require_audit`` off,
    ``required_buckets`` narrowed (every bucket -> a list, or a list missing some of the base's),
    any ``block_on_*`` or ``require_drift`` turned off."""
    out: list[str] = []
    if other.target_rate > base.target_rate:
        out.append("target_rate")
    if other.confidence < base.confidence:
        out.append("confidence")
    if base.require_audit and not other.require_audit:
        out.append("require_audit")
    if other.required_buckets is not None and (
        base.required_buckets is None or not set(base.required_buckets) <= set(other.required_buckets)
    ):
        out.append("required_buckets")
    for name in ("block_on_drift", "block_on_watch", "block_on_unknown", "require_drift"):
        if getattr(base, name) and not getattr(other, name):
            out.append(name)
    return out


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
