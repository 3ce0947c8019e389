"""Person roles from evidence pooled per person in the note (tide.roles)."""

from __future__ import annotations

from tide_core.spans import Span
from tide_core.steps.person_roles import assign_roles


def _spans(text: str, *items: tuple[str, str]) -> list[Span]:
    out, pos = [], 0
    for surface, label in items:
        i = text.index(surface, pos)
        out.append(Span("n", i, i + len(surface), label, 0.9, "m@1"))
        pos = i + len(surface)
    return out


def _labels(text, spans):
    return [(text[s.start : s.end], s.label) for s in assign_roles(text, spans)]


def test_a_credential_anywhere_makes_every_mention_of_that_person_a_clinician():
    text = "Plan discussed with Noor Falkenrath today.\nSigned: Noor Falkenrath, MD"
    spans = _spans(text, ("Noor Falkenrath", "PATIENT"), ("Noor Falkenrath", "DOCTOR"))
    assert _labels(text, spans) == [("Noor Falkenrath", "DOCTOR"), ("Noor Falkenrath", "DOCTOR")]


def test_a_relation_word_makes_a_private_person():
    text = "Assessment: stable. Her neighbour Ruth Okafor drove her in."
    assert _labels(text, _spans(text, ("Ruth Okafor", "DOCTOR"))) == [("Ruth Okafor", "PATIENT")]


def test_no_evidence_keeps_the_recognizer_label_in_a_clinical_note():
    text = "Discharge plan reviewed with Dr. Ames. Follow up with Noor Falkenrath in 2 weeks."
    assert _labels(text, _spans(text, ("Noor Falkenrath", "DOCTOR"))) == [("Noor Falkenrath", "DOCTOR")]


def test_a_message_between_private_persons_has_no_clinician_without_evidence():
    # no clinician is named anywhere: a DOCTOR label without evidence becomes PATIENT
    text = "the package came today, see you at the discharge plan meeting.\n\nTheodora"
    assert _labels(text, _spans(text, ("Theodora", "DOCTOR"))) == [("Theodora", "PATIENT")]


def test_conflicting_evidence_keeps_the_label_and_other_labels_are_untouched():
    text = "Mr. Okafor called Dr. Okafor about MRN 12345678."
    spans = _spans(text, ("Okafor", "PATIENT"), ("Okafor", "DOCTOR"), ("12345678", "ID"))
    assert _labels(text, spans) == [("Okafor", "PATIENT"), ("Okafor", "DOCTOR"), ("12345678", "ID")]


def test_two_people_sharing_a_surname_are_not_pooled():
    text = "Her sister Anna Okafor called.\nSigned: Ben Okafor, MD\ncc: Anna Okafor"
    spans = _spans(text, ("Anna Okafor", "DOCTOR"), ("Ben Okafor", "DOCTOR"), ("Anna Okafor", "DOCTOR"))
    assert [lab for _, lab in _labels(text, spans)] == ["PATIENT", "DOCTOR", "PATIENT"]
