"""Keyed, consistent person-name surrogates (PATIENT and DOCTOR spans).

A name span is mapped token by token, so shapes survive: ``Smith, John`` -> ``Okafor, Dale``,
``Mary-Ann`` -> ``Irene-Tad``, ``J.`` -> ``K.``, ``JOHN SMITH`` -> ``DALE OKAFOR``.  Lookup is
case-insensitive, so ``SMITH`` and ``Smith`` get the same surrogate modulo case.

* a name word (not an initial, title or digit run) takes one keyed draw (``HMAC`` of its lookup
  form under the name sub-key) into a single mixed space, whatever the word's own class:
  ``LISTED_PERMILLE`` (70 %) of draws give a listed first or last name, the rest a *spliced* name,
  the head of one listed name joined to the tail of another (sometimes with an inner piece of a
  third) at letter runs that listed names have.  So a surrogate says nothing about whether the word
  it replaced was listed, and a spliced name looks like a rare real one.  A listed word drawn to
  the lists moves by a keyed derangement of them (no two such words share a surrogate, none is its
  own); other draws take a keyed index, so distinct words can share a surrogate (birthday bound
  over about 16,000 listed names for the 70 % drawn there); a draw equal to the word is drawn again;
* single letters (initials) map by a keyed derangement of A-Z; suffixes and honorifics that carry
  no identity (Jr, Sr, II, III, MD ...) are kept; digits are FPE-encrypted.
"""

from __future__ import annotations

import re
from functools import cache

from tide_core.anonymize.identifiers import DIGITS, permute_payload
from tide_core.anonymize.keys import KeyRing
from tide_core.anonymize.small_domain import cached_subkey, permutation
from tide_core.anonymize.surrogates import case_like, load_list, norm
from tide_core.errors import AnonymizationError

DOMAIN = "name"
KEEP = frozenset(
    {
        "jr",
        "sr",
        "ii",
        "iii",
        "iv",
        "md",
        "do",
        "rn",
        "np",
        "pa",
        "phd",
        "dr",
        "mr",
        "mrs",
        "ms",
        "miss",
        "prof",
        "de",
        "van",
        "von",
        "der",
        "la",
        "le",
        "del",
        "da",
        "di",
        "st",
    }
)
_TOKEN = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*|\d+")
_TOKEN_SPLIT = re.compile(f"({_TOKEN.pattern})")  # re.split keeps the tokens between the separators
ALPHA = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

#: Share (per mille) of word surrogates drawn from the name lists; the rest are spliced names.  The
#: keyed value of the word chooses, never the word's own class (about 72 % of the name words of the
#: in-house corpus are listed, so a listed surrogate is about as likely as a listed original).
LISTED_PERMILLE = 700
#: Length bounds of a spliced name (letters), and of its optional middle piece.
SPLICE_MIN, SPLICE_MAX = 2, 12
MIDDLE = (2, 3)


@cache
def _mixed() -> tuple[str, ...]:
    """The listed part of the surrogate space: every first name, then every last name."""
    return load_list("first_names").entries + load_list("last_names").entries


@cache
def _mixed_index() -> dict[str, int]:
    return {norm(e): i for i, e in enumerate(_mixed())}


@cache
def _splice_sources() -> tuple[str, ...]:
    """The listed names a spliced name is cut from (letters only, lower case)."""
    return tuple(sorted({e.casefold() for e in _mixed() if e.isalpha() and len(e) >= 3}))


@cache
def _splice_parts() -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]:
    """(heads, middles, tails, joins) of the source names.

    Every proper prefix, every inner piece of ``MIDDLE`` letters (neither first nor last letter),
    every proper suffix, and every run of three letters (with each name's first and last two
    letters, for joins at a word's edge).
    """
    heads: set[str] = set()
    middles: set[str] = set()
    tails: set[str] = set()
    pairs: set[str] = set()
    for w in _splice_sources():
        heads.update(w[:i] for i in range(1, len(w)))
        tails.update(w[j:] for j in range(1, len(w)))
        pairs.update(w[i : i + 3] for i in range(len(w) - 2))
        pairs.update(w[i : i + 2] for i in (0, len(w) - 2))  # a name's own first and last pair
        middles.update(w[i : i + m] for m in MIDDLE for i in range(1, len(w) - m))
    return frozenset(heads), frozenset(middles), frozenset(tails), frozenset(pairs)


def spliced_name(h: int) -> str | None:
    """Decode an integer into a listed-looking name, or ``None`` when no join fits.

    The name is the head of one listed name, on every other draw an inner piece of a second, and
    the tail of a third (``Dorothy`` + ``Hartley`` -> ``Dortley``), 2 to 12 letters, the letters
    across each joint a run some listed name has; ``None`` when the names drawn allow no such join
    (the caller draws again).
    """
    src = _splice_sources()
    h, ia = divmod(h, len(src))
    h, ib = divmod(h, len(src))
    h, with_middle = divmod(h, 2)
    a, b = src[ia], src[ib]
    pairs = _splice_parts()[3]
    middle = ""
    if with_middle:
        h, ic = divmod(h, len(src))
        c = src[ic]
        pieces = [c[i : i + m] for m in MIDDLE for i in range(1, len(c) - m)]
        if not pieces:
            return None
        h, im = divmod(h, len(pieces))
        middle = pieces[im]
    joins = [
        (i, j)
        for i in range(1, len(a))
        for j in range(1, len(b))
        if SPLICE_MIN <= i + len(middle) + len(b) - j <= SPLICE_MAX
        and _joined(a[:i] + middle + b[j:], (i, i + len(middle)) if middle else (i,), pairs)
    ]
    if not joins:
        return None
    i, j = joins[h % len(joins)]
    word = a[:i] + middle + b[j:]
    return word[:1].upper() + word[1:]


