"""Guards of the local recognition path (``tide_core.engine.recognition``), one property per test.

Fast (no model, no Ray): tiny regex recognizers on hand-written notes.  Each test pins one rule
of the fail-closed recognition step (which note fails, with which code, which text a message may
hold, how batches split, how views map back to original offsets) so that a change of that rule
fails here.
"""

from __future__ import annotations

import re

import pytest
from test_recognition_engine import PatternRecognizer

from tide_core.engine import recognition as R
from tide_core.errors import ConfigError, InputError
from tide_core.spans import Note, Span
from tide_core.steps import person_roles, propagate, span_tidy
from tide_core.steps.resolve import ResolutionPolicy
from tide_core.text.normalize import normalize

ZW = "\u200b"  # zero-width space: a format character the view removes


class Regex(PatternRecognizer):
    """One regex, one label (``test_recognition_engine``'s recognizer); also records the texts it saw."""

    def __init__(self, name: str, pattern: str, label: str, score: float = 0.9):
        super().__init__(name, pattern, label, score)
        self.seen: list[str] = []

    def recognize_many(self, notes):
        self.seen.extend(n.text for n in notes)
        return super().recognize_many(notes)


class FailsOn(Regex):
    """Raises ``exc`` on any batch holding a note whose text contains ``word``."""

    def __init__(self, word: str, exc: BaseException):
        super().__init__("t.fails", r"\d{3}-\d{4}", "PHONE")
        self.word, self.exc = word, exc

    def recognize_many(self, notes):
        self.batch_sizes.append(len(notes))
        if any(self.word in n.text for n in notes):
            raise self.exc
        return [self.recognize(n) for n in notes]


def phone() -> Regex:
    return Regex("t.phone", r"\d{3}-\d{4}", "PHONE")


def notes(n: int) -> list[Note]:
    return [Note(f"n{i}", f"p{i}", f"Call 555-{1000 + i} today.") for i in range(n)]


# --- views and offsets ------------------------------------------------------------------------


def test_an_already_normal_note_is_its_own_view():
    note = Note("a", "p", "Call 555-1234.", {"k": "v"})
    view_note, view = R.recognition_view(note)
    assert view_note is note and view.identity


def test_a_note_with_a_format_character_is_seen_without_it_and_keeps_its_ids():
    note = Note("a", "p", f"Call 555{ZW}-1234.", {"k": "v"})
    view_note, view = R.recognition_view(note)
    assert view_note.text == "Call 555-1234."
    assert (view_note.note_id, view_note.patient_id, view_note.metadata) == ("a", "p", {"k": "v"})
    assert not view.identity


def test_spans_of_the_view_map_back_over_removed_characters():
    text = f"Call 555{ZW}-1234."
    view = normalize(text)
    got = R.spans_to_original(view, [Span("a", 5, 13, "PHONE", 0.9, "t")])
    assert [(s.start, s.end) for s in got] == [(5, 14)]
    assert text[5:14] == f"555{ZW}-1234"
    same = Span("a", 0, 4, "PHONE", 0.9, "t")  # "Call": before the removed character, unchanged
    assert R.spans_to_original(view, [same])[0] is same


def test_identity_views_return_spans_unchanged_as_a_list():
    view = normalize("plain text")
    spans = (Span("a", 0, 5, "PATIENT", 0.9, "t"),)
    assert R.spans_to_original(view, iter(spans)) == list(spans)
    assert R.spans_to_view(view, iter(spans)) == list(spans)


def test_original_spans_move_into_the_view_and_a_span_of_removed_characters_is_dropped():
    text = f"Call 555{ZW}-1234{ZW}."
    view = normalize(text)
    kept = Span("a", 5, 14, "PHONE", 0.9, "t")
    gone = Span("a", 18, 19, "PHONE", 0.9, "t")  # the trailing zero-width space alone
    first = Span("a", 0, 4, "PHONE", 0.9, "t")
    got = R.spans_to_view(view, [first, kept, gone])
    assert [(s.start, s.end) for s in got] == [(0, 4), (5, 13)]
    assert got[0] is first


