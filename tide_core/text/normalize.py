"""The normalised view recognizers see, with an exact offset map back to the original text.

Zero-width and other format characters, fullwidth digits and look-alike letters defeat every
pattern and table match: ``(617) 555<U+200B>-0199`` is no phone number to a regex, and an MRN
split by U+200B is no longer the MRN in the patients table.  So recognition (the engine and the
residual screen) runs on a *view* of the note:

1. the text is cut into clusters (a character plus its combining marks, or a Hangul jamo run);
   each cluster is put in Unicode NFKC (fullwidth ``１２３`` → ``123``, ``ﬁ`` → ``fi``, NBSP →
   space) on its own, so every view character comes from exactly one cluster;
2. format characters are removed: category ``Cf`` (U+200B–U+200F, U+2060–U+2064, U+FEFF, U+00AD
   soft hyphen, bidi controls ...) and the other default-ignorable code points a reader never sees
   (variation selectors, U+034F, Hangul fillers);
3. decimal digits of any script become ASCII digits (``٣`` → ``3``);
4. in a token (a run of letters and digits) that also holds a Latin letter or an ASCII digit,
   Cyrillic and Greek look-alikes of Latin letters are folded to them (``Smіth`` with a
   Cyrillic ``і`` → ``Smith``); a token written wholly in Cyrillic or Greek is left alone.

:class:`NormalizedText` keeps, for every view character ``i``, the extent ``[starts[i], ends[i])``
of original characters it came from.  A span ``[a, b)`` of the view maps to the union of its
characters' extents, ``[starts[a], ends[b - 1])``, so format characters removed *inside* a span
fall inside its original extent and are replaced with it.  Format characters just outside a span
stay outside: they carry nothing.  When the text is already normal (ASCII, or NFKC-stable with no
format character, non-ASCII digit or mixed-script look-alike) the view is the text itself and the
map is the identity, at no cost.

The view is what the anonymizer computes surrogates from as well (:func:`normalize_surface`), so
``555<U+200B>-0199`` and ``555-0199`` get the same surrogate and the released text holds neither
the format character nor any original digit.
"""

from __future__ import annotations

import bisect
import re
import sys
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

VERSION = "tide.normalize@1"

#: Cyrillic and Greek letters that look like a Latin letter (same case).
CONFUSABLES: dict[str, str] = {
    # Cyrillic lower / upper
    "а": "a", "в": "b", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "ѕ": "s", "і": "i",
    "ј": "j", "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l", "ү": "y", "ɡ": "g",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T",
    "Х": "X", "У": "Y", "Ѕ": "S", "І": "I", "Ј": "J", "Ԛ": "Q", "Ԝ": "W", "Ү": "Y", "Ӏ": "I", "Һ": "H",
    # Greek lower / upper
    "ο": "o", "ν": "v", "κ": "k", "ρ": "p", "υ": "u", "χ": "x", "α": "a", "ι": "i", "ϲ": "c", "ϳ": "j",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "Ϲ": "C",
    # Latin variants NFKC keeps
    "ı": "i", "ȷ": "j",
}  # fmt: skip

#: Default-ignorable code points that are not category Cf (removed as well).
_EXTRA_IGNORABLE = (
    [0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0]
    + list(range(0x180B, 0x1810))
    + list(range(0xFE00, 0xFE10))
    + list(range(0xE0100, 0xE01F0))
)


