"""Mutation-guided tests of tide_core/anonymize/engine.py: pseudonym domain separation, the
reference year of dates without a year, the released note's identity and coded operator errors."""

from __future__ import annotations

import base64
from datetime import date

import pytest

from tide_core.anonymize.dates import anonymize_date, date_offset_days
from tide_core.anonymize.engine import Anonymizer, pseudonym
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.errors import AnonymizationError
from tide_core.spans import Note, Span

KR = keyring_for_tests("guard", "k1", "engine-seed")


def test_pseudonyms_follow_the_documented_keyed_formula():
    for kind, prefix in (("patient", "P"), ("note", "N"), ("zebra", "Z")):
        digest = KR.mac("id", "pseudonym", kind, "v-17")
        assert pseudonym(KR, kind, "v-17") == prefix + base64.b32encode(digest[:8]).decode("ascii")[:12]
    # the "pseudonym" domain separates references from every other keyed use of the id key
    assert pseudonym(KR, "patient", "v-17")[1:] != base64.b32encode(KR.mac("id", "patient", "v-17")[:8]).decode()[:12]
    assert pseudonym(KR, "", "v")[0] == "X"


def _yearless(note_date):
    text = "Seen on March 3 for follow-up."
    s = text.index("March 3")
    meta = {} if note_date is None else {"note_date": note_date}
    note = Note("n1", "p1", text, meta)
    return Anonymizer(KR).anonymize(note, [Span("n1", s, s + 7, "DATE", 1.0, "t")])


def test_dates_without_a_year_use_the_note_date_year():
    # a patient whose offset crosses the end of February: leap and common years give different days
    pid = next(f"p{i}" for i in range(2000) if -60 < date_offset_days(KR, f"p{i}") < -3)
    leap = anonymize_date(KR, pid, "March 3", 2020)[0]
    common = anonymize_date(KR, pid, "March 3", 2019)[0]
    assert leap != common
    span = [Span("n1", 8, 15, "DATE", 1.0, "t")]
    # an ISO string, a bare year and a date object all give the reference year (the default is 2020)
    for note_date, expected in (("2019-06-01", common), ("2019", common), (date(2020, 6, 1), leap)):
        note = Note("n1", pid, "Seen on March 3.", {"note_date": note_date})
        assert Anonymizer(KR).anonymize(note, span).text == f"Seen on {expected}.", note_date


def test_released_note_keeps_its_ids():
    out = _yearless("2021-01-05")
    assert (out.note_id, out.patient_id) == ("n1", "p1")
    assert out.spans[0].note_id == "n1" and out.spans[0].operator.startswith("date.")


def test_operator_errors_keep_their_code_and_say_where():
    text = "MRN: 12345 on 31/31/2099."
    s = text.index("31/31/2099")
    note = Note("n1", "p1", text)
    span = [Span("n1", s, s + 10, "DATE", 1.0, "t")]
    with pytest.raises(AnonymizationError) as e:
        Anonymizer(KR, on_unparseable_date="quarantine").anonymize(note, span)
    assert e.value.code == "E463" and e.value.message.startswith("note n1: DATE span [")
    assert "on_unparseable_date" in e.value.hint
    # the same span under the default policy is masked, not quarantined: only the policy differs
    assert Anonymizer(KR).anonymize(note, span).text == "MRN: 12345 on [DATE]."


def test_a_failing_non_date_operator_keeps_the_operators_code():
    text = "Mail x@ at noon."
    note = Note("n1", "p1", text)
    with pytest.raises(AnonymizationError) as e:
        Anonymizer(KR).anonymize(note, [Span("n1", 5, 7, "EMAIL", 1.0, "t")])
    assert e.value.code == "E451" and e.value.message.startswith("note n1: EMAIL span [5, 7)")
    assert e.value.hint
