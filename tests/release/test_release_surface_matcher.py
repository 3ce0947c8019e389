"""no_surface_survives's matcher: one automaton per chunk gives the verdicts one regex per surface gave.

``reference`` is the matcher the check used before (a pattern ``(?<!\\w)term(?!\\w)`` compiled per
surface and note, ``re.finditer`` over the case-folded released text); hypothesis draws notes with
overlapping and nested surfaces, case differences, characters whose case folding or normalised
view changes length (``ß``, ``İ``, ligatures, fullwidth letters), repeats next to word characters
and surfaces inside and outside replaced ranges, and the new matcher must count exactly the same.
"""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tide_core.release.scan import (
    KEEPS_VALUE,
    MIN_SEARCH_LEN,
    note_surfaces,
    surviving_elsewhere,
    term_automaton,
)


def reference(text: str, out_text: str, rel: list[dict[str, Any]], cached: list[Any]) -> tuple[int, int, int]:
    """(checked, in place, elsewhere) as the per-surface regex matcher counted them."""
    out_ranges = [(s["out_start"], s["out_end"]) for s in rel]
    by_in = {(s["start"], s["end"]): s for s in rel}
    folded = out_text.casefold()
    surfaces = {(sp.start, sp.end, sp.label) for sp in cached}
    surfaces |= {(s["start"], s["end"], s["label"]) for s in rel}
    searched: set[str] = set()
    checked = in_place = elsewhere = 0
    for start, end, label in sorted(surfaces):
        if label in KEEPS_VALUE:
            continue
        surface = text[start:end].casefold()
        if not surface.strip():
            continue
        checked += 1
        r = by_in.get((start, end))
        if r is not None and out_text[r["out_start"] : r["out_end"]].casefold() == surface:
            in_place += 1
        term = surface.strip()
        if len(term) < MIN_SEARCH_LEN or term in searched:
            continue
        searched.add(term)
        for m in re.compile(r"(?<!\w)" + re.escape(term) + r"(?!\w)").finditer(folded):
            if not any(a <= m.start() and m.end() <= b for a, b in out_ranges):
                elsewhere += 1
    return checked, in_place, elsewhere


def new(notes: list[tuple[str, str, list[dict[str, Any]], list[Any]]]) -> list[tuple[int, int, int]]:
    """The new matcher as the check runs it: the notes of one chunk, one automaton of all their terms."""
    found = [note_surfaces(text, out, rel, cached) for text, out, rel, cached in notes]
    automaton = term_automaton({t for f in found for t in f.terms})
    return [
        (
            f.checked,
            f.in_place,
            surviving_elsewhere(out.casefold(), set(f.terms), [(s["out_start"], s["out_end"]) for s in rel], automaton),
        )
        for f, (_, out, rel, _) in zip(found, notes, strict=True)
    ]


#: Letters that differ in case, fold to more characters, or fold alike; word and non-word separators.
ALPHABET = "abAB sSßẞİıﬁＡａ_9 .-'\n"
LABELS = ("PATIENT", "DOCTOR", "AGE", "CITY")


@st.composite
def note(draw: st.DrawFn) -> tuple[str, str, list[dict[str, Any]], list[Any]]:
    """A source text, its spans (nested and overlapping), and a released text that replaces some
    spans, keeps others, and repeats surfaces (in other cases) elsewhere, inside or beside words."""
    text = draw(st.text(ALPHABET, min_size=1, max_size=40))
    n = len(text)
    spans = draw(
        st.lists(
            st.tuples(st.integers(0, n - 1), st.integers(1, 12), st.sampled_from(LABELS)).map(
                lambda t: (t[0], min(n, t[0] + t[1]), t[2])
            ),
            max_size=6,
        )
    )
    # released spans: non-overlapping ones, each replaced by a surrogate or kept as it was
    rel: list[dict[str, Any]] = []
    out: list[str] = []
    pos = 0
    for start, end, label in sorted(spans):
        if start < pos or not draw(st.booleans()):
            continue
        out.append(text[pos:start])
        at = sum(len(p) for p in out)
        kind = draw(st.sampled_from(["surrogate", "kept", "upper", "other surface"]))
        if kind == "surrogate":
            rep = draw(st.text(ALPHABET, min_size=1, max_size=8))
        elif kind == "kept":
            rep = text[start:end]
        elif kind == "upper":
            rep = text[start:end].upper()
        else:  # another surface of the note as a surrogate: a hit inside a replaced range is no survivor
            s2, e2, _ = draw(st.sampled_from(spans))
            rep = text[s2:e2]
        out.append(rep)
        rel.append({"start": start, "end": end, "label": label, "out_start": at, "out_end": at + len(rep)})
        pos = end
    out.append(text[pos:])
    released = "".join(out)
    # repeats of surfaces elsewhere: appended, swapped case, glued to word characters or not
    for start, end, _ in draw(st.lists(st.sampled_from(spans), max_size=3)) if spans else []:
        glue = draw(st.sampled_from(["", " ", "x", "_", ".", "9"]))
        piece = text[start:end]
        piece = draw(st.sampled_from([piece, piece.upper(), piece.lower(), piece.swapcase()]))
        released += glue + piece + draw(st.sampled_from(["", " ", "y", "-"])) + piece
    cached = [SimpleNamespace(start=s, end=e, label=lab) for s, e, lab in spans]
    return text, released, rel, cached


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(note(), min_size=1, max_size=4))
def test_the_automaton_counts_what_the_regexes_counted(notes):
    assert new(notes) == [reference(*n) for n in notes]


def test_overlapping_repeats_are_counted_as_finditer_counts_them():
    """``abab abab abab``: the term ``abab abab`` occurs twice, overlapping; a scan takes one."""
    text = "abab abab"
    cached = [SimpleNamespace(start=0, end=9, label="PATIENT")]
    released = "X abab abab abab"
    assert reference(text, released, [], cached) == (1, 0, 1)
    assert new([(text, released, [], cached)]) == [(1, 0, 1)]


def test_a_term_of_another_note_in_the_chunk_is_not_counted():
    a = ("Smith here", "Jones met Smith", [], [SimpleNamespace(start=0, end=5, label="PATIENT")])
    b = ("Jones here", "nothing", [], [SimpleNamespace(start=0, end=5, label="PATIENT")])
    assert new([a, b]) == [(1, 0, 1), (1, 0, 0)]
    assert [reference(*a), reference(*b)] == [(1, 0, 1), (1, 0, 0)]
