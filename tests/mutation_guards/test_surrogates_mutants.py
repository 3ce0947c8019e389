"""Surrogate word lists and keyed choices from them, checked against their definition in about a second.

``tide_core/anonymize/surrogates.py``: a list is read one entry a line (the first tab-separated field,
stripped; blank lines skipped; the first spelling of entries equal modulo case and whitespace kept).
A listed value maps by a keyed derangement of its list (tweak ``list|NAME|CONTEXT``), any other value
to the entry at a keyed index (``mac_int(domain, "list-hash", NAME, CONTEXT, norm(value))``).  Each
test recomputes one rule from the key; negative cases differ in one property only.
"""

from __future__ import annotations

import pytest

from tide_core.anonymize import surrogates
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.anonymize.small_domain import permutation
from tide_core.anonymize.surrogates import SurrogateList, case_like, load_list, norm, with_suffix

KR = keyring_for_tests("guard-surrogates", "k1", "guard-surrogates-seed")
KR2 = keyring_for_tests("guard-surrogates", "k2", "guard-surrogates-other")


@pytest.fixture(autouse=True)
def _fresh_caches():
    """Lists and permutations are memoised: start each test without them, so that what is checked is
    the rule itself and not a value memoised earlier in the same process."""
    load_list.cache_clear()
    with_suffix.cache_clear()
    permutation.cache_clear()
    yield
    load_list.cache_clear()
    with_suffix.cache_clear()


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    """A list directory of our own (real files), so every line rule is exercised."""
    monkeypatch.setattr(surrogates, "DATA_DIR", tmp_path)
    return tmp_path


def test_norm_ignores_case_and_whitespace_and_curly_apostrophes():
    assert norm("  St.\u2019s   Mary\tHOSPITAL\n") == "st.'s mary hospital"
    assert norm("Smith") == norm("SMITH") == norm("smith") == "smith"
    assert norm("Stra\u00dfe") == "strasse"  # case-folded, not only lower-cased
    assert norm("O'Neil") == norm("O\u2019Neil") != norm("O`Neil")
    assert norm("") == ""


def test_a_list_indexes_its_entries_by_their_lookup_form():
    lst = SurrogateList("t", ("Alpha", "Beta Gamma", "DELTA"))
    assert lst.name == "t" and lst.entries == ("Alpha", "Beta Gamma", "DELTA")
    assert lst.index == {"alpha": 0, "beta gamma": 1, "delta": 2}
    assert len(lst) == 3
    assert "ALPHA" in lst and " beta   GAMMA " in lst and "delta" in lst
    assert "Alph" not in lst and "Epsilon" not in lst


def test_a_listed_value_maps_by_a_keyed_derangement_of_its_list():
    lst = load_list("hospitals")
    for context in ("", "ctx"):
        p = permutation(KR.subkey("hospital"), f"list|hospitals|{context}".encode(), len(lst))
        for i in (0, 1, 17, len(lst) - 1):
            e = lst.entries[i]
            got = lst.choose(KR, "hospital", e, context)
            assert got == lst.entries[p.derange(i)] != e
            assert lst.choose(KR, "hospital", e.upper(), context) == got  # looked up case-insensitively
    e = lst.entries[5]
    assert lst.choose(KR, "hospital", e) == lst.choose(KR, "hospital", e, "")  # "" is the default context


def test_the_context_the_domain_and_the_key_each_change_the_derangement():
    lst = load_list("hospitals")
    sample = lst.entries[:60]
    base = [lst.choose(KR, "hospital", e) for e in sample]
    for other in (
        [lst.choose(KR, "hospital", e, "ctx") for e in sample],
        [lst.choose(KR, "other", e) for e in sample],
        [lst.choose(KR2, "hospital", e) for e in sample],
    ):
        assert sum(a != b for a, b in zip(base, other, strict=True)) > 50


def test_the_derangement_is_one_to_one_on_the_whole_list():
    lst = load_list("organisations")
    out = [lst.choose(KR, "other", e) for e in lst.entries]
    assert len(set(out)) == len(lst)
    assert all(a != b for a, b in zip(out, lst.entries, strict=True))


def test_an_unlisted_value_maps_to_a_keyed_index():
    lst = load_list("hospitals")
    for value, context in (("Nowhere Infirmary", ""), ("nowhere   INFIRMARY", ""), ("Nowhere Infirmary", "c")):
        assert value not in lst
        i = KR.mac_int("hospital", "list-hash", "hospitals", context, norm(value)) % len(lst)
        assert lst.choose(KR, "hospital", value, context) == lst.entries[i]
    assert lst.choose(KR, "hospital", "Nowhere Infirmary") == lst.choose(KR, "hospital", "NOWHERE infirmary")


def test_the_list_name_is_part_of_both_choices():
    entries = tuple(f"Entry {i}" for i in range(40))
    a, b = SurrogateList("a", entries), SurrogateList("b", entries)
    assert sum(a.choose(KR, "other", e) != b.choose(KR, "other", e) for e in entries) > 30
    values = [f"Unlisted {i}" for i in range(40)]
    assert sum(a.choose(KR, "other", v) != b.choose(KR, "other", v) for v in values) > 30


