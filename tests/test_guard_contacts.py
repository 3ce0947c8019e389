"""IP-address surrogates, checked against their definition (``tide_core/anonymize/contacts.py``).

IPv4: a keyed derangement of the whole 2^32 address space (``permutation(subkey("contact"), "ipv4")``)
over the big-endian address; IPv6: the hex digits permuted in place under ``"ipv6"``, each digit's case
kept.  Refusals are coded E453/E454 with a hint.
"""

from __future__ import annotations

import pytest

from tide_core.anonymize.contacts import surrogate_ipv4, surrogate_ipv6, surrogate_url
from tide_core.anonymize.identifiers import HEX_LOWER, HEX_UPPER, permute_payload
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.anonymize.small_domain import cached_subkey, permutation
from tide_core.errors import AnonymizationError

KR = keyring_for_tests("guard-contacts", "k1", "guard-contacts-seed")
SUB = cached_subkey(KR, "contact")


def _ipv4(value: str) -> str:
    x = int.from_bytes(bytes(int(o) for o in value.split(".")), "big")
    y = permutation(SUB, b"ipv4", 2**32).derange(x)
    return ".".join(str(b) for b in y.to_bytes(4, "big"))


@pytest.mark.parametrize("value", ["0.0.0.0", "10.1.2.3", "192.168.0.255", "255.255.255.255", "1.2.3.4"])
def test_ipv4_is_the_keyed_derangement_of_the_address_space(value):
    assert surrogate_ipv4(KR, value) == _ipv4(value) != value
    assert surrogate_url(KR, f" {value} ") == (f" {_ipv4(value)} ", "ip.fpe")


@pytest.mark.parametrize("value", ["256.1.1.1", "1.2.3.999", "1.2.3", "a.b.c.d"])
def test_an_octet_over_255_or_no_ipv4_shape_is_e453(value):
    with pytest.raises(AnonymizationError) as e:
        surrogate_ipv4(KR, value)
    assert e.value.code == "E453" and "IPv4" in e.value.message and "quarantined" in e.value.hint


@pytest.mark.parametrize("value", ["2001:db8::ff00:42:8329", "2001:DB8::FF00:42:8329", "fe80::1:Ab"])
def test_ipv6_hex_digits_are_permuted_in_place_in_their_own_case(value):
    digits = [c for c in value if c != ":"]
    alphabets = [HEX_UPPER if c in "ABCDEF" else HEX_LOWER for c in digits]
    new = iter(permute_payload(SUB, "ipv6", alphabets, "".join(digits)))
    want = "".join(c if c == ":" else next(new) for c in value)
    assert surrogate_ipv6(KR, value) == want != value
    assert surrogate_url(KR, value) == (want, "ip.fpe")
    assert [c.isupper() for c in want if c.isalpha()] == [c in "ABCDEF" for c in want if c.isalpha()]
