"""Input guards: duplicate note ids across patients, and propagation across letter case.

* A note id that appears twice is released once only when both rows are the same note: same
  text *and* same patient.  The same text under two patients is a conflict (E607 for both rows):
  releasing either would shift its dates and pseudonymise it under a patient it may not belong to.
* A surface recognized once is PHI in every casing in the same note ("Springfield" then
  "SPRINGFIELD"), but not inside a longer word.
"""

from __future__ import annotations

import pytest

from tide_core.anonymize.engine import Anonymizer
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.engine.validation import validate_rows
from tide_core.spans import Note, Span
from tide_core.steps.propagate import QUALIFIED, propagate_spans

KR = keyring_for_tests("guard-inputs", "k1", "guard-inputs-seed")


@pytest.mark.parametrize("second_patient", ["p1", "p2"])
def test_same_text_under_two_patients_is_a_conflict(second_patient):
    text = "Pt Mary Lee seen 03/04/2021."
    rows = [
        {"note_id": "other", "patient_id": "p9", "text": "unrelated"},
        {"note_id": "n1", "patient_id": "p1", "text": text},
        {"note_id": "n1", "patient_id": second_patient, "text": text},
    ]
    v = validate_rows(rows)
    assert v.n_rows == 3
    codes = {q.row_number: q.code for q in v.quarantined}
    if second_patient == "p1":  # the same note twice: released once
        assert [(n.note_id, n.patient_id) for n in v.notes] == [("other", "p9"), ("n1", "p1")]
        assert codes == {2: "E608"}
        assert v.quarantined[0].reason == "row 2: exact duplicate of row 1 (note n1); released once"
    else:  # one text, two patients: neither row can be released
        assert [n.note_id for n in v.notes] == ["other"]
        assert codes == {1: "E607", 2: "E607"}
        assert [q.patient_id for q in v.quarantined] == ["p1", "p2"]
        assert all("Mary" not in q.reason and "2 times" in q.reason for q in v.quarantined)


@pytest.mark.parametrize("second_text", ["Pt Mary Lee seen 03/04/2021.", "Pt Mary Lee seen 03/05/2021."])
def test_same_patient_different_text_is_a_conflict(second_text):
    rows = [
        {"note_id": "n1", "patient_id": "p1", "text": "Pt Mary Lee seen 03/04/2021."},
        {"note_id": "n1", "patient_id": "p1", "text": second_text},
    ]
    v = validate_rows(rows)
    codes = [q.code for q in v.quarantined]
    if second_text == rows[0]["text"]:
        assert [n.note_id for n in v.notes] == ["n1"] and codes == ["E608"]
    else:
        assert v.notes == [] and codes == ["E607", "E607"]


def _spans_at(text: str, got: list[Span]) -> list[tuple[str, str, str]]:
    return [(text[s.start : s.end], s.label, s.recognizer) for s in got]


@pytest.mark.parametrize(
    "seed,label,variants",
    [
        ("Springfield", "LOCATION", ["SPRINGFIELD", "springfield", "SpringField"]),
        ("Mercy Hospital", "HOSPITAL", ["MERCY HOSPITAL", "mercy hospital"]),
        ("ab12345", "ID", ["AB12345", "Ab12345"]),
        ("Theresa Makinen", "PATIENT", ["THERESA MAKINEN", "theresa makinen"]),
    ],
)
def test_a_recognized_surface_is_propagated_in_every_casing(seed, label, variants):
    text = f"Seen: {seed}. " + " ".join(f"Again {v}." for v in variants)
    start = text.index(seed)
    got = propagate_spans(text, [Span("n1", start, start + len(seed), label, 0.9, "test@1")])
    assert _spans_at(text, got) == [(seed, label, "test@1")] + [(v, label, QUALIFIED) for v in variants]
    out = Anonymizer(KR).anonymize(Note("n1", "p1", text), got)
    assert seed.casefold() not in out.text.casefold()


@pytest.mark.parametrize("word,propagated", [("SPRINGFIELD", True), ("SPRINGFIELDS", False)])
def test_a_case_variant_inside_a_longer_word_is_not_propagated(word, propagated):
    text = f"Lives in Springfield; {word} road."
    got = propagate_spans(text, [Span("n1", 9, 20, "LOCATION", 0.9, "test@1")])
    assert text[9:20] == "Springfield"
    assert _spans_at(text, got)[1:] == ([("SPRINGFIELD", "LOCATION", QUALIFIED)] if propagated else [])
