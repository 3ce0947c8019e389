"""Site gazetteer (``tide.gazetteer``): one Aho-Corasick pass over a note for a site's term list.

A site lists its facility names, department names and identifier formats in a CSV
(``term,label[,score]``).  Matching is case-insensitive, only on word boundaries (a term never
matches inside a longer word), and among overlapping matches the longest wins (leftmost on a tie),
so "St. Mary's Medical Center" beats "St. Mary's".

``AhoMatcher`` is the shared matching core; the known-PHI recognizer uses it too.
"""

from __future__ import annotations

import bisect
import csv
import hashlib
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ahocorasick

from tide_core.errors import ConfigError
from tide_core.recognizers.base import TideRecognizer
from tide_core.spans import RecognizerResult
from tide_core.types import LABELS


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _lower_same_length(text: str) -> str:
    """Lower-case ``text`` without changing its length (offsets must stay valid)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


@dataclass(frozen=True)
class Match:
    start: int
    end: int
    payload: Any
    key: str = ""


class AhoMatcher:
    """Case-insensitive, word-bounded, longest-match Aho-Corasick matcher.

    ``add(term, payload)`` may be called several times for one term; payloads are collected in
    a tuple in insertion order.  ``find(text)`` yields non-overlapping matches.
    """

    def __init__(self) -> None:
        self._terms: dict[str, dict[Hashable, None]] = {}  # term -> payloads (an ordered set)
        self._automaton: Any = None  # ahocorasick.Automaton (the package ships no types)

    def add(self, term: str, payload: Hashable) -> None:
        key = _lower_same_length(term.strip())
        if not key:
            return
        self._terms.setdefault(key, {})[payload] = None
        self._automaton = None

    def __len__(self) -> int:
        return len(self._terms)

    def build(self) -> None:
        automaton = ahocorasick.Automaton()
        for key, payloads in self._terms.items():
            automaton.add_word(key, (key, tuple(payloads)))
        if len(self._terms):
            automaton.make_automaton()
        self._automaton = automaton

    def find_all(self, text: str) -> list[Match]:
        """Every word-bounded occurrence (overlaps included)."""
        if not self._terms:
            return []
        if self._automaton is None:
            self.build()
        low = _lower_same_length(text)
        n = len(text)
        out = []
        for end_idx, (key, payloads) in self._automaton.iter(low):
            start, end = end_idx - len(key) + 1, end_idx + 1
            if start > 0 and _is_word(text[start - 1]) and _is_word(text[start]):
                continue  # inside a longer word on the left
            if end < n and _is_word(text[end]) and _is_word(text[end - 1]):
                continue  # inside a longer word on the right
            out.append(Match(start, end, payloads, key))
        return out

    def find(self, text: str) -> list[Match]:
        """Non-overlapping matches: longest first, then leftmost."""
        matches = sorted(self.find_all(text), key=lambda m: (-(m.end - m.start), m.start))
        taken: list[Match] = []
        starts: list[int] = []  # the taken matches' starts and ends, in text order (they never
        ends: list[int] = []  # overlap, so the ends are in order too)
        for m in matches:
            i = bisect.bisect_left(starts, m.end)  # taken[:i] start before m ends
            if i and ends[i - 1] > m.start:  # the last of them ends after m starts: overlap
                continue
            starts.insert(i, m.start)
            ends.insert(i, m.end)
            taken.append(m)
        return sorted(taken, key=lambda m: m.start)

    def __getstate__(self) -> dict[str, Any]:  # rebuild the automaton in the worker instead of pickling it
        return {"_terms": self._terms, "_automaton": None}


@dataclass(frozen=True)
class GazetteerEntry:
    term: str
    label: str
    score: float


def read_gazetteer_csv(path: str | Path, default_score: float = 0.9) -> tuple[list[GazetteerEntry], str]:
    """Read and validate a gazetteer CSV; return its entries and the SHA-256 of its bytes."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(
            "E210",
            f"gazetteer CSV not found: {p}",
            hint="pass csv=PATH to a file with a header row 'term,label' (optional 'score')",
        )
    raw = p.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            "E211", f"gazetteer CSV {p} is not UTF-8 (byte {exc.start})", hint="save the file as UTF-8"
        ) from None
    reader = csv.DictReader(text.splitlines())
    header = [h.strip().lower() for h in (reader.fieldnames or [])]
    if "term" not in header or "label" not in header:
        raise ConfigError(
            "E212",
            f"gazetteer CSV {p}: header must contain 'term' and 'label' (found {header})",
            hint="make the first line 'term,label' (an optional third column 'score' in [0, 1])",
        )
    reader.fieldnames = header
    entries: list[GazetteerEntry] = []
    seen: dict[str, tuple[str, int]] = {}
    for row_no, row in enumerate(reader, start=2):
        if None in row:
            raise ConfigError(
                "E213",
                f"gazetteer CSV {p}, row {row_no}: more fields than header columns",
                hint='quote terms that contain commas ("St. Mary\'s, North")',
            )
        term = (row.get("term") or "").strip()
        label = (row.get("label") or "").strip().upper()
        if not term and not label:
            continue  # blank line
        if term.startswith("#"):
            continue  # comment
        if not term:
            raise ConfigError(
                "E213", f"gazetteer CSV {p}, row {row_no}: empty term", hint="every row needs a term and a label"
            )
        if label not in LABELS:
            raise ConfigError(
                "E214",
                f"gazetteer CSV {p}, row {row_no}: unknown label {label!r}",
                hint=f"use one of {', '.join(LABELS)}",
            )
        score = default_score
        if row.get("score") not in (None, ""):
            try:
                score = float(row["score"])
            except ValueError:
                score = -1.0
            if not 0.0 <= score <= 1.0:
                raise ConfigError(
                    "E215",
                    f"gazetteer CSV {p}, row {row_no}: score must be a number in [0, 1]",
                    hint="leave the score column empty to use the default",
                )
        key = term.lower()
        if key in seen and seen[key][0] != label:
            raise ConfigError(
                "E216",
                f"gazetteer CSV {p}, row {row_no}: term repeats row {seen[key][1]} "
                f"with a different label ({seen[key][0]} vs {label})",
                hint="give each term one label",
            )
        seen[key] = (label, row_no)
        entries.append(GazetteerEntry(term, label, score))
    return entries, digest


