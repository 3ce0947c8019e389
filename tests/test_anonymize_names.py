"""Names: keyed list derangements, generated surrogates, shapes, case, consistency, rotation."""

from __future__ import annotations

import random
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tide_core.anonymize.keys import keyring_for_tests
from tide_core.anonymize.names import GENERATED_SPACE, surrogate_name, surrogate_token
from tide_core.anonymize.surrogates import load_list, norm
from tide_core.bench.anonymizer import full_name_set

KA = keyring_for_tests("study1", "k1", "names-a")
KB = keyring_for_tests("study1", "k2", "names-b")


def _shape(s: str) -> str:
    return re.sub(r"[a-z]+", "a", re.sub(r"[A-Z]", "A", s))


def test_surrogate_lists_are_large_and_unique():
    first, last = load_list("first_names"), load_list("last_names")
    assert len(first) > 5000 and len(last) > 5000
    assert not set(first.index) & set(last.index)  # disjoint: one derangement per list
    assert GENERATED_SPACE > 10**7


def test_listed_names_map_by_a_derangement_of_their_list():
    for name in ("first_names", "last_names"):
        lst = load_list(name)
        out = [surrogate_token(KA, e) for e in lst.entries]
        assert len({norm(o) for o in out}) == len(lst)  # a bijection: zero collisions
        assert all(norm(o) in lst.index for o in out)  # stays inside the list
        assert all(norm(o) != norm(e) for o, e in zip(out, lst.entries, strict=True))  # never itself


def test_case_patterns_initials_hyphens_and_last_first_shape():
    title = surrogate_name(KA, "John Smith")
    assert re.fullmatch(r"[A-Z][a-z'A-Z]+ [A-Z][a-z'A-Z]+", title)
    assert surrogate_name(KA, "JOHN SMITH") == title.upper()
    assert surrogate_name(KA, "john smith") == title.lower()
    f, l_ = title.split()
    assert surrogate_name(KA, "Smith, John") == f"{l_}, {f}"
    assert surrogate_name(KA, "SMITH, JOHN") == f"{l_.upper()}, {f.upper()}"
    out = surrogate_name(KA, "J. R. Smith")
    assert re.fullmatch(r"[A-Z]\. [A-Z]\. " + re.escape(l_), out) and out[0] != "J" and out[3] != "R"
    hy = surrogate_name(KA, "Mary-Ann Smith-Jones")
    assert _shape(hy).count("-") == 2 and hy.split()[1].startswith(l_ + "-")
    assert surrogate_name(KA, "John Smith Jr.") == f"{title} Jr."


def test_same_name_same_surrogate_new_key_new_surrogate():
    names = full_name_set(random.Random(5), 500)
    a = [surrogate_name(KA, n) for n in names]
    assert a == [surrogate_name(KA, n) for n in names]
    b = [surrogate_name(KB, n) for n in names]
    assert all(x != y for x, y in zip(a, b, strict=True))
    assert len({x.casefold() for x in a}) == len(names)


def test_unlisted_names_get_pronounceable_generated_surrogates_outside_the_lists():
    out = surrogate_token(KA, "Xqzvbrt")
    assert out.isalpha() and out[0].isupper() and norm(out) not in load_list("first_names").index
    assert norm(out) not in load_list("last_names").index
    assert surrogate_token(KA, "XQZVBRT") == out.upper()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=12),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from([" ", "-", ", "]),
)
def test_token_structure_is_preserved(tokens, sep):
    value = sep.join(tokens)
    out = surrogate_name(KA, value)
    assert out == surrogate_name(KA, value)
    assert len(re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)*", out)) == len(tokens)
    assert re.sub(r"[^\s,-]", "", out) == re.sub(r"[^\s,-]", "", value)


def test_initial_clusters_and_title_only_spans_never_pass_through():
    for value in ("SR", "JS", "MKT", "MD"):
        out = surrogate_name(KA, value)
        assert len(out) == len(value) and out.isupper() and out != value
        assert all(a != b for a, b in zip(out, value, strict=True))  # each letter by a derangement of A-Z
    assert surrogate_name(KA, "Mark Lee MD").endswith(" MD")  # a suffix next to a name is kept
