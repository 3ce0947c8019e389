"""Distillation: a teacher labels unannotated notes, a student token classifier learns them.

As in the TIDE 2.0 paper, the teacher gives *hard* span labels (an LLM API returns spans, not
logits), so the student is trained exactly like a supervised model, on silver documents.  The
teacher is any list of registry specs (e.g. ``[{"name": "tide.llm", ...}]`` or regex plus an
existing model); several recognizers are combined with ``tide_core.steps.resolve.resolve_spans``.

Fidelity is reported per category as student recall minus teacher recall against gold
(paired document bootstrap), plus the student's agreement with the teacher's labels.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from tide_core.evaluation.gold_io import GoldDoc
from tide_core.recognizers.hf_token_classifier import HFTokenClassifierRecognizer
from tide_core.recognizers.registry import create
from tide_core.spans import Note, Span
from tide_core.steps.resolve import resolve_spans
from tide_core.training.fidelity import fidelity_report
from tide_core.training.trainer import TrainConfig, TrainResult, train_token_classifier


@dataclass
class DistillResult:
    train: TrainResult
    fidelity: dict[str, Any]
    n_silver_spans: int


def _as_note(d: Any) -> Note:
    if isinstance(d, Note):
        return d
    if hasattr(d, "to_note"):
        note: Note = d.to_note()
        return note
    return Note(d.note_id, getattr(d, "patient_id", ""), d.text, dict(getattr(d, "metadata", {}) or {}))


def label_notes(
    notes: Sequence[Any], specs: Sequence[Mapping[str, Any]], batch: int = 32, progress: bool = False
) -> dict[str, list[Span]]:
    """Run the teacher (one or more registry specs, resolved together) over ``notes``."""

    recs = [create(dict(s)) for s in specs]
    for r in recs:
        r.load()
    plain = [_as_note(n) for n in notes]
    out: dict[str, list[Span]] = {}
    bar = None
    if progress:
        bar = tqdm(total=len(plain), desc="teacher", unit="note", file=sys.stderr)
    for i in range(0, len(plain), batch):
        chunk = plain[i : i + batch]
        per_rec = [r.recognize_many(chunk) for r in recs]
        for j, n in enumerate(chunk):
            spans = [s for rs in per_rec for s in rs[j]]
            out[n.note_id] = list(resolve_spans(spans)) if len(recs) > 1 else sorted(spans)
        if bar is not None:
            bar.update(len(chunk))
    if bar is not None:
        bar.close()
    return out


def predict_model_dir(model_dir: str | os.PathLike[str], notes: Sequence[Any]) -> dict[str, list[Span]]:

    rec = HFTokenClassifierRecognizer(model_dir)
    plain = [_as_note(n) for n in notes]
    out: dict[str, list[Span]] = {}
    for i in range(0, len(plain), 32):
        chunk = plain[i : i + 32]
        for n, spans in zip(chunk, rec.recognize_many(chunk), strict=False):
            out[n.note_id] = spans
    return out


def distill(
    notes: Sequence[Any],
    teacher_specs: Sequence[Mapping[str, Any]],
    output_dir: str | os.PathLike[str],
    config: TrainConfig | None = None,
    gold: Sequence[GoldDoc] | None = None,
    n_resamples: int = 2000,
    seed: int = 42,
    progress: bool = False,
) -> DistillResult:
    """Label ``notes`` with the teacher, train the student, score fidelity (on ``gold`` if given)."""
    silver_labels = label_notes(notes, teacher_specs, progress=progress)
    silver = [
        GoldDoc(n.note_id, n.patient_id, n.text, tuple(silver_labels[n.note_id]), {})
        for n in (_as_note(x) for x in notes)
    ]
    corpus = {
        "source": "distillation",
        "n_notes": len(silver),
        "teacher": [dict(s) for s in teacher_specs if "rows" not in s],
    }
    res = train_token_classifier(silver, Path(output_dir), config or TrainConfig(), corpus=corpus)
    eval_docs = list(gold) if gold else silver
    teacher_eval = silver_labels if not gold else label_notes(eval_docs, teacher_specs)
    student_eval = predict_model_dir(res.output_dir, eval_docs)
    report = fidelity_report(
        eval_docs, teacher_eval, student_eval, gold=gold or None, n_resamples=n_resamples, seed=seed
    )
    report["scored_on"] = "gold" if gold else "training notes (no gold given)"
    return DistillResult(res, report, sum(len(v) for v in silver_labels.values()))
