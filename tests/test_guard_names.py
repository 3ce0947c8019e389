"""Person-name surrogates, checked against their own definition in about a second.

Each kind of name word has its own documented rule (``tide_core/anonymize/names.py``): titles and
suffixes kept next to a name, initials and short upper-case clusters by a keyed derangement of A-Z,
listed first and last names by a derangement of their own list, digits by format-preserving
encryption, anything else by a keyed generated name that is never a listed name.  Each test below
recomputes one rule from the key and compares; negative cases differ in one property only.
"""

from __future__ import annotations

import re

import pytest

from tide_core.anonymize.identifiers import DIGITS, permute_payload
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.anonymize.names import (
    _CODAS,
    _ENDINGS,
    _ONSETS,
    _VOWELS,
    ALPHA,
    GENERATED_SPACE,
    KEEP,
    SYLLABLES,
    generated_name,
    surrogate_name,
    surrogate_token,
)
from tide_core.anonymize.small_domain import cached_subkey, permutation
from tide_core.anonymize.surrogates import case_like, load_list, norm
from tide_core.errors import AnonymizationError

KR = keyring_for_tests("guard-names", "k1", "guard-names-seed")
SUB = cached_subkey(KR, "name")
INITIAL = permutation(SUB, b"initial", 26)
FIRST, LAST = load_list("first_names"), load_list("last_names")


@pytest.fixture(autouse=True)
def _fresh_caches():
    """Lists and permutations are memoised: start each test without them, so that what is checked is
    the rule itself and not a value memoised earlier in the same process."""
    load_list.cache_clear()
    permutation.cache_clear()


def _initial(ch: str) -> str:
    letter = ALPHA[INITIAL.derange(ALPHA.index(ch.upper()))]
    return letter if ch.isupper() else letter.lower()


def _generated(token: str, counter: int) -> str:
    return generated_name(KR.mac_int("name", "generated", norm(token), str(counter)) % GENERATED_SPACE)


def test_generated_names_decode_two_syllables_and_an_ending_in_mixed_radix():
    assert SYLLABLES == len(_ONSETS) * len(_VOWELS) * len(_CODAS) == 30 * 10 * 12
    assert GENERATED_SPACE == SYLLABLES * SYLLABLES * len(_ENDINGS)
    for o1, v1, c1, o2, v2, c2, e in [(0, 0, 0, 0, 0, 0, 0), (19, 3, 5, 29, 9, 11, 10), (1, 2, 3, 4, 5, 6, 7)]:
        h = o1 + 30 * (v1 + 10 * c1) + SYLLABLES * (o2 + 30 * (v2 + 10 * c2)) + SYLLABLES**2 * e
        word = _ONSETS[o1] + _VOWELS[v1] + _CODAS[c1] + _ONSETS[o2] + _VOWELS[v2] + _CODAS[c2] + _ENDINGS[e]
        assert generated_name(h) == word[0].upper() + word[1:]
    assert generated_name(0) == "Babaa"
    assert generated_name(GENERATED_SPACE - 1) == "Thyllthyll"  # every digit at its largest; no ending


def test_an_unlisted_word_gets_the_first_generated_name_that_is_not_listed():
    assert surrogate_token(KR, "Xqzvbrt") == _generated("Xqzvbrt", 0)
    assert surrogate_token(KR, "XQZVBRT") == _generated("Xqzvbrt", 0).upper()
    assert surrogate_token(KR, "xqzvbrt") == _generated("Xqzvbrt", 0).lower()
    # "zqwkdb": the first draw is a listed name, so the second one is used
    assert norm(_generated("zqwkdb", 0)) in FIRST.index or norm(_generated("zqwkdb", 0)) in LAST.index
    out = surrogate_token(KR, "Zqwkdb")
    assert out == _generated("zqwkdb", 1) and out not in FIRST and out not in LAST


@pytest.mark.parametrize("token,lst", [("John", "first"), ("Mary", "first"), ("Smith", "last"), ("Lee", "last")])
def test_a_listed_name_maps_by_the_derangement_of_its_own_list(token, lst):
    names = FIRST if lst == "first" else LAST
    p = permutation(SUB, f"list|{names.name}|".encode(), len(names))
    want = names.entries[p.derange(names.index[norm(token)])]
    assert surrogate_token(KR, token) == want
    assert surrogate_token(KR, token.upper()) == want.upper()
    assert surrogate_token(KR, token.lower()) == want.lower()


def test_single_letters_map_by_the_keyed_derangement_of_the_alphabet():
    for ch in ALPHA + ALPHA.lower():
        assert surrogate_token(KR, ch) == _initial(ch)
    assert sorted(_initial(c) for c in ALPHA) == list(ALPHA)
    # a letter outside A-Z takes a keyed position, in its own case
    for ch in ("\u00c9", "\u00e9", "\u00d8"):
        letter = ALPHA[INITIAL.derange(KR.mac_int("name", "initial-hash", ch) % 26)]
        assert surrogate_token(KR, ch) == (letter if ch.isupper() else letter.lower())


