"""The regex layer's fast path: each pattern is entered only where it can match.

Most PHI patterns start with a lookbehind (``(?<![\\w.])``) or ``\\b``, which stops Python's ``re``
from skipping ahead with its first-character table, so ``finditer`` would enter the whole matcher at
every text position.  At load, the exact set of characters that can begin a match of each pattern
(its FIRST set, computed from the parsed pattern and evaluated by ``re`` itself over every code
point) becomes a prefilter: ``[FIRST](?<=(?=PATTERN)[\\s\\S])`` lets the C scanner skip every
position whose character cannot start a match and reports exactly the positions where the pattern
matches.  :func:`fast_finditer` then replays ``finditer`` exactly (``PATTERN.match`` at each
candidate at or after the previous match's end), so the fast path returns the very matches of
``finditer``; ``tests/recognizers/test_regex_fast_path.py`` checks this on the benchmark corpora, adversarial
and fuzzed text.  A pattern whose FIRST set cannot be bounded (one that can match the empty
string) has no prefilter.

(A lead-character scan, ``[^X](?=[FIRST])(?=PATTERN)`` after ``(?<![X])``, was tried: it visits
fewer positions but measured no faster end to end, so it is not used.)
"""

from __future__ import annotations

import re
import re._constants as _sre_c
import re._parser as _sre_parse
from collections.abc import Iterator, Sequence
from typing import Any

_CATEGORY_SRC = {
    _sre_c.CATEGORY_DIGIT: r"\d",
    _sre_c.CATEGORY_NOT_DIGIT: r"\D",
    _sre_c.CATEGORY_SPACE: r"\s",
    _sre_c.CATEGORY_NOT_SPACE: r"\S",
    _sre_c.CATEGORY_WORD: r"\w",
    _sre_c.CATEGORY_NOT_WORD: r"\W",
}
_FLAG_MASK = re.IGNORECASE | re.ASCII | re.DOTALL | re.LOCALE
_ALL_CHARS: str | None = None
_CHARSET_CACHE: dict[tuple[str, int], frozenset[int]] = {}


class _UnboundedError(Exception):
    """The pattern's FIRST set cannot be bounded (empty match possible, or an unsupported op)."""


def _esc(cp: int) -> str:
    return f"\\U{cp:08x}"


def _chars_matching(src: str, flags: int) -> frozenset[int]:
    """Every code point that the one-character regex ``src`` matches under ``flags`` (decided by ``re``)."""
    global _ALL_CHARS
    key = (src, flags & _FLAG_MASK)
    hit = _CHARSET_CACHE.get(key)
    if hit is None:
        if _ALL_CHARS is None:
            _ALL_CHARS = "".join(map(chr, range(0x110000)))
        rx = re.compile(src, key[1])
        hit = frozenset(m.start() for m in rx.finditer(_ALL_CHARS))
        _CHARSET_CACHE[key] = hit
    return hit


def _in_src(items: Sequence[tuple[Any, Any]]) -> str:
    parts: list[str] = []
    for op, av in items:
        if op is _sre_c.NEGATE:
            parts.insert(0, "^")
        elif op is _sre_c.LITERAL:
            parts.append(_esc(av))
        elif op is _sre_c.RANGE:
            parts.append(_esc(av[0]) + "-" + _esc(av[1]))
        elif op is _sre_c.CATEGORY and av in _CATEGORY_SRC:
            parts.append(_CATEGORY_SRC[av])
        else:
            raise _UnboundedError(str(op))
    return "[" + "".join(parts) + "]"


