"""HOSPITAL and OTHER (organisation) surrogates, checked against their definition in about a second.

``tide_core/anonymize/facilities.py``: a span without a letter or digit is refused (E440); an acronym
(2 to 6 capitals or ``&``) becomes another acronym letter by letter (a keyed derangement of A-Z, tweak
``acronym``); any other value is drawn from the list entries with the same type suffix (the first type
of the table that the value is or ends with, as a whole word, case- and trailing-dot-insensitively),
or from the whole list when it has no type, and written in the value's capitalisation pattern.
Hospitals use the ``hospital`` key domain and ``hospitals`` list, organisations ``other`` and
``organisations``.  Each test recomputes one rule from the key; negative cases differ in one property.
"""

from __future__ import annotations

import pytest

from tide_core.anonymize.facilities import (
    HOSPITAL_TYPES,
    ORG_TYPES,
    _type_of,
    surrogate_hospital,
    surrogate_organisation,
)
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.anonymize.small_domain import permutation
from tide_core.anonymize.surrogates import case_like, load_list, norm, with_suffix
from tide_core.errors import AnonymizationError

KR = keyring_for_tests("guard-facilities", "k1", "guard-facilities-seed")

KINDS = {
    "hospital": (surrogate_hospital, "hospitals", HOSPITAL_TYPES),
    "other": (surrogate_organisation, "organisations", ORG_TYPES),
}


@pytest.fixture(autouse=True)
def _fresh_caches():
    """Lists and permutations are memoised: start each test without them, so that what is checked is
    the rule itself and not a value memoised earlier in the same process."""
    load_list.cache_clear()
    with_suffix.cache_clear()
    permutation.cache_clear()


def _acronym(domain: str, value: str) -> str:
    p = permutation(KR.subkey(domain), b"acronym", 26)
    return "".join(chr(65 + p.derange(ord(c) - 65)) if c.isalpha() else c for c in value)


def _drawn(domain: str, value: str, suffix: str | None) -> str:
    _, list_name, _ = KINDS[domain]
    lst = with_suffix(list_name, suffix) if suffix else load_list(list_name)
    assert lst is not None
    return case_like(value, lst.choose(KR, domain, value))


@pytest.mark.parametrize(
    "value, types, expected",
    [
        ("Stanford Children's Hospital", HOSPITAL_TYPES, "Children's Hospital"),  # the longer type first
        ("Stanford Children\u2019s Hospital", HOSPITAL_TYPES, "Children's Hospital"),
        ("STANFORD   CHILDREN'S  HOSPITAL", HOSPITAL_TYPES, "Children's Hospital"),
        ("Stanford Hospital", HOSPITAL_TYPES, "Hospital"),
        ("Hospital", HOSPITAL_TYPES, "Hospital"),  # the value is the type itself
        ("Stanford Hospitals", HOSPITAL_TYPES, None),  # not a whole word
        ("StanfordHospital", HOSPITAL_TYPES, None),
        ("Hospital of Stanford", HOSPITAL_TYPES, None),  # the type must end the value
        ("Acme Inc.", ORG_TYPES, "Inc."),
        ("Acme Inc", ORG_TYPES, "Inc."),  # the trailing dot is ignored on both sides
        ("ACME INC..", ORG_TYPES, "Inc."),
        ("Acme LLC.", ORG_TYPES, "LLC"),
        ("Inc", ORG_TYPES, "Inc."),
        ("AcmeInc", ORG_TYPES, None),
        ("Acme Hospital", ORG_TYPES, None),  # each kind has its own table
        ("Acme Inc.", HOSPITAL_TYPES, None),
    ],
)
def test_the_type_is_the_first_table_entry_that_ends_the_value(value, types, expected):
    assert _type_of(value, types) == expected


def test_types_are_ordered_so_that_no_type_hides_a_longer_one():
    for types in (HOSPITAL_TYPES, ORG_TYPES):
        for i, t in enumerate(types):
            assert _type_of("Acme " + t, types) == t
            assert _type_of(t, types) == t
            for later in types[i + 1 :]:
                assert not norm(later).endswith(" " + norm(t).rstrip("."))


@pytest.mark.parametrize("domain", ["hospital", "other"])
@pytest.mark.parametrize("value", ["", "  ", "--", "&", "()/.'"])
def test_a_span_without_letters_or_digits_is_refused(domain, value):
    fn = KINDS[domain][0]
    with pytest.raises(AnonymizationError) as e:
        fn(KR, value)
    assert e.value.code == "E440"
    assert KINDS[domain][1] in str(e.value)  # names the list ("hospitals" / "organisations")
    assert e.value.hint


