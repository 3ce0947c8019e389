"""One call from gold + predictions to a complete evaluation report.

``evaluate(gold, pred)`` matches spans at ``tau`` (0.8), adds the τ = 0.5 sensitivity run and
character-level recall, bootstraps 95% intervals (2,000 document resamples, seed 42) and, when a
second system is given, the paired per-category recall test with Bonferroni correction.
Predictions are paired to gold documents by note id; a gold document with no prediction line
has no predictions (all its spans are misses), and prediction lines for unknown notes are
counted and ignored.  When a prediction line carries text it must equal the gold text, because
offsets into a different text are meaningless.

Options: ``split=True`` adds split matching (one gold span found by several same-label pieces;
see :mod:`tide_core.evaluation.matching`); ``label_set="coarse"`` scores on the coarse label set
(NAME, CONTACT, ...; see :mod:`tide_core.evaluation.labelsets`), mapping gold and predictions.
Every system also gets the character-level privacy metrics of
:mod:`tide_core.evaluation.characters` and, when gold metadata lists ``clinical_terms``, the
count of clinical terms its predictions remove.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tide_core.errors import InputError
from tide_core.evaluation.bootstrap import N_RESAMPLES, SEED, bootstrap_intervals, paired_recall_test
from tide_core.evaluation.characters import (
    CharacterMetrics,
    ClinicalTermsRemoved,
    character_metrics,
    clinical_terms_removed,
)
from tide_core.evaluation.gold_io import GoldDoc
from tide_core.evaluation.labelsets import LabelSet, get_label_set
from tide_core.evaluation.metrics import CountTable, build_counts, rates, summary_stats, to_float
from tide_core.spans import Span

Predictions = Sequence[GoldDoc] | Mapping[str, Sequence[Span]]


def _pred_map(gold: Sequence[GoldDoc], pred: Predictions, check_text: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    gold_ids = {d.note_id: d for d in gold}
    if isinstance(pred, Mapping):
        spans = {k: list(v) for k, v in pred.items()}
        texts: dict[str, str] = {}
    else:
        spans = {d.note_id: list(d.spans) for d in pred}
        texts = {d.note_id: d.text for d in pred if d.text}
    mismatched = [nid for nid, t in texts.items() if nid in gold_ids and t != gold_ids[nid].text]
    if check_text and mismatched:
        raise InputError(
            "E716",
            f"{len(mismatched)} prediction documents have a different text than the "
            f"gold (first: note {sorted(mismatched)[0]!r})",
            hint="predictions must be made on the gold text; re-run recognition on the gold file",
        )
    info = {
        "n_pred_docs": len(spans),
        "gold_without_pred": sum(1 for n in gold_ids if n not in spans),
        "pred_not_in_gold": sum(1 for n in spans if n not in gold_ids),
        "text_mismatch": len(mismatched),
    }
    return spans, info


def _point(table: CountTable) -> dict[str, Any]:
    tp, fp, fn = table.totals()
    r_scope, p_scope = (tp + fn) > 0, (tp + fn + fp) > 0
    per = rates(tp, fp, fn)
    stats = summary_stats(tp, fp, fn, table.char_gold.sum(), table.char_covered.sum(), r_scope, p_scope)
    cats = {}
    for c, lab in enumerate(table.labels):
        cats[lab] = {
            "n_gold": int(tp[c] + fn[c]),
            "n_pred": int(tp[c] + fp[c]),
            "tp": int(tp[c]),
            "fp": int(fp[c]),
            "fn": int(fn[c]),
            "recall": to_float(per["recall"][c]),
            "precision": to_float(per["precision"][c]),
            "f1": to_float(per["f1"][c]),
        }
    overall = {k: to_float(v) for k, v in stats.items()}
    overall.update(
        {
            "tp": int(tp.sum()),
            "fp": int(fp.sum()),
            "fn": int(fn.sum()),
            "char_gold": int(table.char_gold.sum()),
            "char_covered": int(table.char_covered.sum()),
        }
    )
    return {"category": cats, "overall": overall}


@dataclass
class SystemResult:
    name: str
    table: CountTable
    point: dict[str, Any]
    intervals: dict[str, Any] | None
    sensitivity: dict[str, Any]
    characters: CharacterMetrics | None = None
    clinical_terms: ClinicalTermsRemoved | None = None

    def to_dict(self) -> dict[str, Any]:
        cats = {}
        for lab, m in self.point["category"].items():
            entry = dict(m)
            if self.intervals:
                entry["ci"] = self.intervals["category"][lab]
            cats[lab] = entry
        overall = dict(self.point["overall"])
        if self.intervals:
            overall["ci"] = self.intervals["overall"]
        out = {"name": self.name, "category": cats, "overall": overall, "sensitivity": self.sensitivity}
        if self.characters is not None:
            out["characters"] = self.characters.to_dict()
        if self.clinical_terms is not None:
            out["clinical_terms_removed"] = self.clinical_terms.to_dict()
        return out


@dataclass
class EvalReport:
    tau: float
    n_docs: int
    labels: tuple[str, ...]
    systems: list[SystemResult]
    pairing: dict[str, dict[str, int]]
    bootstrap: dict[str, Any]
    paired: list[dict[str, Any]] | None = None
    reader_issues: dict[str, int] = field(default_factory=dict)
    excluded_labels: dict[str, int] = field(default_factory=dict)
    crosswalk: str | None = None
    split: bool = False
    label_set: str = "fine"

    @property
    def primary(self) -> SystemResult:
        return self.systems[0]

    def recall(self, label: str | None = None, system: int = 0) -> float | None:
        point = self.systems[system].point
        recall: float | None = point["overall"]["micro_recall"] if label is None else point["category"][label]["recall"]
        return recall

    def to_dict(self) -> dict[str, Any]:
        return {
            "tau": self.tau,
            "n_docs": self.n_docs,
            "labels": list(self.labels),
            "bootstrap": self.bootstrap,
            "pairing": self.pairing,
            "systems": [s.to_dict() for s in self.systems],
            "paired_test": self.paired,
            "reader_issues": self.reader_issues,
            "excluded_labels": self.excluded_labels,
            "crosswalk": self.crosswalk,
            "split_match": self.split,
            "label_set": self.label_set,
        }


def score_system(
    name: str,
    gold: Sequence[GoldDoc],
    spans: Mapping[str, Sequence[Span]],
    tau: float,
    sensitivity_taus: Sequence[float],
    labels: Sequence[str],
    n_resamples: int,
    seed: int,
    *,
    split: bool = False,
    label_set: str | LabelSet | None = "fine",
) -> SystemResult:
    ls = get_label_set(label_set)
    table = build_counts(gold, spans, tau, labels, split=split, label_map=ls.label_map)
    point = _point(table)
    intervals = bootstrap_intervals(table, n_resamples, seed).to_dict() if n_resamples else None
    sens = {}
    for t in sensitivity_taus:
        if abs(t - tau) < 1e-12:
            continue
        p = _point(build_counts(gold, spans, t, labels, split=split, label_map=ls.label_map))
        sens[f"tau={t:g}"] = {
            "micro_recall": p["overall"]["micro_recall"],
            "micro_precision": p["overall"]["micro_precision"],
            "macro_recall": p["overall"]["macro_recall"],
            "recall": {lab: m["recall"] for lab, m in p["category"].items()},
        }
    chars = character_metrics(gold, spans, label_set=ls, labels=labels)
    terms = clinical_terms_removed(gold, spans)
    return SystemResult(name, table, point, intervals, sens, chars, terms if terms.n_docs else None)


def _labels(labels: Sequence[str] | None, ls: LabelSet) -> tuple[str, ...]:
    if labels is None:
        return ls.labels
    unknown = [lab for lab in labels if lab not in ls.labels]
    if unknown:
        raise InputError(
            "E724",
            f"labels {unknown} are not in the {ls.name!r} label set",
            hint=f"use labels of {', '.join(ls.labels)}",
        )
    return tuple(labels)


def evaluate(
    gold: Sequence[GoldDoc],
    pred: Predictions,
    *,
    pred_b: Predictions | None = None,
    tau: float = 0.8,
    sensitivity_taus: Sequence[float] = (0.5,),
    labels: Sequence[str] | None = None,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    names: tuple[str, str] = ("A", "B"),
    check_text: bool = True,
    split: bool = False,
    label_set: str | LabelSet | None = "fine",
) -> EvalReport:
    """Score ``pred`` (and optionally ``pred_b``) against ``gold``; see the module docstring.

    ``labels``: scoring labels (default: every label of ``label_set``, i.e. ``SCORED_LABELS``
    for the fine set).
    """
    ls = get_label_set(label_set)
    labels = _labels(labels, ls)
    if not gold:
        raise InputError("E713", "no gold documents to evaluate", hint="check the --gold path and --format")
    ids = [d.note_id for d in gold]
    if len(set(ids)) != len(ids):
        raise InputError("E706", "gold note ids are not unique", hint="each gold document needs its own note_id")
    spans_a, info_a = _pred_map(gold, pred, check_text)
    systems = [
        score_system(
            names[0], gold, spans_a, tau, sensitivity_taus, labels, n_resamples, seed, split=split, label_set=ls
        )
    ]
    pairing = {names[0]: info_a}
    paired = None
    if pred_b is not None:
        spans_b, info_b = _pred_map(gold, pred_b, check_text)
        pairing[names[1]] = info_b
        systems.append(
            score_system(
                names[1], gold, spans_b, tau, sensitivity_taus, labels, n_resamples, seed, split=split, label_set=ls
            )
        )
        if n_resamples:
            paired = [r.to_dict() for r in paired_recall_test(systems[0].table, systems[1].table, n_resamples, seed)]
    return EvalReport(
        tau,
        len(gold),
        tuple(labels),
        systems,
        pairing,
        {"n_resamples": n_resamples, "seed": seed, "level": 0.95, "unit": "document", "method": "percentile"},
        paired,
        split=split,
        label_set=ls.name,
    )


def corpus_counts(
    gold: Sequence[GoldDoc],
    pred: Predictions,
    tau: float = 0.8,
    labels: Sequence[str] | None = None,
    *,
    split: bool = False,
    label_set: str | LabelSet | None = "fine",
) -> CountTable:
    """Count table only (for the recall-drop decomposition between corpora)."""
    ls = get_label_set(label_set)
    spans, _ = _pred_map(gold, pred, True)
    return build_counts(gold, spans, tau, _labels(labels, ls), split=split, label_map=ls.label_map)


__all__ = ["evaluate", "EvalReport", "SystemResult", "corpus_counts"]
