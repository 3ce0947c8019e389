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
from collections.abc import Sequence
from functools import lru_cache
from math import isqrt
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hashlib import blake2b

    from tide_core.anonymize.keys import KeyRing

TABLE_MAX = 4096
ROUNDS = 12
#: Feistel half-domains (``b``) up to which each round function is tabulated (``ROUNDS * b`` hashes).
ROUND_TABLE_MAX = 1024
#: Feistel domains up to which the whole permutation is tabulated (name lists, 4-digit numbers).
FEISTEL_TABLE_MAX = 1 << 14

_SUBKEYS: weakref.WeakKeyDictionary[KeyRing, dict[str, bytes]] = weakref.WeakKeyDictionary()
#: The key ring looked up last (a weak reference, dropped with the key ring) and its entry in
#: ``_SUBKEYS``: one anonymizer uses one key ring, so most calls skip the weak mapping (whose
#: lookup hashes and compares key rings).
_last: tuple[weakref.ref[KeyRing], dict[str, bytes]] | None = None


def _forget(ref: weakref.ref[KeyRing]) -> None:
    global _last
    last = _last
    if last is not None and last[0] is ref:
        _last = None


def _subkeys_of(keyring: KeyRing) -> dict[str, bytes]:
    """The sub-key cache of ``keyring`` (raises TypeError if it cannot be weakly referenced)."""
    global _last
    last = _last
    if last is not None and last[0]() is keyring:
        return last[1]
    per = _SUBKEYS.get(keyring)
    if per is None:
        per = _SUBKEYS[keyring] = {}
    _last = (weakref.ref(keyring, _forget), per)
    return per


def cached_subkey(keyring: KeyRing, domain: str) -> bytes:
    """``keyring.subkey(domain)``, derived once per key ring object and domain (speed only).

    Held in a weak mapping, so an entry disappears with its key ring; the sub-key never leaves
    memory.  Falls back to deriving it each time if the key ring cannot be weakly referenced.
    """
    try:
        per = _subkeys_of(keyring)
    except TypeError:
        return keyring.subkey(domain)
    sk = per.get(domain)
    if sk is None:
        sk = per[domain] = keyring.subkey(domain)
    return sk


def _prf(key: bytes, tweak: bytes, *ints: int) -> int:
    h = _prf_state(key, tweak)
    for i in ints:
        h.update(i.to_bytes(16, "big"))
    return int.from_bytes(h.digest(), "big")


def _prf_state(key: bytes, tweak: bytes) -> blake2b:
    """The PRF's keyed BLAKE2b after the length-prefixed tweak (:func:`_prf` continues with the integers)."""
    h = hashlib.blake2b(key=key[:64], digest_size=8, person=b"tide-sd1")
    h.update(len(tweak).to_bytes(2, "big"))
    h.update(tweak)
    return h


