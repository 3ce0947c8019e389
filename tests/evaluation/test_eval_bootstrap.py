"""Bootstrap intervals and the paired test: coverage of the point, reproducibility, power, speed."""

from __future__ import annotations

import time

import numpy as np
import pytest
from test_eval_metrics import corpus, pred_span, with_spans

from tide_core.evaluation.bootstrap import bootstrap_intervals, paired_recall_test, resample_weights
from tide_core.evaluation.evaluate import corpus_counts, evaluate


@pytest.fixture(scope="module")
def gold():
    return corpus(200, seed=11)


def _drop_every(gold, label, k):
    """Predictions missing the ``label`` span of every k-th note (known recall 1 - 1/k)."""
    return [
        with_spans(d, [pred_span(s) for s in d.spans if not (s.label == label and int(d.note_id[-3:]) % k == 0)])
        for d in gold
    ]


def test_resample_weights_are_document_multiplicities():
    w = resample_weights(50, 2000, 42)
    assert w.shape == (2000, 50) and np.all(w.sum(1) == 50)
    assert np.array_equal(w, resample_weights(50, 2000, 42))
    assert not np.array_equal(w, resample_weights(50, 2000, 43))


def test_intervals_contain_point_estimates_and_are_reproducible(gold):
    preds = _drop_every(gold, "ID", 4)
    rep = evaluate(gold, preds)
    again = evaluate(gold, preds)
    assert rep.to_dict() == again.to_dict()  # seed 42: every digit reproduces
    o = rep.primary.to_dict()["overall"]
    for metric in ("micro_recall", "micro_precision", "macro_recall", "char_recall"):
        lo, hi = o["ci"][metric]
        assert lo <= o[metric] <= hi, metric
    lo, hi = rep.primary.to_dict()["category"]["ID"]["ci"]["recall"]
    assert rep.recall("ID") == 0.75
    assert lo < 0.75 < hi and hi - lo < 0.3
    # a category with perfect recall has a degenerate interval
    assert rep.primary.to_dict()["category"]["DATE"]["ci"]["recall"] == [1.0, 1.0]
    other_seed = bootstrap_intervals(rep.primary.table, seed=7).to_dict()
    assert other_seed["category"]["ID"]["recall"] != [lo, hi]


def test_paired_test_detects_a_real_difference_and_not_a_null_one(gold):
    a = _drop_every(gold, "ID", 2)  # ID recall 0.5
    b = _drop_every(gold, "ID", 10)  # ID recall 0.9
    ta, tb = corpus_counts(gold, a), corpus_counts(gold, b)
    res = {r.label: r for r in paired_recall_test(ta, tb)}
    assert res["ID"].delta == pytest.approx(0.4)
    assert res["ID"].p_value < 0.001 and res["ID"].p_bonferroni < 0.01
    assert res["ID"].ci[0] > 0.25
    assert res["DATE"].delta == 0.0 and res["DATE"].p_value == 1.0
    n_tested = sum(1 for r in res.values() if r.label != "micro")
    assert res["ID"].p_bonferroni == pytest.approx(min(1.0, res["ID"].p_value * n_tested))
    # null: two systems that differ only by which notes they miss at the same rate
    c = [
        with_spans(d, [pred_span(s) for s in d.spans if not (s.label == "ID" and int(d.note_id[-3:]) % 2 == 1)])
        for d in gold
    ]
    null = {r.label: r for r in paired_recall_test(ta, corpus_counts(gold, c))}
    assert null["ID"].delta == pytest.approx(0.0)
    assert null["ID"].p_value > 0.3 and null["ID"].p_bonferroni == 1.0


def test_two_system_report_has_paired_rows(gold):
    rep = evaluate(gold, _drop_every(gold, "PHONE", 2), pred_b=_drop_every(gold, "PHONE", 20))
    rows = {r["label"]: r for r in rep.paired}
    assert rows["PHONE"]["delta"] == pytest.approx(0.45) and rows["PHONE"]["p_value"] < 0.01
    assert "micro" in rows and rows["micro"]["p_bonferroni"] is None


def test_bootstrap_is_vectorised_and_fast():
    big = corpus(1500, seed=5)
    table = corpus_counts(big, _drop_every(big, "ID", 3))
    t0 = time.perf_counter()
    iv = bootstrap_intervals(table)
    paired_recall_test(table, table)
    assert time.perf_counter() - t0 < 5.0
    assert iv.n_resamples == 2000 and iv.seed == 42