def test_recognizers_see_the_view_and_spans_come_back_in_original_offsets():
    note = Note("a", "p", f"Call 555{ZW}-1234 today.")
    rec = phone()
    batch = R.recognize_notes([note], [rec])
    assert rec.seen == ["Call 555-1234 today."]
    [span] = batch.spans["a"]
    assert note.text[span.start : span.end] == f"555{ZW}-1234"


def test_a_wrong_result_count_on_views_is_reported_not_mapped():
    class Short(Regex):
        def recognize_many(self, notes):
            return [[]] * (len(notes) - 1)

    note = Note("a", "p", f"x{ZW}y")
    batch = R.recognize_notes([note, Note("b", "p", "plain")], [Short("t.short", "x", "ID")])
    assert [r.error_code for r in batch.records] == [R.E_BAD_RESULT, R.E_BAD_RESULT]
    assert "returned 1 results for a batch of 2 notes" in (batch.records[0].error or "")


# --- out of memory and descriptions -------------------------------------------------------------


class OutOfMemoryError(RuntimeError):  # the name torch.cuda uses
    pass


@pytest.mark.parametrize(
    ("exc", "oom"),
    [
        (MemoryError(), True),
        (OutOfMemoryError("CUDA"), True),
        (RuntimeError("CUDA Out Of Memory. Tried to allocate"), True),
        (RuntimeError("DefaultCPUAllocator: out of memory"), True),
        (RuntimeError("shape mismatch"), False),
        (ValueError("out of memory"), False),
        (Exception("OutOfMemoryError"), False),
    ],
)
def test_out_of_memory_is_recognized_by_type_or_runtime_message(exc, oom):
    assert R.is_out_of_memory(exc) is oom


def test_an_exception_is_described_by_type_without_its_message():
    text = R.describe_exception("t.rec", "n7", ValueError("patient Jane Roe"))
    assert text == "recognizer t.rec raised ValueError on note n7"
    assert R.describe_exception("t.rec", None, KeyError("x")) == "recognizer t.rec raised KeyError on a batch"


def test_a_tide_error_is_described_with_its_code_and_message():
    exc = ConfigError("E321", "the model directory is empty", hint="train it")
    text = R.describe_exception("t.rec", "n1", exc)
    assert text == "recognizer t.rec raised ConfigError on note n1: [E321] the model directory is empty"


# --- batch splitting ----------------------------------------------------------------------------


def test_an_error_splits_the_batch_in_halves_down_to_the_failing_note():
    batch = notes(8)
    poisoned = Note("bad", "p", "Call 555-9999 SECRET.")
    batch.insert(5, poisoned)  # 9 notes
    rec = FailsOn("SECRET", ValueError("SECRET"))
    stats = R.RecognitionStats()
    spans, fails = R.run_recognizer(rec, batch, stats)
    # 9 → (4, 5); 5 → (2, 3); 2 → (1, 1) isolates "bad" (index 5 = 4 + 1)
    assert rec.batch_sizes == [9, 4, 5, 2, 1, 1, 3]
    assert stats.batches == 7 and stats.error_splits == 3 and stats.oom_splits == 0
    assert [f is None for f in fails] == [i != 5 for i in range(9)]
    assert fails[5] is not None and fails[5].code == R.E_RAISED and "SECRET" not in fails[5].error
    assert spans[5] is None and all(spans[i] is not None for i in range(9) if i != 5)
    assert spans[4] is not None and spans[4][0].note_id == "n4"


def test_out_of_memory_splits_are_counted_apart_from_error_splits():
    rec = FailsOn("SECRET", MemoryError())
    batch = [*notes(3), Note("bad", "p", "SECRET")]
    stats = R.RecognitionStats()
    _, fails = R.run_recognizer(rec, batch, stats)
    assert stats.oom_splits == 2 and stats.error_splits == 0
    assert fails[3] is not None and fails[3].code == R.E_OOM
    assert fails[3].error == "recognizer t.fails@1 ran out of memory on note bad alone"


