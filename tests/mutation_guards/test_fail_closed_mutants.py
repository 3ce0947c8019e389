"""Every fail-closed path of anonymization, each with the case that differs by one property.

A note is released only when it was recognized (E401), recognition succeeded (E402 or the
recognizer's code), its text is the text that was recognized (E403), every span was replaced
(E46x) and no replacement equals its original (E405); a failure outside the operators is E499.
Runner cases use a real DuckDB warehouse and a span cache written through ``SpanCache.store``
with explicit spans, so the spans under test are exactly the ones written here.
"""

from __future__ import annotations

from datetime import date, timedelta

import pyarrow as pa
import pytest

from tide_core.anonymize.dates import date_offset_days
from tide_core.anonymize.engine import VERSION, Anonymizer, pseudonym
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.config import TideConfig
from tide_core.engine.anonymization import KEEPS_VALUE, anonymize_notes
from tide_core.errors import AnonymizationError
from tide_core.io.open import open_warehouse
from tide_core.runner import anonymize_study
from tide_core.spans import Note, Span
from tide_core.store.span_cache import SpanCache

KR = keyring_for_tests("guard", "k1", "guard-seed")
CONFIG = TideConfig.preset("rules")

MARY = "Pt Mary Lee seen in clinic."
BOB = "Pt Bob Stone seen in clinic."


def _span(note_id: str, text: str, sub: str, label: str) -> Span:
    i = text.index(sub)
    return Span(note_id, i, i + len(sub), label, 0.9, "test.guard@1")


def _warehouse(tmp_path, texts: dict[str, str]):
    wh = open_warehouse(f"duckdb:{tmp_path / 'guard.duckdb'}")
    rows = [{"note_id": nid, "patient_id": f"p-{nid}", "text": t} for nid, t in texts.items()]
    wh.replace_table("notes", pa.Table.from_pylist(rows))
    return wh


def _notes(texts: dict[str, str]) -> list[Note]:
    return [Note(nid, f"p-{nid}", t) for nid, t in texts.items()]


def _cache(wh, texts: dict[str, str], spans: dict[str, list[Span]], statuses: dict[str, tuple[str, str | None]]):
    """What a recognition run leaves behind for the notes in ``statuses`` (texts as recognized)."""
    SpanCache(wh, CONFIG.tables).store("s", "fp-guard", _notes(texts), spans, statuses, set())


def _release(wh, key_provider):
    key_provider.create("s", "k")
    report = anonymize_study(wh, "s", "k", key_provider, CONFIG, progress=False)
    released = {r["note_id"]: r["text"] for r in wh.read_table("tide_deid_notes").to_pylist()}
    quarantined = {r["note_id"]: r for r in wh.read_table("tide_quarantine", where={"key": "k"}).to_pylist()}
    return report, released, quarantined


def _no_name_anywhere(wh, *values: str) -> None:
    """None of ``values`` occurs in any released text, quarantine reason or run row."""
    dumped = " ".join(
        str(v)
        for table in ("tide_deid_notes", "tide_quarantine", "tide_runs", "tide_released_spans")
        if wh.table_exists(table)
        for row in wh.read_table(table).to_pylist()
        for v in row.values()
    )
    assert not [v for v in values if v in dumped]


# -- runner: E401 / E402 / E403 --------------------------------------------------------------


