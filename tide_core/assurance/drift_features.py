"""Per-document drift features and their aggregation into a profile of counts.

The drift monitor compares *profiles*: sums and histograms of counts over a set of documents
(characters, lines, digits, metadata categories, spans per label, confidence bins, residual
screen hits).  A profile is additive, so the same code aggregates a batch, the frozen
reference, or one half of a calibration split, and it never holds a document's text, id or
span values -- only counts and category names (note type, source, site, PHI label).
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tide_core.types import LABELS

MIX_KEYS = ("note_type", "source", "site")
#: fixed confidence bins (scores are in [0, 1]); the last bin holds 1.0
CONFIDENCE_EDGES = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0)
TEXT_COUNTS = ("chars", "lines", "digits", "upper", "alpha", "punct", "nonascii")
_PUNCT = set(string.punctuation)


def _text_counts(text: str) -> list[int]:
    digits = upper = alpha = punct = nonascii = 0
    for ch in text:
        if ch.isdigit():
            digits += 1
        if ch.isalpha():
            alpha += 1
            if ch.isupper():
                upper += 1
        if ch in _PUNCT:
            punct += 1
        if ord(ch) > 127:
            nonascii += 1
    return [len(text), text.count("\n") + (1 if text else 0), digits, upper, alpha, punct, nonascii]


@dataclass
class FeatureFrame:
    """Per-document features (rows = documents); nothing here is written to disk."""

    text: np.ndarray  # (n, len(TEXT_COUNTS)) int
    mix: dict[str, list[str]]  # key -> category per document
    span_counts: np.ndarray | None  # (n, len(LABELS)) spans per label
    conf_hist: np.ndarray | None  # (n, bins) span scores per confidence bin
    residual: np.ndarray | None  # (n, len(LABELS)) residual screen hits per label
    recognizer_fingerprint: str | None = None
    screen_fingerprint: str | None = None

    @property
    def n(self) -> int:
        return int(self.text.shape[0])


def _labels_counts(items: Any) -> dict[str, int]:
    """Accept a list of Spans / labels, or a {label: count} mapping."""
    if items is None:
        return {}
    if isinstance(items, Mapping):
        return {str(k): int(v) for k, v in items.items()}
    out: dict[str, int] = {}
    for it in items:
        lab = getattr(it, "label", it)
        out[lab] = out.get(lab, 0) + 1
    return out


def build_frame(
    notes: Sequence[Any],
    spans: Mapping[str, Sequence[Any]] | None = None,
    residual: Mapping[str, Any] | Any | None = None,
    *,
    recognizer_fingerprint: str | None = None,
    screen_fingerprint: str | None = None,
) -> FeatureFrame:
    """Features of ``notes`` (Note/GoldDoc: ``note_id``, ``text``, ``metadata``).

    ``spans``: note id → recognizer spans on the input text (missing id = no spans).
    ``residual``: a ``ScreenResult`` or note id → residual hits ({label: n} or spans) on the
    released text of the same notes (missing id = clean).
    """
    n = len(notes)
    text = np.zeros((n, len(TEXT_COUNTS)), dtype=np.int64)
    mix: dict[str, list[str]] = {k: [] for k in MIX_KEYS}
    lab_idx = {lab: i for i, lab in enumerate(LABELS)}
    span_counts = np.zeros((n, len(LABELS)), dtype=np.int64) if spans is not None else None
    conf = np.zeros((n, len(CONFIDENCE_EDGES) - 1), dtype=np.int64) if spans is not None else None
    if residual is not None and hasattr(residual, "per_note_hits"):
        residual = residual.per_note_hits
    res = np.zeros((n, len(LABELS)), dtype=np.int64) if residual is not None else None
    edges = np.asarray(CONFIDENCE_EDGES)
    for i, note in enumerate(notes):
        text[i] = _text_counts(note.text or "")
        meta = getattr(note, "metadata", None) or {}
        for k in MIX_KEYS:
            mix[k].append(str(meta.get(k) or "?"))
        if spans is not None:
            assert span_counts is not None and conf is not None  # allocated when spans are given
            doc_spans = spans.get(note.note_id, ())
            scores = []
            for s in doc_spans:
                if s.label in lab_idx:
                    span_counts[i, lab_idx[s.label]] += 1
                scores.append(float(getattr(s, "score", 1.0)))
            if scores:
                b = np.clip(np.searchsorted(edges, scores, side="right") - 1, 0, len(edges) - 2)
                conf[i] = np.bincount(b, minlength=len(edges) - 1)
        if res is not None:
            assert residual is not None  # res is allocated only for a residual
            for lab, c in _labels_counts(residual.get(note.note_id)).items():
                if lab in lab_idx:
                    res[i, lab_idx[lab]] += c
    return FeatureFrame(text, mix, span_counts, conf, res, recognizer_fingerprint, screen_fingerprint)


def length_edges(frame: FeatureFrame, n_bins: int = 10) -> list[float]:
    """Inner decile edges of the reference's note lengths (aggregate numbers, no text)."""
    lengths = frame.text[:, 0].astype(float)
    if lengths.size == 0:
        return []
    qs = np.quantile(lengths, np.linspace(0, 1, n_bins + 1)[1:-1])
    return sorted({float(q) for q in qs})


def aggregate(frame: FeatureFrame, rows: np.ndarray | None, len_edges: Sequence[float]) -> dict[str, Any]:
    """The additive profile of the selected rows (all rows when ``rows`` is None)."""
    sel = slice(None) if rows is None else rows
    text = frame.text[sel]
    sums = text.sum(0)
    lengths = text[:, 0]
    hist = (
        np.bincount(np.searchsorted(np.asarray(len_edges), lengths, side="right"), minlength=len(len_edges) + 1)
        if len(lengths)
        else np.zeros(len(len_edges) + 1, int)
    )
    idx = np.arange(frame.n)[sel]
    mix = {}
    for k, values in frame.mix.items():
        counts: dict[str, int] = {}
        for i in idx:
            counts[values[i]] = counts.get(values[i], 0) + 1
        mix[k] = dict(sorted(counts.items()))
    prof: dict[str, Any] = {
        "n_docs": int(len(idx)),
        "text": {name: int(v) for name, v in zip(TEXT_COUNTS, sums, strict=True)},
        "length_hist": [int(v) for v in hist],
        "mix": mix,
        "spans": None,
        "residual": None,
        "recognizer_fingerprint": frame.recognizer_fingerprint,
        "screen_fingerprint": frame.screen_fingerprint,
    }
    if frame.span_counts is not None:
        assert frame.conf_hist is not None  # built together with span_counts
        sc = frame.span_counts[sel].sum(0)
        prof["spans"] = {
            "by_label": {lab: int(c) for lab, c in zip(LABELS, sc, strict=True)},
            "conf_hist": [int(v) for v in frame.conf_hist[sel].sum(0)],
        }
    if frame.residual is not None:
        r = frame.residual[sel]
        prof["residual"] = {
            "n_notes": int(len(idx)),
            "n_flagged": int((r.sum(1) > 0).sum()),
            "notes_by_label": {lab: int(c) for lab, c in zip(LABELS, (r > 0).sum(0), strict=True)},
        }
    return prof
