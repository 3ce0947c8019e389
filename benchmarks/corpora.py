"""The benchmark corpora, by name: the in-house held-out corpus and the out-of-generator ones.

- ``inhouse``: held-out notes of TIDE's own generator (``tide_core.synth``; templates and
  vocabulary halves never used in training). A regression test: it shares the generator with
  the training data, so it cannot show generalisation.
- ``oog-clinical`` and ``oog-messages``: corpora of ``benchmarks.oog``, a second generator
  written from scratch that shares no code, template, vocabulary list or layout with
  ``tide_core.synth`` (free-running prose, portal messages, tables, headers in random field
  orders, OCR-like noise; and general, mostly non-clinical PII text).

Every corpus comes with its patients table (for the known-PHI recognizer) and, where the
generator records them, the offsets of clinical terms (drug names, doses, eponyms, lab names)
that a de-identifier should leave alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchmarks.oog import generate_oog
from tide_core.errors import ConfigError
from tide_core.evaluation.gold_io import GoldDoc
from tide_core.synth import generate_heldout_dataset

CORPORA = ("inhouse", "oog-clinical", "oog-messages")
#: Default sizes: the clinical corpora as long notes, the message corpus as many short texts.
DEFAULT_SIZES = {"inhouse": 300, "oog-clinical": 300, "oog-messages": 1500}


@dataclass
class BenchCorpus:
    """Gold documents plus the patients table rows of one named benchmark corpus."""

    name: str
    seed: int
    gold: list[GoldDoc]
    patients: list[dict[str, Any]] = field(default_factory=list)

    @property
    def n_spans(self) -> int:
        return sum(len(d.spans) for d in self.gold)


def _inhouse_with_terms(n: int, seed: int) -> BenchCorpus:
    data = generate_heldout_dataset(n, seed=seed)
    gold = []
    for d in data.gold:
        # the generator records its hard negatives (drugs, eponyms, doses, labs): score them as clinical terms
        terms = [[s, e] for s, e, *_ in d.metadata.get("hard_negatives", ())]
        gold.append(GoldDoc(d.note_id, d.patient_id, d.text, d.spans, dict(d.metadata, clinical_terms=terms)))
    return BenchCorpus("inhouse", seed, gold, list(data.patients))


def load_corpus(name: str, n_docs: int | None = None, seed: int = 1) -> BenchCorpus:
    """Generate benchmark corpus ``name`` (one of :data:`CORPORA`) deterministically."""
    n = int(n_docs or DEFAULT_SIZES.get(name, 300))
    if name == "inhouse":
        return _inhouse_with_terms(n, seed)
    if name.startswith("oog-"):
        oog = generate_oog(name[4:], n, seed)
        return BenchCorpus(name, seed, list(oog.gold), list(oog.patients))
    raise ConfigError("E380", f"unknown benchmark corpus {name!r}", hint=f"use one of {', '.join(CORPORA)}")