@pytest.mark.parametrize("bob_recognized", [False, True])
def test_e401_a_note_without_cached_spans_is_quarantined(tmp_path, key_provider, bob_recognized):
    texts = {"a": MARY, "b": BOB}
    wh = _warehouse(tmp_path, texts)
    spans = {"a": [_span("a", MARY, "Mary Lee", "PATIENT")], "b": [_span("b", BOB, "Bob Stone", "PATIENT")]}
    recognized = ("a", "b") if bob_recognized else ("a",)
    _cache(wh, texts, {n: spans[n] for n in recognized}, {n: ("ok", None) for n in recognized})
    report, released, quarantined = _release(wh, key_provider)
    _no_name_anywhere(wh, "Mary Lee", "Bob Stone")  # nothing in clear, anywhere
    assert "a" in released and "Mary Lee" not in released["a"]
    if bob_recognized:
        assert set(released) == {"a", "b"} and quarantined == {}
        assert "Bob Stone" not in released["b"]
    else:
        assert set(released) == {"a"} and set(quarantined) == {"b"}
        q = quarantined["b"]
        assert (q["code"], q["stage"], q["patient_id"]) == ("E401", "anonymization", "p-b")
        assert q["reason"] == "note b has no cached spans; run recognition for study s"
        assert report.quarantined_by_code == {"E401": 1} and (report.n_released, report.n_quarantined) == (1, 1)


@pytest.mark.parametrize(
    "status,code",
    [(("failed", "E503"), "E503"), (("failed", None), "E402"), (("ok", None), None)],
)
def test_e402_a_note_whose_recognition_failed_is_quarantined(tmp_path, key_provider, status, code):
    texts = {"a": MARY, "b": BOB}
    wh = _warehouse(tmp_path, texts)
    b_spans = [_span("b", BOB, "Bob Stone", "PATIENT")] if status[0] == "ok" else []
    _cache(wh, texts, {"a": [_span("a", MARY, "Mary Lee", "PATIENT")], "b": b_spans}, {"a": ("ok", None), "b": status})
    report, released, quarantined = _release(wh, key_provider)
    _no_name_anywhere(wh, "Mary Lee", "Bob Stone")  # nothing in clear, anywhere
    if code is None:
        assert set(released) == {"a", "b"} and quarantined == {}
    else:
        assert set(released) == {"a"} and set(quarantined) == {"b"}
        q = quarantined["b"]
        assert (q["code"], q["stage"]) == (code, "recognition")
        assert q["reason"] == f"note b: recognition failed ({status[1]}); not released"
        assert report.quarantined_by_code == {code: 1}


@pytest.mark.parametrize("changed", [False, True])
def test_e403_a_note_changed_since_recognition_is_quarantined(tmp_path, key_provider, changed):
    """Under a runner that skipped this check the stale spans would leave the new name in clear."""
    texts = {"a": MARY, "b": BOB}
    wh = _warehouse(tmp_path, texts)
    _cache(
        wh,
        texts,
        {"a": [_span("a", MARY, "Mary Lee", "PATIENT")], "b": [_span("b", BOB, "Bob Stone", "PATIENT")]},
        {"a": ("ok", None), "b": ("ok", None)},
    )
    if changed:  # the source row is edited after recognition: a second name the cache knows nothing of
        edited = {"a": MARY, "b": BOB + " Daughter Anna Quist called."}
        wh.replace_table(
            "notes",
            pa.Table.from_pylist([{"note_id": n, "patient_id": f"p-{n}", "text": t} for n, t in edited.items()]),
        )
    report, released, quarantined = _release(wh, key_provider)
    _no_name_anywhere(wh, "Mary Lee", "Bob Stone", "Anna Quist")  # nothing in clear, anywhere
    if changed:
        assert set(released) == {"a"} and set(quarantined) == {"b"}
        q = quarantined["b"]
        assert (q["code"], q["stage"]) == ("E403", "anonymization")
        assert q["reason"] == "note b changed since recognition; rerun recognition"
    else:
        assert set(released) == {"a", "b"} and quarantined == {}


# -- engine.anonymization: E405, the AGE exemption, E412, E499, span resolution ----------------


