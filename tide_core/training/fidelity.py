"""Span-level scores for training and distillation, on top of ``tide_core.evaluation``.

* ``score_spans``: micro/macro and per-category recall/precision (tau 0.8 union overlap), no
  bootstrap -- the dev metric written into ``tide_model.json``.
* ``fidelity_report``: teacher vs student.  With gold: each one's recall per category and the
  paired difference student - teacher (2,000 document resamples, seed 42, percentile 95%
  intervals, Bonferroni p-values), i.e. the paper's Delta-R.  Always: agreement of the student
  with the teacher's own (silver) labels, scored as if the teacher were gold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tide_core.evaluation.evaluate import evaluate
from tide_core.evaluation.gold_io import GoldDoc
from tide_core.spans import Span


def _as_gold(docs: Sequence[Any]) -> list[GoldDoc]:
    out = []
    for d in docs:
        if isinstance(d, GoldDoc):
            out.append(d)
        else:
            out.append(
                GoldDoc(
                    d.note_id,
                    getattr(d, "patient_id", ""),
                    d.text,
                    tuple(d.spans),
                    dict(getattr(d, "metadata", {}) or {}),
                )
            )
    return out


def _compact(system: Any) -> dict[str, Any]:
    o = system.point["overall"]
    cats = {
        lab: {"n_gold": m["n_gold"], "recall": m["recall"], "precision": m["precision"]}
        for lab, m in system.point["category"].items()
        if m["n_gold"] or m["n_pred"]
    }
    return {
        "micro_recall": o["micro_recall"],
        "micro_precision": o["micro_precision"],
        "macro_recall": o["macro_recall"],
        "macro_precision": o["macro_precision"],
        "tp": o["tp"],
        "fp": o["fp"],
        "fn": o["fn"],
        "category": cats,
    }


def score_spans(docs: Sequence[Any], preds: Mapping[str, Sequence[Span]], tau: float = 0.8) -> dict[str, Any]:
    rep = evaluate(_as_gold(docs), dict(preds), tau=tau, sensitivity_taus=(), n_resamples=0, check_text=False)
    return _compact(rep.primary)


def silver_docs(docs: Sequence[Any], preds: Mapping[str, Sequence[Span]]) -> list[GoldDoc]:
    """Documents whose 'gold' spans are a system's predictions (teacher labels)."""
    return [
        GoldDoc(
            d.note_id,
            getattr(d, "patient_id", ""),
            d.text,
            tuple(sorted(preds.get(d.note_id, ()), key=lambda s: (s.start, s.end, s.label))),
            dict(getattr(d, "metadata", {}) or {}),
        )
        for d in docs
    ]


def fidelity_report(
    docs: Sequence[Any],
    teacher: Mapping[str, Sequence[Span]],
    student: Mapping[str, Sequence[Span]],
    gold: Sequence[Any] | None = None,
    n_resamples: int = 2000,
    seed: int = 42,
    tau: float = 0.8,
) -> dict[str, Any]:
    """Teacher-student fidelity; see the module docstring."""
    out: dict[str, Any] = {"tau": tau, "n_docs": len(docs)}
    agree = evaluate(
        silver_docs(docs, teacher), dict(student), tau=tau, sensitivity_taus=(), n_resamples=0, check_text=False
    )
    out["agreement_with_teacher"] = _compact(agree.primary)
    if gold:
        g = _as_gold(gold)
        rep = evaluate(
            g,
            dict(teacher),
            pred_b=dict(student),
            tau=tau,
            sensitivity_taus=(),
            n_resamples=n_resamples,
            seed=seed,
            names=("teacher", "student"),
            check_text=False,
        )
        out["teacher"] = _compact(rep.systems[0])
        out["student"] = _compact(rep.systems[1])
        out["delta_recall"] = rep.paired or []
        out["bootstrap"] = rep.bootstrap
    return out


def format_fidelity(report: Mapping[str, Any]) -> str:
    """Plain-text table for the CLI."""
    lines = []
    a = report["agreement_with_teacher"]
    lines.append(
        f"student vs teacher labels (teacher as reference, tau={report['tau']}): "
        f"recall {_f(a['micro_recall'])}  precision {_f(a['micro_precision'])}"
    )
    if "delta_recall" in report:
        lines.append("")
        lines.append(
            f"{'category':<10} {'n_gold':>6} {'teacher R':>9} {'student R':>9} {'dR':>7}  95% CI            p_bonf"
        )
        for r in report["delta_recall"]:
            lo, hi = r["ci"]
            lines.append(
                f"{r['label']:<10} {r['n_gold']:>6} {_f(r['recall_a']):>9} {_f(r['recall_b']):>9} "
                f"{_f(r['delta'], signed=True):>7}  [{_f(lo, signed=True)}, {_f(hi, signed=True)}]"
                f"  {_f(r['p_bonferroni'])}"
            )
    return "\n".join(lines)


def _f(x: float | None, signed: bool = False) -> str:
    if x is None:
        return "-"
    return f"{x:+.3f}" if signed else f"{x:.3f}"
