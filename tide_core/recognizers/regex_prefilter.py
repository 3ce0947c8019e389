"""The regex layer's fast path: where a pattern can match, found by the C scanner.

Most PHI patterns start with a lookbehind (``(?<![\\w.])``) or ``\\b``; either stops Python's ``re``
from skipping ahead with its first-character table, so ``finditer`` enters the whole matcher at
every text position.  At load, each pattern gets a :class:`Prefilter`, a scan that ``re`` runs at
C speed and that reports exactly the positions where the pattern matches:

* **lead character** -- a pattern that needs a character outside ``X`` before it (``(?<![X])``,
  or ``\\b`` before a word character) can only start right after such a character:
  ``[^X](?=PATTERN)`` skips to the next character outside ``X`` (spaces and punctuation in prose)
  and tries the pattern just after it; the text's first position is tried on its own;
* **FIRST set** -- otherwise, the exact set of characters a match can begin with, computed from the
  parsed pattern and evaluated by ``re`` over every code point: ``[FIRST](?<=(?=PATTERN)[\\s\\S])``.

Of the two, the scan that visits fewer positions of a sample of clinical prose is used: the lead
character for a pattern that can begin with most letters, the FIRST set for one that begins with a
digit, a bracket or a few capitals.
:func:`fast_finditer` then replays ``finditer`` exactly (``PATTERN.match`` at each candidate at or
after the previous match's end), so the fast path returns the very matches of ``finditer``;
``tests/test_regex_fast_path.py`` checks this on the benchmark corpora, adversarial and fuzzed text.
A pattern whose FIRST set cannot be bounded (one that can match the empty string) has no prefilter.
"""

from __future__ import annotations

import re
import re._constants as _sre_c
import re._parser as _sre_parse
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
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


class _Unbounded(Exception):
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
            raise _Unbounded(str(op))
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
            raise _Unbounded(str(op))
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


@dataclass(frozen=True)
class Prefilter:
    """A scan reporting every position where its pattern matches (see the module docstring)."""

    scan: re.Pattern[str]
    #: ``scan`` matches the one character *before* each candidate (lead-character scan)
    lead: bool = False

    def candidates(self, text: str, lo: int, hi: int) -> Iterator[int]:
        """Candidate start positions in ``[lo, hi)``, in increasing order."""
        if not self.lead:
            for m in self.scan.finditer(text, lo, hi):
                yield m.start()
            return
        if lo == 0 and hi > 0:
            yield 0  # no character before it: the pattern's own lookbehind decides
        for m in self.scan.finditer(text, max(lo - 1, 0), hi):
            yield m.start() + 1  # lookbehinds see the text before ``lo``, so the scan may start there


_WORD = r"\w"


def _lead_class(items: Sequence[tuple[Any, Any]], first: set[int], flags: int) -> str | None:
    """``[^X]`` when the pattern starts with ``(?<![X])`` (one character, ``X`` not case-folded) or
    with ``\\b`` and every FIRST character is a word character; else None."""
    if not items:
        return None
    op, av = items[0]
    if op is _sre_c.AT and av is _sre_c.AT_BOUNDARY:
        if first <= _chars_matching(_WORD, flags):
            return "[^" + _WORD + "]"
        return None
    if op is not _sre_c.ASSERT_NOT or av[0] != -1:
        return None
    sub = list(av[1])
    if len(sub) != 1 or sub[0][0] not in (_sre_c.IN, _sre_c.LITERAL):
        return None
    kind, arg = sub[0]
    try:
        src = _in_src(arg) if kind is _sre_c.IN else "[" + _esc(arg) + "]"
    except _Unbounded:
        return None
    if src.startswith("[^") or _chars_matching(src, flags) != _chars_matching(src, flags & ~re.IGNORECASE):
        return None
    return "[^" + src[1:]


#: Typical clinical prose (made up) on which the two scans' visit rates are compared at load.
_SAMPLE = (
    "HISTORY OF PRESENT ILLNESS: 67 y/o woman seen on 03/14/2021 by Dr. Alvarez for follow-up of "
    "type 2 diabetes and hypertension. She reports fatigue, mild dyspnea on exertion, and no chest "
    "pain. Lives with her daughter in Springfield; walks 20 min/day. Meds: metformin 500 mg BID, "
    "lisinopril 10 mg daily. BP 142/88, HR 76, SpO2 97% on RA. A1c 7.9% (was 8.4% in Nov 2020).\n"
    "Assessment and plan: continue current regimen, recheck labs in 3 months; call (555) 201-3344 "
    "with questions. MRN 00123456. Electronically signed by J. Alvarez, MD on Mar 15, 2021 at 09:12."
)


def _share(cls: str, flags: int) -> float:
    """Share of the sample's characters that ``cls`` (one character class) matches."""
    return len(re.findall(cls, _SAMPLE, flags)) / len(_SAMPLE)


def prefilter_regex(source: str, flags: int = 0) -> Prefilter | None:
    """The pattern's :class:`Prefilter`; ``None`` when its FIRST set cannot be bounded (the caller
    then scans with the pattern itself)."""
    try:
        parsed = _sre_parse.parse(source, flags)
        items = list(parsed)
        first, nullable = _first(items, parsed.state.flags)
    except (_Unbounded, re.error, RecursionError):
        return None
    if nullable or not first:
        return None
    inner = source if not flags & re.IGNORECASE else "(?i:" + source + ")"
    plain = flags & ~re.IGNORECASE
    cls = _charset_src(first)
    lead = _lead_class(items, first, parsed.state.flags)
    if lead is not None and _share(lead, plain) < _share(cls, plain):  # the scan that visits fewer positions
        try:
            return Prefilter(re.compile(lead + "(?=" + cls + ")(?=" + inner + ")", plain), lead=True)
        except re.error:
            pass  # back-references: fall back to the FIRST set
    try:
        # the class is case-sensitive and comes first, so ``re`` compiles it into a skip table
        return Prefilter(re.compile(cls + "(?<=(?=" + inner + ")[\\s\\S])", plain))
    except re.error:
        # back-references cannot sit in a lookbehind: the class alone gives the candidates, and
        # ``fast_finditer`` tries the pattern at each of them
        return Prefilter(re.compile(cls))


def fast_finditer(
    regex: re.Pattern[str], prefilter: Prefilter | None, text: str, lo: int = 0, hi: int | None = None
) -> Iterator[re.Match[str]]:
    """Exactly ``regex.finditer(text, lo, hi)`` (non-empty matches), entering the matcher only at
    the prefilter's candidates."""
    hi = len(text) if hi is None else hi
    if prefilter is None:
        yield from regex.finditer(text, lo, hi)
        return
    pos = lo
    match = regex.match
    for p in prefilter.candidates(text, lo, hi):
        if p < pos:
            continue  # inside the previous match: finditer never looks here
        m = match(text, p, hi)
        if m is None:  # a candidate where the pattern does not match
            continue
        if m.end() == p:  # an empty match: the reference scan would behave differently
            raise AssertionError("fast path: empty match")
        yield m
        pos = m.end()
