"""The release view of recall: gold surfaces that survive verbatim after anonymization."""

from __future__ import annotations

import hashlib
import secrets

from tide_core.anonymize.dates import date_offset_days
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


def test_a_surrogate_that_equals_another_surface_is_a_coincidence_not_a_leak():
    """Two dates a week apart; the second key's shift differs, so a first-key surrogate equal to the
    other real date is ruled out, while a missed second mention survives under both keys."""
    text = "Seen 03/01/2021 and again 03/08/2021 by Dr. Okafor. Okafor said to rest."
    first, second = text.index("03/01/2021"), text.index("03/08/2021")
    doc = GoldDoc(
        "n3",
        "p1",
        text,
        (
            Span("n3", first, first + 10, "DATE"),
            Span("n3", second, second + 10, "DATE"),
            Span("n3", text.index("Okafor"), text.index("Okafor") + 6, "DOCTOR"),
            Span("n3", text.rindex("Okafor"), text.rindex("Okafor") + 6, "DOCTOR"),
        ),
        {"note_date": "2021-03-08"},
    )
    pred = list(doc.spans[:3])  # the second "Okafor" is missed
    keys = [Anonymizer(KeyRing("bench", "test", hashlib.sha256(b"%d" % i).digest())) for i in range(3000)]
    seven = next(a for a in keys if _shift_days(a) == 7)  # a key whose shift moves 03/01 onto 03/08
    other = next(a for a in keys if abs(_shift_days(a)) not in (0, 7))
    one_key = surviving_surfaces([doc], {"n3": pred}, seven)
    assert one_key.n_verbatim == {"DATE": 1, "DOCTOR": 2}  # the shifted 03/01 reads 03/08; Okafor twice
    confirmed = surviving_surfaces([doc], {"n3": pred}, seven, other)
    assert confirmed.n_verbatim == {"DOCTOR": 2} and confirmed.coincidences == 1
    assert surviving_surfaces([doc], {"n3": pred}, other, seven).n_verbatim == {"DOCTOR": 2}


def _shift_days(anonymizer: Anonymizer) -> int:
    return date_offset_days(anonymizer.keyring, "p1")
