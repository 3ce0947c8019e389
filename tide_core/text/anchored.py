"""``finditer`` that tries a pattern only where one of its leading words occurs (same matches).

Python's ``re`` looks for a match by trying the whole pattern at every character of the text,
unless the pattern starts with a literal or a character set.  Recognizer patterns such as
``\\b(?i:wife|husband|...)`` or ``(?<![\\w'])(?P<head>hospital|clinic|...)`` start with an
assertion, so a 50 kB note costs 50,000 match attempts per pattern.  :class:`PatternSet`
reads, from the parsed pattern, the literal words every match starts with (its *anchors*: the
leading literals of each alternative, after any lookaround or ``\\b``; or a line start for a
``^``), finds their occurrences in one Aho-Corasick pass over the case-folded text
(:func:`tide_core.text.refold.re_fold`; one pass for all the patterns of a :class:`PatternSet`),
and tries the pattern only there, with the rules of ``finditer`` (leftmost first, the next
attempt from the end of the previous match).  Every match starts at an anchor, so the matches are
exactly those of ``pattern.finditer(text)``.  A pattern without such anchors (or one that can
match the empty string) is scanned with ``finditer`` as before.

``pattern.match(text, pos)`` sees the whole text: lookbehinds, ``\\b`` and ``^`` look at the
characters before ``pos`` as a scan from 0 does, so one attempt at ``pos`` is the attempt the
scan makes there (the match objects differ only in ``Match.pos``, where the attempt was made).
"""

from __future__ import annotations

import functools
import re
import re._constants as sre
import re._parser as sre_parse
import sys
from collections.abc import Collection, Iterable, Iterator
from typing import Any

import ahocorasick

from tide_core.text.refold import re_fold

#: At most this many literal prefixes are expanded from character sets such as ``[ée]`` or ``\\s``.
_MAX_PREFIXES = 32
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)
_ZERO_WIDTH = (sre.ASSERT, sre.ASSERT_NOT)
_LINE_START_AT = (sre.AT_BEGINNING, sre.AT_BEGINNING_LINE, sre.AT_BEGINNING_STRING)
_NEWLINE = re.compile("\n")


# --- anchors ----------------------------------------------------------------------------------


@functools.cache
def _spaces() -> tuple[str, ...]:
    """Every character ``\\s`` matches."""
    return tuple(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())


def _item_chars(op: Any, av: Any) -> list[str] | None:
    """Every character one item can match when that is a short list (a literal, ``[ée]``,
    ``[0-9]``, ``\\s``), else None."""
    if op is sre.LITERAL:
        return [chr(av)]
    if op is not sre.IN:
        return None
    chars: list[str] = []
    for member, value in av:
        if member is sre.LITERAL:
            chars.append(chr(value))
        elif member is sre.RANGE and value[1] - value[0] < _MAX_PREFIXES:
            chars.extend(map(chr, range(value[0], value[1] + 1)))
        elif member is sre.CATEGORY and value is sre.CATEGORY_SPACE:
            chars.extend(_spaces())
        else:
            return None
    return chars


def _branch_words(op: Any, av: Any) -> set[str] | None:
    """The literal prefixes of a group or alternation item (``D(?:r|octor)``, as ``re`` factors
    ``Dr|Doctor``): the union of its alternatives' prefixes; None when it is not one, or when an
    alternative has no literal prefix."""
    if op is sre.SUBPATTERN:
        body = list(av[3])
        if len(body) != 1:
            return None
        return _branch_words(*body[0])
    if op is not sre.BRANCH:
        return None
    out: set[str] = set()
    for alt in av[1]:
        words = _literal_words(list(alt))
        if "" in words:
            return None
        out |= words
    return out


