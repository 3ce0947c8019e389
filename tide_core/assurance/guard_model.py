"""PHI Guard: document-level PHI scores from a model that shares no feature with the recognizers.

The recognizers are patterns, word lists, a transformer and propagation; a residual screen built
from them has their blind spots.  The guard is a different kind of model: a linear classifier
over hashed character n-grams and word shapes of each token and its neighbours, trained on
synthetic documents to say "this token is part of a PHI value".  From its token probabilities come
three document scores:

- ``raw``: the largest token probability in the original text (does it hold PHI?);
- ``richness``: expected PHI tokens per 100 tokens (how PHI-rich is it?), used to stratify audits;
- ``masked``: the largest token probability in the *released* text outside the surrogate ranges
  (after de-identification, does something still look like PHI?).

A guard is pinned by :attr:`GuardModel.version` (``tide.guard@1`` plus a hash of its weights) and
a frozen threshold; every result carries both, and a changed version means "re-baseline", never
"drift".  The model holds no text: only hashed feature weights.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.sparse import csr_matrix

from tide_core.errors import ConfigError

NAME = "tide.guard"
FORMAT_VERSION = "1"
N_FEATURES = 2**18
_TOKEN = re.compile(r"[^\W_]+(?:[.'\u2019-][^\W_]+)*|[^\w\s]")


def tokens(text: str) -> list[tuple[int, int]]:
    """Token offsets: runs of letters/digits (with inner . ' - joins) and single punctuation marks."""
    return [m.span() for m in _TOKEN.finditer(text)]


def _shape(tok: str) -> str:
    s = re.sub(r"[A-Z]", "X", tok)
    s = re.sub(r"[a-z]", "x", s)
    s = re.sub(r"\d", "d", s)
    return re.sub(r"(.)\1{2,}", r"\1\1\1", s)


def _token_features(text: str, spans: Sequence[tuple[int, int]], i: int) -> list[str]:
    s, e = spans[i]
    tok = text[s:e]
    low = tok.lower()
    feats = [f"w={low}", f"sh={_shape(tok)}", f"len={min(len(tok), 12)}"]
    padded = f"<{low}>"
    for n in (2, 3, 4):
        feats.extend(f"c{n}={padded[j : j + n]}" for j in range(max(1, len(padded) - n + 1)))
    line_start = text.rfind("\n", 0, s) + 1
    feats.append("bol" if not text[line_start:s].strip() else "mid")
    prev_shape = "<edge>"
    for d in (-2, -1, 1, 2):
        j = i + d
        if 0 <= j < len(spans):
            t = text[spans[j][0] : spans[j][1]]
            feats.append(f"w{d}={t.lower()}")
            feats.append(f"sh{d}={_shape(t)}")
            if d == -1:
                prev_shape = _shape(t)
        else:
            feats.append(f"w{d}=<edge>")
    feats.append(f"sh-1|sh={prev_shape}|{_shape(tok)}")
    return feats


def _hash(feature: str) -> int:
    return int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little") % N_FEATURES


def featurize(text: str, spans: Sequence[tuple[int, int]] | None = None) -> tuple[Any, list[tuple[int, int]]]:
    """Sparse (n_tokens x N_FEATURES) feature matrix of one text and its token offsets."""
    spans = tokens(text) if spans is None else list(spans)
    rows: list[int] = []
    cols: list[int] = []
    for i in range(len(spans)):
        for f in _token_features(text, spans, i):
            rows.append(i)
            cols.append(_hash(f))
    data = np.ones(len(rows), dtype=np.float32)
    return csr_matrix((data, (rows, cols)), shape=(len(spans), N_FEATURES)), spans


@dataclass(frozen=True)
class DocumentScores:
    """Guard scores of one document, with the guard version and threshold they were made under."""

    note_id: str
    raw: float
    richness: float
    masked: float | None
    version: str
    threshold: float

    @property
    def flagged(self) -> bool:
        """The released text still looks like it holds PHI (masked score at or above threshold)."""
        return self.masked is not None and self.masked >= self.threshold

    def to_dict(self) -> dict[str, Any]:
        return {
            "note_id": self.note_id,
            "raw": round(self.raw, 6),
            "richness": round(self.richness, 4),
            "masked": None if self.masked is None else round(self.masked, 6),
            "flagged": self.flagged,
            "version": self.version,
            "threshold": self.threshold,
        }


class GuardModel:
    """Token-level linear PHI classifier; document scores from its token probabilities."""

    def __init__(self, coef: np.ndarray, intercept: float, threshold: float = 0.5, meta: dict[str, Any] | None = None):
        coef = np.asarray(coef, dtype=np.float32).ravel() + np.float32(0.0)  # -0.0 -> 0.0: one version per model
        if coef.shape != (N_FEATURES,):
            raise ConfigError("E761", f"guard weights have shape {coef.shape}, expected ({N_FEATURES},)")
        self.coef = coef
        self.intercept = float(intercept)
        self.threshold = float(threshold)
        self.meta = dict(meta or {})

    @property
    def version(self) -> str:
        digest = hashlib.sha256(self.coef.tobytes() + np.float64(self.intercept).tobytes()).hexdigest()[:12]
        return f"{NAME}@{FORMAT_VERSION}+{digest}"

    def with_threshold(self, threshold: float) -> GuardModel:
        return GuardModel(self.coef, self.intercept, threshold, self.meta)

    def token_probabilities(self, text: str) -> tuple[np.ndarray, list[tuple[int, int]]]:
        if not text:
            return np.zeros(0), []
        x, spans = featurize(text)
        z = x @ self.coef + self.intercept
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30))), spans

    def score(
        self, note_id: str, raw_text: str, released_text: str | None = None, surrogates: Iterable[Any] = ()
    ) -> DocumentScores:
        """Scores of one document. ``surrogates``: (start, end) ranges of replaced spans in the released text."""
        p, _ = self.token_probabilities(raw_text)
        raw = float(p.max()) if len(p) else 0.0
        richness = float(100.0 * p.sum() / len(p)) if len(p) else 0.0
        masked = None
        if released_text is not None:
            masked = self.masked_score(released_text, surrogates)
        return DocumentScores(note_id, raw, richness, masked, self.version, self.threshold)

    def masked_score(self, released_text: str, surrogates: Iterable[Any] = ()) -> float:
        """Largest PHI probability of a released token outside every surrogate range."""
        ranges = sorted((int(a), int(b)) for a, b in surrogates)
        p, spans = self.token_probabilities(released_text)
        best = 0.0
        k = 0
        for prob, (s, e) in zip(p, spans, strict=True):
            while k < len(ranges) and ranges[k][1] <= s:
                k += 1
            inside = k < len(ranges) and ranges[k][0] < e
            if not inside and prob > best:
                best = float(prob)
        return best

    # ------------------------------------------------------------------ persistence
    def save(self, directory: str | Path) -> Path:
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        nz = np.flatnonzero(self.coef)
        np.savez_compressed(d / "guard_weights.npz", idx=nz.astype(np.int32), val=self.coef[nz])
        card = dict(self.meta, version=self.version, intercept=self.intercept, threshold=self.threshold)
        card["n_features"] = N_FEATURES
        (d / "guard.json").write_text(json.dumps(card, indent=2, sort_keys=True))
        return d

    @classmethod
    def load(cls, directory: str | Path) -> GuardModel:
        d = Path(directory)
        card_path, weights = d / "guard.json", d / "guard_weights.npz"
        if not card_path.exists() or not weights.exists():
            raise ConfigError(
                "E760",
                f"no PHI Guard model in {d}",
                hint="train one with `python -m tide_core.assurance.guard_train --out DIR`",
            )
        card = json.loads(card_path.read_text())
        if card.get("n_features") != N_FEATURES:
            raise ConfigError("E761", f"guard in {d} was built for {card.get('n_features')} features")
        arrays = np.load(weights)
        coef = np.zeros(N_FEATURES, dtype=np.float32)
        coef[arrays["idx"]] = arrays["val"]
        model = cls(coef, card["intercept"], card["threshold"], {k: v for k, v in card.items() if k != "version"})
        if card.get("version") and card["version"] != model.version:
            raise ConfigError(
                "E762",
                f"guard in {d} does not match its recorded version {card['version']}",
                hint="the weights file was changed: retrain the guard or restore the file",
            )
        return model
