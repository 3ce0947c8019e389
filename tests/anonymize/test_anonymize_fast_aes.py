"""The FF3-1 fast path's AES block (``cryptography`` ECB) gives the ``ff3`` library's ciphertexts."""

from __future__ import annotations

import random

import pytest
from ff3 import FF3Cipher

from tide_core.anonymize.identifiers import DIGITS, LOWER, UPPER, _ecb_block_encrypt, _FastFF3


@pytest.mark.parametrize("alphabet", [DIGITS, UPPER, LOWER, "23456789", "0123456789ABCDEF"])
def test_fast_ff3_with_cryptography_aes_equals_library(alphabet: str) -> None:
    rng = random.Random(100 + len(alphabet))
    for _ in range(40):
        key = bytes(rng.randrange(256) for _ in range(32)).hex()
        lib = FF3Cipher.withCustomAlphabet(key, "00000000000000", alphabet)
        fast = _FastFF3(lib, alphabet, key)
        assert getattr(fast.aes, "__self__", None) is not lib.aesCipher  # really the other AES implementation
        for _ in range(5):
            n = rng.randint(lib.minLen, lib.maxLen)
            text = "".join(rng.choice(alphabet) for _ in range(n))
            tweak = bytes(rng.randrange(256) for _ in range(7)).hex()
            assert fast.encrypt(text, tweak) == lib.encrypt_with_tweak(text, tweak)


def test_ecb_block_is_the_library_block() -> None:
    key = bytes(range(32)).hex()
    lib = FF3Cipher(key, "00000000000000")
    block = _ecb_block_encrypt(key)
    assert block is not None
    for i in range(20):
        data = bytes((i * 7 + j) % 256 for j in range(16))
        assert block(data) == lib.aesCipher.encrypt(data)