@pytest.mark.parametrize("surface,leaks", [("[DATE]", True), ("[date]", True), ("[DAT]", False)])
def test_e405_a_replacement_equal_to_its_original_is_quarantined(surface, leaks):
    """An unparseable DATE is masked as ``[DATE]``; written as ``[DATE]`` already (any case), the
    mask equals the original, which must never be released as if it had been replaced."""
    text = f"Pt Mary Lee, seen {surface} in clinic."
    note = Note("n1", "p1", text)
    spans = {"n1": [_span("n1", text, "Mary Lee", "PATIENT"), _span("n1", text, surface, "DATE")]}
    batch = anonymize_notes([note], spans, KR)
    if leaks:
        assert batch.released == [] and len(batch.quarantined) == 1
        q = batch.quarantined[0]
        assert (q.note_id, q.patient_id, q.stage, q.code) == ("n1", "p1", "anonymization", "E405")
        assert q.reason == (
            f"note n1: 1 replacement(s) equal the original value (first at offset {text.index(surface)}); not released"
        )
    else:
        assert batch.quarantined == [] and len(batch.released) == 1
        out = batch.released[0].note.text
        assert "[DATE]" in out and "Mary Lee" not in out


@pytest.mark.parametrize("label", ["AGE", "ID"])
def test_only_ages_may_keep_their_value(label):
    text = "Pt is 45 yo."
    batch = anonymize_notes([Note("n1", "p1", text)], {"n1": [_span("n1", text, "45", label)]}, KR)
    assert KEEPS_VALUE == frozenset({"AGE"})
    assert batch.quarantined == [] and len(batch.released) == 1
    out = batch.released[0].note
    assert (out.text == text) == (label == "AGE")  # an age <= 89 is kept, an ID never is
    assert out.spans[0].operator == ("age.keep" if label == "AGE" else "id.fpe")


@pytest.mark.parametrize("second", ["[DATE]", "[DAT]"])
def test_a_kept_age_does_not_end_the_search_for_leaks(second):
    """The AGE exemption skips that span only: a leaking span after it is still found."""
    text = f"Pt is 45 yo, seen {second}."
    spans = {"n1": [_span("n1", text, "45", "AGE"), _span("n1", text, second, "DATE")]}
    batch = anonymize_notes([Note("n1", "p1", text)], spans, KR)
    assert [q.code for q in batch.quarantined] == (["E405"] if second == "[DATE]" else [])
    assert len(batch.released) == (0 if second == "[DATE]" else 1)


def test_released_note_carries_keyed_references_and_the_shifted_note_date():
    text = "Pt Mary Lee seen."
    note = Note("n7", "p7", text, {"note_date": "2021-01-02"})
    batch = anonymize_notes([note], {"n7": [_span("n7", text, "Mary Lee", "PATIENT")]}, KR)
    assert batch.anonymizer == VERSION and batch.quarantined == []
    (r,) = batch.released
    assert r.source is note and r.note.note_id == "n7" and "Mary Lee" not in r.note.text
    assert r.note_ref == pseudonym(KR, "note", "n7") and r.note_ref.startswith("N")
    assert r.patient_ref == pseudonym(KR, "patient", "p7") and r.patient_ref.startswith("P")
    assert r.note_date == (date(2021, 1, 2) + timedelta(days=date_offset_days(KR, "p7"))).isoformat()
    no_date = anonymize_notes([Note("n8", "p7", text)], {}, KR).released[0]
    assert no_date.note_date is None and no_date.note.text == text


def _patient_with_offset(sign: int) -> str:
    return next(f"p{i}" for i in range(100) if date_offset_days(KR, f"p{i}") * sign > 0)


@pytest.mark.parametrize("note_date,shiftable", [("2021-01-02", True), ("garbage", False), ("0001-01-02", False)])
def test_note_date_that_cannot_be_shifted_quarantines_the_note(note_date, shiftable):
    """``garbage`` is no ISO date (E412); ``0001-01-02`` shifted backwards leaves the calendar: either
    way the note is quarantined with a coded reason that quotes no value."""
    pid = _patient_with_offset(-1)
    text = "Pt Mary Lee seen."
    note = Note("n1", pid, text, {"note_date": note_date})
    batch = anonymize_notes([note], {"n1": [_span("n1", text, "Mary Lee", "PATIENT")]}, KR)
    if shiftable:
        assert batch.quarantined == [] and batch.released[0].note_date < note_date
        return
    assert batch.released == [] and len(batch.quarantined) == 1
    q = batch.quarantined[0]
    assert (q.note_id, q.patient_id, q.stage) == ("n1", pid, "anonymization")
    assert q.code.startswith("E4") and (q.code == "E412") == (note_date == "garbage")
    assert q.reason.startswith("note n1: ") and note_date not in q.reason and "Mary" not in q.reason


