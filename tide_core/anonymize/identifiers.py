"""Format-preserving keyed encryption of identifiers (MRNs, SSNs, account and device numbers).

An identifier is split into *payload* characters (digits, upper-case and lower-case ASCII
letters) and *structure* characters (everything else: ``-``, ``/``, ``.``, spaces ...), which stay
where they are.  Each payload position keeps its class, so ``123-45-6789`` stays ``ddd-dd-dddd``
and ``AB12cd`` stays ``uuddll``.  The payload is permuted inside the exact product domain of its
position alphabets — a bijection at every length:

* domain < 10^6 (FF3-1's minimum): :mod:`tide_core.anonymize.small_domain` (exact permutation,
  fixed-point free);
* one alphabet and a length FF3-1 accepts: FF3-1 (``ff3`` package, ``withCustomAlphabet``) directly;
* mixed alphabets (or one alphabet longer than FF3's maximum but a domain <= 10^56): the payload is
  read as one mixed-radix integer, written as a decimal string and FF3-1-encrypted with cycle
  walking until the value falls back inside the domain;
* larger domains: the positions are split into balanced blocks, each encrypted as above with the
  block index in its tweak (still a bijection; equal blocks at the same index are not mixed).

Tweaks are 56-bit (FF3-1) and derived from the key and the class signature, so ``ddd-dd-dddd``
and ``dddddddd`` use different permutations.  Everything is a pure function of key and value.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from functools import lru_cache
from math import prod

from ff3 import FF3Cipher

from tide_core.anonymize.keys import KeyRing
from tide_core.anonymize.small_domain import permutation
from tide_core.errors import AnonymizationError

DIGITS = "0123456789"
UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LOWER = "abcdefghijklmnopqrstuvwxyz"
HEX_LOWER = "0123456789abcdef"
HEX_UPPER = "0123456789ABCDEF"
FF3_DOMAIN_MIN = FF3Cipher.DOMAIN_MIN  # 1,000,000
DECIMAL_MAX_LEN = 56  # FF3-1 maxLen for radix 10
BLOCK_DIGITS = 50  # decimal digits per block when splitting

_CLASS_CODE = {DIGITS: "d", UPPER: "u", LOWER: "l"}


def char_alphabet(ch: str) -> str | None:
    """Alphabet of a payload character, ``None`` for a structure character."""
    if "0" <= ch <= "9":
        return DIGITS
    if "A" <= ch <= "Z":
        return UPPER
    if "a" <= ch <= "z":
        return LOWER
    return None


def class_signature(value: str) -> str:
    """``123-45-6789`` -> ``ddd-dd-dddd`` (structure characters kept literally)."""
    return "".join(_CLASS_CODE.get(char_alphabet(c) or "", c) for c in value)


@lru_cache(maxsize=256)
def _cipher(key_hex: str, alphabet: str) -> FF3Cipher:
    return FF3Cipher.withCustomAlphabet(key_hex, "00000000000000", alphabet)


def _sig_code(alphabets: Sequence[str]) -> str:
    return "|".join(_CLASS_CODE.get(a) or hashlib.sha256(a.encode()).hexdigest()[:8] for a in alphabets)


def _to_int(alphabets: Sequence[str], chars: str) -> int:
    v = 0
    for a, c in zip(alphabets, chars, strict=True):
        v = v * len(a) + a.index(c)
    return v


def _from_int(alphabets: Sequence[str], v: int) -> str:
    out = []
    for a in reversed(alphabets):
        v, r = divmod(v, len(a))
        out.append(a[r])
    return "".join(reversed(out))


class _Block:
    """One keyed bijection of the product domain of ``alphabets``."""

    def __init__(self, subkey: bytes, context: str, alphabets: Sequence[str]):
        self.alphabets = list(alphabets)
        self.n = prod(len(a) for a in alphabets)
        tweak_src = hashlib.sha256(
            subkey + b"|fpe-tweak|" + context.encode() + b"|" + _sig_code(alphabets).encode()
        ).digest()
        self.tweak_hex = tweak_src[:7].hex()  # 56-bit FF3-1 tweak
        self.tweak_bytes = tweak_src
        self.key_hex = subkey.hex()  # AES-256 key for FF3-1
        self.subkey = subkey
        same = len(set(self.alphabets)) == 1
        if self.n < FF3_DOMAIN_MIN:
            self.mode = "small"
        elif same and len(self.alphabets) <= _cipher(self.key_hex, self.alphabets[0]).maxLen:
            self.mode = "ff3"
        elif len(str(self.n - 1)) <= DECIMAL_MAX_LEN:
            self.mode = "ff3-walk"
            self.width = len(str(self.n - 1))
        else:
            self.mode = "split"

    def apply(self, chars: str, decrypt: bool = False) -> str:
        if self.mode == "small":
            p = permutation(self.subkey, self.tweak_bytes, self.n)
            x = _to_int(self.alphabets, chars)
            return _from_int(self.alphabets, p.underange(x) if decrypt else p.derange(x))
        if self.mode == "ff3":
            c = _cipher(self.key_hex, self.alphabets[0])
            return (c.decrypt_with_tweak if decrypt else c.encrypt_with_tweak)(chars, self.tweak_hex)
        c = _cipher(self.key_hex, DIGITS)
        f = c.decrypt_with_tweak if decrypt else c.encrypt_with_tweak
        s = str(_to_int(self.alphabets, chars)).zfill(self.width)
        while True:  # cycle walking inside [0, n)
            s = f(s, self.tweak_hex)
            if int(s) < self.n:
                return _from_int(self.alphabets, int(s))


def _mode(alphabets: Sequence[str]) -> str:
    n = prod(len(a) for a in alphabets)
    return "split" if len(str(n - 1)) > DECIMAL_MAX_LEN else "block"


def _blocks(alphabets: Sequence[str]) -> list[tuple[int, int]]:
    log10n = sum(math.log10(len(a)) for a in alphabets)
    k = max(2, math.ceil(log10n / BLOCK_DIGITS))
    n = len(alphabets)
    bounds, start = [], 0
    for i in range(k):
        end = start + (n - start) // (k - i)
        bounds.append((start, end))
        start = end
    return bounds


def permute_payload(subkey: bytes, context: str, alphabets: Sequence[str], chars: str, decrypt: bool = False) -> str:
    """Keyed bijection of ``chars`` inside the product of ``alphabets`` (same length, same classes)."""
    if len(alphabets) != len(chars) or not chars:
        raise ValueError("payload and alphabets must be non-empty and of equal length")
    if _mode(alphabets) == "block":
        return _Block(subkey, context, alphabets).apply(chars, decrypt)
    out = []
    bounds = _blocks(alphabets)
    for i, (s, e) in enumerate(bounds):
        out.append(_Block(subkey, f"{context}#{i}/{len(bounds)}", alphabets[s:e]).apply(chars[s:e], decrypt))
    return "".join(out)


def _split(value: str) -> tuple[list[int], list[str], str]:
    positions, alphabets, payload = [], [], []
    for i, ch in enumerate(value):
        a = char_alphabet(ch)
        if a is None:
            if ch.isalnum():
                raise AnonymizationError(
                    "E406",
                    "identifier contains a non-ASCII letter or digit",
                    hint="identifiers are encrypted over ASCII digits and letters; "
                    "label the span OTHER or fix the recognizer",
                )
            continue
        positions.append(i)
        alphabets.append(a)
        payload.append(ch)
    if not payload:
        raise AnonymizationError(
            "E407",
            "identifier span has no letters or digits",
            hint="an ID span must contain the identifier characters (see docs/architecture.md)",
        )
    return positions, alphabets, "".join(payload)


def encrypt_identifier(
    keyring: KeyRing, value: str, domain: str = "id", context: str = "id", decrypt: bool = False
) -> str:
    """Format-preserving surrogate of ``value``: same length, classes and separators; a bijection."""
    positions, alphabets, payload = _split(value)
    signature = class_signature(value)
    out_payload = permute_payload(keyring.subkey(domain), f"{context}|{signature}", alphabets, payload, decrypt)
    out = list(value)
    for pos, ch in zip(positions, out_payload, strict=True):
        out[pos] = ch
    return "".join(out)


def decrypt_identifier(keyring: KeyRing, value: str, domain: str = "id", context: str = "id") -> str:
    """Inverse of :func:`encrypt_identifier` (key holders only: audits and tests)."""
    return encrypt_identifier(keyring, value, domain, context, decrypt=True)


def anonymize_identifier(keyring: KeyRing, value: str) -> str:
    return encrypt_identifier(keyring, value, "id", "id")
