"""Keyed bijections of small domains (tide_core/anonymize/small_domain.py), fast enough for mutation runs.

Both constructions are checked exhaustively on small domains: the keyed table (n <= TABLE_MAX) and
the Feistel network with cycle walking (n > TABLE_MAX): a bijection of exactly range(n), inverse
and derangement consistent, a derangement without fixed points that is a single n-cycle, a pure
function of (key, tweak, n), and different for another key or tweak.
"""

from __future__ import annotations

import hashlib

import pytest

import tide_core.anonymize.small_domain as sd
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.anonymize.small_domain import (
    ROUNDS,
    TABLE_MAX,
    KeyedPermutation,
    cached_subkey,
    permutation,
)

KEY = hashlib.sha256(b"small-domain-a").digest()
KEY_B = hashlib.sha256(b"small-domain-b").digest()


def _single_cycle(p: KeyedPermutation) -> bool:
    x, seen = 0, set()
    while x not in seen:
        seen.add(x)
        x = p.derange(x)
    return len(seen) == p.n and x == 0


@pytest.mark.parametrize("n", [1, 2, 3, 10, 97, TABLE_MAX, TABLE_MAX + 1, TABLE_MAX + 97])
def test_forward_inverse_derange_on_the_exact_domain(n):
    p = KeyedPermutation(KEY, b"t", n)
    assert (p._tables is not None) == (n <= TABLE_MAX)
    fwd = [p.forward(x) for x in range(n)]
    assert sorted(fwd) == list(range(n))  # a bijection of exactly range(n)
    assert [p.inverse(y) for y in fwd] == list(range(n))
    der = [p.derange(x) for x in range(n)]
    assert sorted(der) == list(range(n))
    assert [p.underange(y) for y in der] == list(range(n))
    for x in range(n):  # the documented formula
        assert der[x] == p.inverse((fwd[x] + 1) % n)
    if n > 1:
        assert all(d != x for x, d in enumerate(der))  # never its own surrogate
        assert fwd != list(range(n)) or n <= 2
        assert _single_cycle(p)
    else:
        assert der == [0]


@pytest.mark.parametrize("n", [50, TABLE_MAX + 1])
def test_pure_function_of_key_tweak_and_n(n):
    a = [KeyedPermutation(KEY, b"t", n).forward(x) for x in range(n)]
    assert a == [KeyedPermutation(bytearray(KEY), bytearray(b"t"), n).forward(x) for x in range(n)]
    assert a != [KeyedPermutation(KEY_B, b"t", n).forward(x) for x in range(n)]
    assert a != [KeyedPermutation(KEY, b"u", n).forward(x) for x in range(n)]
    assert a[: n - 1] != [KeyedPermutation(KEY, b"t", n - 1).forward(x) for x in range(n - 1)]