def test_a_config_error_is_raised_not_split():
    rec = FailsOn("Call", ConfigError("E300", "no model", hint="train it"))
    stats = R.RecognitionStats()
    with pytest.raises(ConfigError):
        R.run_recognizer(rec, notes(4), stats)
    assert rec.batch_sizes == [4] and stats.error_splits == 0


def test_no_notes_no_call():
    rec = phone()
    stats = R.RecognitionStats()
    assert R.run_recognizer(rec, [], stats) == ([], [])
    assert rec.batch_sizes == [] and stats.batches == 0


def test_a_given_call_replaces_recognize_many_and_sees_the_raw_notes():
    seen: list[str] = []

    def call(batch):
        seen.extend(n.text for n in batch)
        return [[Span(n.note_id, 0, 1, "ID", 1.0, "c")] for n in batch]

    raw = Note("a", "p", f"x{ZW}y")
    spans, fails = R.run_recognizer(phone(), [raw], call=call)
    assert seen == [raw.text] and fails == [None]
    assert spans[0] is not None and [(s.start, s.end) for s in spans[0]] == [(0, 1)]


def test_stats_default_to_a_fresh_counter():
    spans, fails = R.run_recognizer(phone(), notes(2))
    assert fails == [None, None] and all(s is not None and len(s) == 1 for s in spans)


# --- checks of recognizer output ----------------------------------------------------------------


def test_checked_spans_keep_spans_inside_the_note():
    note = Note("a", "p", "Call 555-1234")
    spans = [Span("a", 5, 13, "PHONE", 0.9, "t"), Span("a", 0, 4, "ID", 0.5, "t")]
    assert R.checked_spans(note, spans, "t") == (spans, None)


def test_one_span_of_another_note_fails_the_whole_note():
    note = Note("a", "p", "Call 555-1234")
    spans = [Span("a", 5, 13, "PHONE", 0.9, "t"), Span("b", 5, 13, "PHONE", 0.9, "t")]
    kept, fail = R.checked_spans(note, spans, "t.rec")
    assert kept == [] and fail is not None and fail.code == R.E_BAD_SPAN
    assert fail.error == "recognizer t.rec returned a span of note b for note a"


def test_one_span_past_the_end_fails_the_whole_note():
    note = Note("a", "p", "Call 555-1234")
    spans = [Span("a", 5, 13, "PHONE", 0.9, "t"), Span("a", 5, 14, "PHONE", 0.9, "t")]
    kept, fail = R.checked_spans(note, spans, "t.rec")
    assert kept == [] and fail is not None and fail.code == R.E_BAD_SPAN
    assert fail.error.startswith("recognizer t.rec: [E")
    assert R.checked_spans(note, spans[:1], "t.rec") == (spans[:1], None)  # the one-property twin


def test_a_note_failed_by_one_recognizer_is_not_given_to_the_next():
    bad = Note("bad", "p", "Call 555-0000 SECRET")
    first = FailsOn("SECRET", ValueError("x"))
    second = phone()
    batch = R.recognize_notes([*notes(2), bad], [first, second])
    assert "SECRET" not in " ".join(second.seen) and len(second.seen) == 2
    assert batch.record("bad").error_code == R.E_RAISED and batch.stats.failed_notes == 1
    assert sorted(batch.spans) == ["n0", "n1"]


def test_spans_of_every_recognizer_are_collected_before_resolution():
    note = Note("a", "p", "MRN 1234567 phone 555-1234")
    batch = R.recognize_notes([note], [Regex("t.mrn", r"(?<=MRN )\d{7}", "ID"), phone()])
    assert sorted(note.text[s.start : s.end] for s in batch.spans["a"]) == ["1234567", "555-1234"]
    assert batch.record("a").n_spans == 2


def test_bad_span_from_a_later_recognizer_fails_the_note():
    class PastEnd(Regex):
        def recognize(self, note):
            return [Span(note.note_id, 0, len(note.text) + 1, "ID", 1.0, self.qualified_name)]

    batch = R.recognize_notes(notes(1), [phone(), PastEnd("t.past", "x", "ID")])
    assert batch.records[0].error_code == R.E_BAD_SPAN and batch.spans == {}


