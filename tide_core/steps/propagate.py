"""Within-note propagation: a value recognized once is PHI everywhere in that note.

Recognizers often find one mention of a person and miss the next ("Theresa Makinen ... Ms.
Makinen", or "THERESA MAKINEN" where only the surname was tagged).  After span resolution this
step (1) extends person spans over an adjacent given name or surname found in the name lexicon,
and (2) adds a span for every other occurrence of a recognized surface in the same note (and,
for people, of each name token), with the label of the span it came from; an added person
mention takes a one-letter initial right before it ("P. Falkenrath", version 2, as
``tide.tidy@5`` does for recognizer spans).  It only adds spans where none exists, so it never
changes what a recognizer decided; it only closes gaps.

The step is ``tide.propagate@VERSION``; :class:`PropagationPolicy` exposes it (``qualified_name``,
``config()``) to the recognition fingerprint.  Bump :data:`VERSION` when a code change here
changes which spans come out.
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import operator
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import ahocorasick

from tide_core.spans import Span
from tide_core.steps.span_tidy import initial_start
from tide_core.text.refold import re_fold

NAME = "tide.propagate"
VERSION = "2"
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

    def config(self) -> dict[str, Any]:
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


_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z'\u2019-]*) $")  # the word right before a name, then a space
_WORD_AFTER = re.compile(r" ([A-Za-z][A-Za-z'\u2019-]*)")  # a space, then the word right after a name


def _extend_names(text: str, spans: list[Span]) -> list[Span]:
    first, last, either = name_lexicon()
    taken = sorted((s.start, s.end) for s in spans)
    taken_starts = [a for a, _ in taken]
    # reach[i]: the furthest end among the first i taken ranges (sorted by start).  "Some other
    # range starting before x ends after y" is then one bisect: reach[bisect_left(starts, x)] > y.
    # (A range equal to the span itself never counts: it ends at s.end, which is not after s.end
    # and not after a left extension's new start; so excluding it needs no special case.)
    reach = [-1]
    for _, b in taken:
        reach.append(max(reach[-1], b))
    out = []
    for s in spans:
        start, end = s.start, s.end
        if s.label in PERSON:
            m = _WORD_BEFORE.search(text[max(0, start - 40) : start])
            if m:
                tok = m.group(1)
                if _looks_like_name_token(tok) and tok.casefold() in either:
                    new_start = start - len(m.group(0))
                    if not reach[bisect.bisect_left(taken_starts, start)] > new_start:
                        start = new_start
            m = _WORD_AFTER.match(text[end : end + 40])
            if m:
                tok = m.group(1)
                if _looks_like_name_token(tok) and tok.casefold() in last and tok.casefold() not in first:
                    new_end = end + len(m.group(0))
                    if not reach[bisect.bisect_left(taken_starts, new_end)] > end:
                        end = new_end
        out.append(
            s if (start, end) == (s.start, s.end) else Span(s.note_id, start, end, s.label, s.score, s.recognizer)
        )
    return out


def _occurrences(text: str, needle: str, case_sensitive: bool) -> Iterator[tuple[int, int]]:
    """Every match of ``needle`` in ``text``, left to right (the reference definition).

    :class:`_Finder` yields exactly these matches without scanning the whole note per needle;
    this regex form is kept for needles it does not index (no non-space character).
    """
    flags = 0 if case_sensitive else re.IGNORECASE
    parts = [re.escape(p) for p in needle.split()]
    pattern = r"(?<![A-Za-z0-9])" + r"\s+".join(parts) + r"(?![A-Za-z0-9])"
    for m in re.finditer(pattern, text, flags):
        yield m.start(), m.end()


# --- linear-time occurrence search ------------------------------------------------------------
# Mapping every character to the smallest member of its re.IGNORECASE class ("fold":
# ``tide_core.text.refold``) makes case-insensitive equality plain string equality, so one
# Aho-Corasick pass over the folded note finds the candidate starts of every needle and each
# candidate is checked in place: total work is linear in the note plus the matches, where one
# regex scan per needle was quadratic on long notes (274k characters: ~30 s).
_ASCII_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_FOLDED_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_fold = re_fold  # ``text`` with each character replaced by its re.IGNORECASE class representative


class _Finder:
    """All needles' occurrences in one note: the same matches as :func:`_occurrences`."""

    def __init__(self, text: str, needles: Sequence[tuple[str, bool]]):
        self.text = text
        self.folded = _fold(text)
        self.n = len(text)
        self.starts: dict[tuple[str, bool], list[int]] = {}
        self._split: dict[tuple[str, bool], list[str]] = {}  # needle -> its parts (see _parts)
        # one pass over the folded note for both kinds of needle: a case-sensitive head occurs
        # where its fold does and the note holds the head itself
        heads: dict[str, dict[tuple[str, bool], None]] = {}  # folded head -> (head, case_sensitive)
        for needle, case_sensitive in needles:
            if needle.split():
                head = self._parts(needle, case_sensitive)[0]
                heads.setdefault(_fold(head) if case_sensitive else head, {})[(head, case_sensitive)] = None
        if heads:
            self._find_heads(heads)

    def _find_heads(self, heads: dict[str, dict[tuple[str, bool], None]]) -> None:
        automaton = ahocorasick.Automaton()
        for folded_head, keys in heads.items():
            automaton.add_word(folded_head, (len(folded_head), tuple(keys)))
        automaton.make_automaton()
        text, folded = self.text, self.folded
        for last, (size, keys) in automaton.iter(folded):
            a = last - size + 1
            for head, case_sensitive in keys:
                if case_sensitive:
                    found = text.startswith(head, a) and (a == 0 or text[a - 1] not in _ASCII_ALNUM)
                else:  # the (?<![A-Za-z0-9]) boundary, in folded text
                    found = a == 0 or folded[a - 1] not in _FOLDED_ALNUM
                if found:
                    self.starts.setdefault((head, case_sensitive), []).append(a)

    def _parts(self, needle: str, case_sensitive: bool) -> list[str]:
        key = (needle, case_sensitive)
        parts = self._split.get(key)
        if parts is None:
            parts = needle.split() if case_sensitive else [_fold(p) for p in needle.split()]
            self._split[key] = parts
        return parts

    def occurrences(self, needle: str, case_sensitive: bool) -> Iterator[tuple[int, int]]:
        parts = self._parts(needle, case_sensitive)
        if not parts:
            yield from _occurrences(self.text, needle, case_sensitive)
            return
        text, n = self.text, self.n
        hay = text if case_sensitive else self.folded
        alnum = _ASCII_ALNUM if case_sensitive else _FOLDED_ALNUM
        resume = 0  # finditer resumes after the end of the previous match
        for a in self.starts.get((parts[0], case_sensitive), ()):
            if a < resume:
                continue
            pos = a + len(parts[0])
            ok = True
            for part in parts[1:]:  # \s+ (greedy; a part never starts with a space) then the part
                if pos >= n or not text[pos].isspace():
                    ok = False
                    break
                pos += 1
                while pos < n and text[pos].isspace():
                    pos += 1
                if not hay.startswith(part, pos):
                    ok = False
                    break
                pos += len(part)
            if ok and (pos >= n or hay[pos] not in alnum):  # the (?![A-Za-z0-9]) boundary
                yield a, pos
                resume = pos


