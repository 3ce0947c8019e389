"""Format-preserving identifier encryption, checked against its own definition in seconds.

``tests/anonymize/test_anonymize_identifiers.py`` permutes whole domains (a minute and more); this file pins
the construction itself, so that a mutation run of ``tide_core/anonymize/identifiers.py`` can use it
alone: the payload classes and their ASCII boundaries, the four modes (exact small-domain permutation,
FF3-1 over one alphabet, FF3-1 with cycle walking over a mixed-radix integer, balanced blocks), each
recomputed from the ``ff3`` library and the documented tweak (``sha256(subkey | "fpe-tweak" |
context | class codes)``, 56 bits), the inverse of every mode, and the coded refusals.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
import string

import pytest
from ff3 import FF3Cipher

from tide_core.anonymize import identifiers
from tide_core.anonymize.identifiers import (
    DIGITS,
    HEX_LOWER,
    HEX_UPPER,
    LOWER,
    UPPER,
    _FastFF3,
    anonymize_identifier,
    char_alphabet,
    class_signature,
    decrypt_identifier,
    encrypt_identifier,
    permute_payload,
)
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.anonymize.small_domain import cached_subkey, permutation
from tide_core.errors import AnonymizationError

KR = keyring_for_tests("guard-ids", "k1", "guard-ids-seed")
SUB = cached_subkey(KR, "id")
CODE = {DIGITS: "d", UPPER: "u", LOWER: "l"}


@pytest.fixture(autouse=True)
def _fresh_caches():
    """Blocks, modes and ciphers are memoised per shape: start each test without them, so that what
    is checked is the construction itself and not a block built earlier in the same process."""
    for memo in (identifiers._block, identifiers._mode, identifiers._blocks, identifiers._cipher):
        memo.cache_clear()
    identifiers._fast_cipher.cache_clear()
    permutation.cache_clear()


def _alphabets(value: str) -> list[str]:
    return [DIGITS if c.isdigit() else UPPER if c.isupper() else LOWER for c in value if c.isalnum()]


def _tweak(subkey: bytes, context: str, alphabets: list[str]) -> bytes:
    code = "|".join(CODE.get(a) or hashlib.sha256(a.encode()).hexdigest()[:8] for a in alphabets)
    return hashlib.sha256(subkey + b"|fpe-tweak|" + context.encode() + b"|" + code.encode()).digest()


def _to_int(alphabets: list[str], chars: str) -> int:
    v = 0
    for a, c in zip(alphabets, chars, strict=True):
        v = v * len(a) + a.index(c)
    return v


def _from_int(alphabets: list[str], v: int) -> str:
    out = []
    for a in reversed(alphabets):
        v, r = divmod(v, len(a))
        out.append(a[r])
    return "".join(reversed(out))


def _lib(subkey: bytes, alphabet: str, tweak: bytes) -> FF3Cipher:
    return FF3Cipher.withCustomAlphabet(subkey.hex(), tweak[:7].hex(), alphabet)


def _expected_block(subkey: bytes, context: str, alphabets: list[str], chars: str) -> str:
    """The documented construction for one block, from the ``ff3`` library and ``small_domain``."""
    n = math.prod(len(a) for a in alphabets)
    tweak = _tweak(subkey, context, alphabets)
    if n < 1_000_000:
        return _from_int(alphabets, permutation(subkey, tweak, n).derange(_to_int(alphabets, chars)))
    if len(set(alphabets)) == 1:
        return _lib(subkey, alphabets[0], tweak).encrypt(chars)
    width = len(str(n - 1))
    s = str(_to_int(alphabets, chars)).zfill(width)
    while True:
        s = _lib(subkey, DIGITS, tweak).encrypt(s)
        if int(s) < n:
            return _from_int(alphabets, int(s))


def _expected(value: str) -> str:
    payload = "".join(c for c in value if c.isalnum())
    context = f"id|{class_signature(value)}"
    out = iter(_expected_block(SUB, context, _alphabets(value), payload))
    return "".join(next(out) if c.isalnum() else c for c in value)


def test_payload_classes_end_exactly_at_the_ascii_ranges():
    assert [char_alphabet(c) for c in "09AZaz"] == [DIGITS, DIGITS, UPPER, UPPER, LOWER, LOWER]
    for c in "/:@[`{ -.\u00e9\u0663":  # the neighbours of each range, and non-ASCII
        assert char_alphabet(c) is None, c
    assert class_signature("123-45-6789 AB/cd.Z") == "ddd-dd-dddd uu/ll.u"


@pytest.mark.parametrize(
    "value",
    [
        "12345",  # 10^5: the exact small-domain permutation (fixed-point free)
        "AB-1c",  # 67,600: small domain, mixed classes
        "999999",  # 10^6 exactly: FF3-1 (its minimum domain)
        "123-45-6789",  # FF3-1 over digits, separators kept
        "ABCDEFG",  # FF3-1 over upper-case letters
        "MRN-AB1234c",  # mixed classes over 10^6: FF3-1 with cycle walking
        "x" * 39,  # one alphabet, 39 letters: still one FF3-1 block (56 decimal digits)
    ],
)
def test_each_mode_is_the_documented_construction(value):
    out = encrypt_identifier(KR, value)
    assert out == _expected(value)
    assert class_signature(out) == class_signature(value) and out != value
    assert decrypt_identifier(KR, out) == value


@pytest.mark.parametrize(
    "length,parts", [(57, (28, 29)), (100, (50, 50)), (130, (43, 43, 44)), (151, (37, 38, 38, 38))]
)
def test_long_identifiers_are_balanced_blocks_with_the_block_index_in_the_tweak(length, parts):
    rng = random.Random(length)
    value = "".join(rng.choice(DIGITS) for _ in range(length))
    context = f"id|{class_signature(value)}"
    want, start = [], 0
    for i, size in enumerate(parts):
        chunk = value[start : start + size]
        want.append(_expected_block(SUB, f"{context}#{i}/{len(parts)}", [DIGITS] * size, chunk))
        start += size
    out = anonymize_identifier(KR, value)
    assert out == "".join(want)
    assert decrypt_identifier(KR, out) == value


def test_a_mixed_identifier_beyond_56_decimal_digits_is_split_and_round_trips():
    value = "AB12cd" * 9 + "Z"  # 55 characters, about 10^65
    out = encrypt_identifier(KR, value)
    assert class_signature(out) == class_signature(value) and out != value
    assert decrypt_identifier(KR, out) == value
    half = len(value) // 2  # two blocks (10^65 needs ceil(65 / 50) = 2), each its own construction
    context = f"id|{class_signature(value)}"
    assert out[:half] == _expected_block(SUB, f"{context}#0/2", _alphabets(value[:half]), value[:half])
    assert out[half:] == _expected_block(SUB, f"{context}#1/2", _alphabets(value[half:]), value[half:])


def test_small_domains_are_fixed_point_free_bijections_and_invert():
    for shape in ("dd", "ud", "d-l"):
        pools = [{"d": DIGITS, "u": UPPER, "l": LOWER}.get(c, c) for c in shape]
        values = ["".join(p) for p in itertools.product(*pools)]
        out = [anonymize_identifier(KR, v) for v in values]
        assert sorted(out) == sorted(values)
        assert all(o != v for o, v in zip(out, values, strict=True))
        assert [decrypt_identifier(KR, o) for o in out] == values


def test_the_domain_context_and_key_select_the_permutation():
    value = "MRN 12345678"
    out = anonymize_identifier(KR, value)
    assert out == encrypt_identifier(KR, value, "id", "id") == _expected(value)
    assert encrypt_identifier(KR, value, "name") != out
    assert encrypt_identifier(KR, value, "id", "other") != out
    assert anonymize_identifier(keyring_for_tests("guard-ids", "k2", "other-seed"), value) != out
    assert decrypt_identifier(KR, encrypt_identifier(KR, value, "name", "ctx"), "name", "ctx") == value


def test_permute_payload_refuses_mismatched_or_empty_payloads():
    with pytest.raises(ValueError):
        permute_payload(SUB, "c", [DIGITS, DIGITS], "1")
    with pytest.raises(ValueError):
        permute_payload(SUB, "c", [], "")
    assert permute_payload(SUB, "c", [DIGITS], "7") != "7"


def test_the_fast_cipher_hands_anything_unusual_to_the_library():
    rng = random.Random(7)
    for alphabet in (DIGITS, UPPER, "0123456789abcdef"):
        key = bytes(rng.randrange(256) for _ in range(32)).hex()
        lib = FF3Cipher.withCustomAlphabet(key, "00000000000000", alphabet)
        fast = _FastFF3(lib, alphabet, key)
        for n in (lib.minLen, lib.minLen + 1, lib.maxLen - 1, lib.maxLen):
            text = "".join(rng.choice(alphabet) for _ in range(n))
            for tweak in ("0011223344556677", "00112233445566"):  # a 64-bit FF3 tweak, a 56-bit FF3-1 one
                assert fast.encrypt(text, tweak) == lib.encrypt_with_tweak(text, tweak)
        for bad in ("1" * (lib.minLen - 1), "1" * (lib.maxLen + 1), "!" * lib.minLen):
            with pytest.raises(ValueError):
                lib.encrypt_with_tweak(bad, "00112233445566")
            with pytest.raises(ValueError):
                fast.encrypt(bad, "00112233445566")


def test_many_tweaks_through_one_cipher_stay_correct():
    key = bytes(range(32)).hex()
    lib = FF3Cipher.withCustomAlphabet(key, "00000000000000", DIGITS)
    fast = _FastFF3(lib, DIGITS, key)
    for i in range(4200):  # past the cache of round prefixes (4,096 tweaks)
        tweak = i.to_bytes(7, "big").hex()
        out = fast.encrypt("12345678", tweak)
        if i % 350 == 0 or i > 4090:
            assert out == lib.encrypt_with_tweak("12345678", tweak), i


@pytest.mark.parametrize("value", ["12\u0663456", "AB\u00e9123", "\u00bd1234"])
def test_a_non_ascii_letter_or_digit_is_e406(value):
    # without unicode=True (the ID label's anonymize_identifier passes it: tests/anonymize/test_unicode_identifiers.py)
    with pytest.raises(AnonymizationError) as e:
        encrypt_identifier(KR, value)
    err = e.value
    assert err.code == "E406" and err.message and "OTHER" in err.hint
    assert value not in str(err)


def test_a_span_without_letters_or_digits_is_e407_and_separators_alone_are_not_payload():
    for value in ("--/--", " ", ".-/"):
        with pytest.raises(AnonymizationError) as e:
            anonymize_identifier(KR, value)
        assert e.value.code == "E407" and e.value.message and "docs/architecture.md" in e.value.hint
    assert anonymize_identifier(KR, "--1--")[:2] == "--"  # one payload character is enough


def test_identifiers_outside_the_alphabets_tables_keep_their_punctuation_in_place():
    value = "AB.12/cd 3"
    out = anonymize_identifier(KR, value)
    assert [i for i, c in enumerate(out) if not c.isalnum()] == [2, 5, 8]
    assert all(char_alphabet(a) == char_alphabet(b) for a, b in zip(out, value, strict=True))
    assert string.punctuation.find(out[2]) >= 0


def test_other_alphabets_enter_the_tweak_by_a_hash_of_their_characters():
    """Contacts permute IPv6 groups over hex alphabets: their class code is sha256(alphabet)[:8]."""
    for alphabets, payload in (
        ([HEX_LOWER] * 4, "0db8"),  # 65,536: small domain
        ([HEX_LOWER] * 3 + [HEX_UPPER] * 3, "0dbABC"),  # 16^6: mixed hex alphabets, cycle walking
        ([HEX_LOWER] * 8, "20010db8"),  # 16^8, one alphabet: FF3-1
    ):
        out = permute_payload(SUB, "ipv6", alphabets, payload)
        assert out == _expected_block(SUB, "ipv6", alphabets, payload)
        assert out != payload and permute_payload(SUB, "ipv6", alphabets, out, decrypt=True) == payload


def test_a_mixed_identifier_of_exactly_56_decimal_digits_is_still_one_block():
    value = "A" + "1234567890" * 5 + "1234"  # 26 * 10^54: n - 1 has 56 digits, FF3-1's radix-10 maximum
    assert len(str(26 * 10**54 - 1)) == 56
    out = encrypt_identifier(KR, value)
    assert out == _expected(value)
    assert decrypt_identifier(KR, out) == value


def test_cycle_walking_steps_over_the_value_just_outside_the_domain():
    """An input whose first FF3-1 step lands exactly on n (one past the domain) must walk on, never wrap."""
    found = 0
    for shape in ("AAdd-ddd", "aAddddd", "Adadddd", "ddAAddd", "dddaAdd"):
        value = shape.replace("A", "Q").replace("a", "q").replace("d", "5")
        alphabets = _alphabets(value)
        n = math.prod(len(a) for a in alphabets)  # 6,760,000: seven decimal digits
        width = len(str(n - 1))
        tweak = _tweak(SUB, f"id|{class_signature(value)}", alphabets)
        before = int(_lib(SUB, DIGITS, tweak).decrypt(str(n).zfill(width)))  # the value whose next step is n
        if before >= n:
            continue
        payload = _from_int(alphabets, before)
        it = iter(payload)
        x = "".join(next(it) if c.isalnum() else c for c in value)
        out = encrypt_identifier(KR, x)
        assert out == _expected(x) and decrypt_identifier(KR, out) == x, shape
        found += 1
    assert found >= 2


def test_the_fast_cipher_without_a_key_uses_the_librarys_own_aes():
    key = bytes(range(32, 64)).hex()
    lib = FF3Cipher.withCustomAlphabet(key, "00000000000000", DIGITS)
    fast = _FastFF3(lib, DIGITS)
    assert fast.aes == lib.aesCipher.encrypt
    for text in ("123456", "98765432101234"):
        assert fast.encrypt(text, "a1b2c3d4e5f607") == lib.encrypt_with_tweak(text, "a1b2c3d4e5f607")
