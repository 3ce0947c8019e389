"""Character-level privacy metrics: what is left readable, whatever the span conventions.

Span-level scores depend on boundary and labelling conventions; a reader of a released note
only sees which characters were replaced.  These metrics count characters, per document, with
one boolean array per label (numpy), and sum over documents:

- **uncovered share** (the privacy view), per gold category and overall: the share of gold PHI
  characters that *no* predicted span of *any* label covers -- what stays in the released text.
  Every character inside a gold span counts, whitespace and punctuation included (a gold span
  "John Smith" is 10 characters).  Overall, a character inside several gold spans counts once;
  per category, it counts in each category whose span contains it.
- **letters/digits uncovered share** (what a reader could use), per category and overall: the
  same share counted only over gold characters that are letters or digits (``str.isalnum``, any
  script), so the spaces, commas and dashes a span convention leaves unlabelled do not count
  ("John Smith" is 9 letters).  Offsets beyond the document text count as neither.
- **same-label covered share**, per category and overall: the share of gold characters covered
  by a prediction whose (scoring) label equals the gold label -- covered *and* correctly typed.
  Overall: gold characters covered by a prediction of the label of at least one gold span
  containing them.
- **character precision**, overall and per predicted label: of the predicted characters (the
  union of the predicted spans of a document, so overlapping predictions count once), the share
  inside some gold span of any label.  Per predicted label it is the union of that label's
  spans.  A low value means clinical text is being removed.
- :func:`clinical_terms_removed`: for documents whose metadata lists ``clinical_terms`` (a list
  of ``[start, end]`` offsets of clinical vocabulary, e.g. from the synthetic corpus), how many
  of those terms any predicted span (any label) overlaps by at least one character.

Labels are scoring labels: pass ``label_set="coarse"`` to count on the coarse set (PATIENT and
DOCTOR both count as NAME, ...).  Spans whose label is outside the scored labels are ignored,
as in span matching.  Shares with a zero denominator are ``None``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tide_core.evaluation.gold_io import GoldDoc
from tide_core.evaluation.labelsets import LabelSet, get_label_set
from tide_core.spans import Span

Predictions = Sequence[GoldDoc] | Mapping[str, Sequence[Span]]


def _span_map(pred: Predictions) -> dict[str, list[Span]]:
    if isinstance(pred, Mapping):
        return {k: list(v) for k, v in pred.items()}
    return {d.note_id: list(d.spans) for d in pred}


def _share(num: int, den: int) -> float | None:
    return None if den <= 0 else num / den


@dataclass
class CharacterMetrics:
    """Character counts summed over documents; shares are computed from them."""

    labels: tuple[str, ...]
    n_docs: int
    gold_chars: dict[str, int]  # per gold category
    uncovered_chars: dict[str, int]  # gold chars of the category no prediction covers
    same_label_chars: dict[str, int]  # gold chars covered by a prediction of the same label
    pred_chars: dict[str, int]  # per predicted label: union of its predicted characters
    pred_in_gold_chars: dict[str, int]  # ... of which inside some gold span (any label)
    gold_alnum: dict[str, int] = field(default_factory=dict)  # letters/digits of the category
    uncovered_alnum: dict[str, int] = field(default_factory=dict)  # ... that no prediction covers
    total_gold_chars: int = 0  # union over labels
    total_uncovered_chars: int = 0
    total_gold_alnum: int = 0
    total_uncovered_alnum: int = 0
    total_same_label_chars: int = 0
    total_pred_chars: int = 0  # union of all predicted spans
    total_pred_in_gold_chars: int = 0
    label_set: str = "fine"

    def uncovered_share(self, label: str | None = None) -> float | None:
        """Share of gold PHI characters no prediction covers (overall, or for one category)."""
        if label is None:
            return _share(self.total_uncovered_chars, self.total_gold_chars)
        return _share(self.uncovered_chars[label], self.gold_chars[label])

    def alnum_uncovered_share(self, label: str | None = None) -> float | None:
        """Share of gold PHI letters and digits no prediction covers (overall, or one category)."""
        if label is None:
            return _share(self.total_uncovered_alnum, self.total_gold_alnum)
        return _share(self.uncovered_alnum.get(label, 0), self.gold_alnum.get(label, 0))

    def covered_share(self, label: str | None = None) -> float | None:
        """1 − uncovered share: character recall ignoring labels."""
        u = self.uncovered_share(label)
        return None if u is None else 1.0 - u

    def same_label_share(self, label: str | None = None) -> float | None:
        if label is None:
            return _share(self.total_same_label_chars, self.total_gold_chars)
        return _share(self.same_label_chars[label], self.gold_chars[label])

    def char_precision(self, label: str | None = None) -> float | None:
        """Share of predicted characters inside a gold span (overall, or for one predicted label)."""
        if label is None:
            return _share(self.total_pred_in_gold_chars, self.total_pred_chars)
        return _share(self.pred_in_gold_chars[label], self.pred_chars[label])

    def to_dict(self) -> dict[str, Any]:
        cats = {}
        for lab in self.labels:
            cats[lab] = {
                "gold_chars": self.gold_chars[lab],
                "uncovered_chars": self.uncovered_chars[lab],
                "uncovered_share": self.uncovered_share(lab),
                "gold_alnum": self.gold_alnum.get(lab, 0),
                "uncovered_alnum": self.uncovered_alnum.get(lab, 0),
                "alnum_uncovered_share": self.alnum_uncovered_share(lab),
                "same_label_chars": self.same_label_chars[lab],
                "same_label_share": self.same_label_share(lab),
                "pred_chars": self.pred_chars[lab],
                "pred_in_gold_chars": self.pred_in_gold_chars[lab],
                "char_precision": self.char_precision(lab),
            }
        return {
            "label_set": self.label_set,
            "n_docs": self.n_docs,
            "category": cats,
            "overall": {
                "gold_chars": self.total_gold_chars,
                "uncovered_chars": self.total_uncovered_chars,
                "uncovered_share": self.uncovered_share(),
                "gold_alnum": self.total_gold_alnum,
                "uncovered_alnum": self.total_uncovered_alnum,
                "alnum_uncovered_share": self.alnum_uncovered_share(),
                "same_label_chars": self.total_same_label_chars,
                "same_label_share": self.same_label_share(),
                "pred_chars": self.total_pred_chars,
                "pred_in_gold_chars": self.total_pred_in_gold_chars,
                "char_precision": self.char_precision(),
            },
        }


def _masks(spans: Sequence[Span], n: int, index: Mapping[str, int], label_map: Mapping[str, str] | None) -> np.ndarray:
    """(labels, n) boolean array: which characters each scoring label's spans cover."""
    m = np.zeros((len(index), n), dtype=bool)
    for s in spans:
        lab = label_map.get(s.label) if label_map else s.label
        c = index.get(lab) if lab is not None else None
        if c is not None:
            m[c, s.start : s.end] = True
    return m


