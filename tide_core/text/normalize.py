"""The normalised view recognizers see, with an exact offset map back to the original text.

Text is written in more ways than a pattern can list: ``(617) 555<U+200B>-0199``,
``617–555–0199`` (en dashes), ``617&#45;555&#45;0199``, ``Nov&aacute;k``, ``555<b>-</b>0199``
and ``MRN 8 4 7 3 6 2 5 1`` are all a phone number, a name or an MRN to a reader and none of them
to a regex or a table match.  So recognition (the engine and the residual screen) runs on a *view*
of the note, built in this order:

1. **markup**: HTML/XML character references are decoded (named ones from
   ``html.entities.html5``, with or without the trailing ``;`` for the legacy names as browsers
   do, decimal ``&#45;`` and hex ``&#x2D;``; a reference whose ``&`` itself is encoded,
   ``&amp;nbsp;``, is decoded through), and HTML tags (``<b>``, ``</span>``, ``<br/>``; known HTML
   element names only, so ``BP <90`` stays as it is) become nothing, or one space for a
   block-level element; each decoded character maps to the whole reference, a tag's space to the
   whole tag;
2. the result is cut into clusters (a character plus its combining marks, or a Hangul jamo run);
   each cluster is put in Unicode NFKC (fullwidth ``１２３`` → ``123``, ``ﬁ`` → ``fi``, NBSP →
   space) on its own, so every view character comes from exactly one cluster;
3. format characters are removed: category ``Cf`` (U+200B–U+200F, U+2060–U+2064, U+FEFF, U+00AD
   soft hyphen, bidi controls ...) and the other default-ignorable code points a reader never sees
   (variation selectors U+FE00–U+FE0F and U+E0100–U+E01EF, U+034F, Hangul fillers);
4. separators are folded (:func:`fold_table`): every dash (category ``Pd``) and minus look-alike
   (U+2212, U+2796, U+02D7, U+2043) to ASCII ``-``; the separator dots U+00B7, U+2027, U+30FB,
   U+2219, U+22C5 and U+2E31 to ``-`` as well (every recognizer that accepts a separator accepts
   ``-``: phones, SSNs, ISO and numeric dates, MRNs; the SSN and ISO date patterns accept no
   ``.``); the slash look-alikes U+2044 and U+2215 to ``/``; every space separator (``Zs``:
   U+00A0, U+202F, U+2007, U+3000 ...) to a space and the line and paragraph separators (``Zl``,
   ``Zp``) to a line break;
5. decimal digits of any script become ASCII digits (``٣`` → ``3``);
6. in a token (a run of letters and digits) that also holds a Latin letter or an ASCII digit,
   Cyrillic and Greek look-alikes of Latin letters are folded to them (``Smіth`` with a
   Cyrillic ``і`` → ``Smith``); a token written wholly in Cyrillic or Greek is left alone;
7. **spaced-out characters** are joined: three or more single digits separated by single spaces
   (a ``-``, ``.`` or ``/`` may stand between two of them, spaced as well:
   ``5 5 5 - 0 1 9 9`` → ``555-0199``), or three or more single letters separated by single
   spaces (``J o h n`` → ``John``), lose those spaces.  A single character is one with no letter
   or digit right before or after it.

:class:`NormalizedText` keeps, for every view character ``i``, the extent ``[starts[i], ends[i])``
of original characters it came from.  A span ``[a, b)`` of the view maps to the union of its
characters' extents, ``[starts[a], ends[b - 1])``, so format characters, tags, the spaces of a
spaced-out number and the text of a character reference *inside* a span fall inside its original
extent and are replaced with it.  Removed characters just outside a span stay outside: they carry
nothing.  When the text is already normal (no markup, no spaced-out run, and ASCII or
NFKC-stable with nothing to remove or fold) the view is the text itself and the map is the
identity, at no cost.

The view is what the anonymizer computes surrogates from as well (:func:`normalize_surface`), so
``555<U+200B>-0199``, ``555&#8209;0199`` and ``555-0199`` get the same surrogate and the released
text holds neither the format character, nor the reference, nor any original digit.
"""

from __future__ import annotations

import bisect
import html
import re
import sys
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from html.entities import html5
from typing import Any

#: @2: markup decoded, dashes, separator dots and spaces folded, spaced-out characters joined
VERSION = "tide.normalize@2"

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


#: Minus look-alikes outside category Pd (folded to ``-`` with every Pd character).
MINUS_LIKE = "\u2212\u2796\u02d7\u2043"
#: Dots written as separators (``617·555·0199``, ``1961・07・14``), folded to ``-``.
SEPARATOR_DOTS = "\u00b7\u2027\u30fb\u2219\u22c5\u2e31"
#: Slash look-alikes, folded to ``/``.
SLASH_LIKE = "\u2044\u2215"