def _joined(w: str, cuts: tuple[int, ...], runs: frozenset[str]) -> bool:
    """True when every three letters across each cut of ``w`` occur in a listed name.

    Two letters where the cut is next to the word's edge: a listed name's first or last two.
    """
    for c in cuts:
        for s in (c - 2, c - 1):
            run = w[max(0, s) : s + 3]
            if len(run) >= 2 and run not in runs:
                return False
    return True


def generator_shaped(word: str) -> bool:
    """True when ``word`` could be a spliced name.

    This is what an attacker who knows the generator and the lists can test: a head, an optional
    middle piece and a tail, joined at listed letter pairs.
    """
    w = word.casefold()
    if not (SPLICE_MIN <= len(w) <= SPLICE_MAX):
        return False
    heads, middles, tails, pairs = _splice_parts()
    for s in range(1, len(w)):
        if w[:s] not in heads or not _joined(w, (s,), pairs):
            continue
        if w[s:] in tails:
            return True
        for m in MIDDLE:
            e = s + m
            if e < len(w) and w[s:e] in middles and _joined(w, (e,), pairs) and w[e:] in tails:
                return True
    return False


def _listed(key: str) -> bool:
    return key in load_list("first_names").index or key in load_list("last_names").index


def is_listed(word: str) -> bool:
    """True when ``word`` is in the first-name or the last-name list (any case)."""
    return _listed(norm(word))


def name_words(value: str) -> list[str]:
    """The words (and digit runs) of a name span, as :func:`surrogate_name` maps them."""
    return _TOKEN.findall(value)


def _initials(keyring: KeyRing, token: str) -> str:
    """Letter-by-letter keyed derangement of A-Z ("J" -> "K", "JS" -> "KT"), case kept."""
    p = permutation(cached_subkey(keyring, DOMAIN), b"initial", 26)
    out = []
    for ch in token:
        up = ch.upper()
        idx = ALPHA.index(up) if up in ALPHA else keyring.mac_int(DOMAIN, "initial-hash", ch) % 26
        letter = ALPHA[p.derange(idx)]
        out.append(letter if ch.isupper() else letter.lower())
    return "".join(out)


def surrogate_token(keyring: KeyRing, token: str, keep_titles: bool = True) -> str:
    """Surrogate of one name word, in the word's capitalisation pattern."""
    return _surrogate_token(keyring, token, norm(token), keep_titles)


def _surrogate_token(keyring: KeyRing, token: str, key: str, keep_titles: bool) -> str:
    """:func:`surrogate_token` given ``key == norm(token)``."""
    if key in KEEP and keep_titles:
        return token
    if token.isdigit():
        return permute_payload(cached_subkey(keyring, DOMAIN), "name-digits", [DIGITS] * len(token), token)
    if len(token) == 1 or (not keep_titles and key in KEEP):
        return _initials(keyring, token)
    listed = _mixed_index().get(key)
    if 2 <= len(token) <= 3 and token.isupper() and listed is None:
        return _initials(keyring, token)  # "JS", "MKT": a cluster of initials
    return case_like(token, _surrogate_word(keyring, key, listed))


def _surrogate_word(keyring: KeyRing, key: str, listed: int | None) -> str:
    """The keyed surrogate of a name word.

    ``key`` is its lookup form; ``listed`` its place in the listed part of the space, if any.  One
    keyed draw chooses between a listed name (``LISTED_PERMILLE``) and a spliced name whatever the
    word itself is; a listed word drawn to the lists moves by the keyed derangement of the listed
    part (no two share a surrogate, none is its own), any other draw takes a keyed index.  A draw
    equal to the word, or a splice that fails, is drawn again.
    """
    mixed = _mixed()
    h, u = divmod(keyring.mac_int(DOMAIN, "word", key), 1000)
    if u < LISTED_PERMILLE:
        if listed is not None:
            return mixed[permutation(cached_subkey(keyring, DOMAIN), b"mixed", len(mixed)).derange(listed)]
        word: str | None = mixed[h % len(mixed)]
    else:
        word = spliced_name(h)
    counter = 0
    while word is None or norm(word) == key:  # the same branch, drawn again
        counter += 1
        h = keyring.mac_int(DOMAIN, "word", key, str(counter))
        word = mixed[h % len(mixed)] if u < LISTED_PERMILLE else spliced_name(h)
    return word


def surrogate_name(keyring: KeyRing, value: str) -> str:
    """Surrogate of a whole name span; separators, initials' periods and shape are kept.

    A span made only of title/suffix words ("SR", "MD") is a set of initials, not a title:
    its letters are mapped like initials so nothing passes through.
    """
    parts = _TOKEN_SPLIT.split(value)  # separator, token, separator, ..., token, separator
    keys = [norm(t) for t in parts[1::2]]
    keep_titles, has_word = _titles_kept(parts, keys)
    for i in range(1, len(parts), 2):
        parts[i] = _surrogate_token(keyring, parts[i], keys[i // 2], keep_titles)
    if not has_word:
        raise AnonymizationError(
            "E430", "name span has no letters", hint="a PATIENT/DOCTOR span must contain the name (titles excluded)"
        )
    return "".join(parts)


def _titles_kept(parts: list[str], keys: list[str]) -> tuple[bool, bool]:
    """(keep titles, has a word) of a name's tokens.

    Titles and suffixes are kept unless every word (non-digit token) is one; ``parts`` alternates
    separators and tokens, ``keys`` are the tokens' lookup forms.
    """
    has_word = False
    for token, key in zip(parts[1::2], keys, strict=True):
        if not token.isdigit():
            if key not in KEEP:
                return True, True
            has_word = True
    return not has_word, has_word
