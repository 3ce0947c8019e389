"""Locations, facilities, contacts and ages: shape-preserving keyed surrogates and fail-closed errors."""

from __future__ import annotations

import re

import pytest

from tide_core.anonymize.ages import anonymize_age
from tide_core.anonymize.contacts import surrogate_email, surrogate_phone, surrogate_url
from tide_core.anonymize.facilities import surrogate_hospital, surrogate_organisation
from tide_core.anonymize.identifiers import class_signature
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.anonymize.locations import STREET_SUFFIXES, _states, location_subtype, surrogate_location
from tide_core.anonymize.surrogates import load_list, norm
from tide_core.errors import AnonymizationError

KA = keyring_for_tests("study1", "k1", "loc-a")
KB = keyring_for_tests("study1", "k2", "loc-b")


def _skeleton(s: str) -> str:
    return re.sub(r"\d", "d", s)


@pytest.mark.parametrize(
    "value,kind",
    [
        ("94304", "zip"),
        ("94304-1234", "zip"),
        ("CA", "state"),
        ("California", "state"),
        ("Germany", "country"),
        ("USA", "country"),
        ("1234 Oak Street", "street"),
        ("Apt 4B", "street"),
        ("Palo Alto", "city"),
        ("St. Louis", "city"),
        ("Palo Alto, CA 94304", "address"),
        ("Boston MA 02115", "address"),
    ],
)
def test_location_subtypes(value, kind):
    assert location_subtype(value) == kind
    out, k = surrogate_location(KA, value)
    assert k == kind and out != value and norm(out) != norm(value)


def test_zip_is_a_bijection_of_the_five_digit_domain():
    values = [f"{i:05d}" for i in range(0, 100000, 7)]
    out = [surrogate_location(KA, v)[0] for v in values]
    assert len(set(out)) == len(values) and all(re.fullmatch(r"\d{5}", o) for o in out)
    assert re.fullmatch(r"\d{5}-\d{4}", surrogate_location(KA, "94304-1234")[0])


def test_states_keep_form_and_case_and_are_a_derangement():
    names = [n for n, _ in _states()]
    abbrs = [a for _, a in _states()]
    out_abbr = [surrogate_location(KA, a)[0] for a in abbrs]
    assert sorted(out_abbr) == sorted(abbrs) and all(o != a for o, a in zip(out_abbr, abbrs, strict=True))
    out_names = [surrogate_location(KA, n)[0] for n in names]
    assert sorted(out_names) == sorted(names)
    assert surrogate_location(KA, "CALIFORNIA")[0] == surrogate_location(KA, "California")[0].upper()


def test_street_keeps_number_shape_suffix_and_unit_words():
    out, _ = surrogate_location(KA, "1234 Oak Street, Apt 4B")
    m = re.fullmatch(r"(\d{4}) (.+) Street, Apt (\d[A-Z])", out)
    assert m and m.group(2) != "Oak" and m.group(1) != "1234"
    out, _ = surrogate_location(KA, "350 W 42nd St.")
    assert re.fullmatch(r"\d{3} W \d{2}(st|nd|rd|th) St\.", out)
    out, _ = surrogate_location(KA, "Park Avenue")
    assert out.endswith(" Avenue") and out != "Park Avenue"
    out, _ = surrogate_location(KA, "PO Box 1234")
    assert re.fullmatch(r"PO Box \d{4}", out) and out != "PO Box 1234"
    assert "st" in STREET_SUFFIXES


def test_composite_address_maps_each_part():
    out, kind = surrogate_location(KA, "Palo Alto, CA 94304")
    city, rest = out.split(", ")
    state, z = rest.split(" ")
    assert kind == "address" and norm(city) in load_list("cities").index
    assert state in {a for _, a in _states()} and re.fullmatch(r"\d{5}", z)
    assert city == surrogate_location(KA, "Palo Alto")[0] and z == surrogate_location(KA, "94304")[0]


def test_facilities_keep_their_type():
    out = surrogate_hospital(KA, "Lucile Packard Children's Hospital")
    assert out.endswith("Children's Hospital") and "Packard" not in out
    assert surrogate_hospital(KA, "STANFORD CLINIC").endswith("CLINIC")
    assert surrogate_hospital(KA, "Stanford Clinic").lower() == surrogate_hospital(KA, "stanford clinic")
    assert surrogate_organisation(KA, "Palo Alto High School").endswith("High School")
    hospitals = load_list("hospitals").entries[:300]
    a = [surrogate_hospital(KA, h) for h in hospitals]
    assert all(x != h for x, h in zip(a, hospitals, strict=True))  # listed: a derangement
    assert sum(x != surrogate_hospital(KB, h) for x, h in zip(a, hospitals, strict=True)) > 280  # a new key remaps
    acr = surrogate_hospital(KA, "UCSF")
    assert re.fullmatch(r"[A-Z]{4}", acr) and all(a != b for a, b in zip(acr, "UCSF", strict=True))
    with pytest.raises(AnonymizationError):
        surrogate_hospital(KA, "--")


