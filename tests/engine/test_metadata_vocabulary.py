"""Released metadata (``note_type``, ``source``, ``site``) comes from a configured vocabulary, or is withheld.

A cell is released only when its stripped text is exactly one of the values configured for its
column (``metadata_vocabulary``) or allowed in every column (``metadata_allowlist``); with nothing
configured every value is ``[withheld]``. Nothing is released for looking like a category label.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tide_core.config import METADATA_COLUMNS, TideConfig
from tide_core.engine.release_columns import COLUMNS, WITHHELD, release_value
from tide_core.errors import ConfigError
from tide_core.synth import demo_metadata_vocabulary, generate_demo_corpus

#: values a screen that guesses from the shape of a value let through, each in the column it was found in
LEAKS = [
    ("site", "Quartermaine Pavilion"),
    ("source", "mqz@gmail.com"),
    ("note_type", "Vantongeren consult"),
    ("note_type", "Mar 4"),
    ("note_type", "Dr Ng"),
]
VOCABULARY = {
    "note_type": ("progress_note", "consult_note", "ED"),
    "source": ("epic", "tide.synth@1:demo"),
    "site": ("north", "site-01"),
}
NOTHING = TideConfig.preset("rules")
CONFIGURED = TideConfig.preset("rules", metadata_vocabulary=VOCABULARY)


def _release(value: object, column: str, config: TideConfig = CONFIGURED) -> str | None:
    return release_value(value, column, config.released_metadata)


@pytest.mark.parametrize("column, value", LEAKS)
def test_the_leaking_values_are_withheld_with_nothing_configured(column, value):
    assert _release(value, column, NOTHING) == WITHHELD
    assert all(_release(value, c, NOTHING) == WITHHELD for c in COLUMNS)  # in any column
    assert _release(value, column) == WITHHELD  # and when a vocabulary that does not list them is configured


def test_nothing_configured_withholds_even_plain_category_labels():
    for column, values in VOCABULARY.items():
        for v in values:
            assert _release(v, column, NOTHING) == WITHHELD


@pytest.mark.parametrize("column", COLUMNS)
def test_listed_values_are_released_exactly_and_only_in_their_column(column):
    for v in VOCABULARY[column]:
        assert _release(v, column) == v
        for other in COLUMNS:
            if other != column and v not in VOCABULARY[other]:
                assert _release(v, other) == WITHHELD, (v, other)
    assert _release(VOCABULARY[column][0] + "x", column) == WITHHELD
    assert _release(VOCABULARY[column][0].upper(), column) == WITHHELD  # case counts
    assert _release(None, column) is None


def test_a_site_value_is_withheld_as_a_note_type():
    assert _release("north", "site") == "north"
    assert _release("north", "note_type") == WITHHELD
    assert _release("north", "source") == WITHHELD


def test_only_surrounding_whitespace_is_ignored():
    assert _release("  north\t", "site") == "north"
    assert _release("\nnorth \r\n", "site") == "north"
    assert _release("no rth", "site") == WITHHELD
    assert _release("north\u200b", "site") == WITHHELD  # a format character is not whitespace
    assert _release("   ", "site") == WITHHELD


def test_non_string_cells_are_read_as_text():
    config = TideConfig.preset("rules", metadata_vocabulary={"site": (617, "7")})
    assert config.metadata_vocabulary == {"site": ("617", "7")}
    assert _release(617, "site", config) == "617"
    assert _release("617", "site", config) == "617"
    assert _release(7, "site", config) == "7"
    assert _release(617.0, "site", config) == WITHHELD  # "617.0"
    assert _release(618, "site", config) == WITHHELD
    assert _release(617, "source", config) == WITHHELD


def test_the_allowlist_is_allowed_in_every_column_beside_the_vocabulary():
    config = CONFIGURED.with_(metadata_allowlist=("shared",))
    for column in COLUMNS:
        assert _release("shared", column, config) == "shared"
    assert _release("north", "site", config) == "north"
    assert _release("north", "note_type", config) == WITHHELD


@settings(max_examples=300, deadline=None)
@given(value=st.text(max_size=40), column=st.sampled_from(COLUMNS))
def test_a_value_not_in_the_vocabulary_is_always_withheld(value, column):
    assume(value.strip() not in VOCABULARY[column])
    assert _release(value, column) == WITHHELD
    assert _release(value, column, NOTHING) == WITHHELD


@settings(max_examples=100, deadline=None)
@given(
    column=st.sampled_from(COLUMNS),
    index=st.integers(min_value=0, max_value=1),
    pad=st.tuples(st.text(" \t\n", max_size=3), st.text(" \t\n", max_size=3)),
)
def test_a_listed_value_is_released_whatever_its_padding(column, index, pad):
    value = VOCABULARY[column][index]
    assert _release(pad[0] + value + pad[1], column) == value


def test_the_vocabulary_loads_from_a_toml_file(tmp_path):
    path = tmp_path / "tide.toml"
    path.write_text(
        'preset = "rules"\nmetadata_allowlist = ["shared"]\n\n'
        '[metadata_vocabulary]\nnote_type = ["progress_note", "ED"]\nsite = ["north", 617]\n',
        encoding="utf-8",
    )
    config = TideConfig.from_file(path)
    assert config.metadata_vocabulary == {"note_type": ("progress_note", "ED"), "site": ("north", "617")}
    assert config.metadata_allowlist == ("shared",)
    assert _release("ED", "note_type", config) == "ED"
    assert _release("ED", "site", config) == WITHHELD
    assert _release("617", "site", config) == "617"
    assert _release("epic", "source", config) == WITHHELD  # a column the file does not list releases nothing
    assert _release("shared", "source", config) == "shared"


def test_the_vocabulary_loads_from_a_json_file(tmp_path):
    path = tmp_path / "tide.json"
    path.write_text(json.dumps({"preset": "rules", "metadata_vocabulary": {"source": ["epic"]}}), encoding="utf-8")
    config = TideConfig.from_file(path)
    assert config.metadata_vocabulary == {"source": ("epic",)}
    assert _release("epic", "source", config) == "epic"


@pytest.mark.parametrize(
    "table, code",
    [
        ('ward = ["north"]', "E028"),  # not a released column
        ('Site = ["north"]', "E028"),  # column names are exact
        ('site = "north"', "E029"),  # a string, not a list of values
        ('site = ["north "]', "E029"),  # could never match a stripped cell
        ("site = { a = 1 }", "E029"),
    ],
)
def test_a_bad_vocabulary_in_a_config_file_is_refused_with_its_code(tmp_path, table, code):
    path = tmp_path / "tide.toml"
    path.write_text(f'preset = "rules"\n\n[metadata_vocabulary]\n{table}\n', encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        TideConfig.from_file(path)
    assert err.value.code == code
    assert "north" not in str(err.value)  # a message names the column, never a value


def test_a_vocabulary_that_is_not_a_table_is_refused(tmp_path):
    path = tmp_path / "tide.toml"
    path.write_text('preset = "rules"\nmetadata_vocabulary = ["north"]\n', encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        TideConfig.from_file(path)
    assert err.value.code == "E029"


def test_a_bad_column_is_refused_in_python_too():
    with pytest.raises(ConfigError) as err:
        TideConfig.preset("rules", metadata_vocabulary={"ward": ("north",)})
    assert err.value.code == "E028"
    with pytest.raises(ConfigError) as err:
        NOTHING.with_metadata_vocabulary({"notetype": ("ED",)})
    assert err.value.code == "E028"


def test_with_metadata_vocabulary_returns_a_copy():
    config = NOTHING.with_metadata_vocabulary({"site": ["north"]})
    assert config is not NOTHING and config.metadata_vocabulary == {"site": ("north",)}
    assert NOTHING.metadata_vocabulary == {} and _release("north", "site", NOTHING) == WITHHELD
    assert _release("north", "site", config) == "north"
    assert config.recognizers == NOTHING.recognizers
    replaced = config.with_metadata_vocabulary({"source": ["epic"]})  # replaces, does not merge
    assert replaced.metadata_vocabulary == {"source": ("epic",)} and _release("north", "site", replaced) == WITHHELD


def test_the_demo_vocabulary_covers_every_value_of_the_demo_corpus():
    vocabulary = demo_metadata_vocabulary()
    assert set(vocabulary) == set(METADATA_COLUMNS)
    notes = generate_demo_corpus(seed=7).notes
    assert notes
    for note in notes:
        for column in COLUMNS:
            assert note.metadata[column] in vocabulary[column], (note.note_id, column)
    seen = {c: {n.metadata[c] for n in notes} for c in COLUMNS}
    assert seen["source"] == set(vocabulary["source"]) and seen["site"] == set(vocabulary["site"])
    assert seen["note_type"] <= set(vocabulary["note_type"])
    config = NOTHING.with_metadata_vocabulary(vocabulary)
    for note in notes:  # configured with it, the demo releases its metadata unchanged
        for column in COLUMNS:
            assert _release(note.metadata[column], column, config) == note.metadata[column]
