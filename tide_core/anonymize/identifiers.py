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

Identifiers (``encrypt_identifier(..., unicode=True)``, the ``ID`` label) may also hold letters and
digits outside ASCII; each keeps its class (:func:`unicode_alphabet`):

* a decimal digit of any script (Arabic-Indic ``٠-٩``, Devanagari ``०-९``, fullwidth ``０-９`` ...)
  maps inside its own run of ten digits (``unicodedata.decimal``);
* any other letter or number of the Basic Multilingual Plane maps inside the alphabet of the
  characters that share its general category (``Lu``, ``Ll``, ``Lo`` ...), the first word of its
  Unicode name (``LATIN``, ``GREEK``, ``CYRILLIC``, ``ARABIC``, ``CJK`` ...) and whether it is a
  compatibility character (fullwidth, superscript, presentation forms: ``NFKC`` differs), among
  the characters Unicode 3.2 assigned (``unicodedata.ucd_3_2_0``: later versions add no letter to
  an alphabet) that are their own NFC form: ``é`` stays a lower-case Latin letter, ``Ж`` an
  upper-case Cyrillic one.  Categories are the runtime's (a later Unicode version that moved a
  letter to another category would move it to another alphabet).

These positions join the payload like the ASCII ones (one bijection of the product domain; FF3-1
with cycle walking above 10^6, an exact fixed-point-free permutation below).  A letter outside
those alphabets (assigned after Unicode 3.2, outside the BMP, or alone in its alphabet) raises
``E406``: the value cannot be encrypted and the note is quarantined.
"""

from __future__ import annotations

import hashlib
import math
import unicodedata
from collections.abc import Callable, Sequence
from functools import lru_cache
from math import prod

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from ff3 import FF3Cipher

from tide_core.anonymize.keys import KeyRing
from tide_core.anonymize.small_domain import cached_subkey, permutation
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
_UCD = unicodedata.ucd_3_2_0  # letter alphabets: a fixed Unicode version, whatever the runtime's
BMP_END = 0x10000


def char_alphabet(ch: str) -> str | None:
    """Alphabet of a payload character, ``None`` for a structure character."""
    if "0" <= ch <= "9":
        return DIGITS
    if "A" <= ch <= "Z":
        return UPPER
    if "a" <= ch <= "z":
        return LOWER
    return None


def _class_key(c: str, cat: str, name: str) -> tuple[str, str, bool]:
    """(general category, script word of the name, compatibility character?) of a letter.

    The script word is the name's first word (``HANGUL`` with its second: syllables and jamo apart);
    compatibility characters (``NFKC`` differs: fullwidth, superscript, presentation forms) form
    their own classes.
    """
    words = name.replace("-", " ").split(" ")
    word = " ".join(words[:2]) if words[0] == "HANGUL" else words[0]
    return cat, word, unicodedata.normalize("NFKC", c) != c


@lru_cache(maxsize=1)
def _letter_alphabets() -> dict[tuple[str, str, bool], str]:
    """:func:`_class_key` -> the non-ASCII BMP letters and numbers of that class, in code point order.

    Letters and numbers are ``str.isalnum`` characters (not decimal digits) that are their own NFC
    form.  The set of characters is Unicode 3.2's (a letter added later never joins an alphabet); the general
    category is the runtime's, so every output character has the input's category as the runtime
    reads it.  Built once (about 0.1 s), on the first non-ASCII letter.
    """
    groups: dict[tuple[str, str, bool], list[str]] = {}
    for cp in range(0x80, BMP_END):
        c = chr(cp)
        cat = unicodedata.category(c)
        if (
            cat[0] not in "LN"
            or cat == "Nd"
            or _UCD.category(c) == "Cn"
            or not c.isalnum()
            or unicodedata.normalize("NFC", c) != c
        ):
            continue
        name = _UCD.name(c, "")
        if name:
            groups.setdefault(_class_key(c, cat, name), []).append(c)
    return {k: "".join(v) for k, v in groups.items() if len(v) >= 2}


@lru_cache(maxsize=4096)
def _unicode_class(ch: str) -> tuple[str, str] | None:
    """(alphabet, class code) of a non-ASCII letter or digit, ``None`` when it has none."""
    if unicodedata.category(ch) == "Nd":
        d = unicodedata.decimal(ch, None)
        if d is not None:
            zero = ord(ch) - d
            run = "".join(chr(zero + i) for i in range(10))
            if all(unicodedata.decimal(c, None) == i for i, c in enumerate(run)):
                return run, f"<Nd{zero:x}>"
        return None
    if ord(ch) >= BMP_END:
        return None
    cat, name = unicodedata.category(ch), _UCD.name(ch, "")
    if not name:
        return None
    key = _class_key(ch, cat, name)
    alphabet = _letter_alphabets().get(key)
    if alphabet is None or ch not in alphabet:
        return None
    return alphabet, f"<{cat}:{key[1]}{':compat' if key[2] else ''}>"


def unicode_alphabet(ch: str) -> str | None:
    """Keyed alphabet of a letter or digit of any script (ASCII ones: :func:`char_alphabet`).

    ``None`` for a structure character or a letter without an alphabet.
    """
    a = _ALPHABET_OF.get(ch)
    if a is not None:
        return a
    if not ch.isalnum():
        return None
    u = _unicode_class(ch)
    return None if u is None else u[0]


def class_signature(value: str) -> str:
    """``123-45-6789`` -> ``ddd-dd-dddd`` (structure characters kept literally)."""
    return "".join(_CLASS_CODE.get(char_alphabet(c) or "", c) for c in value)


@lru_cache(maxsize=256)
def _cipher(key_hex: str, alphabet: str) -> FF3Cipher:
    return FF3Cipher.withCustomAlphabet(key_hex, "00000000000000", alphabet)


class _FastFF3:
    """FF3-1 encryption exactly as ``ff3``'s ``encrypt_with_tweak``, with integer numerals.

    Same AES key, same eight Feistel rounds, same numeral order; the numerals are kept as integers
    between rounds instead of being re-encoded character by character.  Anything outside the usual case (a length out of
    bounds, a 64-bit tweak) goes to the library itself.  ``tests/test_anonymize_*`` and
    ``tests/recognizers/test_regex_fast_path.py`` compare it with the library.

    The round function is one AES-ECB block under the library's key (the FF3 key reversed);
    ``cryptography``'s ECB encryptor computes that block about 10x faster per call than the
    library's pycryptodome object (ECB has no state between blocks, so the bytes are the same);
    without ``key_hex`` the library's own AES object is used.
    """

    def __init__(self, cipher: FF3Cipher, alphabet: str, key_hex: str | None = None):
        self.lib = cipher
        self.alphabet = alphabet
        self.radix = len(alphabet)
        self.index = {c: i for i, c in enumerate(alphabet)}
        self.decimal = alphabet == DIGITS
        self.aes: Callable[[bytes], bytes] = _ecb_block_encrypt(key_hex) if key_hex else cipher.aesCipher.encrypt
        self.min_len, self.max_len = cipher.minLen, cipher.maxLen
        self.charset = frozenset(alphabet)
        self._tweaks: dict[str, tuple[tuple[bytes, bytes], ...]] = {}
        # plaintext length -> (radix^u, radix^v) of its two halves, for every length the cipher takes
        self._mods = {
            n: (self.radix ** ((n + 1) // 2), self.radix ** (n // 2)) for n in range(self.min_len, self.max_len + 1)
        }

    def _round_prefixes(self, tweak_hex: str) -> tuple[tuple[bytes, bytes], ...]:
        """Per pair of rounds (even, odd): the round's 4 tweak bytes, reversed.

        The AES input is ``REV(W xor i || NUM(B))`` = ``NUM(B) little-endian || REV(W xor i)``.
        """
        pre = self._tweaks.get(tweak_hex)
        if pre is None:
            t = bytes.fromhex(tweak_hex)
            t64 = bytes((t[0], t[1], t[2], t[3] & 0xF0, t[4], t[5], t[6], (t[3] & 0x0F) << 4))
            tl, tr = t64[:4], t64[4:]
            rounds = [(w[:3] + bytes((w[3] ^ i,)))[::-1] for i, w in ((i, tr if i % 2 == 0 else tl) for i in range(8))]
            pre = tuple(zip(rounds[0::2], rounds[1::2], strict=True))
            if len(self._tweaks) > 4096:
                self._tweaks.clear()
            self._tweaks[tweak_hex] = pre
        return pre

    def _decode(self, s: str) -> int:  # ff3's decode_int_r: the last character is the most significant
        if self.decimal:
            return int(s[::-1])
        num, r, idx = 0, self.radix, self.index
        for ch in reversed(s):
            num = num * r + idx[ch]
        return num

    def _encode(self, n: int, length: int) -> str:  # ff3's encode_int_r, padded to ``length``
        if self.decimal:
            return str(n).zfill(length)[::-1]
        out, r, a = [], self.radix, self.alphabet
        for _ in range(length):
            n, d = divmod(n, r)
            out.append(a[d])
        return "".join(out)

    def encrypt(self, plaintext: str, tweak_hex: str) -> str:
        n = len(plaintext)
        if n < self.min_len or n > self.max_len or len(tweak_hex) != 14 or not self.charset.issuperset(plaintext):
            out: str = self.lib.encrypt_with_tweak(plaintext, tweak_hex)
            return out
        u = (n + 1) // 2
        v = n - u
        mod_u, mod_v = self._mods[n]
        a, b = self._decode(plaintext[:u]), self._decode(plaintext[u:])
        aes, num = self.aes, int.from_bytes
        # eight Feistel rounds, two at a time: even rounds add into A (mod radix^u), odd into B
        for even, odd in self._tweaks.get(tweak_hex) or self._round_prefixes(tweak_hex):
            a = (a + num(aes(b.to_bytes(12, "little") + even), "little")) % mod_u
            b = (b + num(aes(a.to_bytes(12, "little") + odd), "little")) % mod_v
        return self._encode(a, u) + self._encode(b, v)


def _ecb_block_encrypt(key_hex: str) -> Callable[[bytes], bytes]:
    """AES-ECB of one 16-byte block under ``ff3``'s key (the FF3 key's bytes reversed)."""
    update: Callable[[bytes], bytes] = (
        Cipher(algorithms.AES(bytes.fromhex(key_hex)[::-1]), modes.ECB()).encryptor().update
    )
    return update


@lru_cache(maxsize=256)
def _fast_cipher(key_hex: str, alphabet: str) -> _FastFF3:
    return _FastFF3(_cipher(key_hex, alphabet), alphabet, key_hex)


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
        self.decimal = all(a == DIGITS for a in self.alphabets)
        same = len(set(self.alphabets)) == 1
        if self.n < FF3_DOMAIN_MIN:
            self.mode = "small"
        elif (
            same
            and self.alphabets[0].isascii()
            and len(self.alphabets) <= _cipher(self.key_hex, self.alphabets[0]).maxLen
        ):
            self.mode = "ff3"
        elif len(str(self.n - 1)) <= DECIMAL_MAX_LEN:
            self.mode = "ff3-walk"
            self.width = len(str(self.n - 1))
        else:
            self.mode = "split"

    def apply(self, chars: str, decrypt: bool = False) -> str:
        if self.mode == "small":
            p = permutation(self.subkey, self.tweak_bytes, self.n)
            if self.decimal and chars.isascii() and chars.isdigit():  # _to_int / _from_int in base 10
                y = p.underange(int(chars)) if decrypt else p.derange(int(chars))
                return str(y).zfill(len(chars))
            x = _to_int(self.alphabets, chars)
            return _from_int(self.alphabets, p.underange(x) if decrypt else p.derange(x))
        if self.mode == "ff3":
            if not decrypt:
                return _fast_cipher(self.key_hex, self.alphabets[0]).encrypt(chars, self.tweak_hex)
            plain: str = _cipher(self.key_hex, self.alphabets[0]).decrypt_with_tweak(chars, self.tweak_hex)
            return plain
        f = (
            _fast_cipher(self.key_hex, DIGITS).encrypt
            if not decrypt
            else _cipher(self.key_hex, DIGITS).decrypt_with_tweak
        )
        s = str(_to_int(self.alphabets, chars)).zfill(self.width)
        while True:  # cycle walking inside [0, n)
            s = f(s, self.tweak_hex)
            if int(s) < self.n:
                return _from_int(self.alphabets, int(s))


@lru_cache(maxsize=4096)
def _block(subkey: bytes, context: str, alphabets: tuple[str, ...]) -> _Block:
    """Blocks are pure functions of their arguments: derive the tweak and mode once per shape."""
    return _Block(subkey, context, alphabets)


@lru_cache(maxsize=4096)
def _mode(alphabets: tuple[str, ...]) -> str:
    n = prod(len(a) for a in alphabets)
    return "split" if len(str(n - 1)) > DECIMAL_MAX_LEN else "block"


@lru_cache(maxsize=4096)
def _blocks(alphabets: tuple[str, ...]) -> tuple[tuple[int, int], ...]:
    log10n = sum(math.log10(len(a)) for a in alphabets)
    k = max(2, math.ceil(log10n / BLOCK_DIGITS))
    n = len(alphabets)
    bounds, start = [], 0
    for i in range(k):
        end = start + (n - start) // (k - i)
        bounds.append((start, end))
        start = end
    return tuple(bounds)


def permute_payload(subkey: bytes, context: str, alphabets: Sequence[str], chars: str, decrypt: bool = False) -> str:
    """Keyed bijection of ``chars`` inside the product of ``alphabets`` (same length, same classes)."""
    if len(alphabets) != len(chars) or not chars:
        raise ValueError("payload and alphabets must be non-empty and of equal length")
    alphabets = tuple(alphabets)
    if _mode(alphabets) == "block":
        return _block(subkey, context, alphabets).apply(chars, decrypt)
    out = []
    bounds = _blocks(alphabets)
    for i, (s, e) in enumerate(bounds):
        out.append(_block(subkey, f"{context}#{i}/{len(bounds)}", alphabets[s:e]).apply(chars[s:e], decrypt))
    return "".join(out)


_ALPHABET_OF = {c: a for a in (DIGITS, UPPER, LOWER) for c in a}


def _split_signed(value: str, unicode: bool = False) -> tuple[list[int], list[str], str, str]:
    """Payload positions, their alphabets, the payload and :func:`class_signature` of ``value``.

    (A non-ASCII class is written ``<Nd660>``, ``<Ll:LATIN>`` ...).  Without ``unicode``, any
    non-ASCII letter or digit raises ``E406``.
    """
    positions, alphabets, payload, signature = [], [], [], []
    for i, ch in enumerate(value):
        a = _ALPHABET_OF.get(ch)  # char_alphabet(ch)
        if a is None:
            if ch.isalnum():
                u = _unicode_class(ch) if unicode else None
                if u is None:
                    raise AnonymizationError(
                        "E406",
                        "identifier contains a letter or digit without a keyed alphabet",
                        hint="identifiers are encrypted over the digits of any script and the letters "
                        "of the Unicode 3.2 basic plane; label the span OTHER or fix the recognizer",
                    )
                positions.append(i)
                alphabets.append(u[0])
                payload.append(ch)
                signature.append(u[1])
                continue
            signature.append(ch)
            continue
        positions.append(i)
        alphabets.append(a)
        payload.append(ch)
        signature.append(_CLASS_CODE[a])
    if not payload:
        raise AnonymizationError(
            "E407",
            "identifier span has no letters or digits",
            hint="an ID span must contain the identifier characters (see docs/architecture.md)",
        )
    return positions, alphabets, "".join(payload), "".join(signature)


def encrypt_identifier(
    keyring: KeyRing,
    value: str,
    domain: str = "id",
    context: str = "id",
    decrypt: bool = False,
    unicode: bool = False,
) -> str:
    """Format-preserving surrogate of ``value``: same length, classes and separators; a bijection.

    With ``unicode``, letters and digits of other scripts are payload too (:func:`unicode_alphabet`);
    values without them encrypt exactly as without it.
    """
    positions, alphabets, payload, signature = _split_signed(value, unicode)
    out_payload = permute_payload(cached_subkey(keyring, domain), f"{context}|{signature}", alphabets, payload, decrypt)
    out = list(value)
    for pos, ch in zip(positions, out_payload, strict=True):
        out[pos] = ch
    return "".join(out)


def decrypt_identifier(
    keyring: KeyRing, value: str, domain: str = "id", context: str = "id", unicode: bool = False
) -> str:
    """Inverse of :func:`encrypt_identifier` (key holders only: audits and tests)."""
    return encrypt_identifier(keyring, value, domain, context, decrypt=True, unicode=unicode)


def anonymize_identifier(keyring: KeyRing, value: str) -> str:
    """The ``ID`` surrogate: letters and digits of any script keep their class."""
    return encrypt_identifier(keyring, value, "id", "id", unicode=True)
