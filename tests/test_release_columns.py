"""Source metadata columns released beside the text are screened: label shapes or an allowlist."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tide_core.config import TideConfig
from tide_core.engine.release_columns import WITHHELD, release_value
from tide_core.io.open import open_warehouse
from tide_core.runner import anonymize_study, recognize_study


@pytest.mark.parametrize(
    "value, released",
    [
        ("progress_note", "progress_note"),
        ("tide.synth@1:demo", "tide.synth@1:demo"),
        ("site-01", "site-01"),
        ("MRN84736251-Quartermaine-20210304", WITHHELD),  # a note id typed into a category column
        ("site 617", WITHHELD),  # one property differs from "site-01": a run of three digits
        ("Ramirez", WITHHELD),  # a known surname
        ("Radiology", "Radiology"),
        ("call Ana at 555-0100", WITHHELD),
        ("x" * 49, WITHHELD),  # over 48 characters
        (None, None),
    ],
)
def test_label_shaped_values_only(value, released):
    assert release_value(value) == released


def test_an_allowlist_replaces_the_shape_rule():
    assert release_value("ED", ("ED", "Clinic")) == "ED"
    assert release_value("progress_note", ("ED",)) == WITHHELD  # shape-valid but not listed


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
    config = TideConfig.preset("rules")
    recognize_study(wh, "s", config, progress=False)
    anonymize_study(wh, "s", "k", key_provider, config, progress=False)
    out = {r["note_id"]: r for r in wh.read_table("tide_deid_notes", where={"study": "s", "key": "k"}).to_pylist()}
    assert (out["a"]["note_type"], out["a"]["source"], out["a"]["site"]) == (WITHHELD, "epic", WITHHELD)
    assert (out["b"]["note_type"], out["b"]["site"]) == ("progress_note", "north")
    dump = str(wh.read_table("tide_deid_notes", where={"study": "s", "key": "k"}).to_pylist())
    assert "Quartermaine" not in dump and "84736251" not in dump and "Ramirez" not in dump
    wh.close()
