"""Document-level bootstrap: confidence intervals and paired tests between two systems.

Documents, not spans, are resampled (spans in one note are not independent: one template, one
author, one patient).  A resample is a vector of document multiplicities, so the B × D weight
matrix times the D × C count table gives every resample's counts at once -- 2,000 resamples of
a thousand documents take milliseconds.  Intervals are percentile intervals (2.5th and 97.5th
percentiles for 95%); the generator is ``numpy.random.default_rng(seed)`` with seed 42 by
default, so a rerun reproduces every digit.

Paired test: both systems are scored on the *same* resampled documents; the difference
``recall(B) - recall(A)`` per category has a percentile interval and a two-sided p-value
``min(1, 2 * min(#(d <= 0) + 1, #(d >= 0) + 1) / (B + 1))`` (the +1 keeps p above zero for a
finite number of resamples).  Bonferroni multiplies each category's p by the number of
categories tested (those with gold spans), capped at 1.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from tide_core.errors import InputError
from tide_core.evaluation.metrics import CountTable, rates, summary_stats, to_float

N_RESAMPLES = 2000
SEED = 42


def resample_weights(n_docs: int, n_resamples: int = N_RESAMPLES, seed: int = SEED) -> np.ndarray:
    """(B, D) matrix: how often each document is drawn in each resample."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n_docs, size=(n_resamples, n_docs))
    flat = idx + (np.arange(n_resamples)[:, None] * n_docs)
    return np.bincount(flat.ravel(), minlength=n_resamples * n_docs).reshape(n_resamples, n_docs).astype(float)


def _scopes(table: CountTable) -> tuple[np.ndarray, np.ndarray]:
    tp, fp, fn = table.totals()
    return (tp + fn) > 0, (tp + fn + fp) > 0


def _percentiles(values: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    alpha = (1.0 - level) / 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo = np.nanpercentile(values, 100 * alpha, axis=0)
        hi = np.nanpercentile(values, 100 * (1 - alpha), axis=0)
    return lo, hi


def resampled_stats(table: CountTable, weights: np.ndarray) -> dict[str, np.ndarray]:
    """Per-category rates (B, C) and scalar stats (B,) for every resample."""
    tp, fp, fn = weights @ table.tp, weights @ table.fp, weights @ table.fn
    cg, cc = weights @ table.char_gold, weights @ table.char_covered
    r_scope, p_scope = _scopes(table)
    out = {f"category_{k}": v for k, v in rates(tp, fp, fn).items()}
    out.update(summary_stats(tp, fp, fn, cg, cc, r_scope, p_scope))
    return out


@dataclass
class Intervals:
    level: float
    n_resamples: int
    seed: int
    category: dict[str, dict[str, tuple[float | None, float | None]]]  # label -> metric -> (lo, hi)
    overall: dict[str, tuple[float | None, float | None]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "category": {k: {m: list(v) for m, v in d.items()} for k, d in self.category.items()},
            "overall": {k: list(v) for k, v in self.overall.items()},
        }


def bootstrap_intervals(
    table: CountTable, n_resamples: int = N_RESAMPLES, seed: int = SEED, level: float = 0.95
) -> Intervals:
    if table.n_docs == 0:
        raise InputError("E713", "cannot bootstrap an empty corpus", hint="evaluate at least one document")
    stats = resampled_stats(table, resample_weights(table.n_docs, n_resamples, seed))
    category: dict[str, dict[str, tuple[float | None, float | None]]] = {lab: {} for lab in table.labels}
    overall: dict[str, tuple[float | None, float | None]] = {}
    for key, values in stats.items():
        lo, hi = _percentiles(values, level)
        if key.startswith("category_"):
            metric = key[len("category_") :]
            for c, lab in enumerate(table.labels):
                category[lab][metric] = (to_float(lo[c]), to_float(hi[c]))
        else:
            overall[key] = (to_float(lo), to_float(hi))
    return Intervals(level, n_resamples, seed, category, overall)


@dataclass
class PairedResult:
    label: str  # a category or "micro"
    n_gold: int
    recall_a: float | None
    recall_b: float | None
    delta: float | None  # recall_b - recall_a
    ci: tuple[float | None, float | None]
    p_value: float | None
    p_bonferroni: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "n_gold": self.n_gold,
            "recall_a": self.recall_a,
            "recall_b": self.recall_b,
            "delta": self.delta,
            "ci": list(self.ci),
            "p_value": self.p_value,
            "p_bonferroni": self.p_bonferroni,
        }


def _two_sided_p(diffs: np.ndarray) -> float | None:
    diffs = diffs[~np.isnan(diffs)]
    if diffs.size == 0:
        return None
    b = diffs.size
    le = np.count_nonzero(diffs <= 0) + 1
    ge = np.count_nonzero(diffs >= 0) + 1
    return float(min(1.0, 2.0 * min(le, ge) / (b + 1)))


def paired_recall_test(
    table_a: CountTable, table_b: CountTable, n_resamples: int = N_RESAMPLES, seed: int = SEED, level: float = 0.95
) -> list[PairedResult]:
    """Recall difference B − A per category (plus micro) on identical document resamples."""
    if table_a.note_ids != table_b.note_ids or table_a.labels != table_b.labels:
        raise InputError(
            "E714",
            "paired test needs both systems scored on the same documents",
            hint="score system A and B against the same gold file",
        )
    if table_a.n_docs == 0:
        raise InputError("E713", "cannot bootstrap an empty corpus", hint="evaluate at least one document")
    w = resample_weights(table_a.n_docs, n_resamples, seed)
    sa, sb = resampled_stats(table_a, w), resampled_stats(table_b, w)
    tpa, _, fna = table_a.totals()
    tpb, _, _ = table_b.totals()
    n_gold = tpa + fna
    point_a = rates(tpa, np.zeros_like(tpa), fna)["recall"]
    point_b = rates(tpb, np.zeros_like(tpb), n_gold - tpb)["recall"]
    tested = [c for c in range(len(table_a.labels)) if n_gold[c] > 0]
    m = max(1, len(tested))
    results: list[PairedResult] = []
    for c in tested:
        diffs = sb["category_recall"][:, c] - sa["category_recall"][:, c]
        lo, hi = _percentiles(diffs, level)
        p = _two_sided_p(diffs)
        results.append(
            PairedResult(
                table_a.labels[c],
                int(n_gold[c]),
                to_float(point_a[c]),
                to_float(point_b[c]),
                to_float(point_b[c] - point_a[c]),
                (to_float(lo), to_float(hi)),
                p,
                None if p is None else min(1.0, p * m),
            )
        )
    diffs = sb["micro_recall"] - sa["micro_recall"]
    lo, hi = _percentiles(diffs, level)
    ra = to_float(tpa.sum() / n_gold.sum()) if n_gold.sum() else None
    rb = to_float(tpb.sum() / n_gold.sum()) if n_gold.sum() else None
    results.append(
        PairedResult(
            "micro",
            int(n_gold.sum()),
            ra,
            rb,
            None if ra is None or rb is None else rb - ra,
            (to_float(lo), to_float(hi)),
            _two_sided_p(diffs),
            None,
        )
    )
    return results
