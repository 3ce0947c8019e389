"""The release set, the review pile and the dial, from PHI Guard scores.

At a frozen threshold (per source where sources differ), a released document whose masked score
reaches the threshold is *held*: it is left out of the published release set and queued for
review, riskiest first. Reviewers see the documents in that order but never the scores (a score
would anchor their judgement). The dial shows, on labelled data, what a threshold trades: the
share of leaking documents it catches against the share of clean documents it holds back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tide_core.assurance.guard_model import DocumentScores
from tide_core.errors import ConfigError


@dataclass(frozen=True)
class GuardDecision:
    """Which released documents go out and which are held for review (ids only, no scores shown)."""

    version: str
    thresholds: dict[str, float]
    release_set: tuple[str, ...]
    review_pile: tuple[str, ...]  # riskiest first

    @property
    def hold_rate(self) -> float:
        n = len(self.release_set) + len(self.review_pile)
        return len(self.review_pile) / n if n else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "thresholds": dict(self.thresholds),
            "n_released": len(self.release_set),
            "n_held": len(self.review_pile),
            "hold_rate": round(self.hold_rate, 4),
            "review_pile": list(self.review_pile),
        }


def _masked(s: DocumentScores) -> float:
    assert s.masked is not None  # checked by decide (E764)
    return s.masked


def decide(
    scores: Sequence[DocumentScores],
    sources: Mapping[str, str] | None = None,
    thresholds: Mapping[str, float] | None = None,
) -> GuardDecision:
    """Split scored documents into the release set and the review pile.

    ``sources``: note id -> source; ``thresholds``: source -> frozen threshold (a source with no
    entry uses the guard's own threshold). All scores must come from one guard version.
    """
    versions = {s.version for s in scores}
    if len(versions) > 1:
        raise ConfigError(
            "E763",
            f"guard scores from {len(versions)} guard versions cannot make one release decision",
            hint="re-score every document with one guard (a new version means re-baseline)",
        )
    for s in scores:
        if s.masked is None:
            raise ConfigError("E764", f"note {s.note_id!r} has no masked score", hint="score the released text")
    sources = sources or {}
    thresholds = dict(thresholds or {})
    held: list[DocumentScores] = []
    released: list[DocumentScores] = []
    for s in scores:
        t = thresholds.get(sources.get(s.note_id, ""), s.threshold)
        (held if _masked(s) >= t else released).append(s)
    held.sort(key=lambda s: (-_masked(s), s.note_id))
    used = {src: thresholds.get(src, scores[0].threshold) for src in set(sources.values())} if scores else {}
    return GuardDecision(
        version=next(iter(versions), ""),
        thresholds=used,
        release_set=tuple(sorted(s.note_id for s in released)),
        review_pile=tuple(s.note_id for s in held),
    )


def dial(
    masked: Mapping[str, float], leaking: Mapping[str, bool], thresholds: Sequence[float]
) -> list[tuple[float, float, float]]:
    """(threshold, share of leaking documents caught, share of clean documents held) per threshold."""
    leak = [v for k, v in masked.items() if leaking.get(k)]
    clean = [v for k, v in masked.items() if not leaking.get(k)]
    out = []
    for t in sorted(set(thresholds)):
        caught = sum(v >= t for v in leak) / len(leak) if leak else 0.0
        held = sum(v >= t for v in clean) / len(clean) if clean else 0.0
        out.append((t, caught, held))
    return out