def test_lists_are_read_one_entry_a_line(data_dir):
    (data_dir / "t.txt").write_text(
        "Alpha\tignored\tcolumns\n\n   \n  Beta Gamma  \nALPHA\nbeta   gamma\t2\n\u00c9clair\n\tnot-a-name\nDelta",
        encoding="utf-8",
    )
    lst = load_list("t")
    assert lst.name == "t"
    assert lst.entries == ("Alpha", "Beta Gamma", "\u00c9clair", "Delta")  # first spelling kept, in file order
    assert lst.index == {"alpha": 0, "beta gamma": 1, "\u00e9clair": 2, "delta": 3}


def test_real_lists_hold_each_entry_once_modulo_case():
    for name in ("hospitals", "organisations", "first_names", "last_names", "cities", "streets"):
        lst = load_list(name)
        assert len(lst) > 40
        assert len({norm(e) for e in lst.entries}) == len(lst.entries)
        assert all(e == e.strip() and e and "\t" not in e for e in lst.entries)
    states = load_list("states")  # the one list with a second column
    assert "California" in states.entries and all("\t" not in e for e in states.entries)


def test_with_suffix_keeps_the_entries_whose_last_words_are_the_suffix(data_dir):
    (data_dir / "t.txt").write_text(
        "Alpha Clinic\nClinic\nAlphaClinic\nClinic Alpha\nBETA CLINIC\nGamma  Dental  Clinic\nDelta Clinics\n",
        encoding="utf-8",
    )
    sub = with_suffix("t", "CLINIC")
    assert sub is not None
    assert sub.name == "t/clinic"
    assert sub.entries == ("Alpha Clinic", "BETA CLINIC", "Gamma  Dental  Clinic")
    two = with_suffix("t", "dental clinic")
    assert two is not None and two.name == "t/dental clinic" and two.entries == ("Gamma  Dental  Clinic",)
    assert with_suffix("t", "Hospital") is None  # no entry has it


def test_with_suffix_on_a_real_list():
    sub = with_suffix("hospitals", "Children's Hospital")
    assert sub is not None and len(sub) > 10
    assert all(norm(e).endswith(" children's hospital") for e in sub.entries)
    full = load_list("hospitals")
    assert sub.entries == tuple(e for e in full.entries if norm(e).endswith(" children's hospital"))


@pytest.mark.parametrize(
    "template, word, expected",
    [
        ("SHC", "Mercy Hospital", "MERCY HOSPITAL"),  # all upper case
        ("A1B", "Mercy", "MERCY"),  # digits and punctuation do not count
        ("S", "Mercy", "Mercy"),  # one upper-case letter: as listed
        ("s", "Mercy", "mercy"),  # one lower-case letter: lower case
        ("shc", "Mercy Hospital", "mercy hospital"),
        ("o'neil-2", "McDonald", "mcdonald"),
        ("Shc", "mercy HOSPITAL", "mercy HOSPITAL"),  # mixed: as listed
        ("sHC", "Mercy", "Mercy"),
        ("", "Mercy", "Mercy"),  # no letters: as listed
        ("123", "Mercy", "Mercy"),
    ],
)
def test_case_like(template, word, expected):
    assert case_like(template, word) == expected


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("ÉLODIE", "MARTIN"),  # two or more letters, all upper case: upper case
        ("élodie", "martin"),  # all lower case: lower case
        ("Élodie", "Martin"),  # mixed: as listed
        ("ÉL", "MARTIN"),
        ("É", "Martin"),  # one upper-case letter is not an all-caps word: as listed
        ("é", "martin"),
        ("JOSÉ-LUIS", "MARTIN"),
        ("O'NÉILL", "MARTIN"),
        ("Ö.", "Martin"),
        ("ß", "martin"),  # a lower-case letter with no single upper-case form
        ("１２", "Martin"),  # no letters at all: as listed
    ],
)
def test_case_like_follows_the_template_for_non_ascii_templates(template: str, expected: str) -> None:
    assert case_like(template, "Martin") == expected


@pytest.mark.parametrize("ascii_template", ["SMITH", "smith", "Smith", "S", "s", "O'NEILL", "J.", "12", "McDONALD"])
def test_case_like_gives_the_same_answer_on_its_ascii_path_and_its_general_path(ascii_template: str) -> None:
    # the ASCII fast path must say what the general rule says: swap one ASCII letter for a
    # non-ASCII letter of the same case and compare
    swapped = ascii_template.replace("S", "Š").replace("s", "š").replace("E", "É").replace("e", "é")
    if swapped == ascii_template:
        swapped = ascii_template + "\u00a0"  # a non-ASCII non-letter keeps the letters as they are
    assert not swapped.isascii()
    assert case_like(swapped, "Martin") == case_like(ascii_template, "Martin")


def test_a_list_s_default_context_is_the_empty_context() -> None:
    names = load_list("last_names")
    key = norm(names.entries[5])
    assert names.deranged(KR, "name", 5) == names.deranged(KR, "name", 5, "")
    assert names.choose_normed(KR, "name", key) == names.choose_normed(KR, "name", key, "")
    assert names.choose_normed(KR, "name", "zzqx-not-listed") == names.choose_normed(KR, "name", "zzqx-not-listed", "")
    # and the context matters: some entry moves when it changes
    assert any(names.deranged(KR, "name", i) != names.deranged(KR, "name", i, "ctx") for i in range(20))
