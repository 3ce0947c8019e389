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
import threading
import unicodedata
from collections import OrderedDict
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
def _suspects() -> frozenset[str]:
    """Characters that make a non-ASCII text need the full path (besides NFKC instability): the
    removed ones, the look-alikes and the decimal digits outside ASCII (``\\d`` beyond ``[0-9]``).
    None of them is ASCII."""
    digits = (chr(c) for c in range(0x80, sys.maxunicode + 1) if chr(c).isdecimal())
    return _ignorable().union(CONFUSABLES, digits)


_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_ASCII_RUN = re.compile(r"[\x00-\x7f]+")
_CONFUSABLE = re.compile("[" + "".join(re.escape(c) for c in CONFUSABLES) + "]")


def _has_suspect(text: str) -> bool:
    """Whether ``text`` holds one of :func:`_suspects` (only its non-ASCII characters are looked up)."""
    return not _suspects().isdisjoint(_NON_ASCII.findall(text))


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


def _clusters(text: str, lo: int = 0, hi: int | None = None) -> Iterable[tuple[int, int]]:
    """``[start, end)`` of each cluster: a character with the combining marks that follow it.

    Removed characters between a character and its marks belong to the cluster (``e<U+200B>´``
    normalises to ``é`` as ``e´`` does); removed characters anywhere else are clusters of one.
    Only ``text[lo:hi]`` is cut, which gives the clusters of the whole text there when ``lo`` and
    ``hi`` are cluster boundaries (every ASCII character starts a cluster and ends the one before).
    """
    ignorable = _ignorable()
    n, i = len(text) if hi is None else hi, lo
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
    """The normalised view of ``text`` (see the module docstring).

    A text that needs the full path is normalised once for every recognizer and again for the
    finishing step, so its view is kept in a small per-process cache (:data:`_VIEWS`)."""
    if _is_normal(text):
        return NormalizedText(text, text)
    view = _VIEWS.get(text)
    if view is None:
        view = _full_view(text)
        _VIEWS.put(view)
    return view


def _is_normal(text: str) -> bool:
    """ASCII, or NFKC-stable with nothing to remove or fold: the view is the text itself."""
    return text.isascii() or (unicodedata.is_normalized("NFKC", text) and not _has_suspect(text))


def _full_view(text: str) -> NormalizedText:
    """The view of a text :func:`_is_normal` turned down: cluster by cluster."""
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    pos = 0
    for run in _ASCII_RUN.finditer(text):
        # an ASCII character is a cluster of its own and stays as it is, unless marks follow it:
        # the run but its last character is copied, the rest goes cluster by cluster
        a, b = run.span()
        _add_clusters(text, pos, a, chars, starts, ends)
        chars.extend(text[a : b - 1])
        starts.extend(range(a, b - 1))
        ends.extend(range(a + 1, b))
        pos = b - 1
    _add_clusters(text, pos, len(text), chars, starts, ends)
    view = "".join(chars)
    if _CONFUSABLE.search(view) and _fold_confusables(chars):  # a folded letter may now compose
        chars, starts, ends = _recompose(chars, starts, ends)  # with its marks (о + ´ -> ó)
        view = "".join(chars)
    if view == text:
        return NormalizedText(text, text)
    return NormalizedText(text, view, tuple(starts), tuple(ends))


class _ViewCache:
    """The most recently used full-path views, at most ``max_views`` of them and at most
    ``max_chars`` characters of note text in all (least recently used first out).

    Keyed by the note text itself, so it holds note texts only as long as a few more notes are
    being recognized; it never grows past its bounds (a view takes about 75 bytes per character,
    mostly its offset maps).  Thread-safe.
    """

    def __init__(self, max_views: int, max_chars: int) -> None:
        self.max_views = max_views
        self.max_chars = max_chars
        self._views: OrderedDict[str, NormalizedText] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def get(self, text: str) -> NormalizedText | None:
        with self._lock:
            view = self._views.get(text)
            if view is not None:
                self._views.move_to_end(text)
            return view

    def put(self, view: NormalizedText) -> None:
        size = len(view.original)
        if size > self.max_chars:
            return
        with self._lock:
            if view.original in self._views:
                return
            self._views[view.original] = view
            self._chars += size
            while len(self._views) > self.max_views or self._chars > self.max_chars:
                _, old = self._views.popitem(last=False)
                self._chars -= len(old.original)

    def clear(self) -> None:
        with self._lock:
            self._views.clear()
            self._chars = 0


#: Full-path views of the notes being recognized (64 notes, 500,000 characters at most).
_VIEWS = _ViewCache(max_views=64, max_chars=500_000)


def _add_clusters(text: str, lo: int, hi: int, chars: list[str], starts: list[int], ends: list[int]) -> None:
    """Append the view characters of the clusters of ``text[lo:hi]`` and their extents."""
    ignorable = _ignorable()
    for cs, ce in _clusters(text, lo, hi):
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
    """The normalised form of one value (what the anonymizer computes a surrogate from).

    Values bypass the view cache, which is for whole notes."""
    return value if _is_normal(value) else _full_view(value).text


class _Step:
    """The view as a fingerprinted recognition step (``tide_core.fingerprint.Step``)."""

    qualified_name = VERSION

    def config(self) -> dict[str, Any]:
        return {"nfkc": True, "remove": "Cf+default-ignorable", "digits": "ascii", "confusables": len(CONFUSABLES)}


STEP = _Step()
