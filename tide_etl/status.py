"""Release status where a data engineer looks: the partition view and the asset checks.

``release_summary`` decides a (study, key) release once per run (``tide_core.release.lifecycle.
decide``) and reports that decision in the same step as the asset check ``release_gate`` (a
check spec of the asset, so the decision and its check cannot disagree or come from two runs):

- ``published``: the check passes and the partition is materialized (green);
- ``awaiting_audit``: the check fails with severity WARN (the normal state of new content: the run
  succeeds, the partition is materialized, the check shows the warning);
- ``blocked``: the check fails with severity ERROR, and the step fails with a ``dg.Failure`` that
  is not retried (the same content blocks the same way), so the partition shows *failed*.

Metadata is ids, counts, versions and fingerprints only (``gate_reasons`` is built of check
names, error codes and counts by ``decide``): never note text, a surface or key material.
"""

from __future__ import annotations

import warnings
from typing import Any

import dagster as dg

from tide_core.release.lifecycle import AWAITING_AUDIT, PUBLISHED
from tide_etl.partitions import release_partitions

RELEASE_GATE = "release_gate"

with warnings.catch_warnings():  # partitioned check specs are a preview in Dagster 1.13 (pinned; tests cover them)
    warnings.filterwarnings("ignore", message=".*partitions_def on an AssetCheckSpec.*")
    RELEASE_GATE_SPEC = dg.AssetCheckSpec(
        RELEASE_GATE,
        asset="release_summary",
        blocking=True,
        partitions_def=release_partitions,
        description="the release decision release_summary made in this step: audit rounds whose frames hold the "
        "content cover every batch of it and their exact bounds are below the target rate "
        "(tide_core.release.evidence); WARN while awaiting audit, ERROR when a check, a bound, a leak or the drift "
        "band blocks (the partition then shows failed)",
    )


def status_metadata(row: dict[str, Any]) -> dict[str, Any]:
    """The decision in counts and ids (the metadata of the check, and of a blocked step's failure)."""
    return {
        "release_status": str(row.get("status") or "none recorded"),
        "n_in": int(row.get("n_in") or 0),
        "n_released": int(row.get("n_released") or 0),
        "n_quarantined": int(row.get("n_quarantined") or 0),
        "content_fingerprint": str(row.get("content_fingerprint") or ""),
        "published_version": str(row.get("published_version") or "none"),
        "gate_reasons": str(row.get("gate_reasons") or "none")[:2000],
    }


def gate_check(study: str, key: str, row: dict[str, Any]) -> dg.AssetCheckResult:
    """``release_gate`` for the ``tide_releases`` row ``decide`` returned (with its ``gate``)."""
    gate = dict(row.get("gate") or {})
    status = str(row.get("status") or "none recorded")
    passed = bool(gate.get("passed")) and status == PUBLISHED
    guard = row.get("guard_version") or "none configured"
    metadata = dict(
        gate, status=status, guard_version=guard, n_held=int(row.get("n_held") or 0), **status_metadata(row)
    )
    if not passed and status == AWAITING_AUDIT:
        return dg.AssetCheckResult(
            check_name=RELEASE_GATE,
            passed=False,
            severity=dg.AssetCheckSeverity.WARN,
            description=f"awaiting audit: {study}/{key} passed its checks and is not published until audit "
            "rounds cover its new content (`tide release audit plan`, review, `tide release audit record`), then "
            "run release_checks_job; researchers keep the version they see",
            metadata=metadata,
        )
    if passed:
        description = str(gate.get("statement") or "release gate passed")
    elif gate.get("passed"):  # the gate alone passed, but the decision did not (a check, E920/E921)
        description = f"release {study}/{key} is {status}: {row.get('gate_reasons') or ''}"[:500]
    else:
        description = f"release blocked: {gate.get('reasons')}"[:500]
    return dg.AssetCheckResult(
        check_name=RELEASE_GATE,
        passed=passed,
        severity=dg.AssetCheckSeverity.ERROR,
        description=description,
        metadata=metadata,
    )


def blocked_failure(study: str, key: str, row: dict[str, Any]) -> dg.Failure:
    """The failure of a ``release_summary`` step whose release is blocked: the partition shows
    failed; not retried (neither by the step's retry policy nor by run retries, which the instance
    configs restrict to lost processes)."""
    return dg.Failure(
        description=f"release {study}/{key} is {row.get('status')}, not published: "
        f"{str(row.get('gate_reasons') or '')[:500]}; researchers keep version "
        f"{row.get('published_version') or 'none'}",
        metadata=status_metadata(row),
        allow_retries=False,
    )
