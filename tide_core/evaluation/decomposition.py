"""Shift-share decomposition of a micro-recall drop between two corpora.

Micro recall is a share-weighted mean of category recalls:  R = Σ_c s_c · r_c, where
s_c = n_c / N is category c's share of the gold spans and r_c its recall.  Between corpus A
(e.g. in-domain) and corpus B (e.g. an external site) the drop D = R_A − R_B splits exactly into

    D = Σ_c  s̄_c · (r_A,c − r_B,c)      within-category recall term
      + Σ_c  r̄_c · (s_A,c − s_B,c)      category-mix term

with s̄_c = (s_A,c + s_B,c)/2 and r̄_c = (r_A,c + r_B,c)/2 (the two-period midpoint form, so
the terms sum to D with no residual and neither corpus is privileged).  A positive term lowers
recall on B.  A category absent from one corpus has no recall there; it is given the other
corpus's recall, so its contribution goes entirely to the mix term.  Each category's share of
the drop is (within_c + mix_c) / D.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tide_core.errors import InputError
from tide_core.evaluation.metrics import CountTable


@dataclass
class CategoryShift:
    label: str
    share_a: float
    share_b: float
    recall_a: float | None
    recall_b: float | None
    within: float
    mix: float

    @property
    def total(self) -> float:
        return self.within + self.mix


@dataclass
class RecallDropDecomposition:
    recall_a: float
    recall_b: float
    drop: float
    within: float
    mix: float
    categories: list[CategoryShift]

    def share_of_drop(self, label: str) -> float | None:
        if abs(self.drop) < 1e-12:
            return None
        for c in self.categories:
            if c.label == label:
                return c.total / self.drop
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "recall_a": self.recall_a,
            "recall_b": self.recall_b,
            "drop": self.drop,
            "within_category_recall": self.within,
            "category_mix": self.mix,
            "formula": "D = sum_c mean(s_c)*(r_A,c - r_B,c) + sum_c mean(r_c)*(s_A,c - s_B,c)",
            "categories": [
                {
                    "label": c.label,
                    "share_a": c.share_a,
                    "share_b": c.share_b,
                    "recall_a": c.recall_a,
                    "recall_b": c.recall_b,
                    "within": c.within,
                    "mix": c.mix,
                    "total": c.total,
                    "share_of_drop": self.share_of_drop(c.label),
                }
                for c in self.categories
            ],
        }


def decompose_recall_drop(table_a: CountTable, table_b: CountTable) -> RecallDropDecomposition:
    if table_a.labels != table_b.labels:
        raise InputError(
            "E715", "both corpora must be scored over the same labels", hint="apply the same crosswalk to both corpora"
        )
    tpa, _, fna = table_a.totals()
    tpb, _, fnb = table_b.totals()
    na, nb = tpa + fna, tpb + fnb
    if na.sum() == 0 or nb.sum() == 0:
        raise InputError(
            "E715",
            "a corpus without gold spans has no recall to decompose",
            hint="check that the gold files were read with the right crosswalk",
        )
    sa, sb = na / na.sum(), nb / nb.sum()
    cats: list[CategoryShift] = []
    for c, lab in enumerate(table_a.labels):
        if na[c] == 0 and nb[c] == 0:
            continue
        ra = tpa[c] / na[c] if na[c] else None
        rb = tpb[c] / nb[c] if nb[c] else None
        ra_f = ra if ra is not None else rb
        rb_f = rb if rb is not None else ra
        assert ra_f is not None and rb_f is not None  # one side has gold spans of this label
        within = 0.5 * (sa[c] + sb[c]) * (ra_f - rb_f)
        mix = 0.5 * (ra_f + rb_f) * (sa[c] - sb[c])
        cats.append(
            CategoryShift(
                lab,
                float(sa[c]),
                float(sb[c]),
                None if ra is None else float(ra),
                None if rb is None else float(rb),
                float(within),
                float(mix),
            )
        )
    recall_a = float(tpa.sum() / na.sum())
    recall_b = float(tpb.sum() / nb.sum())
    within = float(np.sum([c.within for c in cats]))
    mix = float(np.sum([c.mix for c in cats]))
    return RecallDropDecomposition(recall_a, recall_b, recall_a - recall_b, within, mix, cats)
