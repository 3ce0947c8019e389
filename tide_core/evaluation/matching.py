"""Span matching: which predicted spans count as finding which gold spans.

A prediction matches a gold span when the labels agree and the two spans share at least
``tau`` of their union (character overlap / character union, i.e. the Jaccard index of the two
offset ranges).  ``tau = 0.8`` is the TIDE 2.0 scoring threshold; the graded criterion keeps
small boundary-convention differences (a trailing period, "Dr." inside or outside) from being
scored as misses while a span that covers only part of a name still is.

Each gold span is matched at most once and each prediction at most once.  Within a document
and label the matching is a *maximum* matching (most pairs), ties broken by the largest total
overlap ratio; it is computed with ``scipy.optimize.linear_sum_assignment`` on spans sorted by
offset, so it is deterministic.  With ``tau > 0.5`` a gold span can only match overlapping
duplicates, so this coincides with greedy-by-ratio in almost every real document.

**Split match** (``split=True``, default off): boundary conventions differ in how finely PHI is
cut -- one gold span for a whole address against separate street / city / ZIP predictions.
After the one-to-one matching, a gold span that is still unmatched counts as found when

1. the *pieces* -- the predicted spans of its (scoring) label that overlap it and are not
   matched to anything yet -- are at least two,
2. every piece lies mostly inside the gold span (``|piece ∩ gold| >= 0.5 × |piece|``), and
3. the pieces together cover at least ``tau`` of it (``|union(pieces) ∩ gold| / |gold| >= tau``).

The pieces then count as matched (not false positives) and the gold span as one true positive.
Gold spans are visited in offset order and a piece is used once.  If any overlapping unmatched
prediction of the label fails rule 2 (e.g. one long span that runs into the next field), the
gold span is not split-matched.  With ``split=False`` nothing changes.

``label_map`` (TIDE label → scoring label, e.g. PATIENT/DOCTOR → NAME) makes labels "agree"
when they map to the same scoring label; ``None`` compares TIDE labels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from tide_core.errors import ConfigError
from tide_core.spans import Span


def overlap_ratio(a: Span, b: Span) -> float:
    """Character intersection over character union of two spans (0 when disjoint)."""
    inter = min(a.end, b.end) - max(a.start, b.start)
    if inter <= 0:
        return 0.0
    union = max(a.end, b.end) - min(a.start, b.start)
    return inter / union


@dataclass(frozen=True)
class DocumentMatch:
    """Indices into the (sorted) gold and prediction lists of one document."""

    gold: tuple[Span, ...]
    pred: tuple[Span, ...]
    pairs: tuple[tuple[int, int, float], ...]  # (gold index, pred index, overlap ratio)
    #: split matches: (gold index, pred indices of the pieces, covered share of the gold span)
    split_pairs: tuple[tuple[int, tuple[int, ...], float], ...] = ()

    @property
    def matched_gold(self) -> set[int]:
        return {g for g, _, _ in self.pairs} | {g for g, _, _ in self.split_pairs}

    @property
    def matched_pred(self) -> set[int]:
        return {p for _, p, _ in self.pairs} | {p for _, ps, _ in self.split_pairs for p in ps}

    def missed(self) -> list[Span]:
        hit = self.matched_gold
        return [s for i, s in enumerate(self.gold) if i not in hit]

    def spurious(self) -> list[Span]:
        hit = self.matched_pred
        return [s for i, s in enumerate(self.pred) if i not in hit]


def _key(s: Span) -> tuple[int, int, str, str, float]:
    return (s.start, s.end, s.label, s.recognizer, s.score)


def match_document(
    gold: Sequence[Span],
    pred: Sequence[Span],
    tau: float = 0.8,
    *,
    split: bool = False,
    label_map: Mapping[str, str] | None = None,
) -> DocumentMatch:
    """Match one document's predictions to its gold spans (see the module docstring)."""
    if not 0.0 < tau <= 1.0:
        raise ConfigError("E712", f"overlap threshold tau={tau} outside (0, 1]", hint="use e.g. 0.8 or 0.5")
    g_sorted = tuple(sorted(gold, key=_key))
    p_sorted = tuple(sorted(pred, key=_key))
    g_lab = [label_map[s.label] if label_map else s.label for s in g_sorted]
    p_lab = [label_map[s.label] if label_map else s.label for s in p_sorted]
    pairs: list[tuple[int, int, float]] = []
    for label in sorted(set(g_lab) & set(p_lab)):
        gi = [i for i, lab in enumerate(g_lab) if lab == label]
        pi = [j for j, lab in enumerate(p_lab) if lab == label]
        ratio = np.zeros((len(gi), len(pi)))
        for a, i in enumerate(gi):
            gs = g_sorted[i]
            for b, j in enumerate(pi):
                ps = p_sorted[j]
                if ps.start >= gs.end or ps.end <= gs.start:
                    continue
                r = overlap_ratio(gs, ps)
                if r >= tau - 1e-12:
                    ratio[a, b] = r
        if not ratio.any():
            continue
        # cardinality first (each pair is worth more than any sum of ratio bonuses), then overlap
        weight = np.where(ratio > 0, (min(len(gi), len(pi)) + 1) + ratio, 0.0)
        rows, cols = linear_sum_assignment(weight, maximize=True)
        for a, b in zip(rows, cols, strict=False):
            if ratio[a, b] > 0:
                pairs.append((gi[a], pi[b], float(ratio[a, b])))
    pairs.sort()
    split_pairs = _split_matches(g_sorted, p_sorted, g_lab, p_lab, pairs, tau) if split else ()
    return DocumentMatch(g_sorted, p_sorted, tuple(pairs), split_pairs)


