"""Engine: offsets of released spans, untouched text outside spans, consistency, fail closed, pseudonyms."""

from __future__ import annotations

import re
from datetime import date, timedelta

import pytest

from tide_core.anonymize.dates import date_offset_days
from tide_core.anonymize.engine import DATE_MASK, VERSION, Anonymizer, pseudonym, shift_note_date
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.errors import AnonymizationError, ConfigError
from tide_core.spans import Note, Span

KA = keyring_for_tests("study1", "k1", "engine-a")
KB = keyring_for_tests("study1", "k2", "engine-b")

TEXT = (
    "Pt John Smith (MRN 12345678, SSN 123-45-6789) was seen 03/04/2021 14:30 by Dr. Mary Jones at "
    "Stanford Hospital, 1234 Oak Street, Palo Alto, CA 94304. Call (650) 555-1234 or email "
    "john.smith@stanford.edu, see https://portal.stanford.edu/x1. 95 yo, works at Acme Logistics Inc. "
    "Follow-up March 3rd. Seen in 2019. IP 10.1.2.3, country USA."
)
PHI = [
    ("John Smith", "PATIENT"),
    ("12345678", "ID"),
    ("123-45-6789", "ID"),
    ("03/04/2021 14:30", "DATE"),
    ("Mary Jones", "DOCTOR"),
    ("Stanford Hospital", "HOSPITAL"),
    ("1234 Oak Street", "LOCATION"),
    ("Palo Alto", "LOCATION"),
    ("CA", "LOCATION"),
    ("94304", "LOCATION"),
    ("(650) 555-1234", "PHONE"),
    ("john.smith@stanford.edu", "EMAIL"),
    ("https://portal.stanford.edu/x1", "URL"),
    ("95", "AGE"),
    ("Acme Logistics Inc.", "OTHER"),
    ("March 3rd", "DATE"),
    ("2019", "DATE"),
    ("10.1.2.3", "URL"),
    ("USA", "LOCATION"),
]


def _spans(text: str, note_id: str = "n1") -> list[Span]:
    spans, pos = [], 0
    for value, label in PHI:
        i = text.index(value, pos if label != "LOCATION" or value != "CA" else 0)
        if value == "CA":
            i = text.index(", CA ") + 2
        spans.append(Span(note_id, i, i + len(value), label, 0.9, "test@1"))
        pos = i + len(value)
    return spans


def _note(note_id="n1", patient="p1", text=TEXT, note_date="2021-03-04"):
    return Note(note_id, patient, text, {"note_date": note_date})


def test_every_span_is_replaced_and_offsets_point_at_the_surrogates():
    note = _note()
    spans = _spans(TEXT)
    out = Anonymizer(KA).anonymize(note, spans)
    assert out.note_id == "n1" and len(out.spans) == len(spans)
    prev_out, prev_in = 0, 0
    for r, s in zip(out.spans, spans, strict=True):
        assert (r.start, r.end, r.label, r.recognizer) == (s.start, s.end, s.label, s.recognizer)
        # the text between spans is untouched
        assert out.text[prev_out : r.out_start] == TEXT[prev_in : s.start]
        prev_out, prev_in = r.out_end, s.end
        sur = out.text[r.out_start : r.out_end]
        if s.label != "AGE":
            assert sur.casefold() != TEXT[s.start : s.end].casefold(), r.operator
    assert out.text[prev_out:] == TEXT[prev_in:]
    for value, label in PHI:
        if label != "AGE" and len(value) > 3:
            assert value not in out.text
    ops = {r.operator for r in out.spans}
    assert {
        "name.surrogate",
        "id.fpe",
        "date.shift",
        "hospital.surrogate",
        "location.street",
        "location.city",
        "location.state",
        "location.zip",
        "location.country",
        "phone.fpe",
        "email.surrogate",
        "url.surrogate",
        "ip.fpe",
        "age.aggregate",
        "org.surrogate",
    } <= ops


def test_dates_in_a_note_shift_by_the_patients_offset_and_keep_the_time():
    out = Anonymizer(KA).anonymize(_note(), _spans(TEXT))
    d = {r.start: out.text[r.out_start : r.out_end] for r in out.spans if r.label == "DATE"}
    off = date_offset_days(KA, "p1")
    new = date(2021, 3, 4) + timedelta(days=off)
    assert d[TEXT.index("03/04/2021")] == f"{new.month:02d}/{new.day:02d}/{new.year} 14:30"
    md = date(2021, 3, 3) + timedelta(days=off)  # reference year = note year
    assert re.match(rf"[A-Z][a-z]+ {md.day}(st|nd|rd|th)", d[TEXT.index("March 3rd")])
    assert shift_note_date(KA, "p1", "2021-03-04") == new.isoformat()