@cache
def _ignorable() -> frozenset[str]:
    cf = (chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf")
    return frozenset(cf).union(chr(c) for c in _EXTRA_IGNORABLE)


@cache
def fold_table() -> dict[str, str]:
    """Non-ASCII separator characters and what the view writes for them (step 4 of the module
    docstring): dashes and minus signs ``-``, separator dots ``-``, slashes ``/``, space
    separators a space, line and paragraph separators a line break."""
    by_category = {"Pd": "-", "Zs": " ", "Zl": "\n", "Zp": "\n"}
    table: dict[str, str] = {}
    for c in range(0x80, sys.maxunicode + 1):
        to = by_category.get(unicodedata.category(chr(c)))
        if to is not None:
            table[chr(c)] = to
    table.update(dict.fromkeys(MINUS_LIKE + SEPARATOR_DOTS, "-"))
    table.update(dict.fromkeys(SLASH_LIKE, "/"))
    return table


@cache
def _suspects() -> frozenset[str]:
    """Characters that make a non-ASCII text need the full path (besides NFKC instability): the
    removed ones, the folded ones, the look-alikes and the decimal digits outside ASCII (``\\d``
    beyond ``[0-9]``).  None of them is ASCII."""
    digits = (chr(c) for c in range(0x80, sys.maxunicode + 1) if chr(c).isdecimal())
    return _ignorable().union(CONFUSABLES, fold_table(), digits)


#: HTML elements whose tags the view drops (inline: nothing is left) ...
INLINE_TAGS = frozenset(
    "a abbr b bdi bdo big cite code del dfn em font i ins kbd mark q s samp small span strike strong sub sup "
    "tt u var wbr".split()
)
#: ... or writes as one space (block-level: the text on either side is not one word).
BLOCK_TAGS = frozenset(
    "address article aside blockquote br caption dd div dl dt figcaption figure footer h1 h2 h3 h4 h5 h6 "
    "header hr li main nav ol p pre section table tbody td tfoot th thead tr ul".split()
)
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]{0,9})(?:\s[^<>]{0,200})?/?>")
#: The body of one character reference (what follows its ``&``), as ``html.unescape`` reads them.
_CHARREF = re.compile(r"#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[A-Za-z][A-Za-z0-9]{0,31};?")
#: Where markup may start (a text without a match has none).
_MARKUP = re.compile(r"&[#A-Za-z]|<[A-Za-z/]")
#: Three or more single digits (a ``-``, ``.`` or ``/`` may stand between two) or single letters,
#: separated by single spaces (step 7).
_SPACED = re.compile(r"(?<![^\W_])(?:\d(?:(?: [-./])? \d){2,}|[^\W\d_](?: [^\W\d_]){2,})(?![^\W_])")
#: What makes a text need the full path whatever its characters.
_NEEDS_VIEW = re.compile(f"{_MARKUP.pattern}|{_SPACED.pattern}")


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
    """No markup and no spaced-out run, and ASCII or NFKC-stable with nothing to remove or fold:
    the view is the text itself."""
    if _NEEDS_VIEW.search(text) is not None:
        return False
    return text.isascii() or (unicodedata.is_normalized("NFKC", text) and not _has_suspect(text))


def _full_view(text: str) -> NormalizedText:
    """The view of a text :func:`_is_normal` turned down: markup decoded (step 1), then cluster by
    cluster (steps 2-6), then spaced-out runs joined (step 7)."""
    decoded = _decode_markup(text)
    base = text if decoded is None else decoded[0]
    chars, starts, ends = _cluster_view(base)
    if decoded is not None:  # extents in ``base`` -> extents in ``text``
        _, d_starts, d_ends = decoded
        starts = [d_starts[k] for k in starts]
        ends = [d_ends[k - 1] for k in ends]
    view = "".join(chars)
    if _SPACED.search(view):
        chars, starts, ends = _join_spaced(view, chars, starts, ends)
        view = "".join(chars)
    if view == text:
        return NormalizedText(text, text)
    return NormalizedText(text, view, tuple(starts), tuple(ends))


def _cluster_view(text: str) -> tuple[list[str], list[int], list[int]]:
    """Steps 2-6 on ``text``: the view characters and the extent of each in ``text``."""
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
    if _CONFUSABLE.search("".join(chars)) and _fold_confusables(chars):  # a folded letter may now
        chars, starts, ends = _recompose(chars, starts, ends)  # compose with its marks (о + ´ -> ó)
    return chars, starts, ends