def _alnum_mask(text: str, n: int) -> np.ndarray:
    """(n,) boolean array: which offsets of ``text`` hold a letter or digit (any script)."""
    m = np.zeros(n, dtype=bool)
    if text:
        k = min(n, len(text))
        m[:k] = np.fromiter((ch.isalnum() for ch in text[:k]), dtype=bool, count=k)
    return m


def character_metrics(
    gold_docs: Sequence[GoldDoc],
    predictions: Predictions,
    *,
    label_set: str | LabelSet | None = "fine",
    labels: Sequence[str] | None = None,
) -> CharacterMetrics:
    """Character-level privacy metrics of ``predictions`` against ``gold_docs``.

    ``predictions``: ``{note_id: [Span, ...]}`` or a sequence of documents; notes without
    predictions predict nothing; predictions for notes not in the gold are ignored.
    ``labels`` (default: all labels of the label set) restricts the scored labels.
    """
    ls = get_label_set(label_set)
    labels = tuple(labels) if labels is not None else ls.labels
    label_map = ls.label_map
    index = {lab: i for i, lab in enumerate(labels)}
    pred = _span_map(predictions)
    c = len(labels)
    gold_n = np.zeros(c, dtype=np.int64)
    unc_n = np.zeros(c, dtype=np.int64)
    same_n = np.zeros(c, dtype=np.int64)
    pred_n = np.zeros(c, dtype=np.int64)
    pig_n = np.zeros(c, dtype=np.int64)
    gal_n = np.zeros(c, dtype=np.int64)
    ual_n = np.zeros(c, dtype=np.int64)
    tot = np.zeros(7, dtype=np.int64)  # gold, uncovered, same-label, pred, pred-in-gold, gold/uncovered alnum
    for doc in gold_docs:
        p_spans = pred.get(doc.note_id, ())
        n = max([len(doc.text)] + [s.end for s in doc.spans] + [s.end for s in p_spans])
        g = _masks(doc.spans, n, index, label_map)
        p = _masks(p_spans, n, index, label_map)
        g_any, p_any = g.any(0), p.any(0)
        gold_n += g.sum(1)
        unc_n += (g & ~p_any).sum(1)
        same_n += (g & p).sum(1)
        pred_n += p.sum(1)
        pig_n += (p & g_any).sum(1)
        alnum = _alnum_mask(doc.text, n)
        g_al = g & alnum
        gal_n += g_al.sum(1)
        ual_n += (g_al & ~p_any).sum(1)
        g_any_al = g_any & alnum
        tot += [
            g_any.sum(),
            (g_any & ~p_any).sum(),
            (g & p).any(0).sum(),
            p_any.sum(),
            (p_any & g_any).sum(),
            g_any_al.sum(),
            (g_any_al & ~p_any).sum(),
        ]

    def per(a: np.ndarray) -> dict[str, int]:
        return {lab: int(a[i]) for i, lab in enumerate(labels)}

    total_gold, total_unc, total_same, total_pred, total_pig, total_gal, total_ual = (int(x) for x in tot)
    return CharacterMetrics(
        labels,
        len(gold_docs),
        per(gold_n),
        per(unc_n),
        per(same_n),
        per(pred_n),
        per(pig_n),
        gold_alnum=per(gal_n),
        uncovered_alnum=per(ual_n),
        total_gold_chars=total_gold,
        total_uncovered_chars=total_unc,
        total_same_label_chars=total_same,
        total_pred_chars=total_pred,
        total_pred_in_gold_chars=total_pig,
        total_gold_alnum=total_gal,
        total_uncovered_alnum=total_ual,
        label_set=ls.name,
    )