# --- policy, finishing, batches -----------------------------------------------------------------


def test_as_policy_accepts_none_a_policy_or_its_dict():
    assert R.as_policy(None) is None
    p = ResolutionPolicy(min_score={"ID": 0.4})
    assert R.as_policy(p) is p
    got = R.as_policy({"min_score": {"ID": 0.4}})
    assert isinstance(got, ResolutionPolicy) and got == p
    other = object()
    assert R.as_policy(other) is other


def test_a_failed_note_finishes_with_its_code_and_no_spans():
    spans, rec = R.finish_note("a", [Span("a", 0, 1, "ID", 1.0, "t")], R.NoteFailure("E500", "why"), None, "x")
    assert spans == [] and rec == R.NoteRecognition("a", "failed", 0, "E500", "why")
    assert not rec.ok


def test_finishing_tidies_resolves_and_propagates_on_the_view():
    text = f"Seen by Dr. Oak.{ZW} Later Oak called."
    first = Span("a", 12, 15, "DOCTOR", 0.9, "t")
    spans, rec = R.finish_note("a", [first], None, None, text)
    assert rec == R.NoteRecognition("a", "ok", 2)
    assert [text[s.start : s.end] for s in spans] == ["Oak", "Oak"]
    assert spans[1].start == text.rindex("Oak")


def test_without_text_spans_are_only_resolved():
    spans_in = [Span("a", 0, 3, "ID", 0.9, "t"), Span("a", 0, 5, "ID", 0.8, "t")]
    spans, rec = R.finish_note("a", spans_in, None, None)
    assert [(s.start, s.end) for s in spans] == [(0, 5)] and rec.n_spans == 1


def test_a_policy_dict_reaches_resolution():
    batch = R.recognize_notes(notes(1), [Regex("t.low", r"\d{3}-\d{4}", "PHONE", 0.3)], {"min_score": {"PHONE": 0.31}})
    assert batch.records[0].n_spans == 0 and batch.records[0].ok
    batch = R.recognize_notes(notes(1), [Regex("t.low", r"\d{3}-\d{4}", "PHONE", 0.3)], {"min_score": {"PHONE": 0.3}})
    assert batch.records[0].n_spans == 1


def test_assemble_counts_failed_notes_and_keeps_input_order():
    ns = notes(3)
    stats = R.RecognitionStats(failed_notes=1)
    out = R.assemble_batch(ns, [[], [], []], [None, R.NoteFailure("E500", "x"), None], None, stats)
    assert [r.note_id for r in out.records] == ["n0", "n1", "n2"]
    assert [r.status for r in out.records] == ["ok", "failed", "ok"]
    assert stats.failed_notes == 2 and out.stats is stats and sorted(out.spans) == ["n0", "n2"]


def test_duplicate_ids_are_refused_with_a_hint():
    n = notes(1)[0]
    with pytest.raises(InputError) as err:
        R.recognize_notes([n, notes(2)[1], n], [phone()])
    assert err.value.code == "E505" and "n0" in err.value.message and "deduplicate" in (err.value.hint or "")
    assert len(R.recognize_notes(notes(2), [phone()])) == 2  # distinct ids pass


def test_batch_helpers():
    a = R.RecognitionBatch(
        {
            "b": [Span("b", 4, 5, "ID", 1.0, "t"), Span("b", 0, 1, "ID", 1.0, "t")],
            "a": [Span("a", 2, 3, "ID", 1.0, "t")],
        },
        [R.NoteRecognition("a", "ok", 1), R.NoteRecognition("c", "failed", 0, "E500", "x")],
    )
    assert [(s.note_id, s.start) for s in a.all_spans()] == [("a", 2), ("b", 0), ("b", 4)]
    assert [r.note_id for r in a.ok()] == ["a"] and [r.note_id for r in a.failed()] == ["c"]
    assert a.record("c").error_code == "E500"
    with pytest.raises(KeyError):
        a.record("zz")
    b = R.RecognitionBatch({"d": []}, [R.NoteRecognition("d", "ok", 0)], R.RecognitionStats(batches=2))
    a.extend(b)
    assert len(a) == 3 and "d" in a.spans and a.stats.batches == 2