@pytest.mark.parametrize("broken", [False, True])
def test_e499_any_other_failure_quarantines_the_note_without_quoting_it(monkeypatch, broken):
    """A bug outside the operators (here: the pseudonym step raising) still fails closed."""
    from tide_core.engine import anonymization

    if broken:

        def boom(keyring, kind, value):
            raise RuntimeError(f"cannot reference {value}")

        monkeypatch.setattr(anonymization, "pseudonym", boom)  # where anonymize_notes looks it up
    text = "Pt Mary Lee seen."
    note = Note("n1", "p-secret", text)
    batch = anonymize_notes([note], {"n1": [_span("n1", text, "Mary Lee", "PATIENT")]}, KR)
    if not broken:
        assert batch.quarantined == [] and len(batch.released) == 1
        return
    assert batch.released == [] and len(batch.quarantined) == 1
    q = batch.quarantined[0]
    assert (q.note_id, q.patient_id, q.stage, q.code) == ("n1", "p-secret", "anonymization", "E499")
    assert q.reason == "note n1: anonymizer raised RuntimeError"


def test_overlapping_cached_spans_are_resolved_before_replacement():
    """The span cache may hold overlapping spans (recognizer + reviewer); they are resolved first."""
    text = "Pt Mary Lee seen."
    spans = {"n1": [_span("n1", text, "Mary Lee", "PATIENT"), _span("n1", text, "Lee", "PATIENT")]}
    batch = anonymize_notes([Note("n1", "p1", text)], spans, KR)
    assert batch.quarantined == [] and len(batch.released) == 1
    assert "Mary" not in batch.released[0].note.text and "Lee" not in batch.released[0].note.text
    with pytest.raises(AnonymizationError) as e:  # unresolved, the engine refuses them
        Anonymizer(KR).anonymize(Note("n1", "p1", text), spans["n1"])
    assert e.value.code == "E462"


@pytest.mark.parametrize("policy,code", [("mask", None), ("quarantine", "E463")])
def test_the_configured_date_policy_reaches_the_engine(policy, code):
    text = "Seen on the twelfth-ish of Smarch."
    spans = {"n1": [_span("n1", text, "the twelfth-ish of Smarch", "DATE")]}
    batch = anonymize_notes([Note("n1", "p1", text)], spans, KR, TideConfig.preset("rules", on_unparseable_date=policy))
    if code is None:
        assert batch.quarantined == [] and batch.released[0].note.text == "Seen on [DATE]."
    else:
        assert batch.released == [] and batch.quarantined[0].code == code
        assert "Smarch" not in batch.quarantined[0].reason


def test_every_note_ends_released_or_quarantined_in_input_order():
    notes = [Note(f"n{i}", "p1", MARY if i % 2 else "[DATE] seen.") for i in range(6)]
    spans = {
        n.note_id: [
            _span(n.note_id, n.text, "Mary Lee", "PATIENT") if "Mary" in n.text else Span(n.note_id, 0, 6, "DATE")
        ]
        for n in notes
    }
    batch = anonymize_notes(notes, spans, KR)
    assert [r.source.note_id for r in batch.released] == ["n1", "n3", "n5"]
    assert [q.note_id for q in batch.quarantined] == ["n0", "n2", "n4"]
    assert {q.code for q in batch.quarantined} == {"E405"}


# -- anonymize.engine: E460-E465, E469 -----------------------------------------------------