def _literal_words(items: list[Any]) -> set[str]:
    """The literal prefixes of ``items``: its leading literals (short character sets expanded, a
    repeat of one character taken once, a group of alternatives expanded into theirs)."""
    words = {""}
    for op, av in items:
        if op in (sre.SUBPATTERN, sre.BRANCH):
            alts = _branch_words(op, av)
            if alts is None or len(words) * len(alts) > _MAX_PREFIXES:
                break
            words = {w + a for w in words for a in alts}
            break  # an alternative's prefix may not be all of it: what follows is not certain
        repeat = op in _REPEATS
        if repeat:
            low, _high, body = av
            if low < 1 or len(body) != 1:
                break
            op, av = body[0]
        chars = _item_chars(op, av)
        if chars is None or len(words) * len(chars) > _MAX_PREFIXES:
            break
        words = {w + c for w in words for c in chars}
        if repeat:
            break  # the first repetition is certain, what comes after it is not
    return words


def _anchors(items: list[Any]) -> tuple[set[str], bool] | None:
    """(words, line_start): every match of ``items`` starts with one of ``words`` or at a line
    start (when ``line_start``); None when some way through the pattern starts otherwise."""
    for k, (op, av) in enumerate(items):
        if op is sre.AT:
            if av in _LINE_START_AT:
                return set(), True
            continue  # \b and friends: zero width
        if op in _ZERO_WIDTH:
            continue
        rest = items[k + 1 :]
        if op is sre.SUBPATTERN:
            return _anchors([*av[3], *rest])
        if op is sre.BRANCH:
            return _union([_anchors([*branch, *rest]) for branch in av[1]])
        if op in _REPEATS and av[0] == 0 and av[1] == 1:  # optional: a match has it or not
            return _union([_anchors([*av[2], *rest]), _anchors(rest)])
        words = _literal_words(items[k:])
        return (words, False) if "" not in words else None
    return None  # only assertions: no character to anchor on


def _union(parts: list[tuple[set[str], bool] | None]) -> tuple[set[str], bool] | None:
    if any(p is None for p in parts):
        return None
    words: set[str] = set()
    line_start = False
    for p in parts:
        assert p is not None
        words |= p[0]
        line_start = line_start or p[1]
    return words, line_start


def _required(items: Any, flags: int) -> set[str]:
    """Characters every match of ``items`` contains: its literals outside alternatives, optional
    parts and lookarounds (case-sensitive ones only)."""
    out: set[str] = set()
    for op, av in items:
        if op is sre.LITERAL and not flags & re.IGNORECASE:
            out.add(chr(av))
        elif op is sre.SUBPATTERN:
            out |= _required(av[3], (flags | av[1]) & ~av[2])
        elif op in _REPEATS and av[0] >= 1:
            out |= _required(av[2], flags)
    return out


def required_chars(pattern: re.Pattern[str]) -> frozenset[str]:
    """Characters that every match of ``pattern`` contains (a text without one has no match)."""
    parsed = sre_parse.parse(pattern.pattern, pattern.flags)
    return frozenset(_required(list(parsed), parsed.state.flags))


def pattern_anchors(pattern: re.Pattern[str]) -> tuple[frozenset[str], bool] | None:
    """The anchors of ``pattern`` (see the module docstring), or None when it has none, may match
    the empty string, or may start with any one letter or digit (a word of one letter occurs all
    over a note: trying the pattern at each is slower than a plain scan)."""
    parsed = sre_parse.parse(pattern.pattern, pattern.flags)
    if parsed.getwidth()[0] == 0:
        return None
    found = _anchors(list(parsed))
    if found is None or any(len(word) == 1 and word.isalnum() for word in found[0]):
        return None
    return frozenset(found[0]), found[1]