def test_same_values_in_other_notes_get_the_same_surrogates_and_a_new_key_remaps():
    other_text = "Addendum. " + TEXT.replace("was seen", "had been seen")
    a = Anonymizer(KA).anonymize(_note(), _spans(TEXT))
    b = Anonymizer(KA).anonymize(_note("n2", text=other_text), _spans(other_text, "n2"))
    c = Anonymizer(KB).anonymize(_note(), _spans(TEXT))
    sa = [a.text[r.out_start : r.out_end] for r in a.spans]
    sb = [b.text[r.out_start : r.out_end] for r in b.spans]
    sc = [c.text[r.out_start : r.out_end] for r in c.spans]
    assert sa == sb
    # ages are kept/aggregated (not keyed); a year alone has two possible surrogates (+-1 year) and a
    # country abbreviation six, so a new key can coincide there by chance: excluded here, measured in the bench
    low_entropy = {TEXT.index("2019"), TEXT.index("USA")}
    changed = [
        x != y for x, y, r in zip(sa, sc, a.spans, strict=True) if r.label != "AGE" and r.start not in low_entropy
    ]
    assert len(changed) == len(PHI) - 3 and all(changed)
    assert Anonymizer(KA).anonymize(_note(), _spans(TEXT)) == a  # deterministic, no state


def test_unparseable_date_is_masked_or_quarantined_by_policy():
    text = "Seen on the twelfth-ish of Smarch, then 03/04/2021."
    bad, good = text.index("the twelfth"), text.index("03/04/2021")
    spans = [Span("n1", bad, text.index(","), "DATE"), Span("n1", good, good + 10, "DATE")]
    out = Anonymizer(KA).anonymize(_note(text=text), spans)
    assert out.text.startswith(f"Seen on {DATE_MASK}, then ")
    assert [r.operator for r in out.spans] == ["date.mask", "date.shift"]
    assert out.text[out.spans[0].out_start : out.spans[0].out_end] == DATE_MASK
    with pytest.raises(AnonymizationError) as e:
        Anonymizer(KA, on_unparseable_date="quarantine").anonymize(_note(text=text), spans)
    assert e.value.code == "E463" and "n1" in e.value.message and "Smarch" not in str(e.value)
    with pytest.raises(ConfigError):
        Anonymizer(KA, on_unparseable_date="keep")


@pytest.mark.parametrize(
    "spans,code",
    [
        ([Span("n1", 0, 4, "PATIENT"), Span("n1", 2, 6, "PATIENT")], "E462"),
        ([Span("n1", 0, 500, "PATIENT")], "E461"),
        ([Span("other", 0, 4, "PATIENT")], "E460"),
        ([Span("n1", 0, 4, "AGE")], "E420"),
        ([Span("n1", 5, 6, "PHONE")], "E450"),
    ],
)
def test_bad_spans_fail_closed_with_coded_errors_naming_no_value(spans, code):
    text = "Zork Quux went home."
    with pytest.raises(AnonymizationError) as e:
        Anonymizer(KA).anonymize(_note(text=text), spans)
    assert e.value.code == code
    assert "n1" in e.value.message and "Zork" not in str(e.value) and "Quux" not in str(e.value)


def test_operator_bugs_are_wrapped_and_never_release(monkeypatch):
    from tide_core.anonymize import names

    def boom(keyring, value):
        raise RuntimeError(f"bad {value}")

    monkeypatch.setattr(names, "surrogate_name", boom)
    with pytest.raises(AnonymizationError) as e:
        Anonymizer(KA).anonymize(_note(text="Zork Quux"), [Span("n1", 0, 9, "PATIENT")])
    assert e.value.code == "E469" and "Zork" not in str(e.value)


def test_pseudonyms_are_stable_opaque_and_keyed():
    p = pseudonym(KA, "patient", "p1")
    assert re.fullmatch(r"P[A-Z2-7]{12}", p)
    assert p == pseudonym(KA, "patient", "p1") != pseudonym(KB, "patient", "p1")
    assert pseudonym(KA, "note", "p1").startswith("N") and pseudonym(KA, "note", "p1")[1:] != p[1:]
    refs = {pseudonym(KA, "patient", f"p{i}") for i in range(20000)}
    assert len(refs) == 20000
    assert Anonymizer.VERSION == VERSION == "tide.anonymizer@6"


def test_empty_span_list_returns_the_text_unchanged():
    out = Anonymizer(KA).anonymize(_note(text="No PHI here."), [])
    assert out.text == "No PHI here." and out.spans == ()


