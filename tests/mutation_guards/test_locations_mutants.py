"""LOCATION surrogates, checked against their own definition (``tide_core/anonymize/locations.py``).

Each rule is recomputed from the key: states, countries and their abbreviations by a keyed
derangement of their list (``permutation(subkey("location"), "loc|<context>")``), cities and
street names by the keyed choice of their list under their own context, ZIP codes and street
numbers by format-preserving encryption under their own context, ordinals written for the new
number.  Negative cases differ from positive ones in one property.
"""

from __future__ import annotations

import pytest

from tide_core.anonymize import locations
from tide_core.anonymize.identifiers import encrypt_identifier
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.anonymize.locations import (
    COUNTRY_ABBR,
    location_subtype,
    surrogate_city,
    surrogate_country,
    surrogate_location,
    surrogate_state,
    surrogate_street,
    surrogate_zip,
)
from tide_core.anonymize.small_domain import cached_subkey, permutation
from tide_core.anonymize.surrogates import DATA_DIR, case_like, load_list, norm
from tide_core.errors import AnonymizationError

KR = keyring_for_tests("guard-loc", "k1", "guard-loc-seed")
SUB = cached_subkey(KR, "location")


@pytest.fixture(autouse=True)
def _fresh_caches():
    """The state table and lists are memoised: start each test without them (see docs/results/mutation.md)."""
    locations._states.cache_clear()
    locations._state_lookup.cache_clear()
    load_list.cache_clear()
    permutation.cache_clear()


def _derange(context: str, n: int, i: int) -> int:
    return permutation(SUB, f"loc|{context}".encode(), n).derange(i)


def _states() -> list[tuple[str, str]]:
    rows = []
    for line in (DATA_DIR / "states.txt").read_text().splitlines():
        if "\t" in line:
            name, abbr = line.split("\t")
            rows.append((name.strip(), abbr.strip()))
    return rows


def _choose(list_name: str, value: str, context: str) -> str:
    lst = load_list(list_name)
    i = lst.index.get(norm(value))
    if i is not None:
        return lst.entries[permutation(SUB, f"list|{lst.name}|{context}".encode(), len(lst)).derange(i)]
    return lst.entries[KR.mac_int("location", "list-hash", lst.name, context, norm(value)) % len(lst)]


def _english_ordinal(n: int) -> str:
    if n % 100 in (11, 12, 13):
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def test_states_are_the_keyed_derangement_of_the_state_table():
    rows = _states()
    assert len(rows) >= 50
    for i, (name, abbr) in enumerate(rows):
        new_name, new_abbr = rows[_derange("state", len(rows), i)]
        assert surrogate_state(KR, name) == new_name
        assert surrogate_state(KR, name.upper()) == new_name.upper()
        assert surrogate_state(KR, abbr) == new_abbr
        assert surrogate_location(KR, abbr) == (new_abbr, "state")
    assert surrogate_state(KR, "N.Y.") == surrogate_state(KR, "NY")
    assert surrogate_state(KR, "california") == rows[_derange("state", len(rows), 4)][0].lower()
    with pytest.raises(AnonymizationError) as e:
        surrogate_state(KR, "ca")  # lower case is no abbreviation, and no state name
    assert e.value.code == "E441" and "USPS" in e.value.hint


def test_countries_and_their_abbreviations_are_keyed_derangements():
    for i, abbr in enumerate(COUNTRY_ABBR):
        assert surrogate_country(KR, abbr) == COUNTRY_ABBR[_derange("country-abbr", len(COUNTRY_ABBR), i)]
    assert surrogate_country(KR, "U.S.") == surrogate_country(KR, "us") == surrogate_country(KR, "USA")
    lst = load_list("countries")
    for name in ("Germany", "Peru", "united kingdom", "JAPAN"):
        want = lst.entries[_derange("country", len(lst), lst.index[norm(name)])]
        assert surrogate_country(KR, name) == case_like(name, want)
    usa = lst.entries[_derange("country", len(lst), lst.index["united states of america"])]
    assert surrogate_country(KR, "America") == usa
    assert surrogate_location(KR, "Germany")[1] == "country"
    with pytest.raises(AnonymizationError) as e:
        surrogate_country(KR, "Atlantis")
    assert e.value.code == "E442" and e.value.message and "countries.txt" in e.value.hint