@dataclass
class ClinicalTermsRemoved:
    """Clinical vocabulary overlapped by predictions (text a false positive would remove)."""

    n_docs: int  # documents whose metadata lists clinical_terms
    n_terms: int
    n_removed: int  # terms that any predicted span overlaps
    removed_by_doc: dict[str, int] = field(default_factory=dict)

    @property
    def share(self) -> float | None:
        return _share(self.n_removed, self.n_terms)

    def to_dict(self) -> dict[str, Any]:
        return {"n_docs": self.n_docs, "n_terms": self.n_terms, "n_removed": self.n_removed, "share": self.share}


def clinical_terms_removed(gold_docs: Sequence[GoldDoc], predictions: Predictions) -> ClinicalTermsRemoved:
    """Count metadata ``clinical_terms`` ([[start, end], ...]) that any predicted span overlaps.

    Only documents whose metadata has the key count (``n_docs``); all predicted spans count,
    whatever their label.  Malformed or empty term offsets are skipped.
    """
    pred = _span_map(predictions)
    n_docs = n_terms = n_removed = 0
    by_doc: dict[str, int] = {}
    for doc in gold_docs:
        terms = (doc.metadata or {}).get("clinical_terms")
        if terms is None:
            continue
        n_docs += 1
        pairs = [
            (int(t[0]), int(t[1]))
            for t in terms
            if isinstance(t, (list, tuple)) and len(t) >= 2 and int(t[0]) < int(t[1])
        ]
        if not pairs:
            by_doc[doc.note_id] = 0
            continue
        p_spans = pred.get(doc.note_id, ())
        n = max([len(doc.text)] + [e for _, e in pairs] + [s.end for s in p_spans])
        mask = np.zeros(n, dtype=bool)
        for s in p_spans:
            mask[s.start : s.end] = True
        cum = np.concatenate([[0], np.cumsum(mask)])
        t = np.asarray(pairs, dtype=np.int64).clip(0, n)
        hit = int(((cum[t[:, 1]] - cum[t[:, 0]]) > 0).sum())
        n_terms += len(pairs)
        n_removed += hit
        by_doc[doc.note_id] = hit
    return ClinicalTermsRemoved(n_docs, n_terms, n_removed, by_doc)


__all__ = ["CharacterMetrics", "ClinicalTermsRemoved", "character_metrics", "clinical_terms_removed"]