@pytest.mark.parametrize(
    "value",
    [
        "(650) 555-1234",
        "650-555-1234",
        "650.555.1234",
        "+1 (650) 555-1234",
        "1-800-555-0199",
        "555-1234",
        "(650) 555-1234 ext. 123",
        "+44 20 7946 0958",
        "6505551234 x12",
    ],
)
def test_phones_keep_their_exact_format(value):
    out = surrogate_phone(KA, value)
    assert _skeleton(out) == _skeleton(value) and out != value
    assert surrogate_phone(KA, value) == out and surrogate_phone(KB, value) != out


def test_phone_digits_do_not_depend_on_punctuation_and_country_code_is_kept():
    a = re.sub(r"\D", "", surrogate_phone(KA, "(650) 555-1234"))
    assert a == re.sub(r"\D", "", surrogate_phone(KA, "650.555.1234"))
    assert a[0] in "23456789" and a[3] in "23456789"  # still a valid NANP shape
    assert surrogate_phone(KA, "+1 (650) 555-1234").startswith("+1 (")
    assert surrogate_phone(KA, "+44 20 7946 0958").startswith("+44 ")
    with pytest.raises(AnonymizationError):
        surrogate_phone(KA, "call me")


def test_emails_are_valid_and_shape_preserving():
    out = surrogate_email(KA, "john.smith@stanford.edu")
    local, domain = out.split("@")
    assert re.fullmatch(r"[a-z']+\.[a-z']+", local) and domain.endswith(".edu") and "stanford" not in domain
    assert surrogate_email(KA, "jane.doe@gmail.com").endswith("@gmail.com")
    assert re.fullmatch(r"[A-Za-z]{6}\d{2}@[a-z0-9]+\.org", surrogate_email(KA, "JSmith42@acme.org"))
    assert surrogate_email(KA, "x@y.org") == surrogate_email(KA, "x@y.org") != surrogate_email(KB, "x@y.org")
    with pytest.raises(AnonymizationError) as e:
        surrogate_email(KA, "not-an-email")
    assert e.value.code == "E451"


def test_accented_email_local_parts_get_an_ascii_surrogate():
    out = surrogate_email(KA, "wendellgarzón35@riverbend-isp.net")
    local, _ = out.split("@")
    assert local.isascii() and "garz" not in local.lower() and re.fullmatch(r"[a-z']+\d{2}", local)
    # the accent is the one difference: folded first, so both spellings share a surrogate
    assert out == surrogate_email(KA, "wendellgarzon35@riverbend-isp.net")
    with pytest.raises(AnonymizationError) as e:  # a letter with no ASCII base still quarantines
        surrogate_email(KA, "王伟@example.org")
    assert e.value.code == "E452"


def test_urls_and_ips():
    out, op = surrogate_url(KA, "https://www.stanford.edu/patients/jsmith?id=123")
    assert op == "url.surrogate" and out.startswith("https://www.") and ".edu/" in out
    assert "stanford" not in out and "jsmith" not in out and re.search(r"\?id=\d{3}$", out)
    ip, op = surrogate_url(KA, "192.168.1.25")
    assert op == "ip.fpe" and re.fullmatch(r"(\d{1,3}\.){3}\d{1,3}", ip) and ip != "192.168.1.25"
    assert all(0 <= int(x) <= 255 for x in ip.split("."))
    v6, _ = surrogate_url(KA, "fe80::1ff:fe23:4567:890a")
    assert class_signature(v6).count(":") == 5 and v6 != "fe80::1ff:fe23:4567:890a"
    with pytest.raises(AnonymizationError):
        surrogate_url(KA, "nothing")


@pytest.mark.parametrize(
    "value,expected,op",
    [
        ("67", "67", "age.keep"),
        ("89", "89", "age.keep"),
        ("90", "90+", "age.aggregate"),
        ("104", "90+", "age.aggregate"),
        ("92 y/o", "90+ y/o", "age.aggregate"),
        ("ninety-two", "90+", "age.aggregate"),
        ("95 months", "95 months", "age.keep"),
        ("eighty", "eighty", "age.keep"),
    ],
)
def test_ages(value, expected, op):
    assert anonymize_age(value) == (expected, op)


def test_non_numeric_age_fails_closed():
    with pytest.raises(AnonymizationError) as e:
        anonymize_age("elderly")
    assert e.value.code == "E420" and "elderly" not in str(e.value)
