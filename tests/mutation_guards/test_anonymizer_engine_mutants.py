"""Mutation-guided tests of tide_core/anonymize/engine.py: pseudonym domain separation, the
reference year of dates without a year, the released note's identity and coded operator errors."""

from __future__ import annotations

import base64
from datetime import date

import pytest

from tide_core.anonymize.dates import anonymize_date, date_offset_days
from tide_core.anonymize.engine import Anonymizer, pseudonym
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.errors import AnonymizationError, ConfigError, KeyProviderError
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


# --- the second mutmut run's survivors (see docs/results/mutation.md) --------------------------------
def test_a_pseudonym_is_one_prefix_letter_and_twelve_base32_characters():
    for kind in ("patient", "note", "zebra", ""):
        ref = pseudonym(KR, kind, "v-17")
        assert len(ref) == 13 and ref[0] == ((kind[:1] or "X").upper()), kind


def test_an_unknown_date_policy_is_a_coded_config_error_that_lists_the_policies():
    with pytest.raises(ConfigError) as e:
        Anonymizer(KR, on_unparseable_date="shred")
    assert e.value.code == "E470"
    assert "'shred'" in e.value.message
    assert "mask, quarantine" in e.value.hint
    for policy in ("mask", "quarantine"):  # the same call with a known policy is accepted
        assert Anonymizer(KR, on_unparseable_date=policy).on_unparseable_date == policy


def test_config_names_exactly_the_output_affecting_settings():
    # these keys enter the run fingerprint: renaming one would make every earlier release look stale
    assert Anonymizer(KR).config() == {"version": "tide.anonymizer@6", "on_unparseable_date": "mask"}
    assert Anonymizer(KR, "quarantine").config() == {
        "version": "tide.anonymizer@6",
        "on_unparseable_date": "quarantine",
    }


def test_replace_value_without_a_patient_uses_the_empty_patient_id():
    a = Anonymizer(KR)
    assert a.replace_value("DATE", "03/04/2021") == a.replace_value("DATE", "03/04/2021", "")
    # the offset really depends on the patient id, so the default is observable
    assert {a.replace_value("DATE", "03/04/2021", f"p{i}")[0] for i in range(5)} != {
        a.replace_value("DATE", "03/04/2021")[0]
    }


def _refused(spans, text="Zork Quux saw Ann Bell.", anonymizer=None):
    with pytest.raises(AnonymizationError) as e:
        (anonymizer or Anonymizer(KR)).anonymize(Note("n1", "p1", text), spans)
    assert e.value.message.startswith("note n1: "), e.value.message
    assert "Zork" not in str(e.value) and "Quux" not in str(e.value)
    return e.value


@pytest.mark.parametrize(
    ("spans", "code", "hint_names"),
    [
        ([Span("other", 0, 4, "PATIENT")], "E460", "spans of this note"),
        ([Span("n1", 0, 500, "PATIENT")], "E461", "rerun recognition"),
        ([Span("n1", 0, 9, "PATIENT"), Span("n1", 5, 9, "PATIENT")], "E462", "tide_core.steps.resolve.resolve_spans"),
    ],
)
def test_refused_span_sets_carry_a_hint_that_says_what_to_fix(spans, code, hint_names):
    err = _refused(spans)
    assert err.code == code
    assert hint_names.lower() in err.hint.lower()
    if "." in hint_names:  # a Python name is case-sensitive
        assert hint_names in err.hint


def test_a_date_that_cannot_be_shifted_keeps_its_own_code_under_the_mask_policy():
    # E413 (outside the shiftable years) is not "unparseable": it is not masked and not renamed E463
    text = "Seen on 03/04/9999."
    span = [Span("n1", 8, 18, "DATE")]
    err = _refused(span, text)
    assert err.code == "E413" and err.hint
    # the same note with a shiftable year in the same format is released
    assert Anonymizer(KR).anonymize(Note("n1", "p1", "Seen on 03/04/2021."), span).text != "Seen on 03/04/2021."


def test_unknown_label_is_refused_with_a_message_naming_it_and_a_hint():
    with pytest.raises(AnonymizationError) as e:
        Anonymizer(KR).replace_value("SPECIES", "cat")
    assert e.value.code == "E465"
    assert "'SPECIES'" in e.value.message and "cat" not in str(e.value)
    assert "tide_core.types.LABELS" in e.value.hint


def test_other_coded_errors_from_an_operator_keep_code_message_and_hint(monkeypatch):
    from tide_core.anonymize import names

    def locked(keyring, value):  # e.g. a key provider that can no longer unwrap the key
        raise KeyProviderError("E116", "the unwrap command is empty", hint="set TIDE_KEY_UNWRAP_COMMAND")

    monkeypatch.setattr(names, "surrogate_name", locked)
    err = _refused([Span("n1", 0, 9, "PATIENT")])
    assert isinstance(err, AnonymizationError)
    assert err.code == "E116"
    assert err.message == "note n1: PATIENT span [0, 9): the unwrap command is empty"
    assert err.hint == "set TIDE_KEY_UNWRAP_COMMAND"


def test_an_operator_bug_is_named_by_its_exception_type_and_has_a_hint(monkeypatch):
    from tide_core.anonymize import names

    def boom(keyring, value):
        raise ZeroDivisionError(f"bad {value}")

    monkeypatch.setattr(names, "surrogate_name", boom)
    err = _refused([Span("n1", 0, 9, "PATIENT")])
    assert err.code == "E469"
    assert err.message == "note n1: PATIENT span [0, 9): operator raised ZeroDivisionError"
    assert "report this as a bug" in err.hint.lower() and "quarantined" in err.hint.lower()


def test_an_empty_surrogate_has_a_hint(monkeypatch):
    from tide_core.anonymize import names

    monkeypatch.setattr(names, "surrogate_name", lambda keyring, value: "")
    err = _refused([Span("n1", 0, 9, "PATIENT")])
    assert err.code == "E464" and "report this as a bug" in err.hint.lower()
