"""The release view of recall: gold surfaces that survive verbatim after anonymization."""

from __future__ import annotations

import secrets

from tide_core.anonymize.engine import Anonymizer
from tide_core.anonymize.keys import KeyRing
from tide_core.evaluation.gold_io import GoldDoc
from tide_core.evaluation.verbatim import surviving_surfaces
from tide_core.spans import Span

TEXT = "Hana Yamamoto, 67, and her father (aged 93) live in Keene. Call 603-555-0147."


def _doc() -> GoldDoc:
    def sp(surface: str, label: str) -> Span:
        i = TEXT.index(surface)
        return Span("n1", i, i + len(surface), label)

    spans = (
        sp("Hana Yamamoto", "PATIENT"),
        sp("67", "AGE"),
        sp("93", "AGE"),
        sp("Keene", "LOCATION"),
        sp("603-555-0147", "PHONE"),
    )
    return GoldDoc("n1", "p1", TEXT, tuple(sorted(spans)), {"note_date": "2024-01-02"})


def _anon() -> Anonymizer:
    return Anonymizer(KeyRing("bench", "test", secrets.token_bytes(32)))


def test_nothing_predicted_everything_survives_except_ages_kept_by_rule():
    r = surviving_surfaces([_doc()], {}, _anon())
    assert r.n_surfaces == {"PATIENT": 1, "AGE": 1, "LOCATION": 1, "PHONE": 1}  # age 67 is exempt, 93 is not
    assert r.share() == 1.0


def test_gold_as_predictions_releases_no_surface():
    doc = _doc()
    r = surviving_surfaces([doc], {"n1": list(doc.spans)}, _anon())
    assert r.share() == 0.0 and r.quarantined == 0


def test_one_missed_span_is_one_surviving_surface():
    doc = _doc()
    pred = [s for s in doc.spans if s.label != "LOCATION"]
    r = surviving_surfaces([doc], {"n1": pred}, _anon())
    assert r.n_verbatim == {"LOCATION": 1} and r.share("LOCATION") == 1.0 and r.share("PATIENT") == 0.0


def test_a_refused_note_releases_nothing():
    doc = _doc()
    overlapping = [Span("n1", 0, 4, "PATIENT"), Span("n1", 2, 13, "PATIENT")]  # E462: not resolved
    r = surviving_surfaces([doc], {"n1": overlapping}, _anon())
    assert r.quarantined == 1 and r.share() == 0.0


def test_short_numbers_count_only_where_they_stood():
    text = "Father is 93. SpO2 93% on RA."
    doc = GoldDoc("n2", "p1", text, (Span("n2", 10, 12, "AGE"),), {"note_date": "2024-01-02"})
    found = surviving_surfaces([doc], {"n2": [Span("n2", 10, 12, "AGE")]}, _anon())
    missed = surviving_surfaces([doc], {}, _anon())
    assert found.share() == 0.0 and missed.share() == 1.0