def _decode_markup(text: str) -> tuple[str, list[int], list[int]] | None:
    """Step 1: ``text`` with character references decoded and tags dropped, and the extent in
    ``text`` of each character of the result; ``None`` when there is nothing to decode."""
    if _MARKUP.search(text) is None:
        return None
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    pos = 0  # text[:pos] is done
    changed = False
    for m in _MARKUP.finditer(text):
        at = m.start()
        if at < pos:
            continue
        found = _charref_at(text, at) if text[at] == "&" else _tag_at(text, at)
        if found is None:
            continue
        piece, end = found
        out.append(text[pos:at])
        starts.extend(range(pos, at))
        ends.extend(range(pos + 1, at + 1))
        out.append(piece)
        starts.extend([at] * len(piece))
        ends.extend([end] * len(piece))
        pos, changed = end, True
    if not changed:
        return None
    out.append(text[pos:])
    starts.extend(range(pos, len(text)))
    ends.extend(range(pos + 1, len(text) + 1))
    return "".join(out), starts, ends


def _charref_at(text: str, at: int) -> tuple[str, int] | None:
    """(decoded text, end) of the character reference at ``text[at]`` (``&``), or ``None``.

    A reference that decodes to ``&`` and is followed by the body of another (``&amp;nbsp;``,
    ``&#38;#45;``) is decoded through: the text was escaped twice."""
    decoded = _decode_charref(text, at + 1)
    while decoded is not None and decoded[0] == "&":
        inner = _decode_charref(text, decoded[1])
        if inner is None:
            break
        decoded = inner
    return decoded


def _decode_charref(text: str, at: int) -> tuple[str, int] | None:
    """(decoded text, end) of the reference whose body starts at ``text[at]`` (just after its
    ``&``), as ``html.unescape`` decodes it (a name not followed by ``;`` is decoded only when it
    is, or starts with, a legacy name such as ``nbsp`` or ``aacute``; the rest of the name is then
    left as text); ``None`` when there is none."""
    m = _CHARREF.match(text, at)
    if m is None:
        return None
    ref = m.group(0)
    if ref[0] == "#":
        return html.unescape("&" + ref), m.end()
    if ref in html5:
        return html5[ref], m.end()
    for n in range(len(ref) - 1, 1, -1):  # the longest legacy name the reference starts with
        if ref[:n] in html5:
            return html5[ref[:n]], at + n
    return None


def _tag_at(text: str, at: int) -> tuple[str, int] | None:
    """(what the view writes, end) for the HTML tag at ``text[at]`` (``<``), or ``None`` when it
    is no tag of a known HTML element."""
    m = _TAG.match(text, at)
    if m is None:
        return None
    name = m.group(2).lower()
    if name in INLINE_TAGS:
        return "", m.end()
    if name in BLOCK_TAGS:
        return " ", m.end()
    return None


def _join_spaced(
    view: str, chars: list[str], starts: list[int], ends: list[int]
) -> tuple[list[str], list[int], list[int]]:
    """Step 7: drop the spaces inside every spaced-out run of ``view`` (``chars`` joined)."""
    drop: set[int] = set()
    for m in _SPACED.finditer(view):
        drop.update(k for k in range(m.start(), m.end()) if view[k] == " ")
    keep = [k for k in range(len(chars)) if k not in drop]
    return [chars[k] for k in keep], [starts[k] for k in keep], [ends[k] for k in keep]


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
    ignorable, folds = _ignorable(), fold_table()
    for cs, ce in _clusters(text, lo, hi):
        piece = text[cs:ce]
        if not piece.isascii():
            piece = unicodedata.normalize("NFKC", "".join(c for c in piece if c not in ignorable))
        for ch in piece:
            if ch in ignorable:
                continue
            if not ch.isascii():
                if ch.isdecimal():
                    ch = str(unicodedata.decimal(ch))
                else:
                    ch = folds.get(ch, ch)
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
        return {
            "markup": {"entities": "html5", "inline_tags": sorted(INLINE_TAGS), "block_tags": sorted(BLOCK_TAGS)},
            "nfkc": True,
            "remove": "Cf+default-ignorable",
            "fold": {"Pd": "-", "Zs": " ", "Zl/Zp": "\\n", "-": MINUS_LIKE + SEPARATOR_DOTS, "/": SLASH_LIKE},
            "digits": "ascii",
            "confusables": len(CONFUSABLES),
            "spaced": _SPACED.pattern,
        }


STEP = _Step()
