"""Identifiers: exact-domain bijections, FF3-1 format preservation, tweaks, rotation, errors."""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tide_core.anonymize.identifiers import (
    anonymize_identifier,
    class_signature,
    decrypt_identifier,
    encrypt_identifier,
)
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.anonymize.small_domain import TABLE_MAX, KeyedPermutation
from tide_core.errors import AnonymizationError

KA = keyring_for_tests("study1", "k1", "ids-a")
KB = keyring_for_tests("study1", "k2", "ids-b")


@pytest.mark.parametrize("digits", [1, 2, 3, 4, 5])
def test_short_numeric_ids_are_a_fixed_point_free_bijection_of_their_exact_domain(digits):
    values = [str(i).zfill(digits) for i in range(10**digits)]
    out = [anonymize_identifier(KA, v) for v in values]
    assert sorted(out) == values  # a permutation of the same domain: 0 collisions
    assert all(o != v for o, v in zip(out, values, strict=True))  # never its own surrogate
    assert all(len(o) == digits and o.isdigit() for o in out)


@pytest.mark.parametrize("shape", ["uu", "ud", "lll", "uuu", "du-d"])
def test_short_alphanumeric_shapes_are_bijections(shape):
    import itertools

    alph = {"u": string.ascii_uppercase, "l": string.ascii_lowercase, "d": string.digits}
    pools = [alph.get(c, c) for c in shape]
    values = ["".join(p) for p in itertools.product(*pools)]
    out = [anonymize_identifier(KA, v) for v in values]
    assert len(set(out)) == len(values)
    assert all(class_signature(o) == class_signature(v) for o, v in zip(out, values, strict=True))


def test_ssn_shape_and_separators_are_kept():
    out = anonymize_identifier(KA, "123-45-6789")
    assert class_signature(out) == "ddd-dd-dddd" and out != "123-45-6789"
    out = anonymize_identifier(KA, "AB-12-3456 x")
    assert class_signature(out) == "uu-dd-dddd l"


def test_class_signature_is_part_of_the_tweak():
    a = anonymize_identifier(KA, "123-45-6789").replace("-", "")
    b = anonymize_identifier(KA, "123456789")
    assert a != b


ID_CHARS = string.digits + string.ascii_letters + "-/. "


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=ID_CHARS, min_size=1, max_size=80).filter(lambda s: any(c.isalnum() for c in s)))
def test_any_ascii_identifier_round_trips_and_keeps_its_shape(value):
    out = encrypt_identifier(KA, value)
    assert class_signature(out) == class_signature(value)
    assert decrypt_identifier(KA, out) == value
    assert encrypt_identifier(KA, value) == out  # deterministic


def test_long_ids_beyond_ff3_max_length_use_invertible_blocks():
    rng = random.Random(3)
    for n in (57, 100, 200):
        v = "".join(rng.choice(string.digits) for _ in range(n))
        out = anonymize_identifier(KA, v)
        assert len(out) == n and out.isdigit() and out != v
        assert decrypt_identifier(KA, out) == v


def test_large_sample_of_8_digit_mrns_is_collision_free_and_remapped_by_a_new_key():
    rng = random.Random(11)
    values = list({f"{rng.randrange(10**8):08d}" for _ in range(5000)})
    a = [anonymize_identifier(KA, v) for v in values]
    b = [anonymize_identifier(KB, v) for v in values]
    assert len(set(a)) == len(values)
    assert all(x != y for x, y in zip(a, b, strict=True))


def test_non_ascii_digits_and_empty_payload_fail_closed():
    with pytest.raises(AnonymizationError) as e:
        encrypt_identifier(KA, "12\u0663456")  # Arabic-Indic digit, without unicode=True
    assert e.value.code == "E406" and "\u0663" not in str(e.value)
    with pytest.raises(AnonymizationError) as e:
        anonymize_identifier(KA, "--/--")
    assert e.value.code == "E407"


@pytest.mark.parametrize("n", [1, 2, 3, 10, 26, TABLE_MAX, TABLE_MAX + 1, 100_003, 2**20 + 7])
def test_keyed_permutation_is_a_bijection_with_an_inverse(n):
    p = KeyedPermutation(b"k" * 32, b"tweak", n)
    sample = range(n) if n <= 5000 else random.Random(n).sample(range(n), 3000)
    fwd = [p.forward(x) for x in sample]
    assert all(0 <= y < n for y in fwd)
    assert len(set(fwd)) == len(fwd)
    assert all(p.inverse(y) == x for x, y in zip(sample, fwd, strict=True))
    assert all(p.underange(p.derange(x)) == x for x in sample)
    if n > 1:
        assert all(p.derange(x) != x for x in sample)
    if n <= 5000:
        assert sorted(fwd) == list(range(n))
