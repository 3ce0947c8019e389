"""Recognition of a batch of notes on the local process: recognizers → checks → resolution.

This is the reference path.  The Ray pipeline (``tide_core.execution.ray_pipeline``) runs the
same steps in actor pools and must return the same :class:`RecognitionBatch` for the same input,
so the per-step functions here (:func:`run_recognizer`, :func:`checked_spans`,
:func:`finish_note`) are shared by both paths.

Fail closed: a note on which any recognizer raised, or returned a span that does not fit the
note, is marked ``failed`` with an error code and gets *no* spans; the caller quarantines it and
never releases it.  A batch that raises is split in half and retried until the failing note is
isolated, so one bad note (or an out-of-memory batch) never fails its neighbours.  A
``ConfigError`` (a misconfigured recognizer, a missing model) is not a note failure: it stops
the run.

Error codes (``NoteRecognition.error_code``):

- ``E500`` a recognizer raised on this note;
- ``E501`` out of memory even with this note alone in its batch;
- ``E502`` a recognizer returned a span outside the note, or for another note;
- ``E503`` a recognizer returned the wrong number of results for its batch;
- ``E504`` the note was lost with its worker more often than the retry budget (Ray only).

Recognizers never see the raw text: they see its normalised view (``tide_core.text.normalize``:
NFKC, format characters such as U+200B removed, look-alike digits and letters folded), and their
spans are mapped back to exact offsets of the original text (:func:`recognition_view`,
:func:`spans_to_original`).  Tidying, resolution, roles and propagation run on the same view in
:func:`finish_note`.  Every span that leaves this module is in original offsets.

Messages name the note id, the recognizer and the exception type, never the note text (an
exception's own message may quote the text, so it is only kept for ``TideError`` whose messages
are PHI-free by contract).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from tide_core.errors import ConfigError, InputError, TideError
from tide_core.fingerprint import Step, fingerprint, step_fingerprint
from tide_core.spans import Note, Span
from tide_core.steps import person_roles, propagate, span_tidy
from tide_core.steps.person_roles import assign_roles
from tide_core.steps.propagate import propagate_spans
from tide_core.steps.resolve import ResolutionPolicy, resolve_spans, uncovered_parts
from tide_core.steps.span_tidy import tidy_spans
from tide_core.text import normalize as text_normalize
from tide_core.text.normalize import NormalizedText, normalize

if TYPE_CHECKING:
    from tide_core.recognizers.base import Recognizer

log = logging.getLogger(__name__)

E_RAISED = "E500"
E_OOM = "E501"
E_BAD_SPAN = "E502"
E_BAD_RESULT = "E503"
E_LOST = "E504"

Status = Literal["ok", "failed"]


@dataclass(frozen=True)
class NoteRecognition:
    """What happened to one note: ``ok`` with ``n_spans`` resolved spans, or ``failed`` with a code."""

    note_id: str
    status: Status
    n_spans: int = 0
    error_code: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """True when the note was recognized; a failed note has no spans and is never released."""
        return self.status == "ok"


@dataclass
class RecognitionStats:
    """Counters of one recognition run (both paths fill them; the Ray path sums its workers')."""

    batches: int = 0
    oom_splits: int = 0
    error_splits: int = 0
    failed_notes: int = 0

    def add(self, other: RecognitionStats) -> None:
        """Add ``other``'s counters to these (a worker's or a sub-batch's counters into the run's)."""
        self.batches += other.batches
        self.oom_splits += other.oom_splits
        self.error_splits += other.error_splits
        self.failed_notes += other.failed_notes

    def to_dict(self) -> dict[str, int]:
        """The counters by name, as stored in run summaries (counts only, nothing from the notes)."""
        return {
            "batches": self.batches,
            "oom_splits": self.oom_splits,
            "error_splits": self.error_splits,
            "failed_notes": self.failed_notes,
        }


@dataclass
class RecognitionBatch:
    """Resolved spans per note plus one record per input note (in input order)."""

    spans: dict[str, list[Span]]
    records: list[NoteRecognition]
    stats: RecognitionStats = field(default_factory=RecognitionStats)

    def all_spans(self) -> list[Span]:
        """Every span of every ok note, sorted by (note_id, start, end)."""
        return sorted((s for spans in self.spans.values() for s in spans), key=lambda s: (s.note_id, s.start, s.end))

    def failed(self) -> list[NoteRecognition]:
        """The records of the notes that failed, in input order (the caller quarantines them)."""
        return [r for r in self.records if r.status != "ok"]

    def ok(self) -> list[NoteRecognition]:
        """The records of the notes that were recognized, in input order."""
        return [r for r in self.records if r.status == "ok"]

    def record(self, note_id: str) -> NoteRecognition:
        """The record of note ``note_id``; raises ``KeyError`` if the note was not in the batch."""
        for r in self.records:
            if r.note_id == note_id:
                return r
        raise KeyError(note_id)

    def extend(self, other: RecognitionBatch) -> None:
        """Append ``other``'s notes, records and counters (batches hold disjoint note ids)."""
        self.spans.update(other.spans)
        self.records.extend(other.records)
        self.stats.add(other.stats)

    def __len__(self) -> int:
        return len(self.records)


@dataclass(frozen=True)
class NoteFailure:
    """Why one note failed in one recognizer (internal, picklable)."""

    code: str
    error: str


# --------------------------------------------------------------------------------------------
# Shared steps
# --------------------------------------------------------------------------------------------


def recognition_view(note: Note) -> tuple[Note, NormalizedText]:
    """The note recognizers see (its normalised view) and the map back to the original text.

    Already-normal text (ASCII, or NFKC-stable with nothing to remove or fold) is returned as is.
    """
    view = normalize(note.text)
    if view.identity:
        return note, view
    return Note(note.note_id, note.patient_id, view.text, note.metadata), view


def spans_to_original(view: NormalizedText, spans: Iterable[Span]) -> list[Span]:
    """Map spans of the view to the original text (each to the union of its characters' extents)."""
    if view.identity:
        return list(spans)
    out = []
    for s in spans:
        start, end = view.to_original(s.start, s.end)
        out.append(s if (start, end) == (s.start, s.end) else replace(s, start=start, end=end))
    return out


def spans_to_view(view: NormalizedText, spans: Iterable[Span]) -> list[Span]:
    """Map original-offset spans into the view; a span of removed characters only is dropped."""
    if view.identity:
        return list(spans)
    out = []
    for s in spans:
        v = view.to_view(s.start, s.end)
        if v is not None:
            out.append(s if v == (s.start, s.end) else replace(s, start=v[0], end=v[1]))
    return out


def _on_views(
    recognize_many: Callable[[Sequence[Note]], list[list[Span]]],
) -> Callable[[Sequence[Note]], list[list[Span]]]:
    """Wrap ``recognize_many(notes)`` to run on the notes' views and return original offsets."""

    def call(notes: Sequence[Note]) -> list[list[Span]]:
        pairs = [recognition_view(n) for n in notes]
        result = recognize_many([v for v, _ in pairs])
        if len(result) != len(pairs):
            return result  # run_recognizer reports the wrong count
        return [spans_to_original(m, spans or []) for (_, m), spans in zip(pairs, result, strict=True)]

    return call


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is an out-of-memory error, which splits the batch instead of failing notes.

    CUDA or host out-of-memory: ``MemoryError``, ``torch.cuda.OutOfMemoryError``, or a
    ``RuntimeError`` whose message says "out of memory" (CPU allocator, older torch, MPS).
    """
    if isinstance(exc, MemoryError):
        return True
    if type(exc).__name__ == "OutOfMemoryError":
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


def describe_exception(recognizer_name: str, note_id: str | None, exc: BaseException) -> str:
    """A PHI-free description: the exception type, and its message only for TideErrors."""
    where = f"note {note_id}" if note_id is not None else "a batch"
    text = f"recognizer {recognizer_name} raised {type(exc).__name__} on {where}"
    if isinstance(exc, TideError):
        text += f": [{exc.code}] {exc.message}"
    return text


def run_recognizer(
    recognizer: Any,
    notes: Sequence[Note],
    stats: RecognitionStats | None = None,
    call: Callable[[Sequence[Note]], list[list[Span]]] | None = None,
) -> tuple[list[list[Span] | None], list[NoteFailure | None]]:
    """Run ``recognizer.recognize_many`` on ``notes``; split the batch in half on failure.

    Returns, per note, either its spans (and ``None`` failure) or ``None`` spans and a failure.
    ``call(notes) -> list[list[Span]]`` replaces ``recognizer.recognize_many`` (the Ray pipeline
    passes its staged predict); out-of-memory and other exceptions both split, down to one note.
    Without ``call`` the recognizer gets each note's normalised view (:func:`recognition_view`)
    and its spans come back in original offsets.
    """
    stats = stats if stats is not None else RecognitionStats()
    call = call or _on_views(recognizer.recognize_many)  # recognizers see the normalised view
    name = getattr(recognizer, "qualified_name", type(recognizer).__name__)
    out_spans: list[list[Span] | None] = [None] * len(notes)
    out_fail: list[NoteFailure | None] = [None] * len(notes)

    def go(lo: int, hi: int) -> None:
        chunk = list(notes[lo:hi])
        stats.batches += 1
        try:
            result = call(chunk)
            if len(result) != len(chunk):
                raise _WrongCount(len(chunk), len(result))
        except _WrongCount as exc:
            for i in range(lo, hi):
                out_fail[i] = NoteFailure(
                    E_BAD_RESULT, f"recognizer {name} returned {exc.got} results for a batch of {exc.want} notes"
                )
            return
        except ConfigError:
            raise  # a misconfigured recognizer fails every note: stop the run and say why
        except Exception as exc:  # noqa: BLE001 - every other recognizer failure fails closed
            oom = is_out_of_memory(exc)
            if hi - lo > 1:
                if oom:
                    stats.oom_splits += 1
                else:
                    stats.error_splits += 1
                mid = (lo + hi) // 2
                log.info(
                    "recognizer %s: %s on a batch of %d notes; splitting",
                    name,
                    "out of memory" if oom else type(exc).__name__,
                    hi - lo,
                )
                go(lo, mid)
                go(mid, hi)
                return
            nid = notes[lo].note_id
            if oom:
                failure = NoteFailure(E_OOM, f"recognizer {name} ran out of memory on note {nid} alone")
            else:
                failure = NoteFailure(E_RAISED, describe_exception(name, nid, exc))
            out_fail[lo] = failure
            log.warning("recognition failed on note %s (%s)", nid, failure.code)
            return
        for i, spans in zip(range(lo, hi), result, strict=True):
            out_spans[i] = list(spans)

    if notes:
        go(0, len(notes))
    return out_spans, out_fail


class _WrongCount(Exception):
    def __init__(self, want: int, got: int):
        super().__init__(f"{got} != {want}")
        self.want, self.got = want, got


def checked_spans(note: Note, spans: Iterable[Span], recognizer_name: str) -> tuple[list[Span], NoteFailure | None]:
    """Check every span belongs to ``note`` and lies inside its text."""
    kept = []
    for s in spans:
        if s.note_id != note.note_id:
            return [], NoteFailure(
                E_BAD_SPAN, f"recognizer {recognizer_name} returned a span of note {s.note_id} for note {note.note_id}"
            )
        try:
            s.check_inside(note.text)
        except TideError as exc:
            return [], NoteFailure(E_BAD_SPAN, f"recognizer {recognizer_name}: [{exc.code}] {exc.message}")
        kept.append(s)
    return kept, None


def as_policy(policy: ResolutionPolicy | Mapping[str, Any] | None) -> ResolutionPolicy | None:
    """Accept ``None``, a ``ResolutionPolicy`` or its dict form."""
    if policy is None or isinstance(policy, ResolutionPolicy):
        return policy
    if isinstance(policy, Mapping):
        return ResolutionPolicy.from_dict(policy)
    return policy  # anything else passes through unchanged (untyped callers)


def finish_note(
    note_id: str,
    spans: list[Span],
    failure: NoteFailure | None,
    policy: ResolutionPolicy | Mapping[str, Any] | None,
    text: str | None = None,
) -> tuple[list[Span], NoteRecognition]:
    """Resolve one note's spans (all recognizers together), or record its failure.

    ``spans`` are in original offsets.  With the note's ``text``, they are moved into its
    normalised view, where they are first tidied (``tide_core.steps.span_tidy``) and, after
    resolution, recognized surfaces are propagated to their other mentions in the note
    (``tide_core.steps.propagate``), then mapped back to original offsets; both execution paths pass
    it.  Every step here is one of :func:`note_steps`, so it is in :func:`recognition_fingerprint`.
    """
    if failure is not None:
        return [], NoteRecognition(note_id, "failed", 0, failure.code, failure.error)

    _, resolution, _, propagation = note_steps(policy)  # the steps recognition_fingerprint covers
    view = normalize(text) if text is not None else None
    if view is not None:  # every step below runs on the normalised view, like the recognizers
        spans = spans_to_view(view, spans)
        text = view.text
    if text is not None:  # split at line breaks, trim list punctuation, drop spans with no letter or digit
        spans = tidy_spans(text, spans)
    resolved = resolve_spans(spans, resolution)
    if text is not None:
        resolved = assign_roles(text, resolved)  # PATIENT/DOCTOR from evidence pooled per person
        resolved = propagate_spans(text, resolved, propagation)
        # what a losing span covered beyond the winners stays covered (tide.resolve@2)
        parts = tidy_spans(text, uncovered_parts(spans, resolved, resolution))
        if parts:
            resolved = sorted(resolved + parts, key=lambda s: (s.start, s.end))
    if view is not None:
        resolved = spans_to_original(view, resolved)
    return resolved, NoteRecognition(note_id, "ok", len(resolved))


# --------------------------------------------------------------------------------------------
# Local path
# --------------------------------------------------------------------------------------------


def recognize_notes(
    notes: Sequence[Note],
    recognizers: Sequence[Recognizer],
    policy: ResolutionPolicy | Mapping[str, Any] | None = None,
    stats: RecognitionStats | None = None,
) -> RecognitionBatch:
    """Recognize ``notes`` with every recognizer in this process and resolve overlaps.

    Recognizers must already be created; ``load()`` is the caller's (or the recognizer's lazy)
    responsibility.  Returns one record per note in input order; failed notes have no spans.
    """
    notes = list(notes)
    _check_unique(notes)
    stats = stats if stats is not None else RecognitionStats()
    collected: list[list[Span]] = [[] for _ in notes]
    failures: list[NoteFailure | None] = [None] * len(notes)
    for rec in recognizers:
        name = getattr(rec, "qualified_name", type(rec).__name__)
        todo = [i for i, f in enumerate(failures) if f is None]
        spans_per, fails = run_recognizer(rec, [notes[i] for i in todo], stats)
        for i, spans, fail in zip(todo, spans_per, fails, strict=True):
            if fail is None:
                spans, fail = checked_spans(notes[i], spans or [], name)
            if fail is not None:
                failures[i] = fail
            else:
                collected[i].extend(spans or [])
    return assemble_batch(notes, collected, failures, policy, stats)


def assemble_batch(
    notes: Sequence[Note],
    collected: Sequence[list[Span]],
    failures: Sequence[NoteFailure | None],
    policy: ResolutionPolicy | Mapping[str, Any] | None,
    stats: RecognitionStats,
) -> RecognitionBatch:
    """Finish every note (:func:`finish_note`) and gather the batch; shared by both execution paths.

    ``collected`` and ``failures`` are per note, in the order of ``notes``.  A failed note gets no
    spans and is counted in ``stats.failed_notes``.
    """
    out: dict[str, list[Span]] = {}
    records: list[NoteRecognition] = []
    for note, spans, fail in zip(notes, collected, failures, strict=True):
        resolved, record = finish_note(note.note_id, spans, fail, policy, note.text)
        if record.ok:
            out[note.note_id] = resolved
        else:
            stats.failed_notes += 1
        records.append(record)
    return RecognitionBatch(out, records, stats)


def _check_unique(notes: Sequence[Note]) -> None:
    seen: set[str] = set()
    for n in notes:
        if n.note_id in seen:
            raise InputError(
                "E505",
                f"note id {n.note_id} appears twice in one recognition batch",
                hint="note ids must be unique within a study; deduplicate the notes table",
            )
        seen.add(n.note_id)


def note_steps(policy: ResolutionPolicy | Mapping[str, Any] | None = None) -> tuple[Any, Any, Any, Any]:
    """The output-changing steps after the recognizers, in the order :func:`finish_note` runs them.

    They are span tidying, resolution under ``policy`` (``None`` is ``ResolutionPolicy()``), person
    roles, within-note propagation.  Each is a ``tide_core.fingerprint.Step``.
    """
    policy = as_policy(policy)
    resolution = ResolutionPolicy() if policy is None else policy
    return span_tidy.STEP, resolution, person_roles.STEP, propagate.DEFAULT_POLICY


def recognition_fingerprint(
    recognizers: Sequence[Recognizer], policy: ResolutionPolicy | Mapping[str, Any] | None = None
) -> str:
    """16 hex digits over everything that decides recognition output.

    It goes through one helper (``tide_core.fingerprint``): every recognizer's ``fingerprint()``
    (its ``name@version`` and ``config()``) in order, then the fingerprints of :func:`note_steps`
    (``tide.tidy``, ``tide.resolve`` with the policy's ``config()``, ``tide.roles``,
    ``tide.propagate``) in order.

    It never depends on batch sizes, worker counts or the executor, so local and Ray runs share
    cache entries.  A new output-changing step must be added to :func:`note_steps`.
    """
    steps = [step_fingerprint(s) if isinstance(s, Step) else fingerprint(repr(s)) for s in note_steps(policy)]
    view = step_fingerprint(text_normalize.STEP)  # the normalised view recognizers see
    return fingerprint({"recognizers": [r.fingerprint() for r in recognizers], "steps": steps, "view": view})
