"""The local recognition path: checks, fail-closed failures, batch splitting, resolution, fingerprint."""

from __future__ import annotations

import re

import pytest

from tide_core.engine.recognition import (
    E_BAD_RESULT,
    E_BAD_SPAN,
    E_OOM,
    E_RAISED,
    RecognitionStats,
    recognition_fingerprint,
    recognize_notes,
)
from tide_core.errors import InputError
from tide_core.recognizers.base import TideRecognizer
from tide_core.spans import Note, RecognizerResult, Span


class PatternRecognizer(TideRecognizer):
    """A tiny real recognizer: one regex, one label."""

    def __init__(self, name: str, pattern: str, label: str, score: float = 0.9):
        self.name, self.version = name, "1"
        self.pattern, self.label, self.score = re.compile(pattern), label, score
        self.supported_entities = (label,)
        self.batch_sizes: list[int] = []

    def config(self):
        return {"pattern": self.pattern.pattern, "label": self.label, "score": self.score}

    def analyze(self, text, entities=None, nlp_artifacts=None):
        return [RecognizerResult(self.label, m.start(), m.end(), self.score) for m in self.pattern.finditer(text)]

    def recognize_many(self, notes):
        self.batch_sizes.append(len(notes))
        return super().recognize_many(notes)


class RaisesOn(PatternRecognizer):
    """Raises (with the note text in its message, which must not leak) on notes containing a word."""

    def __init__(self, word: str, exc=ValueError):
        super().__init__("test.raises", r"\d{4}-\d{2}-\d{2}", "DATE")
        self.word, self.exc = word, exc

    def recognize_many(self, notes):
        for n in notes:
            if self.word in n.text:
                raise self.exc(f"cannot parse {n.text!r}")
        return super().recognize_many(notes)


class OOMAbove(PatternRecognizer):
    """Out of memory on batches larger than ``limit`` notes (1 → even single notes fail if limit=0)."""

    def __init__(self, limit: int, exc_factory=lambda: MemoryError()):
        super().__init__("test.oom", r"\d{4}-\d{2}-\d{2}", "DATE")
        self.limit, self.exc_factory = limit, exc_factory

    def recognize_many(self, notes):
        self.batch_sizes.append(len(notes))
        if len(notes) > self.limit:
            raise self.exc_factory()
        return [self.recognize(n) for n in notes]


def make_notes(n: int = 12) -> list[Note]:
    notes = []
    for i in range(n):
        text = (
            f"Seen by Dr. Alice Brown{i} on 2021-03-{(i % 28) + 1:02d}. MRN 55{i:04d}. Call 555-{i:03d}-1234 if needed."
        )
        notes.append(Note(f"n{i:03d}", f"p{i % 3}", text, {"note_date": "2021-03-05"}))
    return notes


DATE = lambda: PatternRecognizer("test.date", r"\d{4}-\d{2}-\d{2}", "DATE")  # noqa: E731
MRN = lambda: PatternRecognizer("test.mrn", r"(?<=MRN )\d+", "ID")  # noqa: E731
PHONE = lambda: PatternRecognizer("test.phone", r"\d{3}-\d{3}-\d{4}", "PHONE")  # noqa: E731
NAME = lambda: PatternRecognizer("test.name", r"(?<=Dr\. )[A-Z]\w+ [A-Z]\w+", "DOCTOR")  # noqa: E731


def test_spans_are_resolved_and_exact():
    notes = make_notes(5)
    batch = recognize_notes(notes, [DATE(), MRN(), PHONE(), NAME()])
    assert [r.note_id for r in batch.records] == [n.note_id for n in notes]
    assert all(r.status == "ok" for r in batch.records)
    for note in notes:
        spans = batch.spans[note.note_id]
        surfaces = {(s.label, note.text[s.start : s.end]) for s in spans}
        i = int(note.note_id[1:])
        assert ("DOCTOR", f"Alice Brown{i}") in surfaces
        assert ("ID", f"55{i:04d}") in surfaces
        assert ("PHONE", f"555-{i:03d}-1234") in surfaces
        assert batch.record(note.note_id).n_spans == len(spans) == 4
    assert len(batch.all_spans()) == 20
    assert batch.failed() == []


def test_overlaps_are_resolved_longest_wins():
    note = Note("x", "p", "Call 555-123-4567 now")
    short = PatternRecognizer("test.short", r"555-123", "ID")
    batch = recognize_notes([note], [short, PHONE()])
    assert [(s.start, s.end, s.label) for s in batch.spans["x"]] == [(5, 17, "PHONE")]


def test_recognizer_exception_fails_only_that_note_and_leaks_no_text():
    notes = make_notes(9)
    poisoned = Note("bad", "p9", "Patient SECRETNAME was seen 2020-01-01")
    notes.insert(4, poisoned)
    rec = RaisesOn("SECRETNAME")
    batch = recognize_notes(notes, [rec, PHONE()])
    failed = batch.failed()
    assert [f.note_id for f in failed] == ["bad"]
    assert failed[0].error_code == E_RAISED and "ValueError" in failed[0].error
    assert "SECRETNAME" not in failed[0].error and "2020" not in failed[0].error
    assert "bad" not in batch.spans
    assert len(batch.spans) == 9 and all(batch.record(n.note_id).ok for n in notes if n.note_id != "bad")
    assert batch.stats.error_splits > 0 and batch.stats.failed_notes == 1