#: a piece of a split match must lie at least this share of its own length inside the gold span
SPLIT_INSIDE = 0.5


def _split_matches(
    g_sorted: Sequence[Span],
    p_sorted: Sequence[Span],
    g_lab: Sequence[str],
    p_lab: Sequence[str],
    pairs: Sequence[tuple[int, int, float]],
    tau: float,
) -> tuple[tuple[int, tuple[int, ...], float], ...]:
    used_g = {g for g, _, _ in pairs}
    used_p = {p for _, p, _ in pairs}
    out: list[tuple[int, tuple[int, ...], float]] = []
    for i, gs in enumerate(g_sorted):
        if i in used_g:
            continue
        pieces = [
            j
            for j, ps in enumerate(p_sorted)
            if j not in used_p and p_lab[j] == g_lab[i] and ps.start < gs.end and gs.start < ps.end
        ]
        if len(pieces) < 2:
            continue
        if any(
            (min(p_sorted[j].end, gs.end) - max(p_sorted[j].start, gs.start)) < SPLIT_INSIDE * p_sorted[j].length
            for j in pieces
        ):
            continue
        covered = np.zeros(gs.length, dtype=bool)
        for j in pieces:
            ps = p_sorted[j]
            covered[max(ps.start, gs.start) - gs.start : min(ps.end, gs.end) - gs.start] = True
        share = float(covered.sum()) / gs.length
        if share >= tau - 1e-12:
            out.append((i, tuple(pieces), share))
            used_p.update(pieces)
    return tuple(out)


def covered_characters(gold: Sequence[Span], pred: Sequence[Span]) -> tuple[int, int]:
    """(gold PHI characters, of which covered by any prediction of any label).

    Overlapping gold spans are counted once per character.
    """
    gold_chars: set[int] = set()
    for s in gold:
        gold_chars.update(range(s.start, s.end))
    if not gold_chars:
        return 0, 0
    covered = 0
    pred_chars: set[int] = set()
    for s in pred:
        pred_chars.update(range(s.start, s.end))
    covered = len(gold_chars & pred_chars)
    return len(gold_chars), covered
