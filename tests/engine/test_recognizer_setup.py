"""Recognizer set-up (``tide_core.engine.recognizer_setup``) on a real DuckDB warehouse.

One known-PHI rule for every reader: a known-PHI spec without rows gets the patients table's rows
of the given patients only (every row with ``match_any_patient``), a missing patients table turns
known-PHI matching off with a warning; and a study's set-up can be replaced by a registered
factory (recognizer objects and a resolution policy built in code) that ``recognize_study`` uses.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from tide_core.config import TideConfig
from tide_core.engine.recognizer_setup import (
    NO_PATIENTS_TABLE,
    RecognizerSet,
    build_recognizers,
    recognizer_set,
    register_setup,
    unregister_setup,
)
from tide_core.io.open import open_warehouse
from tide_core.recognizers.registry import create
from tide_core.runner import recognize_study
from tide_core.spans import Note
from tide_core.steps.resolve import ResolutionPolicy

PATIENTS = [
    {"patient_id": "p1", "first_name": "Orla", "last_name": "Quennell", "mrn": "55501"},
    {"patient_id": "p2", "first_name": "Ansel", "last_name": "Vitkova", "mrn": "55502"},
    {"patient_id": "p3", "first_name": "Brisa", "last_name": "Okonjo", "mrn": "55503"},
]
NOTES = [
    {"note_id": "n1", "patient_id": "p1", "text": "Orla Quennell seen; call 555-201-3344 on 2021-03-04."},
    {"note_id": "n2", "patient_id": "p2", "text": "Ansel Vitkova, MRN 55502, doing well."},
]


@pytest.fixture
def wh(tmp_path):
    w = open_warehouse(f"duckdb:{tmp_path / 'w.duckdb'}")
    w.replace_table("notes", pa.Table.from_pylist(NOTES))
    w.replace_table("patients", pa.Table.from_pylist(PATIENTS))
    yield w
    w.close()


def _config(**known_phi):
    return TideConfig(recognizers=({"name": "tide.regex"}, {"name": "tide.known_phi", **known_phi}))


def _known_phi_rows(specs):
    (spec,) = [s for s in specs if s["name"] == "tide.known_phi"]
    return sorted(r["patient_id"] for r in spec["rows"])


def test_known_phi_gets_the_rows_of_the_notes_patients_only(wh):
    notes = [Note("n1", "p1", "x", {})]
    recognizers, specs, warnings = build_recognizers(wh, _config(), notes)
    assert warnings == [] and _known_phi_rows(specs) == ["p1"]
    assert [r.name for r in recognizers] == ["tide.regex", "tide.known_phi"]
    assert all("_patients_table" not in s and "patients_table" not in s for s in specs)


def test_match_any_patient_gets_every_row(wh):
    notes = [Note("n1", "p1", "x", {})]
    _, specs, _ = build_recognizers(wh, _config(match_any_patient=True), notes)
    assert _known_phi_rows(specs) == ["p1", "p2", "p3"]


def test_a_missing_patients_table_turns_known_phi_off_with_a_warning(wh):
    recognizers, specs, warnings = build_recognizers(wh, _config(patients_table="nobody"), [Note("n1", "p1", "x", {})])
    assert warnings == [NO_PATIENTS_TABLE]
    assert [s["name"] for s in specs] == ["tide.regex"] and len(recognizers) == 1


def test_a_registered_factory_replaces_the_studys_recognizers_and_policy(wh):
    config = _config()
    configured = recognize_study(wh, "s", config, progress=False)
    assert [n.split("@")[0] for n in configured.recognizers] == ["tide.regex", "tide.known_phi"]
    policy = ResolutionPolicy.from_dict({"default_min_score": 0.99})
    register_setup("s", lambda w, c: RecognizerSet.of([create({"name": "tide.regex"})], policy))
    try:
        assert recognizer_set(wh, config, "s").policy is policy
        assert recognizer_set(wh, config, "other").specs is not None  # other studies keep the configuration
        replaced = recognize_study(wh, "s", config, progress=False)
    finally:
        unregister_setup("s")
    assert [n.split("@")[0] for n in replaced.recognizers] == ["tide.regex"]
    assert replaced.fingerprint != configured.fingerprint and replaced.n_recognized == len(NOTES)
    assert replaced.n_spans < configured.n_spans  # known-PHI gone, low-score spans dropped by the policy
    again = recognize_study(wh, "s", config, progress=False)  # unregistered: the configuration again
    assert again.fingerprint == configured.fingerprint and again.n_recognized == len(NOTES)