def test_cities_are_the_keyed_choice_of_the_city_list():
    for city in ("Palo Alto", "Springfield", "BOSTON", "Qzxville"):
        assert surrogate_city(KR, city) == case_like(city, _choose("cities", city, "city"))
    assert surrogate_location(KR, "Springfield") == (
        case_like("Springfield", _choose("cities", "Springfield", "city")),
        "city",
    )


def test_zip_codes_are_encrypted_under_their_own_context():
    for z in ("94304", "94304-1234", "021151234"):
        assert surrogate_zip(KR, z) == encrypt_identifier(KR, z, "location", "zip")
        assert surrogate_location(KR, z) == (surrogate_zip(KR, z), "zip")


def test_street_numbers_names_and_suffixes():
    num = encrypt_identifier(KR, "1234", "location", "street-number")
    name = case_like("Oak", _choose("streets", "Oak", "street"))
    assert surrogate_street(KR, "1234 Oak Street") == f"{num} {name} Street"
    assert surrogate_location(KR, "1234 Oak Street") == (f"{num} {name} Street", "street")
    run = case_like("Martin Luther King", _choose("streets", "Martin Luther King", "street"))
    assert (
        surrogate_street(KR, "12 Martin Luther King Blvd")
        == f"{encrypt_identifier(KR, '12', 'location', 'street-number')} {run} Blvd"
    )
    park = case_like("Park", _choose("streets", "Park", "street"))
    assert surrogate_street(KR, "Park Avenue") == f"{park} Avenue"  # every word a suffix word: the first is the name
    assert surrogate_street(KR, "Apt 4B") == f"Apt {encrypt_identifier(KR, '4B', 'location', 'street-number')}"


@pytest.mark.parametrize("n", list(range(1, 40)) + [101, 111, 112, 113, 121])
def test_street_ordinals_are_written_for_the_new_number(n):
    value = f"{n}{_english_ordinal(n)} Avenue"
    new = encrypt_identifier(KR, str(n), "location", "street-ordinal")
    assert surrogate_street(KR, value) == f"{new}{_english_ordinal(int(new))} Avenue"
    upper = f"{n}{_english_ordinal(n).upper()} AVENUE"
    assert surrogate_street(KR, upper) == f"{new}{_english_ordinal(int(new)).upper()} AVENUE"


def test_a_span_of_unit_or_direction_words_only_is_a_city_surrogate():
    for value in ("Rm", "NW", "Ave"):
        assert location_subtype(value) == "city"
        assert surrogate_location(KR, value) == (surrogate_city(KR, value), "city")
    assert location_subtype("Rm 4") == "street"  # a number names a place: the street rule keeps "Rm"


@pytest.mark.parametrize(
    "value,kind",
    [
        ("Boston MA", "address"),
        ("Boston MA 02115", "address"),
        ("Boston, MA", "address"),
        ("Suite 4", "street"),
        ("St. Louis", "city"),
        ("Court Street", "street"),
        ("#12", "street"),
        ("Elm", "city"),
        ("Qzx Falls", "city"),
        ("12 Elm", "street"),
    ],
)
def test_subtypes(value, kind):
    assert location_subtype(value) == kind
    out, got = surrogate_location(KR, value)
    assert got == kind and out != value


def test_an_address_maps_each_part_by_its_own_rule():
    out, kind = surrogate_location(KR, "Palo Alto, CA 94304")
    assert kind == "address"
    assert out == f"{surrogate_city(KR, 'Palo Alto')}, {surrogate_state(KR, 'CA')} {surrogate_zip(KR, '94304')}"
    out, kind = surrogate_location(KR, "Boston MA")
    assert (out, kind) == (f"{surrogate_city(KR, 'Boston')} {surrogate_state(KR, 'MA')}", "address")
    out, _ = surrogate_location(KR, " Boston ,  02115 ")
    assert out == f" {surrogate_city(KR, 'Boston')} ,  {surrogate_zip(KR, '02115')} "