class GazetteerRecognizer(TideRecognizer):
    """Aho-Corasick match of a site's term list; each term carries its label (and score)."""

    name = "tide.gazetteer"
    version = "1"

    def __init__(
        self, csv_path: str | Path | None = None, *, entries: Iterable[GazetteerEntry] | None = None, score: float = 0.9
    ):
        if (csv_path is None) == (entries is None):
            raise ConfigError(
                "E217",
                "tide.gazetteer needs exactly one of csv=PATH or entries",
                hint='e.g. {"name": "tide.gazetteer", "csv": "site/gazetteer.csv"}',
            )
        if csv_path is not None:
            self._entries, self._digest = read_gazetteer_csv(csv_path, score)
            self.csv_path: str | None = str(csv_path)
        else:
            self._entries = list(entries or ())
            blob = "\n".join(f"{e.term}\t{e.label}\t{e.score}" for e in self._entries)
            self._digest = hashlib.sha256(blob.encode()).hexdigest()
            self.csv_path = None
        self.default_score = float(score)
        self.supported_entities = sorted({e.label for e in self._entries})
        self._matcher: AhoMatcher | None = None

    def load(self) -> None:
        if self._matcher is not None:
            return
        matcher = AhoMatcher()
        for e in self._entries:
            matcher.add(e.term, (e.label, e.score))
        matcher.build()
        self._matcher = matcher

    def config(self) -> dict[str, Any]:
        return {"csv_sha256": self._digest, "n_terms": len(self._entries), "score": self.default_score}

    def analyze(
        self, text: str, entities: Sequence[str] | None = None, nlp_artifacts: Any = None
    ) -> list[RecognizerResult]:
        self.load()
        wanted = set(entities) if entities else None
        out = []
        for m in self._matcher.find(text):  # type: ignore[union-attr]
            label, score = m.payload[0]
            if wanted is not None and label not in wanted:
                continue
            out.append(RecognizerResult(label, m.start, m.end, score, {"recognizer_name": self.qualified_name}))
        return out

    def iter_terms(self) -> Iterator[GazetteerEntry]:
        return iter(self._entries)