def _first(items: Sequence[tuple[Any, Any]], flags: int) -> tuple[set[int], bool]:
    """(characters a match of the sequence ``items`` can start with, whether it can match empty)."""
    out: set[int] = set()
    for op, av in items:
        if op is _sre_c.LITERAL:
            out |= _chars_matching(_esc(av), flags)
            return out, False
        if op is _sre_c.NOT_LITERAL:
            out |= _chars_matching("[^" + _esc(av) + "]", flags)
            return out, False
        if op is _sre_c.IN:
            out |= _chars_matching(_in_src(av), flags)
            return out, False
        if op is _sre_c.ANY:
            out |= _chars_matching(".", flags)
            return out, False
        if op in (_sre_c.AT, _sre_c.ASSERT, _sre_c.ASSERT_NOT):
            continue  # zero width: the next item decides
        if op is _sre_c.SUBPATTERN:
            _group, add, drop, sub = av
            first, nullable = _first(sub, (flags | add) & ~drop)
        elif op is _sre_c.ATOMIC_GROUP:
            first, nullable = _first(av, flags)
        elif op is _sre_c.BRANCH:
            first, nullable = set(), False
            for alt in av[1]:
                f, n = _first(alt, flags)
                first |= f
                nullable = nullable or n
        elif op in (_sre_c.MAX_REPEAT, _sre_c.MIN_REPEAT, _sre_c.POSSESSIVE_REPEAT):
            lo, _hi, sub = av
            first, nullable = _first(sub, flags)
            nullable = nullable or lo == 0
        else:  # back-references, conditionals: no bound
            raise _UnboundedError(str(op))
        out |= first
        if not nullable:
            return out, False
    return out, True


def _charset_src(cps: set[int]) -> str:
    """A compact character class that contains ``cps``: exact below U+0100; above, one range
    U+0100..U+10FFFF if any member lies there (a long list of Unicode ranges would make ``re``
    test each range in turn at every character; extra candidates are only verified and dropped)."""
    if any(cp >= 0x100 for cp in cps):
        cps = {cp for cp in cps if cp < 0x100} | {0x100, 0x10FFFF}
    ranges: list[list[int]] = []
    for cp in sorted(cps):
        if cp == 0x10FFFF and ranges and ranges[-1][1] == 0x100:
            ranges[-1][1] = cp
            continue
        if ranges and cp == ranges[-1][1] + 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return "[" + "".join(_esc(a) if a == b else _esc(a) + "-" + _esc(b) for a, b in ranges) + "]"


def prefilter_regex(source: str, flags: int = 0) -> re.Pattern[str] | None:
    """``[FIRST](?<=(?=source)[\\s\\S])``: reports (one character long) every position where
    ``source`` matches, skipping positions that cannot start a match at C speed (``[FIRST]`` alone,
    every candidate, when ``source`` has back-references); ``None`` when the FIRST set cannot be
    bounded (the caller then scans with the pattern itself)."""
    try:
        parsed = _sre_parse.parse(source, flags)
        first, nullable = _first(list(parsed), parsed.state.flags)
    except (_UnboundedError, re.error, RecursionError):
        return None
    if nullable or not first:
        return None
    inner = source if not flags & re.IGNORECASE else "(?i:" + source + ")"
    cls = _charset_src(first)
    try:
        # the class is case-sensitive and comes first, so ``re`` compiles it into a skip table
        return re.compile(cls + "(?<=(?=" + inner + ")[\\s\\S])", flags & ~re.IGNORECASE)
    except re.error:
        # back-references cannot sit in a lookbehind: the class alone gives the candidates, and
        # ``fast_finditer`` tries the pattern at each of them
        return re.compile(cls)


def fast_finditer(
    regex: re.Pattern[str], prefilter: re.Pattern[str] | None, text: str, lo: int = 0, hi: int | None = None
) -> Iterator[re.Match[str]]:
    """Exactly ``regex.finditer(text, lo, hi)`` (non-empty matches), entering the matcher only at
    the prefilter's candidates."""
    hi = len(text) if hi is None else hi
    if prefilter is None:
        yield from regex.finditer(text, lo, hi)
        return
    pos = lo
    match = regex.match
    for cand in prefilter.finditer(text, lo, hi):
        p = cand.start()
        if p < pos:
            continue  # inside the previous match: finditer never looks here
        m = match(text, p, hi)
        if m is None:  # a candidate character where the pattern does not match
            continue
        if m.end() == p:  # an empty match: the reference scan would behave differently
            raise AssertionError("fast path: empty match")
        yield m
        pos = m.end()