@pytest.mark.parametrize("domain", ["hospital", "other"])
@pytest.mark.parametrize("value", ["-1-", "a", "--x", "9"])
def test_one_letter_or_digit_is_enough(domain, value):
    fn = KINDS[domain][0]
    assert fn(KR, value) == _drawn(domain, value, None)


@pytest.mark.parametrize("domain", ["hospital", "other"])
@pytest.mark.parametrize("value", ["SH", "SHC", "UCSF", "A&M", "ABCDEF", "&A", " SHC ", "UCSF\n"])
def test_an_acronym_stays_an_acronym_letter_by_letter(domain, value):
    fn = KINDS[domain][0]
    out = fn(KR, value)
    assert out == _acronym(domain, value)
    assert len(out) == len(value)
    assert all(a != b for a, b in zip(out, value, strict=True) if a.isalpha())  # a derangement


def test_the_acronym_alphabet_is_a_derangement_of_all_26_letters():
    alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    for domain in ("hospital", "other"):
        out = KINDS[domain][0](KR, alpha[:6]) + KINDS[domain][0](KR, alpha[6:12])
        out += KINDS[domain][0](KR, alpha[12:18]) + KINDS[domain][0](KR, alpha[18:24])
        out += KINDS[domain][0](KR, alpha[24:])
        assert sorted(out) == list(alpha)
        assert all(a != b for a, b in zip(out, alpha, strict=True))
    assert _acronym("hospital", alpha) != _acronym("other", alpha)  # each kind its own key domain


@pytest.mark.parametrize("domain", ["hospital", "other"])
@pytest.mark.parametrize(
    "value",
    [
        "S",  # one capital: too short
        "ABCDEFG",  # seven: too long
        "Shc",  # not all capitals
        "SH1",  # a digit
        "S H",  # a space inside
        "S.H.",
    ],
)
def test_anything_else_is_not_an_acronym(domain, value):
    fn = KINDS[domain][0]
    assert fn(KR, value) == _drawn(domain, value, None)


@pytest.mark.parametrize(
    "domain, value, suffix",
    [
        ("hospital", "Lucile Packard Children's Hospital", "Children's Hospital"),
        ("hospital", "STANFORD CLINIC", "Clinic"),
        ("hospital", "stanford clinic", "Clinic"),
        ("hospital", "Mercy General Hospital", "General Hospital"),
        ("other", "Palo Alto High School", "High School"),
        ("other", "ACME INC", "Inc."),
        ("other", "Acme Logistics", "Logistics"),
    ],
)
def test_a_typed_value_draws_from_the_entries_of_its_type(domain, value, suffix):
    fn, list_name, _ = KINDS[domain]
    out = fn(KR, value)
    assert out == _drawn(domain, value, suffix)
    assert norm(out).rstrip(".").endswith(norm(suffix).rstrip("."))
    assert out == case_like(value, out)


@pytest.mark.parametrize(
    "domain, value",
    [
        ("hospital", "Stanford"),
        ("hospital", "Acme Inc."),  # an organisation type means nothing to a hospital
        ("other", "Acme"),
        ("other", "Mercy Hospital"),
    ],
)
def test_an_untyped_value_draws_from_the_whole_list(domain, value):
    assert KINDS[domain][0](KR, value) == _drawn(domain, value, None)


def test_listed_facilities_map_by_a_derangement_of_their_type_group():
    for domain, suffix in (("hospital", "Clinic"), ("other", "Bank")):
        fn, list_name, _ = KINDS[domain]
        group = with_suffix(list_name, suffix)
        assert group is not None
        out = [fn(KR, e) for e in group.entries]
        assert all(a != b for a, b in zip(out, group.entries, strict=True))
        assert len(set(out)) == len(group)
        assert set(out) == set(group.entries)


def test_capitalisation_follows_the_value():
    up, low, mixed = (surrogate_hospital(KR, v) for v in ("MERCY CLINIC", "mercy clinic", "Mercy Clinic"))
    assert up == up.upper() and low == low.lower() and up.lower() == low
    assert mixed in with_suffix("hospitals", "Clinic").entries
    assert norm(mixed) == low  # the same draw, written as listed