def test_oom_splits_batches_and_gives_the_same_result():
    notes = make_notes(16)
    reference = recognize_notes(notes, [DATE()])
    oom = OOMAbove(3)
    batch = recognize_notes(notes, [oom])
    assert batch.stats.oom_splits >= 4
    assert sum(s for s in oom.batch_sizes if s <= 3) == 16  # every note ran once in a batch that fit
    assert batch.failed() == []
    strip = lambda b: {k: [(s.start, s.end, s.label) for s in v] for k, v in b.spans.items()}  # noqa: E731
    assert strip(batch) == strip(reference)


def test_cuda_style_oom_is_detected():
    notes = make_notes(4)
    batch = recognize_notes(notes, [OOMAbove(1, lambda: RuntimeError("CUDA out of memory. Tried to allocate"))])
    assert batch.stats.oom_splits == 3 and not batch.failed()


def test_oom_on_a_single_note_fails_it_closed():
    notes = make_notes(3)
    batch = recognize_notes(notes, [OOMAbove(0)])
    assert [r.error_code for r in batch.records] == [E_OOM] * 3
    assert batch.spans == {}


def test_span_outside_the_note_fails_closed():
    class PastEnd(PatternRecognizer):
        def recognize(self, note):
            return [Span(note.note_id, 0, len(note.text) + 5, "ID", 1.0, self.qualified_name)]

    class OtherNote(PatternRecognizer):
        def recognize(self, note):
            return [Span("someone-else", 0, 1, "ID", 1.0, self.qualified_name)]

    notes = make_notes(2)
    for rec in (PastEnd("t.past", "x", "ID"), OtherNote("t.other", "x", "ID")):
        batch = recognize_notes(notes, [DATE(), rec])
        assert [r.error_code for r in batch.records] == [E_BAD_SPAN, E_BAD_SPAN]
        assert batch.spans == {}


def test_wrong_result_count_fails_closed():
    class Short(PatternRecognizer):
        def recognize_many(self, notes):
            return [[] for _ in notes[:-1]]

    batch = recognize_notes(make_notes(3), [Short("t.short", "x", "ID")])
    assert {r.error_code for r in batch.records} == {E_BAD_RESULT}


def test_duplicate_note_ids_are_rejected():
    n = make_notes(1)[0]
    with pytest.raises(InputError) as err:
        recognize_notes([n, n], [DATE()])
    assert err.value.code == "E505"


def test_empty_input():
    batch = recognize_notes([], [DATE()])
    assert batch.records == [] and batch.spans == {}


def test_policy_threshold_applies():
    from tide_core.steps.resolve import ResolutionPolicy

    notes = make_notes(2)
    low = PatternRecognizer("test.low", r"\d{3}-\d{3}-\d{4}", "PHONE", score=0.3)
    batch = recognize_notes(notes, [low], {"min_score": {"PHONE": 0.5}})
    assert all(r.n_spans == 0 for r in batch.records)
    batch = recognize_notes(notes, [low], ResolutionPolicy(min_score={"PHONE": 0.2}))
    assert all(r.n_spans == 1 for r in batch.records)


def test_fingerprint_tracks_output_affecting_settings_only():
    from tide_core.steps.resolve import ResolutionPolicy

    base = recognition_fingerprint([DATE(), MRN()])
    assert base == recognition_fingerprint([DATE(), MRN()], None)
    assert base == recognition_fingerprint([DATE(), MRN()], ResolutionPolicy())
    assert base != recognition_fingerprint([MRN(), DATE()])
    assert base != recognition_fingerprint([DATE()])
    assert base != recognition_fingerprint([DATE(), MRN()], {"min_score": {"ID": 0.5}})
    assert base != recognition_fingerprint([DATE(), PatternRecognizer("test.mrn", r"(?<=MRN )\d+", "ID", 0.8)])
    assert len(base) == 16 and int(base, 16) >= 0


def test_stats_accumulate():
    s = RecognitionStats(batches=1, oom_splits=2)
    s.add(RecognitionStats(batches=3, failed_notes=1))
    assert s.to_dict() == {"batches": 4, "oom_splits": 2, "error_splits": 0, "failed_notes": 1}


def test_config_errors_stop_the_run_instead_of_failing_notes():
    from tide_core.errors import ConfigError

    class Misconfigured(PatternRecognizer):
        def recognize_many(self, notes):
            raise ConfigError("E999", "model directory missing", hint="train it")

    with pytest.raises(ConfigError) as err:
        recognize_notes(make_notes(3), [DATE(), Misconfigured("t.bad", "x", "ID")])
    assert err.value.code == "E999"