def test_two_or_three_upper_case_letters_are_initials_unless_they_are_a_listed_name():
    assert surrogate_token(KR, "JS") == _initial("J") + _initial("S")
    assert surrogate_token(KR, "MKT") == _initial("M") + _initial("K") + _initial("T")
    assert surrogate_token(KR, "MKTQ") == _generated("mktq", 0).upper()  # four letters: a word
    assert surrogate_token(KR, "Js") == case_like("Js", _generated("js", 0))  # not all upper case: a word
    lee = surrogate_token(KR, "LEE")  # a listed name written in capitals is still that name
    assert lee == surrogate_token(KR, "Lee").upper() and len(lee) > 1 and norm(lee) in LAST.index
    jo = surrogate_token(KR, "JO")
    assert jo == surrogate_token(KR, "Jo").upper() and norm(jo) in FIRST.index


def test_digits_inside_a_name_are_encrypted_with_the_name_key():
    for token in ("7", "42", "1234"):
        want = permute_payload(SUB, "name-digits", [DIGITS] * len(token), token)
        assert surrogate_token(KR, token) == want and want != token
    assert surrogate_name(KR, "John 2") == f"{surrogate_token(KR, 'John')} {surrogate_token(KR, '2')}"


@pytest.mark.parametrize("word", sorted(KEEP))
def test_titles_and_suffixes_next_to_a_name_are_kept_in_any_case(word):
    for w in (word, word.upper(), word.capitalize()):
        assert surrogate_token(KR, w) == w
        out = surrogate_name(KR, f"{w} Smith")
        assert out == f"{w} {surrogate_token(KR, 'Smith')}"


def test_a_span_of_titles_only_is_mapped_letter_by_letter():
    assert surrogate_name(KR, "MD") == _initial("M") + _initial("D")
    assert surrogate_name(KR, "Sr") == _initial("S") + _initial("r")
    assert surrogate_name(KR, "Dr. MD") == f"{_initial('D')}{_initial('r')}. {_initial('M')}{_initial('D')}"
    assert surrogate_token(KR, "Jr", keep_titles=False) == _initial("J") + _initial("r")
    assert surrogate_name(KR, "Dr. Jones") == f"Dr. {surrogate_token(KR, 'Jones')}"


def test_words_with_apostrophes_are_one_word():
    for value in ("O'Brien", "D\u2019Angelo"):
        out = surrogate_name(KR, value)
        assert out == surrogate_token(KR, value) and "'" not in out and "\u2019" not in out


def test_the_shape_between_words_is_kept():
    smith, john = surrogate_token(KR, "Smith"), surrogate_token(KR, "John")
    assert surrogate_name(KR, "  Smith,John  ") == f"  {smith},{john}  "
    assert surrogate_name(KR, "J. Smith") == f"{_initial('J')}. {smith}"


@pytest.mark.parametrize("value", ["123", "--", "", " 42 "])
def test_a_name_span_without_letters_is_e430(value):
    with pytest.raises(AnonymizationError) as e:
        surrogate_name(KR, value)
    assert e.value.code == "E430" and e.value.message and "PATIENT/DOCTOR" in e.value.hint
    assert surrogate_name(KR, value + "A") != value + "A"  # one letter more: a name


def test_keep_titles_false_changes_only_title_words():
    for word in ("Smith", "John", "Xqzvbrt", "JS", "7"):
        assert surrogate_token(KR, word, keep_titles=False) == surrogate_token(KR, word)
    assert surrogate_token(KR, "MD", keep_titles=False) == _initial("M") + _initial("D")


@pytest.mark.parametrize(
    "name",
    [
        "Mary Ann Smith",
        "SMITH, Mary Ann",
        "Jean-Luc Picard Ortega",
        "Dr. Mary Ann Smith Jr",
        "J. R. Tolkien Smith",
        "Prof. Dr. Maria van der Berg",
        "Dr. Prof. Smith",
    ],
)
def test_every_word_of_a_long_name_gets_its_own_surrogate(name: str) -> None:
    # same value, same surrogate everywhere: each word of a three- or four-word name is replaced
    # exactly as the word alone would be (a word keyed by its neighbour would break this)
    out = surrogate_name(KR, name)
    assert out == re.sub(r"[^\W\d_]+|\d+", lambda m: surrogate_token(KR, m[0]), name)
    kept = {"dr", "jr", "prof", "van", "der"}
    assert not {w for w in re.findall(r"[^\W\d_]{2,}", name) if norm(w) not in kept} & set(re.findall(r"\w+", out))
