"""IPv6 addresses, IBANs and "00"-prefixed international phone numbers in the regex layer.

Each of these left identifiers in clear on the out-of-generator message corpus before the layer
knew them (the model tagged pieces of an IPv6 address or an IBAN, and the gaps between them were
released); the negative cases are the look-alikes a clinical note is full of.
"""

import re

import pytest

from tide_core.recognizers.iban import IBAN_REGEX, compact, iban_checksum_ok, iban_shape
from tide_core.recognizers.registry import create

REGEX = create({"name": "tide.regex"})
REGEX.load()


def tagged(text):
    return [(text[r.start : r.end], r.entity_type) for r in REGEX.analyze(text)]


# ------------------------------------------------------------------ IPv6
@pytest.mark.parametrize(
    "address",
    [
        "b7c7:7a53:b811:a020:5851:f2d9:b24d:a195",
        "2001:db8:9d88::e2eb",
        "2001:DB8:0:0:8:800:200C:417A",
        "fe80::1ff:fe23:4567:890a",
        "a00:c462:a225:d3e5:437b:5d00:4f1b:4853",
    ],
)
def test_an_ipv6_address_is_one_url_span(address):
    assert (address, "URL") in tagged(f"Login attempts from IP {address} were blocked at 19:07.")


def test_an_ipv6_zone_is_not_part_of_the_address():
    assert ("fe80::1ff:fe23:4567:890a", "URL") in tagged("iface fe80::1ff:fe23:4567:890a%eth0 up")


@pytest.mark.parametrize(
    "text",
    [
        "BP checked at 12:30:45 and again at 10:15:00.",  # clock times
        "ratio 3:1, then 1:2:3",  # ratios
        "loopback ::1 only",  # fewer than three groups: not a host
        "MAC 00:1a:2b:3c:4d:5e on the pump",  # six groups, no "::": not IPv6
        "1:2:3:4:5:6:7:8:9 is not an address",  # nine groups
        "1:2:3:4:5:6::7:8:9:a is not one either",  # "::" and ten groups: ipaddress says no
    ],
)
def test_times_ratios_and_other_colon_runs_are_no_ipv6(text):
    assert all(label != "URL" for _, label in tagged(text))


# ------------------------------------------------------------------ IBAN
VALID = [
    "GB82 WEST 1234 5698 7654 32",
    "NL91ABNA0417164300",
    "FR14 2004 1010 0505 0001 3M02 606",
    "BE68 5390 0754 7034",
]


@pytest.mark.parametrize("iban", VALID)
def test_the_check_digits_of_real_ibans_hold(iban):
    assert iban_shape(iban) and iban_checksum_ok(iban)


def test_one_changed_character_breaks_the_check_digits():
    for i in range(4, len(compact(VALID[0]))):
        s = compact(VALID[0])
        changed = s[:i] + ("1" if s[i] != "1" else "2") + s[i + 1 :]
        assert not iban_checksum_ok(changed)


@pytest.mark.parametrize("iban", VALID)
def test_a_checked_iban_is_an_id_without_any_bank_word(iban):
    assert (iban, "ID") in tagged(f"Ref {iban} from her.")


def test_an_unchecked_iban_needs_a_bank_word_before_it():
    made_up = "GB57 RYPR 4289 5938 7592 31"  # the shape of an IBAN, check digits wrong
    assert not iban_checksum_ok(made_up)
    assert (made_up, "ID") in tagged(f"Please wire the deposit to {made_up} by 11/30/19.")
    assert (made_up, "ID") in tagged(f"IBAN: {made_up}.")
    assert all(text != made_up for text, _ in tagged(f"Seen {made_up} on the form."))


def test_the_words_after_an_iban_stay_out_of_it():
    assert ("BE68 5390 0754 7034", "ID") in tagged("IBAN BE68 5390 0754 7034 from her bank")
    assert ("GB82 WEST 1234 5698 7654 32", "ID") in tagged("IBAN GB82 WEST 1234 5698 7654 32 via wire")


def test_words_in_an_iban_shape_are_not_an_iban():
    rx = re.compile(IBAN_REGEX)
    assert rx.search("pt12 days each time ok") is None  # later groups need a digit
    assert not iban_shape("AB12 WORD WORD WORD 12")  # the account part is mostly letters
    assert all(label != "ID" for _, label in tagged("Bank: pt12 days each time, wire ok"))


# ------------------------------------------------------------------ phones dialled with "00"
@pytest.mark.parametrize("phone", ["0031 6 56230764", "0049 151 15871333", "00254 20 5074198", "0033 6 80 48 47 89"])
def test_a_00_prefixed_international_number_is_one_phone_span(phone):
    assert (phone, "PHONE") in tagged(f"Reach her daughter by phone ({phone}) after 5.")


def test_a_00_number_beyond_fifteen_digits_is_no_phone():
    assert all(label != "PHONE" for _, label in tagged("Call 0049 151 15871333 12345678 now"))  # 21 digits


def test_iban_length_bounds_are_iso_13616s():
    assert iban_shape("NO9386011117947")  # Norway: 15 characters, the shortest
    assert not iban_shape("NO938601111794")  # 14
    assert iban_shape("GB12" + "1" * 30)  # 34, the longest ISO allows
    assert not iban_shape("GB12" + "1" * 31)  # 35


def test_iban_shape_wants_a_country_check_digits_and_a_mostly_digit_account():
    assert not iban_shape("GBA2 1234 5678 9012 34")  # check digits are digits
    assert not iban_shape("1B12 1234 5678 9012 34")  # the country is letters
    assert iban_shape("GB12 1ABC D234 5678 ZZ")  # account part: 8 digits of 14, enough
    assert iban_shape("GB12 1ABC D234 567F GH")  # exactly half (7 of 14): still an account number
    assert not iban_shape("GB12 ABCD E234 56FG HI")  # fewer than half (5 of 14)


def test_iban_checksum_refuses_separators_and_non_ascii_digits():
    assert iban_checksum_ok("gb82 west 1234 5698 7654 32")  # case does not matter
    assert not iban_checksum_ok("GB82-WEST-1234-5698-7654-32")  # no exception: just not an IBAN
    # an Arabic-Indic two where the 2 was: int() would read it, the check must not
    assert not iban_checksum_ok("GB82 WEST 1234 5698 7654 3\u0662")