@cache
def _ignorable() -> frozenset[str]:
    cf = (chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf")
    return frozenset(cf).union(chr(c) for c in _EXTRA_IGNORABLE)


@cache
def _suspect_re() -> re.Pattern[str]:
    """Characters that make a non-ASCII text need the full path (besides NFKC instability)."""
    chars = sorted(_ignorable() | set(CONFUSABLES))
    cls = "".join(re.escape(c) for c in chars)
    return re.compile(f"[{cls}]|(?![0-9])\\d")


def is_format_char(ch: str) -> bool:
    """True for a character the view removes (Cf and the other default-ignorables)."""
    return ch in _ignorable()


@dataclass(frozen=True)
class NormalizedText:
    """The view of ``original`` recognizers see, and the exact map back.

    ``starts``/``ends`` are ``None`` for the identity view (``text is original``).
    """

    original: str
    text: str
    starts: tuple[int, ...] | None = None
    ends: tuple[int, ...] | None = None

    @property
    def identity(self) -> bool:
        return self.starts is None

    def extent(self, i: int) -> tuple[int, int]:
        """Original extent ``[start, end)`` of view character ``i``."""
        if self.starts is None or self.ends is None:  # both set or both None
            return i, i + 1
        return self.starts[i], self.ends[i]

    def to_original(self, start: int, end: int) -> tuple[int, int]:
        """Original extent of the view span ``[start, end)``: the union of its characters' extents.

        A span that reaches past the end of the view keeps reaching past the end of the original
        by as much, so the engine's bounds check still rejects it.
        """
        if self.starts is None or self.ends is None:  # both set or both None
            return start, end
        n, m = len(self.text), len(self.original)
        o_start = self.starts[start] if start < n else m + (start - n)
        o_end = self.ends[end - 1] if end <= n else m + (end - n)
        return o_start, o_end

    def to_view(self, start: int, end: int) -> tuple[int, int] | None:
        """The smallest view span whose original extent covers every kept character of the
        original span ``[start, end)``; ``None`` when that span holds only removed characters."""
        if self.starts is None or self.ends is None:  # both set or both None
            return start, end
        a = bisect.bisect_right(self.ends, start)  # first view char ending after ``start``
        b = bisect.bisect_left(self.starts, end)  # view chars starting before ``end``
        return (a, b) if a < b else None


def _clusters(text: str) -> Iterable[tuple[int, int]]:
    """``[start, end)`` of each cluster: a character with the combining marks that follow it.

    Removed characters between a character and its marks belong to the cluster (``e<U+200B>´``
    normalises to ``é`` as ``e´`` does); removed characters anywhere else are clusters of one.
    """
    ignorable = _ignorable()
    n, i = len(text), 0
    while i < n:
        j = i + 1
        if text[i] not in ignorable:
            if "\u1100" <= text[i] <= "\u11ff":  # conjoining jamo compose with each other under NFKC
                while j < n and "\u1100" <= text[j] <= "\u11ff":
                    j += 1
            while True:
                k = j
                while k < n and text[k] in ignorable:
                    k += 1
                if k < n and unicodedata.combining(text[k]):
                    j = k + 1
                else:
                    break
        yield i, j
        i = j


def _is_latin_letter(ch: str) -> bool:
    if ch.isascii():
        return ch.isalpha()
    return ch.isalpha() and ch not in CONFUSABLES and unicodedata.name(ch, "").startswith("LATIN")


def normalize(text: str) -> NormalizedText:
    """The normalised view of ``text`` (see the module docstring)."""
    if text.isascii() or (unicodedata.is_normalized("NFKC", text) and not _suspect_re().search(text)):
        return NormalizedText(text, text)
    ignorable = _ignorable()
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for cs, ce in _clusters(text):
        piece = text[cs:ce]
        if not piece.isascii():
            piece = unicodedata.normalize("NFKC", "".join(c for c in piece if c not in ignorable))
        for ch in piece:
            if ch in ignorable:
                continue
            if not ch.isascii() and ch.isdecimal():
                ch = str(unicodedata.decimal(ch))
            chars.append(ch)
            starts.append(cs)
            ends.append(ce)
    if _fold_confusables(chars):  # a folded letter may now compose with its marks (о + ´ -> ó)
        chars, starts, ends = _recompose(chars, starts, ends)
    view = "".join(chars)
    if view == text:
        return NormalizedText(text, text)
    return NormalizedText(text, view, tuple(starts), tuple(ends))


def _recompose(chars: list[str], starts: list[int], ends: list[int]) -> tuple[list[str], list[int], list[int]]:
    """NFKC each cluster's characters again (all of a cluster's characters share its extent)."""
    out_c: list[str] = []
    out_s: list[int] = []
    out_e: list[int] = []
    i, n = 0, len(chars)
    while i < n:
        j = i + 1
        while j < n and starts[j] == starts[i]:
            j += 1
        piece = "".join(chars[i:j])
        if not piece.isascii():
            piece = unicodedata.normalize("NFKC", piece)
        out_c.extend(piece)
        out_s.extend([starts[i]] * len(piece))
        out_e.extend([ends[i]] * len(piece))
        i = j
    return out_c, out_s, out_e


def _fold_confusables(chars: list[str]) -> bool:
    """Fold look-alikes in tokens that also hold a Latin letter or an ASCII digit (in place);
    True when something was folded."""
    folded = False
    n, i = len(chars), 0
    while i < n:
        if not chars[i].isalnum():
            i += 1
            continue
        j = i
        anchor = False
        has_confusable = False
        while j < n and chars[j].isalnum():
            c = chars[j]
            if c in CONFUSABLES:
                has_confusable = True
            elif (c.isascii() and c.isdigit()) or _is_latin_letter(c):
                anchor = True
            j += 1
        if anchor and has_confusable:
            folded = True
            for k in range(i, j):
                chars[k] = CONFUSABLES.get(chars[k], chars[k])
        i = j
    return folded


def normalize_surface(value: str) -> str:
    """The normalised form of one value (what the anonymizer computes a surrogate from)."""
    return normalize(value).text


class _Step:
    """The view as a fingerprinted recognition step (``tide_core.fingerprint.Step``)."""

    qualified_name = VERSION

    def config(self) -> dict[str, Any]:
        return {"nfkc": True, "remove": "Cf+default-ignorable", "digits": "ascii", "confusables": len(CONFUSABLES)}


STEP = _Step()
