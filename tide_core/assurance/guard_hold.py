"""The PHI Guard in the release: flagged documents are held out of the published release.

Before a release is verified and published, :func:`apply_guard` scores every released document
of (study, key) with the configured guard (masked score, richness) at its pinned version and the
frozen threshold of the document's released ``source``.  A flagged document is **held**: in one
atomic commit its row leaves ``tide_deid_notes`` (and its spans ``tide_released_spans``) and it
is quarantined with code ``E773`` and a reason that names the guard version (never a score or
text), so the researchers' views, which read only ``tide_deid_notes``, never show it and every
input row stays accounted for.  The scores go to ``tide_guard_scores`` (ids and numbers only):
held rows are the review pile, ``rank`` 1 the riskiest; ``richness`` stratifies the audit sample.

Holds survive a re-run of the release step (the held rows are kept while their quarantine row
stands); a re-anonymization of the partition brings the document back, and it is scored again.
A configuration without ``guard_dir`` changes nothing and the release records that no guard ran.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tide_core.assurance.guard_model import DocumentScores, GuardModel
from tide_core.assurance.guard_release import decide
from tide_core.config import TideConfig
from tide_core.errors import ConfigError
from tide_core.io.warehouse import PartitionWrite, Warehouse
from tide_core.store.release_store import ReleaseStore
from tide_core.store.tables import to_table

#: Quarantine code and stage of a document held by the PHI Guard for review.
HELD_CODE = "E773"
HELD_STAGE = "guard"
#: What the release row and the run say when no guard is configured.
NO_GUARD = "none configured: the release is not screened by the PHI Guard"


@dataclass(frozen=True)
class HoldReport:
    """Counts of one guard pass over a release (no text, no scores, no ids)."""

    study: str
    key: str
    version: str
    thresholds: dict[str, float]
    n_scored: int
    n_newly_held: int
    held_by_source: dict[str, int] = field(default_factory=dict)
    scored_by_source: dict[str, int] = field(default_factory=dict)

    @property
    def n_held(self) -> int:
        return sum(self.held_by_source.values())

    def flag_rates(self) -> dict[str, float]:
        """Share of each source's documents held (held / (held + released))."""
        return {
            src: round(self.held_by_source.get(src, 0) / n, 4) for src, n in sorted(self.scored_by_source.items()) if n
        }

    def metadata(self) -> dict[str, Any]:
        return {
            "guard_version": self.version,
            "guard_thresholds": dict(sorted(self.thresholds.items())),
            "n_guard_scored": self.n_scored,
            "n_held": self.n_held,
            "n_newly_held": self.n_newly_held,
            "held_by_source": dict(sorted(self.held_by_source.items())),
            "flag_rate_by_source": self.flag_rates(),
        }


def load_pinned_guard(config: TideConfig) -> GuardModel | None:
    """The configured guard at its frozen threshold, or None when the site configured none.

    A ``guard_version`` pin that the model on disk does not match fails closed (E774): a new
    guard version means re-baselining the thresholds and the flag rates, never a silent swap.
    """
    if not config.guard_dir:
        return None
    guard = GuardModel.load(config.guard_dir)
    if config.guard_version and guard.version != config.guard_version:
        raise ConfigError(
            "E774",
            f"the PHI Guard in {config.guard_dir} is {guard.version}, the configuration pins {config.guard_version}",
            hint="a new guard version means re-baseline: review its dial, then set guard_version (and "
            "guard_thresholds) in the config file to the new version",
        )
    return guard


def apply_guard(
    wh: Warehouse,
    config: TideConfig,
    study: str,
    key: str,
    guard: GuardModel,
    source_texts: Mapping[str, str],
    source_patients: Mapping[str, str | None],
) -> HoldReport:
    """Score every released document of (study, key) and hold the flagged ones (see module doc).

    ``source_texts``/``source_patients``: note_id -> original text / source patient id (for the raw
    and richness scores and the quarantine row).  Idempotent: a second pass holds nothing new.
    """
    names = config.tables
    store = ReleaseStore(wh, names)
    part = {"study": study, "key": key}
    deid = store.deid_notes(study, key)
    quarantine = store.quarantine(study, key)
    on_hold = {r["note_id"] for r in quarantine if r["code"] == HELD_CODE}
    kept = [r for r in store.guard_scores(study, key) if r["held"] and r["note_id"] in on_hold]
    ranges = store.surrogate_ranges(study, key)
    scores: list[DocumentScores] = [
        guard.score(r["note_id"], source_texts.get(r["note_id"], ""), r["text"] or "", ranges.get(r["note_id"], ()))
        for r in deid
    ]
    sources = {r["note_id"]: r["source"] or "" for r in deid}
    decision = decide(scores, sources, config.guard_thresholds)
    held = set(decision.review_pile)
    now = dt.datetime.now(dt.UTC)
    by_id = {r["note_id"]: r for r in deid}
    rows: list[dict[str, Any]] = [dict(r, scored_at=r["scored_at"] or now) for r in kept]
    for s in scores:
        r = by_id[s.note_id]
        rows.append(
            {
                "study": study,
                "key": key,
                "note_id": s.note_id,
                "note_ref": r["note_ref"],
                "patient_ref": r["patient_ref"],
                "source": sources[s.note_id],
                "masked": s.masked,
                "richness": s.richness,
                "held": s.note_id in held,
                "rank": None,
                "guard_version": s.version,
                "threshold": decision.thresholds.get(sources[s.note_id], s.threshold),
                "scored_at": now,
            }
        )
    ranked = sorted((r for r in rows if r["held"]), key=lambda r: (-(r["masked"] or 0.0), r["note_id"]))
    for i, r in enumerate(ranked, start=1):
        r["rank"] = i
    writes = [PartitionWrite(names.guard_scores, to_table("guard_scores", rows), part)]
    if held:
        reason = (
            f"held by the PHI Guard ({guard.version}) for review: the released text still looks like it holds "
            "PHI; review the note (tide review), then re-run the release"
        )
        new_q = [
            {
                "study": study,
                "key": key,
                "note_id": nid,
                "patient_id": source_patients.get(nid),
                "stage": HELD_STAGE,
                "code": HELD_CODE,
                "reason": reason,
                "row_number": None,
                "quarantined_at": now,
            }
            for nid in sorted(held)
        ]
        spans = store.released_spans(study, key)
        writes += [
            PartitionWrite(
                names.deid_notes, to_table("deid_notes", [r for r in deid if r["note_id"] not in held]), part
            ),
            PartitionWrite(
                names.released_spans, to_table("released_spans", [s for s in spans if s["note_id"] not in held]), part
            ),
            PartitionWrite(names.quarantine, to_table("quarantine", quarantine + new_q), part),
        ]
    wh.replace_partitions(writes)
    held_by_source = Counter(str(r["source"] or "") for r in rows if r["held"])
    scored_by_source = Counter(str(r["source"] or "") for r in rows)
    return HoldReport(
        study,
        key,
        guard.version,
        dict(decision.thresholds),
        len(scores),
        len(held),
        dict(held_by_source),
        dict(scored_by_source),
    )


def release_guard_columns(report: HoldReport | None) -> dict[str, Any]:
    """The guard columns of a ``tide_releases`` row (counts, version and thresholds only)."""
    if report is None:
        return {"n_held": None, "guard_version": "", "guard_thresholds": ""}
    return {
        "n_held": report.n_held,
        "guard_version": report.version,
        "guard_thresholds": json.dumps(
            {"thresholds": dict(sorted(report.thresholds.items())), "flag_rate_by_source": report.flag_rates()}
        ),
    }
