"""Within-note propagation: a value recognized once is PHI everywhere in that note.

Recognizers often find one mention of a person and miss the next ("Theresa Makinen ... Ms.
Makinen", or "THERESA MAKINEN" where only the surname was tagged).  After span resolution this
step (1) extends person spans over an adjacent given name or surname found in the name lexicon,
and (2) adds a span for every other occurrence of a recognized surface in the same note (and,
for people, of each name token), with the label of the span it came from.  It only adds spans
where none exists, so it never changes what a recognizer decided; it only closes gaps.

The step is ``tide.propagate@VERSION``; :class:`PropagationPolicy` exposes it (``qualified_name``,
``config()``) to the recognition fingerprint.  Bump :data:`VERSION` when a code change here
changes which spans come out.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from tide_core.spans import Span

NAME = "tide.propagate"
VERSION = "1"
QUALIFIED = f"{NAME}@{VERSION}"

PERSON = frozenset({"PATIENT", "DOCTOR"})
#: Labels whose surfaces are propagated to other mentions in the same note.
PROPAGATED = frozenset({"PATIENT", "DOCTOR", "ID", "PHONE", "EMAIL", "URL", "LOCATION", "HOSPITAL", "OTHER"})

# Words that may sit next to a name, or be a name token, but must not be propagated on their own.
_STOP = frozenset(
    """
the and for with from this that have has was were will may can not are but all any per via
mr mrs ms miss dr md do rn np pa phd dds jr sr ii iii iv
patient pt doctor nurse son daughter wife husband mother father brother sister
north south east west new saint st street road avenue center hospital clinic medical
january february march april june july august september october november december
monday tuesday wednesday thursday friday saturday sunday
""".split()
)

_TOKEN = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*")


@lru_cache(maxsize=1)
def name_lexicon() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(given names, surnames, either), case-folded, loaded once per process."""
    base = resources.files("tide_core") / "data" / "surrogates"

    def load(name: str) -> frozenset[str]:
        words = (base / name).read_text(encoding="utf-8").split("\n")
        return frozenset(w.strip().casefold() for w in words if len(w.strip()) >= 3)

    first, last = load("first_names.txt") - _STOP, load("last_names.txt") - _STOP
    return first, last, first | last


@lru_cache(maxsize=1)
def _lexicon_sha256() -> str:
    """Content hash of the name lists the lexicon is read from (they change what is propagated)."""
    base = resources.files("tide_core") / "data" / "surrogates"
    h = hashlib.sha256()
    for name in ("first_names.txt", "last_names.txt"):
        h.update(name.encode() + b"\0" + (base / name).read_bytes() + b"\1")
    return h.hexdigest()


@dataclass(frozen=True)
class PropagationPolicy:
    extend_names: bool = True
    propagate_surfaces: bool = True
    propagate_name_tokens: bool = True
    min_surface_chars: int = 3
    min_id_chars: int = 5
    min_token_chars: int = 4
    score: float = 0.85

    @property
    def qualified_name(self) -> str:
        return f"{NAME}@{VERSION}"

    def config(self) -> dict:
        """Output-affecting settings: this policy's fields plus the module's labels, stop words
        and name lexicon (read when asked, so the recognition fingerprint follows them)."""
        return {
            **self.__dict__,
            "person_labels": sorted(PERSON),
            "propagated_labels": sorted(PROPAGATED),
            "stop_words": sorted(_STOP),
            "token": _TOKEN.pattern,
            "lexicon_sha256": _lexicon_sha256(),
        }


#: The policy ``propagate_spans`` applies when given none (the one recognition uses).
DEFAULT_POLICY = PropagationPolicy()


def _looks_like_name_token(tok: str) -> bool:
    return tok[:1].isupper() and (tok[1:].islower() or tok.isupper() or "-" in tok or "'" in tok)