def test_anonymizer_pickles_for_ray_workers_and_gives_identical_output():
    import pickle

    a = Anonymizer(KA, on_unparseable_date="quarantine")
    b = pickle.loads(pickle.dumps(a))
    assert b.on_unparseable_date == "quarantine" and b.keyring.fingerprint == KA.fingerprint
    assert b.anonymize(_note(), _spans(TEXT)) == a.anonymize(_note(), _spans(TEXT))
    assert "secret" not in repr(b.keyring) and KA.subkey("id").hex() not in repr(b.config())


def test_memoised_replacements_equal_fresh_ones_and_failures_are_not_remembered(monkeypatch):
    """The per-anonymizer memo is a cache only: same outputs as a fresh anonymizer, dates keyed by
    patient and reference year, a failing value fails every time, and a pickle carries no memo."""
    import pickle

    from tide_core.anonymize import engine as engine_mod

    warm = Anonymizer(KA)
    values = [(value, label) for value, label in PHI]
    first = [warm.replace_value(label, value, "p1", 2021) for value, label in values]
    assert warm._memo  # something was remembered
    again = [warm.replace_value(label, value, "p1", 2021) for value, label in values]
    fresh = [Anonymizer(KA).replace_value(label, value, "p1", 2021) for value, label in values]
    assert first == again == fresh
    # a date's surrogate is per patient: a remembered p1 date is not p2's date
    d1 = warm.replace_value("DATE", "03/04/2021", "p1", 2021)
    d2 = warm.replace_value("DATE", "03/04/2021", "p2", 2021)
    assert d1 == Anonymizer(KA).replace_value("DATE", "03/04/2021", "p1", 2021)
    assert d2 == Anonymizer(KA).replace_value("DATE", "03/04/2021", "p2", 2021)
    assert date_offset_days(KA, "p1") == date_offset_days(KA, "p2") or d1 != d2
    # a value that cannot be replaced raises on every call (nothing remembered for it)
    for _ in range(2):
        with pytest.raises(AnonymizationError) as e:
            warm.replace_value("PATIENT", "1234", "p1", None)
        assert e.value.code == "E430"
    # full: it starts again empty (bounded memory)
    monkeypatch.setattr(engine_mod, "MEMO_ENTRIES", 3)
    small = Anonymizer(KA)
    for value, label in values[:10]:
        small.replace_value(label, value, "p1", 2021)
        assert len(small._memo) <= 3
    assert pickle.loads(pickle.dumps(warm))._memo == {}


def test_a_surface_with_format_characters_or_look_alikes_gets_its_normalised_values_surrogate():
    """The surrogate comes from the normalised surface: a zero-width space or a Cyrillic look-alike
    inside a name gives the plain name's surrogate, and the whole original extent is replaced."""
    plain = "Seen by Dr. Mary Jones today."
    odd = "Seen by Dr. Ma\u200bry J\u043enes today."  # zero-width space, Cyrillic o
    a = Anonymizer(KA)

    def released(text: str) -> str:
        start = text.index("Ma")
        end = text.index(" today")
        out = a.anonymize(Note("n1", "p1", text), [Span("n1", start, end, "DOCTOR")])
        return out.text

    assert released(odd) == released(plain)
    assert "\u200b" not in released(odd) and "\u043e" not in released(odd)


def test_the_error_is_that_of_the_first_failing_span_in_text_order_whatever_its_label():
    """Spans are replaced label by label, but a note with several failing spans is refused with
    the error of the one that comes first in the text."""
    a = Anonymizer(KA, on_unparseable_date="quarantine")
    # PATIENT "1234" fails with E430; the DATE after it fails as unparseable (E463 under quarantine).
    # Label order would reach DATE first; text order puts the PATIENT span first.
    text = "Name 1234 seen on 99/99/9999 and again."
    spans = [Span("n1", 5, 9, "PATIENT"), Span("n1", 18, 28, "DATE")]
    with pytest.raises(AnonymizationError) as e:
        a.anonymize(Note("n1", "p1", text), spans)
    assert e.value.code == "E430" and "[5, 9)" in e.value.message
    text2 = "On 99/99/9999 Name 1234 was seen."
    spans2 = [Span("n1", 3, 13, "DATE"), Span("n1", 19, 23, "PATIENT")]
    with pytest.raises(AnonymizationError) as e:
        a.anonymize(Note("n1", "p1", text2), spans2)
    assert e.value.code == "E463" and "[3, 13)" in e.value.message


def test_a_pickled_anonymizer_carries_no_patient_offsets():
    import pickle

    a = Anonymizer(KA)
    a.anonymize(_note(), _spans(TEXT))
    assert a._offsets  # the patient's date offset was remembered
    assert pickle.loads(pickle.dumps(a))._offsets == {}
