"""Metadata columns released beside the text (``note_type``, ``source``, ``site``), checked in milliseconds.

``tide_core/engine/release_columns.py`` releases a value only when it is on the study's allowlist, or,
with no allowlist, when it has the shape of a category label (a letter first, at most 48 characters of
letters, digits and ``space / & ( ) _ . : @ -``), holds no run of three digits and no word (three
letters or more) that is a known given name or surname, in any case; anything else is ``[withheld]``.
Each negative case below differs from a released one in exactly one property.
"""

from __future__ import annotations

import pytest

from tide_core.engine.release_columns import WITHHELD, release_value
from tide_core.propagate import name_lexicon

FIRST, LAST, EITHER = name_lexicon()


def test_none_stays_none_and_other_values_are_read_as_text():
    assert release_value(None) is None
    assert release_value(None, ("None",)) is None  # even when "None" is allowed
    assert release_value("None") == "None"  # the text "None" is a label like any other
    assert release_value(7) == WITHHELD  # "7": not label-shaped (a digit first)
    assert release_value(7, ("7",)) == "7"  # read as text, then found on the allowlist


def test_surrounding_whitespace_is_stripped_before_every_rule():
    assert release_value("  Radiology\t") == "Radiology"
    assert release_value(" ED ", ("ED",)) == "ED"
    assert release_value(" ED ", (" ED ",)) == WITHHELD  # the stripped text is what is looked up


@pytest.mark.parametrize(
    "value",
    ["MRN 617-555-0100 Ramirez", "site 617", "Ramirez", "x" * 60, "#1", "progress_note", "ED"],
)
def test_an_allowlist_alone_decides(value):
    assert release_value(value, (value,)) == value  # listed: released whatever its shape
    assert release_value(value, (value + "!",)) == WITHHELD  # one character off: withheld
    assert release_value(value, {value, "other"}) == value  # any collection


def test_an_empty_allowlist_means_the_shape_rule():
    assert release_value("progress_note", ()) == "progress_note"
    assert release_value("progress_note", frozenset()) == "progress_note"
    assert release_value("site 617", ()) == WITHHELD


@pytest.mark.parametrize(
    "released, withheld",
    [
        ("a" * 48, "a" * 49),  # at most 48 characters
        ("site-01", "1site-01"),  # a letter first
        ("site-01", "site#01"),  # only the listed punctuation
        ("A/B&C (d)_e.f:g@h-i j", "A/B&C (d)_e.f:g@h-i j!"),
        ("ab12", "ab123"),  # a run of three digits, even in a label shape
        ("a12b12", "a12b123"),
        ("x1x2x3", "x123xx"),  # three digits apart are fine, together not
        ("Radiology", "Ramirez"),  # a known surname
        ("Radiology unit", "Radiology Ramirez"),  # any word of the value
        ("Al unit", "Ali unit"),  # a word of two letters is never looked up
    ],
)
def test_the_shape_rule(released, withheld):
    assert release_value(released) == released
    assert release_value(withheld) == WITHHELD


@pytest.mark.parametrize("name", ["Ramirez", "Maria"])
def test_names_are_withheld_in_any_case(name):
    assert name.casefold() in EITHER
    for v in (name, name.upper(), name.lower(), f"unit-{name}", f"{name}2"):
        assert release_value(v) == WITHHELD, v
    assert release_value("unit-Radiology") == "unit-Radiology"


def test_given_names_and_surnames_are_both_withheld():
    given = next(n for n in sorted(FIRST - LAST) if n.isalpha() and len(n) >= 4)
    sur = next(n for n in sorted(LAST - FIRST) if n.isalpha() and len(n) >= 4)
    assert release_value(given.title()) == WITHHELD
    assert release_value(sur.title()) == WITHHELD


def test_the_withheld_marker_never_contains_the_value():
    assert WITHHELD == "[withheld]"
    assert release_value("Ramirez") != "Ramirez"
