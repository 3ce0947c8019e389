"""Keyed bijections of small integer domains ``range(n)`` (no tables stored, nothing padded).

FF3-1 refuses domains under 10^6 values.  The paper padded short identifiers to six digits and
truncated the ciphertext, which is many-to-one (34.8–36.6 % collisions for 3- to 5-digit IDs).
Here a short identifier is instead permuted inside its *exact* domain, so the mapping is a
bijection by construction:

* ``n <= TABLE_MAX``: a keyed Fisher–Yates shuffle of all ``n`` values (a uniformly random
  permutation), computed on first use and cached in memory for the process;
* larger ``n``: a keyed FE1-style Feistel network over ``[0, a*b)`` (``a*b >= n``, ``a ≈ b``)
  with cycle walking back into ``[0, n)`` (Black–Rogaway), 12 rounds of keyed BLAKE2b.

:meth:`KeyedPermutation.derange` is ``π⁻¹(π(x) + 1 mod n)``: still a keyed bijection, but a single
``n``-cycle, so no value is ever its own surrogate (a plain random permutation of 10 digits leaves
about one digit fixed).  Both directions are exposed; the inverse exists for key holders only.
"""

from __future__ import annotations

import hashlib
import weakref
from functools import lru_cache
from math import isqrt
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tide_core.anonymize.keys import KeyRing

TABLE_MAX = 4096
ROUNDS = 12
MEMO_MAX = 1 << 16  # derange() results remembered per permutation (Feistel domains only)

_SUBKEYS: weakref.WeakKeyDictionary[KeyRing, dict[str, bytes]] = weakref.WeakKeyDictionary()


def cached_subkey(keyring: KeyRing, domain: str) -> bytes:
    """``keyring.subkey(domain)``, derived once per key ring object and domain (speed only).

    Held in a weak mapping, so an entry disappears with its key ring; the sub-key never leaves
    memory.  Falls back to deriving it each time if the key ring cannot be weakly referenced.
    """
    try:
        per = _SUBKEYS.get(keyring)
        if per is None:
            per = _SUBKEYS[keyring] = {}
    except TypeError:
        return keyring.subkey(domain)
    sk = per.get(domain)
    if sk is None:
        sk = per[domain] = keyring.subkey(domain)
    return sk


def _prf(key: bytes, tweak: bytes, *ints: int) -> int:
    h = hashlib.blake2b(key=key[:64], digest_size=8, person=b"tide-sd1")
    h.update(len(tweak).to_bytes(2, "big"))
    h.update(tweak)
    for i in ints:
        h.update(i.to_bytes(16, "big"))
    return int.from_bytes(h.digest(), "big")


@lru_cache(maxsize=4096)
def _table(key: bytes, tweak: bytes, n: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        j = _prf(key, tweak, 0xF15E, i) % (i + 1)  # 64-bit draw: bias < 2^-52
        perm[i], perm[j] = perm[j], perm[i]
    inv = [0] * n
    for x, y in enumerate(perm):
        inv[y] = x
    return tuple(perm), tuple(inv)


class KeyedPermutation:
    """A keyed bijection of ``range(n)``; a pure function of (key, tweak, n)."""

    __slots__ = ("key", "tweak", "n", "_a", "_b", "_tables", "_memo")

    def __init__(self, key: bytes, tweak: bytes, n: int):
        if n < 1:
            raise ValueError("domain size must be >= 1")
        self.key, self.tweak, self.n = bytes(key), bytes(tweak), int(n)
        self._tables = _table(self.key, self.tweak, self.n) if self.n <= TABLE_MAX else None
        a = isqrt(self.n)
        self._a, self._b = a, -(-self.n // a)
        self._memo: dict[int, int] = {}

    # -- Feistel over [0, a*b) ---------------------------------------------------------------
    def _f_enc(self, x: int) -> int:
        a, b = self._a, self._b
        for r in range(ROUNDS):
            left, right = divmod(x, b)
            w = (left + _prf(self.key, self.tweak, r, right)) % a
            x = a * right + w
        return x

    def _f_dec(self, x: int) -> int:
        a, b = self._a, self._b
        for r in range(ROUNDS - 1, -1, -1):
            right, w = divmod(x, a)
            left = (w - _prf(self.key, self.tweak, r, right)) % a
            x = b * left + right
        return x

    def forward(self, x: int) -> int:
        self._check(x)
        if self._tables is not None:
            return self._tables[0][x]
        y = self._f_enc(x)
        while y >= self.n:  # cycle walking: stays a bijection of [0, n)
            y = self._f_enc(y)
        return y

    def inverse(self, y: int) -> int:
        self._check(y)
        if self._tables is not None:
            return self._tables[1][y]
        x = self._f_dec(y)
        while x >= self.n:
            x = self._f_dec(x)
        return x

    def derange(self, x: int) -> int:
        """Fixed-point-free keyed bijection (a single n-cycle); identity only when n == 1."""
        if self._tables is not None:
            return self.inverse((self.forward(x) + 1) % self.n)
        y = self._memo.get(x)  # Feistel domains: 24+ keyed rounds per call, so remember results
        if y is None:
            y = self.inverse((self.forward(x) + 1) % self.n)
            if len(self._memo) >= MEMO_MAX:
                self._memo.clear()
            self._memo[x] = y
        return y

    def underange(self, y: int) -> int:
        return self.inverse((self.forward(y) - 1) % self.n)

    def _check(self, x: int) -> None:
        if not 0 <= x < self.n:
            raise ValueError("value outside the permutation domain")


@lru_cache(maxsize=8192)
def permutation(key: bytes, tweak: bytes, n: int) -> KeyedPermutation:
    """Cached constructor (the table of a small domain is built once per process)."""
    return KeyedPermutation(key, tweak, n)
