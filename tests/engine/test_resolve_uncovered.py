"""tide.resolve@2: a conflict decides a span's label, never whether its characters are replaced.

The parts of a losing span that no winner covers come back (``uncovered_parts``) and
``finish_note`` adds them after roles and propagation, tidied; the characters the output covers
are exactly those the input spans above their thresholds cover.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from tide_core.engine.recognition import finish_note
from tide_core.spans import Span
from tide_core.steps.resolve import ResolutionPolicy, resolve_spans, uncovered_parts
from tide_core.steps.span_tidy import tidy_spans
from tide_core.types import LABELS


def S(start, end, label="DATE", score=0.5, rec="r@1", note="n1"):
    return Span(note, start, end, label, score, rec)


def _covered(spans) -> set[int]:
    return {i for s in spans for i in range(s.start, s.end)}


def _disjoint(spans) -> bool:
    ordered = sorted(spans, key=lambda s: (s.start, s.end))
    return all(a.end <= b.start for a, b in zip(ordered, ordered[1:], strict=False))


def test_the_part_of_a_losing_span_beyond_the_winner_is_returned_with_its_label():
    name, date = S(0, 22, "DOCTOR", 0.9, "hf@1"), S(18, 35, "DATE", 0.95, "regex@3")
    kept = resolve_spans([name, date])
    assert kept == [name]  # the longer name wins the overlap
    assert uncovered_parts([name, date], kept) == [S(22, 35, "DATE", 0.95, "regex@3")]


def test_a_loser_inside_the_winner_gives_nothing_and_gaps_on_both_sides_are_returned():
    outer, inner = S(0, 20, "HOSPITAL"), S(5, 10, "LOCATION")
    assert uncovered_parts([outer, inner], resolve_spans([outer, inner])) == []
    # a loser that sticks out on both sides of two winners: three parts
    a, b, wide = S(10, 20, "ID", 0.9), S(30, 40, "ID", 0.9), S(5, 45, "OTHER", 0.4)
    kept = [a, b]  # as if roles/propagation had left these
    parts = uncovered_parts([a, b, wide], kept)
    assert parts == [S(5, 10, "OTHER", 0.4), S(20, 30, "OTHER", 0.4), S(40, 45, "OTHER", 0.4)]


def test_overlapping_losers_share_out_the_uncovered_characters_once():
    win, l1, l2 = S(0, 30, "DOCTOR"), S(25, 40, "DATE", 0.9), S(28, 38, "AGE", 0.9)
    parts = uncovered_parts([win, l1, l2], resolve_spans([win, l1, l2]))
    assert parts == [S(30, 40, "DATE", 0.9)]  # the longer loser takes them first, in resolution order


def test_spans_under_their_threshold_stay_dropped():
    policy = ResolutionPolicy(min_score={"DATE": 0.8})
    name, weak = S(0, 22, "DOCTOR"), S(18, 35, "DATE", 0.5)
    assert uncovered_parts([name, weak], resolve_spans([name, weak], policy), policy) == []
    strong = S(18, 35, "DATE", 0.85)
    assert uncovered_parts([name, strong], resolve_spans([name, strong], policy), policy) == [S(22, 35, "DATE", 0.85)]


span_strategy = st.builds(
    lambda a, n, label, score: S(a, a + n, label, score),
    st.integers(0, 60),
    st.integers(1, 25),
    st.sampled_from(LABELS),
    st.sampled_from([0.2, 0.5, 0.9]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(span_strategy, max_size=14), st.randoms(use_true_random=False))
def test_resolution_and_its_parts_cover_exactly_what_the_inputs_cover(spans, rnd):
    policy = ResolutionPolicy(min_score={"AGE": 0.5})
    kept = resolve_spans(spans, policy)
    shuffled = list(spans)
    rnd.shuffle(shuffled)
    parts = uncovered_parts(shuffled, kept, policy)
    assert parts == uncovered_parts(spans, kept, policy)  # a function of the set of inputs
    assert _disjoint(kept + parts)
    above = [s for s in spans if s.score >= policy.threshold(s.label)]
    assert _covered(kept + parts) == _covered(above)
    for p in parts:  # each part lies inside an input of its label, score and recognizer
        same = [s for s in above if (s.label, s.score, s.recognizer) == (p.label, p.score, p.recognizer)]
        assert any(s.start <= p.start and p.end <= s.end for s in same)


def test_finish_note_releases_nothing_a_losing_span_covered():
    text = "Dictated by: Matthias Sandoval  Tue 11/24 7:41 AM\n"
    a = text.index("Matthias")
    name = S(a, text.index("Tue") + 3, "DOCTOR", 0.9, "tide.hf@1", note="n")
    date = S(text.index("Tue"), text.index("AM") + 2, "DATE", 0.95, "tide.regex@3", note="n")
    out, record = finish_note("n", [name, date], None, None, text)
    assert record.status == "ok"
    got = [(text[s.start : s.end], s.label, s.recognizer) for s in out]
    # the name won the overlap; the rest of the date is still a DATE span, trimmed of white space
    assert ("11/24 7:41 AM", "DATE", "tide.regex@3") in got
    assert _covered(out) >= set(range(text.index("11/24"), text.index("AM") + 2))
    assert _disjoint(out)


def test_finish_note_coverage_on_random_notes():
    """On random words with random overlapping spans, every letter or digit that a tidied input
    span covers is covered in the output (tidying drops white space and punctuation at the edges).
    Person labels are left out here: tidying drops a person span, or a part of one, that has no
    letter, and propagation may extend a name."""
    rng = random.Random(5)
    words = ["Ann", "Lee", "Tue", "11/24", "7:41", "AM", "MRN", "448812", "St.", "Mary's", "Boston", "MA"]
    for trial in range(200):
        text = " ".join(rng.choice(words) for _ in range(12))
        spans = []
        for _ in range(rng.randint(1, 6)):
            a = rng.randrange(len(text) - 1)
            b = min(len(text), a + rng.randint(2, 25))
            spans.append(S(a, b, rng.choice(["DATE", "HOSPITAL", "ID", "LOCATION"]), 0.9, "r@1", note="n"))
        out, _ = finish_note("n", spans, None, None, text)
        wanted = {i for i in _covered(tidy_spans(text, spans)) if text[i].isalnum()}
        assert wanted <= _covered(out), (trial, text, spans, out)
        assert _disjoint(out)