def _extend_names(text: str, spans: list[Span]) -> list[Span]:
    first, last, either = name_lexicon()
    taken = sorted((s.start, s.end) for s in spans)
    out = []
    for s in spans:
        start, end = s.start, s.end
        if s.label in PERSON:
            m = re.search(r"([A-Za-z][A-Za-z'\u2019-]*) $", text[max(0, start - 40) : start])
            if m:
                tok = m.group(1)
                if _looks_like_name_token(tok) and tok.casefold() in either:
                    new_start = start - len(m.group(0))
                    if not any(a < start and b > new_start for a, b in taken if (a, b) != (s.start, s.end)):
                        start = new_start
            m = re.match(r" ([A-Za-z][A-Za-z'\u2019-]*)", text[end : end + 40])
            if m:
                tok = m.group(1)
                if _looks_like_name_token(tok) and tok.casefold() in last and tok.casefold() not in first:
                    new_end = end + len(m.group(0))
                    if not any(a < new_end and b > end for a, b in taken if (a, b) != (s.start, s.end)):
                        end = new_end
        out.append(
            s if (start, end) == (s.start, s.end) else Span(s.note_id, start, end, s.label, s.score, s.recognizer)
        )
    return out


def _occurrences(text: str, needle: str, case_sensitive: bool):
    flags = 0 if case_sensitive else re.IGNORECASE
    parts = [re.escape(p) for p in needle.split()]
    pattern = r"(?<![A-Za-z0-9])" + r"\s+".join(parts) + r"(?![A-Za-z0-9])"
    for m in re.finditer(pattern, text, flags):
        yield m.start(), m.end()


def propagate_spans(text: str, spans: Sequence[Span], policy: PropagationPolicy | None = None) -> list[Span]:
    """Return ``spans`` (non-overlapping, resolved) plus the propagated mentions, sorted."""
    policy = policy or DEFAULT_POLICY
    if not spans:
        return []
    note_id = spans[0].note_id
    spans = list(spans)
    if policy.extend_names:
        spans = _extend_names(text, spans)
    # Resolved spans do not overlap, so the occupied ranges stay sorted by start and by end: a new
    # range [a, b) is free iff the last range starting before b ends at or before a.
    occupied = sorted((s.start, s.end) for s in spans)
    starts = [a for a, _ in occupied]
    ends = [b for _, b in occupied]
    added: list[Span] = []

    def free(a: int, b: int) -> bool:
        i = bisect.bisect_left(starts, b)
        return i == 0 or ends[i - 1] <= a

    def add(a: int, b: int, label: str) -> None:
        added.append(Span(note_id, a, b, label, policy.score, QUALIFIED))
        i = bisect.bisect_left(starts, a)
        starts.insert(i, a)
        ends.insert(i, b)

    seen: set[tuple[str, str, bool]] = set()
    needles: list[tuple[str, str, bool]] = []
    for s in sorted(spans, key=lambda s: (-(s.end - s.start), s.start)):
        if s.label not in PROPAGATED:
            continue
        surface = text[s.start : s.end].strip()
        minimum = policy.min_id_chars if s.label in ("ID", "PHONE") else policy.min_surface_chars
        if policy.propagate_surfaces and len(surface) >= minimum:
            needles.append((surface, s.label, False))
        if policy.propagate_name_tokens and s.label in PERSON:
            for tok in _TOKEN.findall(surface):
                if len(tok) >= policy.min_token_chars and _looks_like_name_token(tok) and tok.casefold() not in _STOP:
                    needles.append((tok, s.label, True))
                    if tok[1:].islower():
                        needles.append((tok.upper(), s.label, True))
    for needle, label, case_sensitive in needles:
        key = (needle.casefold() if not case_sensitive else needle, label, case_sensitive)
        if key in seen:
            continue
        seen.add(key)
        for a, b in _occurrences(text, needle, case_sensitive):
            if free(a, b):
                add(a, b, label)
    return sorted(spans + added)