def test_feistel_is_the_documented_construction():
    n = TABLE_MAX + 9
    p = KeyedPermutation(KEY, b"t", n)
    a = int(n**0.5)
    assert (p._a, p._b) == (a, -(-n // a)) and p._a * p._b >= n
    # one Feistel pass by hand: ROUNDS keyed rounds over [0, a*b)
    x = 123
    for r in range(ROUNDS):
        left, right = divmod(x, p._b)
        x = p._a * right + (left + sd._prf(KEY, b"t", r, right)) % p._a
    assert p._f_enc(123) == x and p._f_dec(x) == 123


def test_prf_is_keyed_blake2b_over_the_length_prefixed_tweak_and_16_byte_integers():
    h = hashlib.blake2b(key=KEY, digest_size=8, person=b"tide-sd1")
    h.update((3).to_bytes(2, "big") + b"twk" + (7).to_bytes(16, "big") + (9).to_bytes(16, "big"))
    assert sd._prf(KEY, b"twk", 7, 9) == int.from_bytes(h.digest(), "big")
    long_key = KEY * 3  # 96 bytes: BLAKE2b keys are at most 64
    assert sd._prf(long_key, b"twk", 7) == sd._prf(long_key[:64], b"twk", 7)


def test_table_is_a_keyed_fisher_yates_shuffle():
    n = 40
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        j = sd._prf(KEY, b"t", 0xF15E, i) % (i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    fwd, inv = sd._table(KEY, b"t", n)
    assert list(fwd) == perm
    assert all(inv[y] == x for x, y in enumerate(fwd))


def test_domain_errors():
    for n in (0, -1):
        with pytest.raises(ValueError):
            KeyedPermutation(KEY, b"t", n)
    assert KeyedPermutation(KEY, b"t", 1).n == 1
    for n in (10, TABLE_MAX + 3):
        p = KeyedPermutation(KEY, b"t", n)
        for bad in (-1, n, n + 5):
            for f in (p.forward, p.inverse):
                with pytest.raises(ValueError):
                    f(bad)
        assert p.forward(0) in range(n) and p.forward(n - 1) in range(n)


@pytest.mark.parametrize("n", [TABLE_MAX + 50, sd.FEISTEL_TABLE_MAX + 7, 10**6 + 3])
def test_a_permutation_keeps_key_derived_state_only(n):
    """Permutations live for the process (``permutation`` is cached), so they must never remember a
    value: after permuting different values, two permutations of one key hold the very same state."""
    a = KeyedPermutation(KEY, b"t", n, tabulate=True)
    b = KeyedPermutation(KEY, b"t", n, tabulate=True)
    fresh = KeyedPermutation(KEY, b"t", n)
    xs, ys = range(0, 40), range(n - 40, n)
    assert [a.derange(x) for x in xs] == [fresh.inverse((fresh.forward(x) + 1) % n) for x in xs]
    assert [b.derange(y) for y in ys] == [fresh.inverse((fresh.forward(y) + 1) % n) for y in ys]
    for slot in KeyedPermutation.__slots__:
        if slot == "_states":  # hash objects: compare what they hash to
            sa, sb = getattr(a, slot), getattr(b, slot)
            assert [h.digest() for h in sa] == [h.digest() for h in sb]
        else:
            assert getattr(a, slot) == getattr(b, slot), slot


def test_permutation_is_cached_per_key_tweak_and_n():
    assert permutation(KEY, b"t", 77) is permutation(KEY, b"t", 77)
    assert permutation(KEY, b"t", 77) is not permutation(KEY, b"t", 78)


def test_cached_subkey_is_the_key_rings_subkey():
    ring = keyring_for_tests("s1", "k1", "sd")
    other = keyring_for_tests("s1", "k2", "sd")
    for domain in ("id", "name"):
        assert cached_subkey(ring, domain) == ring.subkey(domain)
        assert cached_subkey(ring, domain) == ring.subkey(domain)  # from the cache
        assert cached_subkey(other, domain) == other.subkey(domain) != ring.subkey(domain)
    assert cached_subkey(ring, "id") != cached_subkey(ring, "name")
    assert set(sd._SUBKEYS[ring]) == {"id", "name"}

    class NoWeakRef:  # __slots__ without __weakref__: falls back to deriving the sub-key each time
        __slots__ = ("calls",)

        def __init__(self):
            self.calls = 0

        def subkey(self, domain):
            self.calls += 1
            return b"k|" + domain.encode()

    nw = NoWeakRef()
    assert cached_subkey(nw, "id") == b"k|id" and cached_subkey(nw, "id") == b"k|id"
    assert nw.calls == 2


@pytest.mark.parametrize("n", [1, 2, 10, TABLE_MAX])
def test_a_tabulated_small_domain_deranges_with_its_own_table(n):
    """The long-lived (tabulated) permutation of a small domain deranges through its keyed table:
    derange(x) is inverse(forward(x) + 1), never another construction's permutation."""
    p = permutation(KEY, b"small", n)
    q = KeyedPermutation(KEY, b"small", n, tabulate=True)
    for perm in (p, q):
        got = [perm.derange(x) for x in range(n)]
        assert got == [perm.inverse((perm.forward(x) + 1) % n) for x in range(n)]
        assert got == [KeyedPermutation(KEY, b"small", n).derange(x) for x in range(n)]


def test_sub_keys_of_a_freed_key_ring_are_not_kept():
    """The last key ring's sub-keys are kept for speed only while that key ring lives: once it is
    freed, nothing in the module still holds them."""
    import gc

    kr = keyring_for_tests("study-free", "k1", "free-me")
    sub = cached_subkey(kr, "name")
    assert sd._last is not None and sd._last[1]["name"] == sub
    del kr
    gc.collect()
    assert sd._last is None
    assert not any(sub in per.values() for per in sd._SUBKEYS.values())
