"""One call from gold + predictions to a complete evaluation report.

``evaluate(gold, pred)`` matches spans at ``tau`` (0.8), adds the τ = 0.5 sensitivity run and
character-level recall, bootstraps 95% intervals (2,000 document resamples, seed 42) and, when a
second system is given, the paired per-category recall test with Bonferroni correction.
Predictions are paired to gold documents by note id; a gold document with no prediction line
has no predictions (all its spans are misses), and prediction lines for unknown notes are
counted and ignored.  When a prediction line carries text it must equal the gold text, because
offsets into a different text are meaningless.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence, Union


from tide_core.errors import InputError
from tide_core.evaluation.bootstrap import (N_RESAMPLES, SEED, bootstrap_intervals,
                                            paired_recall_test)
from tide_core.evaluation.gold_io import GoldDoc
from tide_core.evaluation.metrics import CountTable, build_counts, rates, summary_stats, to_float
from tide_core.spans import Span
from tide_core.types import SCORED_LABELS

Predictions = Union[Sequence[GoldDoc], Mapping[str, Sequence[Span]]]


def _pred_map(gold: Sequence[GoldDoc], pred: Predictions, check_text: bool) -> tuple[dict, dict]:
    gold_ids = {d.note_id: d for d in gold}
    if isinstance(pred, Mapping):
        spans = {k: list(v) for k, v in pred.items()}
        texts: dict[str, str] = {}
    else:
        spans = {d.note_id: list(d.spans) for d in pred}
        texts = {d.note_id: d.text for d in pred if d.text}
    mismatched = [nid for nid, t in texts.items() if nid in gold_ids and t != gold_ids[nid].text]
    if check_text and mismatched:
        raise InputError("E716", f"{len(mismatched)} prediction documents have a different text than the "
                                 f"gold (first: note {sorted(mismatched)[0]!r})",
                         hint="predictions must be made on the gold text; re-run recognition on the gold file")
    info = {"n_pred_docs": len(spans), "gold_without_pred": sum(1 for n in gold_ids if n not in spans),
            "pred_not_in_gold": sum(1 for n in spans if n not in gold_ids), "text_mismatch": len(mismatched)}
    return spans, info


def _point(table: CountTable) -> dict[str, Any]:
    tp, fp, fn = table.totals()
    r_scope, p_scope = (tp + fn) > 0, (tp + fn + fp) > 0
    per = rates(tp, fp, fn)
    stats = summary_stats(tp, fp, fn, table.char_gold.sum(), table.char_covered.sum(), r_scope, p_scope)
    cats = {}
    for c, lab in enumerate(table.labels):
        cats[lab] = {"n_gold": int(tp[c] + fn[c]), "n_pred": int(tp[c] + fp[c]), "tp": int(tp[c]),
                     "fp": int(fp[c]), "fn": int(fn[c]), "recall": to_float(per["recall"][c]),
                     "precision": to_float(per["precision"][c]), "f1": to_float(per["f1"][c])}
    overall = {k: to_float(v) for k, v in stats.items()}
    overall.update({"tp": int(tp.sum()), "fp": int(fp.sum()), "fn": int(fn.sum()),
                    "char_gold": int(table.char_gold.sum()), "char_covered": int(table.char_covered.sum())})
    return {"category": cats, "overall": overall}


@dataclass
class SystemResult:
    name: str
    table: CountTable
    point: dict[str, Any]
    intervals: dict[str, Any] | None
    sensitivity: dict[str, Any]

    def to_dict(self) -> dict:
        cats = {}
        for lab, m in self.point["category"].items():
            entry = dict(m)
            if self.intervals:
                entry["ci"] = self.intervals["category"][lab]
            cats[lab] = entry
        overall = dict(self.point["overall"])
        if self.intervals:
            overall["ci"] = self.intervals["overall"]
        return {"name": self.name, "category": cats, "overall": overall, "sensitivity": self.sensitivity}


@dataclass
class EvalReport:
    tau: float
    n_docs: int
    labels: tuple[str, ...]
    systems: list[SystemResult]
    pairing: dict[str, dict[str, int]]
    bootstrap: dict[str, Any]
    paired: list[dict] | None = None
    reader_issues: dict[str, int] = field(default_factory=dict)
    excluded_labels: dict[str, int] = field(default_factory=dict)
    crosswalk: str | None = None

    @property
    def primary(self) -> SystemResult:
        return self.systems[0]

    def recall(self, label: str | None = None, system: int = 0) -> float | None:
        point = self.systems[system].point
        return point["overall"]["micro_recall"] if label is None else point["category"][label]["recall"]

    def to_dict(self) -> dict:
        return {"tau": self.tau, "n_docs": self.n_docs, "labels": list(self.labels),
                "bootstrap": self.bootstrap, "pairing": self.pairing,
                "systems": [s.to_dict() for s in self.systems], "paired_test": self.paired,
                "reader_issues": self.reader_issues, "excluded_labels": self.excluded_labels,
                "crosswalk": self.crosswalk}


def score_system(name: str, gold: Sequence[GoldDoc], spans: Mapping[str, Sequence[Span]], tau: float,
                 sensitivity_taus: Sequence[float], labels: Sequence[str], n_resamples: int, seed: int
                 ) -> SystemResult:
    table = build_counts(gold, spans, tau, labels)
    point = _point(table)
    intervals = bootstrap_intervals(table, n_resamples, seed).to_dict() if n_resamples else None
    sens = {}
    for t in sensitivity_taus:
        if abs(t - tau) < 1e-12:
            continue
        p = _point(build_counts(gold, spans, t, labels))
        sens[f"tau={t:g}"] = {"micro_recall": p["overall"]["micro_recall"],
                              "micro_precision": p["overall"]["micro_precision"],
                              "macro_recall": p["overall"]["macro_recall"],
                              "recall": {lab: m["recall"] for lab, m in p["category"].items()}}
    return SystemResult(name, table, point, intervals, sens)


def evaluate(gold: Sequence[GoldDoc], pred: Predictions, *, pred_b: Predictions | None = None,
             tau: float = 0.8, sensitivity_taus: Sequence[float] = (0.5,),
             labels: Sequence[str] = SCORED_LABELS, n_resamples: int = N_RESAMPLES, seed: int = SEED,
             names: tuple[str, str] = ("A", "B"), check_text: bool = True) -> EvalReport:
    """Score ``pred`` (and optionally ``pred_b``) against ``gold``; see the module docstring."""
    if not gold:
        raise InputError("E713", "no gold documents to evaluate", hint="check the --gold path and --format")
    ids = [d.note_id for d in gold]
    if len(set(ids)) != len(ids):
        raise InputError("E706", "gold note ids are not unique", hint="each gold document needs its own note_id")
    spans_a, info_a = _pred_map(gold, pred, check_text)
    systems = [score_system(names[0], gold, spans_a, tau, sensitivity_taus, labels, n_resamples, seed)]
    pairing = {names[0]: info_a}
    paired = None
    if pred_b is not None:
        spans_b, info_b = _pred_map(gold, pred_b, check_text)
        pairing[names[1]] = info_b
        systems.append(score_system(names[1], gold, spans_b, tau, sensitivity_taus, labels, n_resamples, seed))
        if n_resamples:
            paired = [r.to_dict() for r in paired_recall_test(systems[0].table, systems[1].table,
                                                               n_resamples, seed)]
    return EvalReport(tau, len(gold), tuple(labels), systems, pairing,
                      {"n_resamples": n_resamples, "seed": seed, "level": 0.95, "unit": "document",
                       "method": "percentile"}, paired)


def corpus_counts(gold: Sequence[GoldDoc], pred: Predictions, tau: float = 0.8,
                  labels: Sequence[str] = SCORED_LABELS) -> CountTable:
    """Count table only (for the recall-drop decomposition between corpora)."""
    spans, _ = _pred_map(gold, pred, True)
    return build_counts(gold, spans, tau, labels)


__all__ = ["evaluate", "EvalReport", "SystemResult", "corpus_counts"]
