"""Source metadata columns released beside the text are screened: only configured values leave."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tide_core.config import TideConfig
from tide_core.engine.release_columns import WITHHELD, release_value
from tide_core.io.open import open_warehouse
from tide_core.runner import anonymize_study, recognize_study

VOCABULARY = {
    "note_type": ("progress_note", "Radiology"),
    "source": ("tide.synth@1:demo", "epic"),
    "site": ("site-01", "north"),
}
RELEASED = TideConfig.preset("rules", metadata_vocabulary=VOCABULARY).released_metadata


@pytest.mark.parametrize(
    "column, value, released",
    [
        ("note_type", "progress_note", "progress_note"),
        ("source", "tide.synth@1:demo", "tide.synth@1:demo"),
        ("site", "site-01", "site-01"),
        ("note_type", "MRN84736251-Quartermaine-20210304", WITHHELD),  # a note id typed into a category column
        ("site", "site 617", WITHHELD),  # not listed
        ("site", "progress_note", WITHHELD),  # listed, but for another column
        ("site", "Ramirez", WITHHELD),
        ("note_type", "Radiology", "Radiology"),
        ("note_type", "call Ana at 555-0100", WITHHELD),
        ("source", None, None),
    ],
)
def test_configured_values_only(column, value, released):
    assert release_value(value, column, RELEASED) == released


def test_nothing_configured_withholds_everything():
    nothing = TideConfig.preset("rules").released_metadata
    for column, values in VOCABULARY.items():
        assert all(release_value(v, column, nothing) == WITHHELD for v in values)


def test_an_allowlist_is_allowed_in_every_column():
    released = TideConfig.preset("rules", metadata_allowlist=("ED", "Clinic")).released_metadata
    assert release_value("ED", "note_type", released) == "ED"
    assert release_value("ED", "site", released) == "ED"
    assert release_value("progress_note", "note_type", released) == WITHHELD  # not listed


def test_metadata_in_released_rows_is_screened_end_to_end(tmp_path, key_provider):
    wh = open_warehouse(f"duckdb:{tmp_path / 'meta.duckdb'}")
    leaky = "MRN84736251-Quartermaine-20210304"
    rows = [
        {
            "note_id": "a",
            "patient_id": "p1",
            "text": "Seen 03/04/2021 by Dr. Ramirez.",
            "note_type": leaky,
            "source": "epic",
            "site": "Ramirez",
        },
        {
            "note_id": "b",
            "patient_id": "p2",
            "text": "Seen 03/05/2021.",
            "note_type": "progress_note",
            "source": "epic",
            "site": "north",
        },
    ]
    wh.replace_table("notes", pa.Table.from_pylist(rows))
    key_provider.create("s", "k")
    config = TideConfig.preset(
        "rules", metadata_vocabulary={"note_type": ("progress_note",), "source": ("epic",), "site": ("north",)}
    )
    recognize_study(wh, "s", config, progress=False)
    anonymize_study(wh, "s", "k", key_provider, config, progress=False)
    out = {r["note_id"]: r for r in wh.read_table("tide_deid_notes", where={"study": "s", "key": "k"}).to_pylist()}
    assert (out["a"]["note_type"], out["a"]["source"], out["a"]["site"]) == (WITHHELD, "epic", WITHHELD)
    assert (out["b"]["note_type"], out["b"]["site"]) == ("progress_note", "north")
    dump = str(wh.read_table("tide_deid_notes", where={"study": "s", "key": "k"}).to_pylist())
    assert "Quartermaine" not in dump and "84736251" not in dump and "Ramirez" not in dump
    key_provider.create("s", "k0")  # the same notes released with nothing configured: every value withheld
    anonymize_study(wh, "s", "k0", key_provider, TideConfig.preset("rules"), progress=False)
    bare = wh.read_table("tide_deid_notes", where={"study": "s", "key": "k0"}).to_pylist()
    assert len(bare) == 2 and {r[c] for r in bare for c in ("note_type", "source", "site")} == {WITHHELD}
    wh.close()
