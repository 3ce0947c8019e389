"""Metadata columns released beside the text (``note_type``, ``source``, ``site``), checked in milliseconds.

``tide_core/engine/release_columns.py`` releases a cell only when its text, stripped of surrounding
whitespace, is exactly one of the values configured for its column (``TideConfig.released_metadata``:
the column's ``metadata_vocabulary`` plus the ``metadata_allowlist``); anything else, and every value
when nothing is configured, is ``[withheld]``. Each negative case below differs from a released one in
exactly one property.
"""

from __future__ import annotations

import pytest

from tide_core.config import TideConfig
from tide_core.engine.release_columns import COLUMNS, WITHHELD, release_value

NOTHING: dict[str, tuple[str, ...]] = {}


def test_none_stays_none_and_other_values_are_read_as_text():
    assert release_value(None, "site", NOTHING) is None
    assert release_value(None, "site", {"site": ("None",)}) is None  # even when "None" is allowed
    assert release_value("None", "site", {"site": ("None",)}) == "None"  # the text "None" is a value like any other
    assert release_value("None", "site", NOTHING) == WITHHELD
    assert release_value(7, "site", {"site": ("7",)}) == "7"  # read as text, then looked up
    assert release_value(7, "site", {"site": ("8",)}) == WITHHELD
    assert release_value(7.0, "site", {"site": ("7",)}) == WITHHELD  # "7.0" is not "7"


def test_surrounding_whitespace_is_stripped_before_the_lookup():
    assert release_value("  Radiology\t", "note_type", {"note_type": ("Radiology",)}) == "Radiology"
    assert release_value(" ED ", "note_type", {"note_type": (" ED ",)}) == WITHHELD  # the stripped text is looked up
    assert release_value("E D", "note_type", {"note_type": ("ED",)}) == WITHHELD  # inner whitespace counts


@pytest.mark.parametrize(
    "value",
    ["MRN 617-555-0100 Ramirez", "site 617", "Ramirez", "x" * 60, "#1", "progress_note", "ED", ""],
)
def test_the_configured_values_alone_decide(value):
    assert release_value(value, "source", {"source": (value,)}) == value  # listed: released whatever its shape
    assert release_value(value, "source", {"source": (value + "!",)}) == WITHHELD  # one character off
    assert release_value(value, "source", {"source": {value, "other"}}) == value  # any collection
    assert release_value(value, "source", {"site": (value,)}) == WITHHELD  # listed for another column only
    assert release_value(value, "source", NOTHING) == WITHHELD


@pytest.mark.parametrize(
    "value", ["progress_note", "Radiology", "site-01", "ab12", "tide.synth@1:demo", "north", "a", "None"]
)
def test_nothing_configured_withholds_every_value(value):
    for column in COLUMNS:
        assert release_value(value, column, NOTHING) == WITHHELD
        assert release_value(value, column, {c: () for c in COLUMNS}) == WITHHELD


def test_an_unknown_column_releases_nothing():
    assert release_value("x", "ward", {"site": ("x",)}) == WITHHELD
    assert release_value("x", "ward", {"ward": ("x",)}) == "x"  # the mapping is all that is consulted


def test_the_config_joins_each_columns_vocabulary_and_the_allowlist():
    config = TideConfig.preset(
        "rules", metadata_vocabulary={"site": ("north",), "note_type": ("progress",)}, metadata_allowlist=("ehr",)
    )
    released = config.released_metadata
    assert released == {
        "note_type": frozenset({"progress", "ehr"}),
        "source": frozenset({"ehr"}),
        "site": frozenset({"north", "ehr"}),
    }
    assert release_value("north", "site", released) == "north"
    assert release_value("north", "note_type", released) == WITHHELD
    assert all(release_value("ehr", c, released) == "ehr" for c in COLUMNS)
    assert TideConfig.preset("rules").released_metadata == {c: frozenset() for c in COLUMNS}


def test_the_withheld_marker_never_contains_the_value():
    assert WITHHELD == "[withheld]"
    assert release_value("Ramirez", "site", NOTHING) == WITHHELD