@pytest.mark.parametrize("value", ["--", " ", ",,"])
def test_a_span_without_letters_or_digits_is_e440(value):
    with pytest.raises(AnonymizationError) as e:
        surrogate_location(KR, value)
    assert e.value.code == "E440" and e.value.message and e.value.hint


def test_a_zip_after_a_street_with_a_number_stays_part_of_the_street():
    """Only a part without digits is split from its ZIP code ("Boston 02115")."""
    assert surrogate_location(KR, "12 Elm St 94304") == (surrogate_street(KR, "12 Elm St 94304"), "street")
    assert location_subtype("12 Main MA") == "street"


def test_comma_separated_parts_are_an_address_whatever_the_parts():
    out, kind = surrogate_location(KR, "Springfield, Elm")
    assert (out, kind) == (f"{surrogate_city(KR, 'Springfield')}, {surrogate_city(KR, 'Elm')}", "address")


def test_a_span_no_rule_recognises_is_a_street():
    assert location_subtype("Q@x") == "street"
    assert surrogate_location(KR, "Q@x") == (surrogate_street(KR, "Q@x"), "street")
    assert location_subtype("Apt B") == "street"  # a unit word without a number


@pytest.mark.parametrize(
    "value,run",
    [("12 Martin Luther King", "Martin Luther King"), ("7 Saint-Denis St", "Saint-Denis"), ("9 D'Arcy Rd", "D'Arcy")],
)
def test_a_run_of_name_words_joined_by_a_space_hyphen_or_apostrophe_is_one_street_name(value, run):
    number = value.split()[0]
    rest = value[len(number) + 1 + len(run) :]
    name = case_like(run, _choose("streets", run, "street"))
    assert surrogate_street(KR, value) == f"{encrypt_identifier(KR, number, 'location', 'street-number')} {name}{rest}"


def test_e441_names_what_is_wrong():
    with pytest.raises(AnonymizationError) as e:
        surrogate_state(KR, "Atlantis")
    assert e.value.code == "E441" and "state" in e.value.message and "USPS" in e.value.hint


def _street_name(word: str) -> str:
    return case_like(word, _choose("streets", word, "street"))


def _number(n: str) -> str:
    return encrypt_identifier(KR, n, "location", "street-number")


def test_when_every_word_is_a_street_type_the_first_one_is_the_name():
    assert surrogate_street(KR, "Court Street") == f"{_street_name('Court')} Street"
    assert surrogate_street(KR, "Elm Court Street") == f"{_street_name('Elm')} Court Street"  # a name: none renamed
    new = encrypt_identifier(KR, "5", "location", "street-ordinal")
    for value in ("5th Ave Street", "5TH AVE STREET"):  # an ordinal is the name: none renamed
        suffix = _english_ordinal(int(new))
        want = f"{new}{suffix if value[1] == 't' else suffix.upper()}{value[3:]}"
        assert surrogate_street(KR, value) == want


def test_every_number_after_a_name_and_every_leading_character_is_kept_in_place():
    assert surrogate_street(KR, "Elm 12") == f"{_street_name('Elm')} {_number('12')}"
    assert surrogate_street(KR, "#12") == f"#{_number('12')}"
    assert surrogate_street(KR, " 12 Elm St") == f" {_number('12')} {_street_name('Elm')} St"


@pytest.mark.parametrize("value", ["Königsallee 12", "12 Königsallee", "Calle Ñandú 5"])
def test_a_non_ascii_place_with_a_digit_is_a_street_and_its_digits_are_replaced(value: str) -> None:
    # non-ASCII text takes _has_digit's general path (any Unicode digit), ASCII text its regex
    assert location_subtype(value) == "street"
    out, kind = surrogate_location(KR, value)
    assert kind == "street" and out != value
    assert [c for c in value if c.isdigit()] != [c for c in out if c.isdigit()]


@pytest.mark.parametrize("value", ["Calle Ñandú ٣", "Rue de la Paix ２", "Boston ٣"])
def test_a_place_with_a_non_ascii_digit_is_a_street_and_fails_closed(value: str) -> None:
    assert location_subtype(value) == "street"
    with pytest.raises(AnonymizationError) as exc:
        surrogate_location(KR, value)
    assert exc.value.code == "E406"