def test_stats_add_every_counter():
    s = R.RecognitionStats(1, 2, 3, 4)
    s.add(R.RecognitionStats(10, 20, 30, 40))
    assert s.to_dict() == {"batches": 11, "oom_splits": 22, "error_splits": 33, "failed_notes": 44}


# --- steps and fingerprint ----------------------------------------------------------------------


def test_note_steps_are_tidy_resolution_roles_propagation():
    tidy, resolution, roles, prop = R.note_steps()
    assert tidy is span_tidy.STEP and roles is person_roles.STEP and prop is propagate.DEFAULT_POLICY
    assert resolution == ResolutionPolicy()
    assert R.note_steps({"min_score": {"ID": 0.5}})[1] == ResolutionPolicy(min_score={"ID": 0.5})


def test_the_fingerprint_covers_each_step_and_the_view(monkeypatch):
    recs = [phone()]
    base = R.recognition_fingerprint(recs)
    assert re.fullmatch(r"[0-9a-f]{16}", base)
    assert R.recognition_fingerprint(recs, {"min_score": {"ID": 0.5}}) != base
    for module, attr in ((span_tidy, "STEP"), (person_roles, "STEP"), (propagate, "DEFAULT_POLICY")):
        step = getattr(module, attr)
        monkeypatch.setattr(module, attr, _OtherStep(step))
        assert R.recognition_fingerprint(recs) != base, f"{module.__name__}.{attr} is not in the fingerprint"
        monkeypatch.setattr(module, attr, step)
    assert R.recognition_fingerprint(recs) == base
    from tide_core.text import normalize as nz

    monkeypatch.setattr(nz, "STEP", _OtherStep(nz.STEP))
    assert R.recognition_fingerprint(recs) != base, "the normalised view is not in the fingerprint"


class _OtherStep:
    """A stand-in step at another version (any object with ``qualified_name`` and ``config()``)."""

    def __init__(self, step):
        self.qualified_name = step.qualified_name + ".x"
        self._config = dict(step.config())

    def config(self):
        return self._config


# --- second pass: rules the first mutation run showed unguarded ---------------------------------


def test_a_span_after_a_removed_character_moves_its_start_into_the_view():
    text = f"{ZW}Call 555-1234"
    view = normalize(text)
    [got] = R.spans_to_view(view, [Span("a", 6, 14, "PHONE", 0.9, "t")])
    assert (got.start, got.end) == (5, 13) and view.text[got.start : got.end] == "555-1234"


def test_propagation_runs_on_the_view_so_a_split_name_finds_its_clean_mention():
    text = f"Seen by Dr. Oa{ZW}k today. Later Oak called."
    first = Span("a", 12, 16, "DOCTOR", 0.9, "t")  # "Oa\u200bk"
    spans, rec = R.finish_note("a", [first], None, None, text)
    assert [text[s.start : s.end] for s in spans] == [f"Oa{ZW}k", "Oak"] and rec.n_spans == 2


def test_recognition_finishes_each_note_with_its_text():
    note = Note("a", "p", "Seen by Dr. Oak today. Later Oak called.")
    first_only = Regex("t.first", r"(?<=Dr\. )Oak", "DOCTOR")
    batch = R.recognize_notes([note], [first_only])
    assert [note.text[s.start : s.end] for s in batch.spans["a"]] == ["Oak", "Oak"]  # propagated


def test_a_wrong_count_after_a_split_fails_only_that_half():
    class Picky(Regex):
        def recognize_many(self, notes):
            if len(notes) > 1:
                raise ValueError("batch")
            if notes[0].note_id == "b":
                return []  # wrong count for a batch of one
            return super().recognize_many(notes)

    batch = R.recognize_notes(
        [Note("a", "p", "Call 555-1234"), Note("b", "p", "Call 555-1235")], [Picky("t.p", r"\d{3}-\d{4}", "PHONE")]
    )
    assert [(r.note_id, r.status, r.error_code) for r in batch.records] == [
        ("a", "ok", None),
        ("b", "failed", R.E_BAD_RESULT),
    ]


