"""Keyed, consistent person-name surrogates (PATIENT and DOCTOR spans).

A name span is mapped token by token, so shapes survive: ``Smith, John`` -> ``Okafor, Dale``,
``Mary-Ann`` -> ``Irene-Tad``, ``J.`` -> ``K.``, ``JOHN SMITH`` -> ``DALE OKAFOR``.  Lookup is
case-insensitive, so ``SMITH`` and ``Smith`` get the same surrogate modulo case.

* a token found in the first-name list maps by a keyed derangement of that list, a token in the
  last-name list (and not in the first-name list) by a derangement of that list: bijections, so
  no two listed names share a surrogate and no name is its own surrogate;
* any other token maps to a keyed pronounceable generated name from a space of about 1.4 x 10^8
  (re-drawn when it would equal a listed name), so collisions among unlisted names follow the
  birthday bound n^2 / 2.9e8 (about 0.007 % of 20,000 distinct unlisted names);
* single letters (initials) map by a keyed derangement of A-Z; suffixes and honorifics that carry
  no identity (Jr, Sr, II, III, MD ...) are kept; digits are FPE-encrypted.
"""

from __future__ import annotations

import re

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

_ONSETS = (
    "b",
    "c",
    "d",
    "f",
    "g",
    "h",
    "j",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "w",
    "z",
    "br",
    "cr",
    "dr",
    "fr",
    "gr",
    "kl",
    "pr",
    "st",
    "tr",
    "sh",
    "ch",
    "th",
)
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "ie", "ou", "y")
_CODAS = ("", "n", "r", "l", "s", "m", "nd", "rt", "st", "x", "ck", "ll")
_ENDINGS = ("a", "o", "er", "on", "el", "ine", "ett", "ard", "ley", "son", "")
SYLLABLES = len(_ONSETS) * len(_VOWELS) * len(_CODAS)
GENERATED_SPACE = SYLLABLES * SYLLABLES * len(_ENDINGS)


#: Every syllable, by its number: onset (fastest), vowel, coda, as :func:`generated_name` reads them.
_SYLLABLE_TEXT = tuple(
    _ONSETS[s % len(_ONSETS)] + _VOWELS[s // len(_ONSETS) % len(_VOWELS)] + _CODAS[s // len(_ONSETS) // len(_VOWELS)]
    for s in range(SYLLABLES)
)


def generated_name(h: int) -> str:
    """Decode an integer into a pronounceable name (two syllables and an ending)."""
    h, first = divmod(h, SYLLABLES)
    h, second = divmod(h, SYLLABLES)
    word = _SYLLABLE_TEXT[first] + _SYLLABLE_TEXT[second] + _ENDINGS[h % len(_ENDINGS)]
    return word[:1].upper() + word[1:]


def _listed(key: str) -> bool:
    return key in load_list("first_names").index or key in load_list("last_names").index


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
    first, last = load_list("first_names"), load_list("last_names")
    i = first.index.get(key)
    j = last.index.get(key) if i is None else None
    if 2 <= len(token) <= 3 and token.isupper() and i is None and j is None:
        return _initials(keyring, token)  # "JS", "MKT": a cluster of initials
    if i is not None:
        return case_like(token, first.deranged(keyring, DOMAIN, i))
    if j is not None:
        return case_like(token, last.deranged(keyring, DOMAIN, j))
    return case_like(token, _generated(keyring, key))


def _generated(keyring: KeyRing, key: str) -> str:
    """The keyed generated name of an unlisted word (re-drawn while it is a listed name)."""
    counter = 0
    while True:
        h = keyring.mac_int(DOMAIN, "generated", key, str(counter))
        word = generated_name(h % GENERATED_SPACE)
        if not _listed(norm(word)):
            return word
        counter += 1


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
    """(keep titles, has a word): titles and suffixes are kept unless every word (non-digit token)
    is one; ``parts`` alternates separators and tokens, ``keys`` are the tokens' lookup forms."""
    has_word = False
    for token, key in zip(parts[1::2], keys, strict=True):
        if not token.isdigit():
            if key not in KEEP:
                return True, True
            has_word = True
    return not has_word, has_word