@lru_cache(maxsize=4096)
def _table(key: bytes, tweak: bytes, n: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        j = _prf(key, tweak, 0xF15E, i) % (i + 1)  # 64-bit draw: bias < 2^-52
        perm[i], perm[j] = perm[j], perm[i]
    return tuple(perm), _inverted(perm)


def _inverted(perm: Sequence[int]) -> tuple[int, ...]:
    inv = [0] * len(perm)
    for x, y in enumerate(perm):
        inv[y] = x
    return tuple(inv)


class KeyedPermutation:
    """A keyed bijection of ``range(n)``; a pure function of (key, tweak, n).

    Feistel domains keep only key-derived data between calls, never a value: the keyed hash state
    of each round and, with ``tabulate`` (the long-lived permutations of :func:`permutation`), each
    round function tabulated over all of ``[0, b)`` when ``b <= ROUND_TABLE_MAX`` and the whole
    permutation (both directions) when ``n <= FEISTEL_TABLE_MAX``; each is built in full on first
    use, the same whatever values are permuted.
    """

    __slots__ = ("key", "tweak", "n", "_a", "_b", "_tables", "_states", "_rows", "_feistel", "_tabulate")

    def __init__(self, key: bytes, tweak: bytes, n: int, tabulate: bool = False):
        if n < 1:
            raise ValueError("domain size must be >= 1")
        self.key, self.tweak, self.n = bytes(key), bytes(tweak), int(n)
        self._tabulate = tabulate
        self._tables = _table(self.key, self.tweak, self.n) if self.n <= TABLE_MAX else None
        a = isqrt(self.n)
        self._a, self._b = a, -(-self.n // a)
        self._states: tuple[blake2b, ...] | None = None
        self._rows: tuple[tuple[int, ...], ...] | None = None
        self._feistel: tuple[tuple[int, ...], tuple[int, ...]] | None = None

    # -- Feistel over [0, a*b) ---------------------------------------------------------------
    def _round(self, r: int, right: int) -> int:
        """``_prf(key, tweak, r, right)`` from the round's saved hash state."""
        states = self._states
        if states is None:
            base = _prf_state(self.key, self.tweak)
            states = tuple(_absorbed(base, r) for r in range(ROUNDS))
            self._states = states
        h = states[r].copy()
        h.update(right.to_bytes(16, "big"))
        return int.from_bytes(h.digest(), "big")

    def _round_rows(self) -> tuple[tuple[int, ...], ...] | None:
        """Per round, the round function mod ``a`` at every ``right`` in ``[0, b)``; None for a large ``b``."""
        if self._rows is None and self._tabulate and self._b <= ROUND_TABLE_MAX:
            a = self._a
            self._rows = tuple(tuple(self._round(r, right) % a for right in range(self._b)) for r in range(ROUNDS))
        return self._rows

    def _f_enc(self, x: int) -> int:
        a, b = self._a, self._b
        rows = self._round_rows()
        if rows is not None:  # (left + F) mod a == (left + F mod a) mod a
            for row in rows:
                left, right = divmod(x, b)
                x = a * right + (left + row[right]) % a
            return x
        for r in range(ROUNDS):
            left, right = divmod(x, b)
            w = (left + self._round(r, right)) % a
            x = a * right + w
        return x

    def _f_dec(self, x: int) -> int:
        a, b = self._a, self._b
        rows = self._round_rows()
        if rows is not None:
            for row in reversed(rows):
                right, w = divmod(x, a)
                x = b * ((w - row[right]) % a) + right
            return x
        for r in range(ROUNDS - 1, -1, -1):
            right, w = divmod(x, a)
            left = (w - self._round(r, right)) % a
            x = b * left + right
        return x

    def _feistel_tables(self) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """(forward, inverse) over all of ``range(n)`` for ``n <= FEISTEL_TABLE_MAX``, else None."""
        if self._feistel is None and self._tabulate and self.n <= FEISTEL_TABLE_MAX:
            n = self.n
            one_pass = [self._f_enc(z) for z in range(self._a * self._b)]
            fwd = []
            for x in range(n):
                y = one_pass[x]
                while y >= n:  # cycle walking, as forward() does
                    y = one_pass[y]
                fwd.append(y)
            self._feistel = (tuple(fwd), _inverted(fwd))
        return self._feistel

    def forward(self, x: int) -> int:
        """The keyed image of ``x`` in ``range(n)`` (cycle walking keeps a Feistel domain a bijection)."""
        self._check(x)
        tables = self._tables or self._feistel_tables()
        if tables is not None:
            return tables[0][x]
        y = self._f_enc(x)
        while y >= self.n:  # cycle walking: stays a bijection of [0, n)
            y = self._f_enc(y)
        return y

    def inverse(self, y: int) -> int:
        """The ``x`` with ``forward(x) == y``."""
        self._check(y)
        tables = self._tables or self._feistel_tables()
        if tables is not None:
            return tables[1][y]
        x = self._f_dec(y)
        while x >= self.n:
            x = self._f_dec(x)
        return x

    def derange(self, x: int) -> int:
        """Fixed-point-free keyed bijection (a single n-cycle); identity only when n == 1."""
        tables = self._tables or self._feistel_tables()
        if tables is not None:  # inverse(forward(x) + 1), inlined
            self._check(x)
            fwd, inv = tables
            return inv[(fwd[x] + 1) % self.n]
        return self.inverse((self.forward(x) + 1) % self.n)

    def underange(self, y: int) -> int:
        """The inverse of :meth:`derange`: the value whose derangement is ``y``."""
        return self.inverse((self.forward(y) - 1) % self.n)

    def _check(self, x: int) -> None:
        if not 0 <= x < self.n:
            raise ValueError("value outside the permutation domain")


def _absorbed(state: blake2b, r: int) -> blake2b:
    h = state.copy()
    h.update(r.to_bytes(16, "big"))
    return h


@lru_cache(maxsize=8192)
def permutation(key: bytes, tweak: bytes, n: int) -> KeyedPermutation:
    """Cached constructor (the table of a small domain is built once per process)."""
    return KeyedPermutation(key, tweak, n, tabulate=True)