def test_messages_name_the_recognizer_and_the_note():
    class PastEnd(Regex):
        def recognize(self, note):
            return [Span(note.note_id, 0, len(note.text) + 1, "ID", 1.0, self.qualified_name)]

    batch = R.recognize_notes(notes(1), [PastEnd("t.past", "x", "ID")])
    assert (batch.records[0].error or "").startswith("recognizer t.past@1: [E")
    bad = Note("bad", "p", "SECRET")
    spans, fails = R.run_recognizer(FailsOn("SECRET", ValueError("SECRET")), [*notes(1), bad])
    assert fails[1] is not None and fails[1].error == "recognizer t.fails@1 raised ValueError on note bad"


class Plain:
    """A duck-typed recognizer with no ``qualified_name``: messages fall back to its class name."""

    def __init__(self, mode: str):
        self.mode = mode

    def recognize_many(self, notes):
        if self.mode == "raise":
            raise ValueError("x")
        return [[Span("elsewhere", 0, 1, "ID", 1.0, "plain")] for _ in notes]

    def fingerprint(self):
        return "plain"


def test_a_recognizer_without_a_qualified_name_is_named_by_its_class():
    batch = R.recognize_notes(notes(1), [Plain("span")])
    assert batch.records[0].error == "recognizer Plain returned a span of note elsewhere for note n0"
    _, fails = R.run_recognizer(Plain("raise"), notes(1))
    assert fails[0] is not None and fails[0].error == "recognizer Plain raised ValueError on note n0"


def test_recognize_notes_counts_into_the_given_stats():
    stats = R.RecognitionStats(batches=5)
    batch = R.recognize_notes(notes(3), [phone(), phone()], stats=stats)
    assert batch.stats is stats and stats.batches == 7


def test_splits_and_failures_are_logged_with_sizes_and_codes_only(caplog):
    batch = notes(8)
    batch.insert(5, Note("bad", "p", "Call 555-9999 SECRET."))
    with caplog.at_level("INFO", logger="tide_core.engine.recognition"):
        R.run_recognizer(FailsOn("SECRET", ValueError("SECRET")), batch)
        R.run_recognizer(FailsOn("SECRET", MemoryError()), [*notes(1), Note("b2", "p", "SECRET")])
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "recognizer t.fails@1: ValueError on a batch of 9 notes; splitting",
        "recognizer t.fails@1: ValueError on a batch of 5 notes; splitting",
        "recognizer t.fails@1: ValueError on a batch of 2 notes; splitting",
        "recognition failed on note bad (E500)",
        "recognizer t.fails@1: out of memory on a batch of 2 notes; splitting",
        "recognition failed on note b2 (E501)",
    ]
    assert not any("SECRET" in line for line in lines)


def test_the_fingerprint_is_the_documented_formula():
    from tide_core.fingerprint import fingerprint, step_fingerprint
    from tide_core.text import normalize as nz

    recs = [phone(), Regex("t.mrn", r"\d{7}", "ID")]
    steps = [step_fingerprint(s) for s in R.note_steps()]
    want = fingerprint(
        {"recognizers": [r.fingerprint() for r in recs], "steps": steps, "view": step_fingerprint(nz.STEP)}
    )
    assert R.recognition_fingerprint(recs) == want


def test_all_spans_sorts_by_offsets_only_and_keeps_ties_in_order():
    a = R.RecognitionBatch(
        {"a": [Span("a", 0, 3, "PHONE", 1.0, "t"), Span("a", 0, 3, "DATE", 1.0, "t")]},
        [R.NoteRecognition("a", "ok", 2)],
    )
    assert [s.label for s in a.all_spans()] == ["PHONE", "DATE"]


def test_a_missing_record_names_the_note():
    batch = R.RecognitionBatch({}, [])
    with pytest.raises(KeyError) as err:
        batch.record("n42")
    assert err.value.args == ("n42",)