class PatternSet:
    """Patterns whose anchors one Aho-Corasick pass over a text finds (see the module docstring).

    ``PatternSet(patterns).scan(text)`` folds the text and finds every pattern's anchors at once;
    the scan's :meth:`PatternScan.finditer` then gives each pattern's matches.  A pattern without
    anchors is scanned with its own ``finditer``, unless the text lacks a character every match
    of it contains (:func:`required_chars`).
    """

    def __init__(self, patterns: Iterable[re.Pattern[str]]):
        self.patterns = tuple(dict.fromkeys(patterns))
        self._slot = {p: i for i, p in enumerate(self.patterns)}
        found = [pattern_anchors(p) for p in self.patterns]
        self._anchored = [a is not None for a in found]
        self._line_start = [a is not None and a[1] for a in found]
        self._required = [required_chars(p) for p in self.patterns]
        owners: dict[str, list[int]] = {}  # folded anchor -> the slots of the patterns it starts
        for slot, anchors in enumerate(found):
            for word in anchors[0] if anchors is not None else ():
                owners.setdefault(re_fold(word), []).append(slot)
        self._automaton: Any = None  # ahocorasick.Automaton (the package ships no types)
        if owners:
            self._automaton = ahocorasick.Automaton()
            for word, slots in owners.items():
                self._automaton.add_word(word, (len(word), tuple(dict.fromkeys(slots))))
            self._automaton.make_automaton()

    def scan(self, text: str) -> PatternScan:
        """Where each pattern may start in ``text`` (one pass for all of them)."""
        starts: list[set[int]] = [set() for _ in self.patterns]
        if self._automaton is not None:
            for end, (size, slots) in self._automaton.iter(re_fold(text)):
                for slot in slots:
                    starts[slot].add(end - size + 1)
        if any(self._line_start):
            lines = [0, *(m.end() for m in _NEWLINE.finditer(text))]
            for slot, line_start in enumerate(self._line_start):
                if line_start:
                    starts[slot].update(lines)
        return PatternScan(self, text, starts)


class PatternScan:
    """One text scanned by a :class:`PatternSet`: the matches of each of its patterns."""

    def __init__(self, owner: PatternSet, text: str, starts: list[set[int]]):
        self.owner = owner
        self.text = text
        self._starts = starts

    def finditer(self, pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
        """The matches of ``pattern.finditer(text)`` (a pattern outside the set is scanned as is)."""
        slot = self.owner._slot.get(pattern)
        if slot is None:
            yield from pattern.finditer(self.text)
            return
        if not self.owner._anchored[slot]:
            if all(c in self.text for c in self.owner._required[slot]):
                yield from pattern.finditer(self.text)
            return
        yield from finditer_at(pattern, self.text, sorted(self._starts[slot]))

    def covers(self, pattern: re.Pattern[str]) -> bool:
        """Whether ``pattern`` is one of the set's patterns with anchors (tried only at them)."""
        slot = self.owner._slot.get(pattern)
        return slot is not None and self.owner._anchored[slot]

    def search(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        """The match of ``pattern.search(text)``: the first of :meth:`finditer`."""
        return next(self.finditer(pattern), None)


def finditer_at(pattern: re.Pattern[str], text: str, starts: Iterable[int]) -> Iterator[re.Match[str]]:
    """The matches of ``pattern.finditer(text)``, given every position where one may start (in
    increasing order; extra positions are fine): the pattern is tried only there, with the rules
    of ``finditer``: leftmost first, the next attempt from the end of the previous match.  The
    pattern must not match the empty string."""
    match = pattern.match
    resume = 0
    for pos in starts:
        if pos < resume:
            continue
        m = match(text, pos)
        if m is not None:
            resume = m.end()
            yield m


def run_start(text: str, end: int, chars: str) -> int:
    """Start of the longest run of characters of ``chars`` that ends at ``end``."""
    hi = end
    while True:
        lo = max(0, hi - 256)
        kept = text[lo:hi].rstrip(chars)
        if kept or lo == 0:
            return lo + len(kept)
        hi = lo


def run_starts(
    text: str, ends: Iterable[int], run: str, word_start: re.Pattern[str], first: Collection[str]
) -> list[int]:
    """Where a pattern made of ``run`` characters up to one of ``ends`` may start, in order: in the
    run of ``run`` characters that ends there, its first character when that is in ``first``, and
    every place ``word_start`` matches (a one-character pattern whose lookbehind says which
    characters of the run may come before a start)."""
    starts: set[int] = set()
    for end in ends:
        start = run_start(text, end, run)
        if start < end and text[start] in first:
            starts.add(start)
        starts.update(m.start() for m in word_start.finditer(text, start, end))
    return sorted(starts)
