"""Audit samples of a released (study, key) stratified by PHI Guard richness, and their records.

:func:`stratified_plan` reads the guard scores the release step wrote (``tide_guard_scores``; the
held documents are not in the release and not sampled) and, per audit bucket, splits the released
patients into richness strata (a patient's richness is the largest of their released notes in the
bucket) with :func:`tide_core.assurance.stratified.allocate`: PHI-rich patients are reviewed more
often, with known inclusion probabilities written in the plan.  :func:`stratified_records` turns
the review of one bucket's sample (leaks per stratum) into one ``tide_audits`` row per stratum,
with the stratum's size, so the gate computes the weighted bound.  Pseudonymous ``patient_ref``
values only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from tide_core.assurance.audit import bucket_of
from tide_core.assurance.audit_table import AuditRecord
from tide_core.assurance.stratified import allocate, draw
from tide_core.errors import ConfigError
from tide_core.io.warehouse import Warehouse
from tide_core.store.release_store import ReleaseStore
from tide_core.store.tables import TableNames

DESIGN = "stratified-richness"


def stratified_plan(
    wh: Warehouse,
    names: TableNames,
    study: str,
    key: str,
    n_per_bucket: int,
    n_strata: int = 3,
    seed: int = 42,
) -> dict[str, Any]:
    """Per bucket: richness strata, sample sizes, inclusion probabilities and the seeded sample."""
    store = ReleaseStore(wh, names)
    scores = {r["note_id"]: r for r in store.guard_scores(study, key) if not r["held"]}
    if not scores:
        raise ConfigError(
            "E775",
            f"no PHI Guard scores for the release {study}/{key}",
            hint="configure guard_dir in the config file and run the release (release_summary) first",
        )
    richness: dict[str, dict[str, float]] = defaultdict(dict)
    unscored = 0
    for r in store.deid_notes(study, key, ["note_id", "patient_ref", "site", "source", "note_type"]):
        s = scores.get(r["note_id"])
        if s is None:
            unscored += 1
            continue
        per_patient = richness[bucket_of(r)]
        per_patient[r["patient_ref"]] = max(per_patient.get(r["patient_ref"], 0.0), float(s["richness"] or 0.0))
    if unscored:
        raise ConfigError(
            "E776",
            f"{unscored} released notes of {study}/{key} have no PHI Guard score (re-released since scoring)",
            hint="run the release step (release_summary) again, then plan the audit",
        )
    buckets: dict[str, Any] = {}
    for bucket, patients in sorted(richness.items()):
        n = min(n_per_bucket, len(patients))
        plan = allocate(patients, n, min(n_strata, n))
        buckets[bucket] = {**plan.to_dict(), "sample": draw(plan, seed)}
    versions = sorted({str(r["guard_version"]) for r in scores.values()})
    return {
        "design": DESIGN,
        "study": study,
        "key": key,
        "guard": ", ".join(versions),
        "seed": seed,
        "n_per_bucket": n_per_bucket,
        "buckets": buckets,
    }


def stratified_records(
    plan: Mapping[str, Any],
    bucket: str,
    leaks: Mapping[str, int],
    confidence: float = 0.95,
    reviewer: str = "",
) -> list[AuditRecord]:
    """One audit row per stratum of ``bucket`` of a stratified plan; every stratum must be reported."""
    if plan.get("design") != DESIGN:
        raise ConfigError("E777", "the plan is not a stratified audit plan", hint="use `tide audit plan --warehouse`")
    strata = (plan.get("buckets") or {}).get(bucket, {}).get("strata")
    if not strata:
        raise ConfigError(
            "E777",
            f"bucket {bucket!r} is not in the plan",
            hint=f"use one of {', '.join(sorted(plan.get('buckets') or {}))}",
        )
    names = [s["name"] for s in strata]
    if sorted(leaks) != sorted(names):
        raise ConfigError(
            "E777",
            f"report the leaks of every stratum of bucket {bucket!r}: {', '.join(names)}",
            hint="pass --leaks-by-stratum " + ",".join(f"{n}=K" for n in names),
        )
    return [
        AuditRecord.create(
            str(plan["study"]),
            str(plan["key"]),
            bucket,
            int(s["sample"]),
            int(leaks[s["name"]]),
            confidence,
            reviewer,
            stratum=s["name"],
            stratum_population=int(s["population"]),
        )
        for s in strata
    ]


def parse_leaks(text: str) -> dict[str, int]:
    """``richness-1=0,richness-2=1`` -> {stratum: leaks}."""
    out: dict[str, int] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, sep, value = part.partition("=")
        if not sep or not value.strip().isdigit():
            raise ConfigError("E777", f"cannot read {part!r}", hint="write STRATUM=LEAKS, comma separated")
        out[name.strip()] = int(value)
    return out
