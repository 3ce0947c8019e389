"""Counts and rates: per-document TP/FP/FN tables and the metrics computed from them.

Everything downstream (point estimates, bootstrap resamples, paired tests) works on one
:class:`CountTable` -- per-document, per-category counts -- so a bootstrap resample is only a
weighted sum of its rows.  Recall = TP/(TP+FN), precision = TP/(TP+FP); a rate with a zero
denominator is undefined (NaN, shown as "n/a"), never 0 or 1.  Micro-averages pool counts over
categories; macro-averages are the unweighted mean over the categories that have gold spans in
the corpus (precision: categories with gold spans or predictions).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import SupportsFloat

import numpy as np

from tide_core.evaluation.gold_io import GoldDoc
from tide_core.evaluation.matching import covered_characters, match_document
from tide_core.spans import Span
from tide_core.types import SCORED_LABELS


@dataclass
class CountTable:
    note_ids: list[str]
    labels: tuple[str, ...]
    tp: np.ndarray  # (docs, labels)
    fp: np.ndarray
    fn: np.ndarray
    char_gold: np.ndarray  # (docs,)
    char_covered: np.ndarray

    @property
    def n_docs(self) -> int:
        return len(self.note_ids)

    def totals(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.tp.sum(0), self.fp.sum(0), self.fn.sum(0)


def build_counts(
    gold_docs: Sequence[GoldDoc],
    predictions: Mapping[str, Sequence[Span]],
    tau: float = 0.8,
    labels: Sequence[str] = SCORED_LABELS,
    *,
    split: bool = False,
    label_map: Mapping[str, str] | None = None,
) -> CountTable:
    """Match every gold document against its predictions (absent = no predictions).

    ``labels`` are scoring labels; ``label_map`` maps TIDE span labels onto them (None =
    identity); ``split`` enables split matching (see :mod:`tide_core.evaluation.matching`).
    """
    labels = tuple(labels)
    index: dict[str | None, int] = {lab: i for i, lab in enumerate(labels)}
    lab: Callable[[Span], str | None] = (lambda s: label_map.get(s.label)) if label_map else (lambda s: s.label)
    n, c = len(gold_docs), len(labels)
    tp = np.zeros((n, c), dtype=np.int64)
    fp = np.zeros((n, c), dtype=np.int64)
    fn = np.zeros((n, c), dtype=np.int64)
    cg = np.zeros(n, dtype=np.int64)
    cc = np.zeros(n, dtype=np.int64)
    for d, doc in enumerate(gold_docs):
        gold = [s for s in doc.spans if lab(s) in index]
        pred = [s for s in predictions.get(doc.note_id, ()) if lab(s) in index]
        m = match_document(gold, pred, tau, split=split, label_map=label_map)
        hit_g, hit_p = m.matched_gold, m.matched_pred
        for i, s in enumerate(m.gold):
            (tp if i in hit_g else fn)[d, index[lab(s)]] += 1
        for j, s in enumerate(m.pred):
            if j not in hit_p:
                fp[d, index[lab(s)]] += 1
        cg[d], cc[d] = covered_characters(gold, pred)
    return CountTable([d.note_id for d in gold_docs], labels, tp, fp, fn, cg, cc)


def safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def rates(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> dict[str, np.ndarray]:
    """Recall, precision and F1 along the last axis' categories (works on (..., C) arrays)."""
    recall = safe_div(tp, tp + fn)
    precision = safe_div(tp, tp + fp)
    f1 = safe_div(2 * tp, 2 * tp + fp + fn)
    return {"recall": recall, "precision": precision, "f1": f1}


def summary_stats(
    tp: np.ndarray,
    fp: np.ndarray,
    fn: np.ndarray,
    cg: np.ndarray,
    cc: np.ndarray,
    recall_scope: np.ndarray,
    precision_scope: np.ndarray,
) -> dict[str, np.ndarray]:
    """All scalar metrics for count arrays shaped (..., C); scopes are boolean (C,) masks."""
    per = rates(tp, fp, fn)
    mtp, mfp, mfn = tp.sum(-1), fp.sum(-1), fn.sum(-1)
    micro = rates(mtp, mfp, mfn)
    with warnings.catch_warnings():  # all-NaN rows (empty resamples) give NaN, which is intended
        warnings.simplefilter("ignore", RuntimeWarning)
        macro_r = np.nanmean(np.where(recall_scope, per["recall"], np.nan), axis=-1)
        macro_p = np.nanmean(np.where(precision_scope, per["precision"], np.nan), axis=-1)
        macro_f = np.nanmean(np.where(recall_scope | precision_scope, per["f1"], np.nan), axis=-1)
    return {
        "micro_recall": micro["recall"],
        "micro_precision": micro["precision"],
        "micro_f1": micro["f1"],
        "macro_recall": macro_r,
        "macro_precision": macro_p,
        "macro_f1": macro_f,
        "char_recall": safe_div(cc, cg),
    }


def to_float(x: SupportsFloat) -> float | None:
    """NaN → None for JSON."""
    x = float(x)
    return None if np.isnan(x) else x
