"""Span resolution: longest wins, same-label union, determinism (incl. property tests)."""

from __future__ import annotations

import random
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tide_core.errors import ConfigError
from tide_core.spans import Span
from tide_core.steps.resolve import ResolutionPolicy, resolve_spans
from tide_core.types import LABELS


def S(start, end, label="DATE", score=0.5, rec="r@1", note="n1"):
    return Span(note, start, end, label, score, rec)


def test_longest_wins_across_labels():
    out = resolve_spans([S(0, 5, "PATIENT", 0.99), S(0, 10, "DOCTOR", 0.3)])
    assert out == [S(0, 10, "DOCTOR", 0.3)]


def test_tie_on_length_goes_to_label_priority_then_score_then_name():
    a, b = S(0, 5, "ID", 0.2), S(0, 5, "PHONE", 0.9)
    assert resolve_spans([b, a]) == [a]  # ID before PHONE in the default priority
    pol = ResolutionPolicy(label_priority=("PHONE", "ID"))
    assert resolve_spans([a, b], pol) == [b]
    c, d = S(2, 7, "PHONE", 0.4, "x@1"), S(0, 5, "PHONE", 0.4, "y@1")
    # different labels/positions, same length and label: score tie -> recognizer name decides
    e, f = S(0, 5, "DATE", 0.4, "b@1"), S(3, 8, "AGE", 0.4, "a@1")
    assert resolve_spans([e, f]) == [e]  # DATE before AGE
    g, h = S(0, 5, "AGE", 0.4, "b@1"), S(3, 8, "AGE", 0.8, "a@1")
    assert resolve_spans([g, h], ResolutionPolicy(merge_same_label_overlaps=False)) == [h]
    i, j = S(0, 5, "AGE", 0.4, "b@1"), S(3, 8, "AGE", 0.4, "a@1")
    assert resolve_spans([i, j], ResolutionPolicy(merge_same_label_overlaps=False)) == [j]
    assert resolve_spans([c, d]) == [S(0, 7, "PHONE", 0.4, "x@1")]  # same label: union


def test_same_label_overlaps_are_unioned_with_max_score():
    out = resolve_spans(
        [S(0, 6, "DOCTOR", 0.4, "a@1"), S(4, 12, "DOCTOR", 0.9, "b@1"), S(11, 15, "DOCTOR", 0.5, "c@1")]
    )
    assert out == [S(0, 15, "DOCTOR", 0.9, "b@1")]


def test_adjacent_spans_are_not_merged():
    out = resolve_spans([S(0, 5, "DATE"), S(5, 10, "DATE")])
    assert out == [S(0, 5, "DATE"), S(5, 10, "DATE")]


def test_union_can_outgrow_a_longer_other_label():
    # Two DATE pieces union to [0, 12) which then beats the 10-char ID.
    out = resolve_spans([S(0, 7, "DATE"), S(5, 12, "DATE"), S(1, 11, "ID")])
    assert out == [S(0, 12, "DATE")]


def test_min_score_per_label_and_default():
    spans = [S(0, 3, "AGE", 0.3), S(5, 9, "DATE", 0.3)]
    assert resolve_spans(spans, ResolutionPolicy(min_score={"AGE": 0.5})) == [S(5, 9, "DATE", 0.3)]
    assert resolve_spans(spans, ResolutionPolicy(default_min_score=0.4)) == []


def test_notes_are_resolved_separately():
    out = resolve_spans([S(0, 5, note="b"), S(0, 9, "ID", note="a"), S(2, 4, "ID", note="b")])
    assert out == [S(0, 9, "ID", note="a"), S(0, 5, note="b")]


def test_policy_validation_and_dict_form():
    with pytest.raises(ConfigError) as e:
        ResolutionPolicy(label_priority=("NAME",))
    assert e.value.code == "E120"
    with pytest.raises(ConfigError):
        ResolutionPolicy.from_dict({"bogus": 1})
    pol = ResolutionPolicy.from_dict({"min_score": {"ID": 0.5}, "label_priority": ["ID", "DATE"]})
    assert pol.threshold("ID") == 0.5 and pol.rank("ID") == 0 and pol.rank("OTHER") > pol.rank("DATE")
    assert ResolutionPolicy().config() != pol.config()


# ------------------------------------------------------------------ properties
span_st = st.builds(
    lambda start, length, label, score, rec: Span("n", start, start + length, label, score, rec),
    st.integers(0, 60),
    st.integers(1, 15),
    st.sampled_from(LABELS),
    st.sampled_from([0.1, 0.5, 0.9]),
    st.sampled_from(["a@1", "b@1", "c@1"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(span_st, max_size=25), st.booleans(), st.randoms(use_true_random=False))
def test_properties(spans, merge, rnd):
    policy = ResolutionPolicy(merge_same_label_overlaps=merge)
    out = resolve_spans(spans, policy)
    # non-overlapping and sorted
    for a, b in pairwise(out):
        assert a.end <= b.start
    # every output character was covered by some input span of the same label
    for s in out:
        for c in range(s.start, s.end):
            assert any(i.start <= c < i.end and i.label == s.label for i in spans)
    # order independence
    shuffled = list(spans)
    rnd.shuffle(shuffled)
    assert resolve_spans(shuffled, policy) == out
    # idempotent
    assert resolve_spans(out, policy) == out
    # every input span is either kept, inside a kept union, or overlaps a kept span
    for i in spans:
        assert any(o.start < i.end and i.start < o.end for o in out)


def test_large_random_input_is_deterministic():
    rng = random.Random(3)
    spans = [
        S(a, a + rng.randint(1, 20), rng.choice(LABELS), rng.random(), rng.choice("xyz") + "@1")
        for a in (rng.randint(0, 5000) for _ in range(3000))
    ]
    first = resolve_spans(spans)
    rng.shuffle(spans)
    assert resolve_spans(spans) == first
    assert all(a.end <= b.start for a, b in pairwise(first))
