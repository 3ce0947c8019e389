"""Person-name surrogates, checked against their own definition in about a second.

Each kind of name word has its own documented rule (``tide_core/anonymize/names.py``): titles and
suffixes kept next to a name, initials and short upper-case clusters by a keyed derangement of A-Z,
every other word by one keyed draw into a single mixed space (a listed name or a spliced,
listed-looking one) whatever the word's own class, digits by format-preserving encryption.  Each test below
recomputes one rule from the key and compares; negative cases differ in one property only.
"""

from __future__ import annotations

import re

import pytest

from tide_core.anonymize.identifiers import DIGITS, permute_payload
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.anonymize.names import (
    ALPHA,
    KEEP,
    LISTED_PERMILLE,
    spliced_name,
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


MIXED = FIRST.entries + LAST.entries


def _word(token: str) -> str:
    """The documented draw for a name word, recomputed from the key."""
    key = norm(token)
    h, u = divmod(KR.mac_int("name", "word", key), 1000)
    listed = {norm(e): i for i, e in enumerate(MIXED)}.get(key)
    if u < LISTED_PERMILLE and listed is not None:
        return MIXED[permutation(SUB, b"mixed", len(MIXED)).derange(listed)]
    counter = 0
    while True:
        word = MIXED[h % len(MIXED)] if u < LISTED_PERMILLE else spliced_name(h)
        if word is not None and norm(word) != key:
            return word
        counter += 1
        h = KR.mac_int("name", "word", key, str(counter))


def test_spliced_names_join_a_head_and_a_tail_of_listed_names():
    src = sorted({e.casefold() for e in MIXED if e.isalpha() and len(e) >= 3})
    n = len(src)
    checked = 0
    for ia, ib in [(0, 1), (17, 4000), (n - 1, 123), (250, 251), (9, 99)]:
        out = spliced_name(ia + n * ib)  # no middle piece (the third digit is 0)
        if out is None:
            continue
        checked += 1
        a, b = src[ia], src[ib]
        w = out.casefold()
        assert out[0].isupper() and 2 <= len(w) <= 12
        assert any(w[:i] == a[:i] and w[i:] == b[len(b) - (len(w) - i) :] for i in range(1, len(a)))
    assert checked >= 3


def test_a_word_gets_its_documented_draw_in_its_own_case():
    for token in ("Xqzvbrt", "Zqwkdb", "John", "Mary", "Smith", "Lee", "Quondamir"):
        want = _word(token)
        assert surrogate_token(KR, token) == want
        assert surrogate_token(KR, token.upper()) == want.upper()
        assert surrogate_token(KR, token.lower()) == want.lower()
        assert norm(want) != norm(token)


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
    assert surrogate_token(KR, "MKTQ") == _word("mktq").upper()  # four letters: a word
    assert surrogate_token(KR, "Js") == case_like("Js", _word("js"))  # not all upper case: a word
    lee = surrogate_token(KR, "LEE")  # a listed name written in capitals is still that name
    assert lee == surrogate_token(KR, "Lee").upper() == _word("Lee").upper() and len(lee) > 1
    jo = surrogate_token(KR, "JO")
    assert jo == surrogate_token(KR, "Jo").upper() == _word("Jo").upper() and len(jo) > 1


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