@pytest.mark.parametrize("surrogate", ["", "Zed"])
def test_e464_an_empty_surrogate_is_never_released(monkeypatch, surrogate):
    """Operator output is checked: an empty replacement would delete the value and hide that it
    was ever there, so the note is refused.  The same operator returning text is released."""
    from tide_core.anonymize import names

    monkeypatch.setattr(names, "surrogate_name", lambda keyring, value: surrogate)
    text = "Pt Mary Lee seen."
    spans = [_span("n1", text, "Mary Lee", "PATIENT")]
    if surrogate:
        out = Anonymizer(KR).anonymize(Note("n1", "p1", text), spans)
        assert out.text == "Pt Zed seen." and (out.spans[0].out_start, out.spans[0].out_end) == (3, 6)
    else:
        with pytest.raises(AnonymizationError) as e:
            Anonymizer(KR).anonymize(Note("n1", "p1", text), spans)
        assert e.value.code == "E464"
        assert e.value.message == "note n1: PATIENT span [3, 11): operator returned an empty surrogate"
        batch = anonymize_notes([Note("n1", "p1", text)], {"n1": spans}, KR)
        assert batch.released == [] and batch.quarantined[0].code == "E464"


def test_e465_a_label_without_operator_is_refused():
    with pytest.raises(AnonymizationError) as e:
        Anonymizer(KR).replace_value("SECRET", "Mary Lee")
    assert e.value.code == "E465" and "Mary" not in str(e.value)


@pytest.mark.parametrize(
    "span,code",
    [
        (Span("n1", 3, 11, "PATIENT"), None),
        (Span("n2", 3, 11, "PATIENT"), "E460"),
        (Span("n1", 3, 18, "PATIENT"), "E461"),
        (Span("n1", 3, 17, "PATIENT"), None),
    ],
)
def test_spans_of_another_note_or_past_the_end_are_refused(span, code):
    text = "Pt Mary Lee seen."  # 17 characters: a span may end at 17, not at 18
    if code is None:
        out = Anonymizer(KR).anonymize(Note("n1", "p1", text), [span])
        assert "Mary" not in out.text and len(out.spans) == 1
    else:
        with pytest.raises(AnonymizationError) as e:
            Anonymizer(KR).anonymize(Note("n1", "p1", text), [span])
        assert e.value.code == code and "Mary" not in str(e.value)


@pytest.mark.parametrize("second_start,code", [(7, None), (6, "E462")])
def test_touching_spans_are_replaced_overlapping_ones_refused(second_start, code):
    text = "Pt MaryLee seen."
    spans = [Span("n1", 3, 7, "PATIENT"), Span("n1", second_start, 10, "PATIENT")]
    if code is None:
        out = Anonymizer(KR).anonymize(Note("n1", "p1", text), list(reversed(spans)))
        assert [(r.start, r.end) for r in out.spans] == [(3, 7), (7, 10)]
        assert out.text.startswith("Pt ") and out.text.endswith(" seen.") and "Mary" not in out.text
        assert out.spans[0].out_end == out.spans[1].out_start
    else:
        with pytest.raises(AnonymizationError) as e:
            Anonymizer(KR).anonymize(Note("n1", "p1", text), spans)
        assert e.value.code == code
        assert e.value.message == "note n1: PATIENT span [6, 10) overlaps PATIENT span [3, 7)"


def test_e405_also_compares_with_the_normalised_original():
    # the same note as above with one difference: a zero-width space inside the surface; the mask
    # equals what recognition saw, so it is the original value and must not be released
    surface = "[DA\u200bTE]"
    text = f"Pt Mary Lee, seen {surface} in clinic."
    spans = {"n1": [_span("n1", text, "Mary Lee", "PATIENT"), _span("n1", text, surface, "DATE")]}
    batch = anonymize_notes([Note("n1", "p1", text)], spans, KR)
    assert batch.released == [] and [q.code for q in batch.quarantined] == ["E405"]