class _Occupied:
    """The occupied ranges: is [a, b) free, and mark it taken; O(log n) each.

    Resolved spans do not overlap, so a new range [a, b) is free iff the range with the largest
    start before ``b`` ends at or before ``a`` (ranges sharing a start: the longest counts).  The
    largest marked start below ``b`` comes from a prefix-maximum Fenwick tree over positions
    (marks are only ever added), where sorted-list insertion was quadratic on long notes.
    """

    def __init__(self, n: int, ranges: Iterable[tuple[int, int]]) -> None:
        self.end_at: dict[int, int] = {}
        ranges = sorted(ranges)
        self.size = max([n, *(a + 1 for a, _ in ranges)])
        self.tree = [-1] * (self.size + 1)
        for a, b in ranges:
            self.add(a, b)

    def _last_start_before(self, b: int) -> int:
        best, i, tree = -1, min(b, self.size), self.tree
        while i > 0:
            if tree[i] > best:
                best = tree[i]
            i -= i & -i
        return best

    def free(self, a: int, b: int) -> bool:
        last = self._last_start_before(b)
        return last < 0 or self.end_at[last] <= a

    def add(self, a: int, b: int) -> None:
        self.end_at[a] = b
        i, tree = a + 1, self.tree
        while i <= self.size:
            if tree[i] < a:
                tree[i] = a
            i += i & -i


#: The order of ``Span`` (its compared fields in turn), as a sort key computed in C.
_SPAN_ORDER = operator.attrgetter(*(f.name for f in dataclasses.fields(Span) if f.compare))


def propagate_spans(text: str, spans: Sequence[Span], policy: PropagationPolicy | None = None) -> list[Span]:
    """Return ``spans`` (non-overlapping, resolved) plus the propagated mentions, sorted."""
    policy = policy or DEFAULT_POLICY
    if not spans:
        return []
    note_id = spans[0].note_id
    spans = list(spans)
    if policy.extend_names:
        spans = _extend_names(text, spans)
    occupied = _Occupied(len(text), ((s.start, s.end) for s in spans))
    added: list[Span] = []
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
    todo = []
    for needle, label, case_sensitive in needles:
        key = (needle.casefold() if not case_sensitive else needle, label, case_sensitive)
        if key not in seen:
            seen.add(key)
            todo.append((needle, label, case_sensitive))
    finder = _Finder(text, [(needle, cs) for needle, _, cs in todo]) if todo else None
    free, take, score = occupied.free, occupied.add, policy.score
    for needle, label, case_sensitive in todo:
        assert finder is not None  # built whenever there is something to do
        for a, b in finder.occurrences(needle, case_sensitive):
            if free(a, b):
                if label in PERSON:  # "P. Falkenrath" where "Falkenrath" was found elsewhere (v2)
                    start = initial_start(text, a)
                    a = start if start < a and free(start, a) else a
                added.append(Span(note_id, a, b, label, score, QUALIFIED))
                take(a, b)
    return sorted(spans + added, key=_SPAN_ORDER)
