"""The recognition stages the Ray pipeline runs in actor pools, one *group* of notes at a time.

The driver cuts the notes into groups (``batch_size_short`` short notes or ``batch_size_long``
long ones) and every stage maps one group to one group, so a group's batch size is fixed where
it is made and a retried task recomputes exactly its own notes (no note is lost or duplicated).
A group travels between stages as pickled bytes (one actor task per group and stage).

Stages (each a callable class: recognizers are created and ``load()``-ed once per actor):

``WindowStage``   CPU: ``make_windows`` of every staged (model) recognizer;
``PredictStage``  GPU or CPU: the forward passes (``predict``), split in half on out-of-memory;
``AssembleStage`` CPU: ``assemble`` windows + predictions into spans;
``MatchStage``    CPU: rule recognizers (regex, gazetteer, known-PHI), batch-split on failure;
``resolve_group`` span resolution per note, at the end of the last actor stage (a separate
                  task per group cost more in scheduling than resolution itself).

A note keeps the failure of the lowest-indexed recognizer that failed on it, which is what the
local path (which runs recognizers in spec order and stops at the first failure) reports.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tide_core.engine.recognition import (
    E_RAISED,
    NoteFailure,
    NoteRecognition,
    RecognitionStats,
    checked_spans,
    describe_exception,
    finish_note,
    recognition_view,
    run_recognizer,
    spans_to_original,
)
from tide_core.errors import RecognitionError, TideError
from tide_core.recognizers import registry
from tide_core.spans import Note, Span
from tide_core.threads import allotted_threads, configure_torch


@dataclass
class Group:
    """A fixed batch of notes and everything the stages learnt about them."""

    gid: int
    notes: list[Note]
    spans: list[list[Span]] = field(default_factory=list)
    failures: dict[int, tuple[int, NoteFailure]] = field(default_factory=dict)  # note idx -> (rec idx, why)
    windows: dict[int, list[Any]] = field(default_factory=dict)  # rec idx -> per note
    predictions: dict[int, list[Any]] = field(default_factory=dict)  # rec idx -> per note
    stats: RecognitionStats = field(default_factory=RecognitionStats)
    records: list[NoteRecognition] = field(default_factory=list)
    resolved: dict[str, list[Span]] = field(default_factory=dict)
    #: an error that must stop the whole run (a ConfigError in a worker).  It travels as data:
    #: an actor's exception would reach the driver wrapped (and retried); data keeps it exact.
    fatal: Exception | None = None
    #: rec idx -> the ``rows`` of a known-PHI spec for this group's patients: they travel with the
    #: group, so the actors (built with no rows) are the same for every chunk of a study
    rows: dict[int, list[dict[str, Any]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.spans:
            self.spans = [[] for _ in self.notes]

    def fail(self, i: int, rec_index: int, failure: NoteFailure) -> None:
        """Keep the failure of the lowest-indexed recognizer (the one the local path reports)."""
        current = self.failures.get(i)
        if current is None or rec_index < current[0]:
            self.failures[i] = (rec_index, failure)

    def runs(self, i: int, rec_index: int) -> bool:
        """Should recognizer ``rec_index`` still run on note ``i``?"""
        current = self.failures.get(i)
        return current is None or current[0] > rec_index


def encode(groups: Sequence[Group]) -> dict[str, np.ndarray]:
    payload = np.empty(len(groups), dtype=object)
    for i, g in enumerate(groups):
        payload[i] = pickle.dumps(g, protocol=pickle.HIGHEST_PROTOCOL)
    return {"gid": np.array([g.gid for g in groups], dtype=np.int64), "payload": payload}


def decode(batch: Mapping[str, Any]) -> list[Group]:
    return [pickle.loads(bytes(p)) for p in batch["payload"]]


def build_recognizers(
    specs: Sequence[dict[str, Any]],
    factories: Mapping[str, Callable[..., Any]] | None,
    indices: Sequence[int],
    load: bool = True,
) -> dict[int, Any]:
    """Create (and ``load()``) the recognizers at ``indices`` of ``specs`` in this worker."""

    for name, factory in (factories or {}).items():
        if name not in registry.names():
            registry.register(name, factory)
    out = {}
    for i in indices:
        rec = registry.create(dict(specs[i]))
        if load:
            rec.load()
        out[i] = rec
    return out


def is_staged(recognizer: Any) -> bool:
    """Model recognizers expose make_windows / predict / assemble and run as three stages."""
    return all(callable(getattr(recognizer, m, None)) for m in ("make_windows", "predict", "assemble"))


class _Stage:
    #: whether the stage needs ``load()`` (the model); AssembleStage only needs the tag set
    loads: bool = True

    def __init__(
        self,
        specs: Sequence[dict[str, Any]],
        factories: Mapping[str, Callable[..., Any]] | None,
        indices: Sequence[int],
        resolve: bool = False,
        policy: Any = None,
    ):
        self.resolve, self.policy = resolve, policy
        self.specs, self.factories = list(specs), factories
        # A configuration error (missing model on this node, bad option) is raised from the first
        # call instead: an error in an actor's constructor reaches the driver only as "actor
        # died", and would be retried and then mistaken for lost notes.
        self.init_error: Exception | None = None
        try:
            self.recognizers = build_recognizers(specs, factories, indices, load=self.loads)
        except TideError as exc:
            self.init_error = exc
            self.recognizers = {}

    def __call__(self, batch: Mapping[str, Any]) -> dict[str, np.ndarray]:
        groups = decode(batch)
        for g in groups:
            if g.fatal is not None:
                continue
            if self.init_error is not None:
                g.fatal = self.init_error
                continue
            try:
                self.process(g)
            except TideError as exc:  # ConfigError from a recognizer: stop the run
                g.fatal = exc
            except Exception as exc:  # a bug in a stage: stop, don't guess
                g.fatal = RecognitionError(
                    "E516",
                    f"{type(self).__name__} raised {type(exc).__name__} on note group {g.gid}",
                    hint="a bug in the pipeline stage; rerun with executor='local' to see the traceback",
                )
            if self.resolve:
                resolve_group(g, self.policy)
        return encode(groups)

    def process(self, group: Group) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


class WindowStage(_Stage):
    def process(self, group: Group) -> None:

        for k, rec in self.recognizers.items():
            per_note: list[Any] = []
            for i, note in enumerate(group.notes):
                windows = None
                if group.runs(i, k):
                    try:
                        windows = rec.make_windows(recognition_view(note)[0])  # the normalised view
                    except Exception as exc:  # fail closed
                        why = describe_exception(rec.qualified_name, note.note_id, exc)
                        group.fail(i, k, NoteFailure(E_RAISED, why))
                per_note.append(windows)
            group.windows[k] = per_note


class PredictStage(_Stage):
    def __init__(
        self,
        specs: Sequence[dict[str, Any]],
        factories: Mapping[str, Callable[..., Any]] | None,
        indices: Sequence[int],
        threads: int | None = None,
        **kw: Any,
    ):
        # torch's threads from what this actor owns (its num_cpus, the node's cgroup quota and
        # affinity), ``threads`` only lowering it; torch is loaded by its dotted path there, so
        # rules-only actors never import it (~2 s each)
        allotted = allotted_threads()
        configure_torch(min(int(threads), allotted) if threads else allotted)
        super().__init__(specs, factories, indices, **kw)

    def process(self, group: Group) -> None:
        for k, rec in self.recognizers.items():
            windows = group.windows.get(k, [None] * len(group.notes))
            todo = [i for i in range(len(group.notes)) if group.runs(i, k) and windows[i] is not None]
            by_note_id = {group.notes[i].note_id: windows[i] for i in todo}

            def call(notes: Sequence[Note], rec: Any = rec, by_note_id: dict[str, Any] = by_note_id) -> list[list[Any]]:
                flat = [w for n in notes for w in by_note_id[n.note_id]]
                preds = list(rec.predict(flat)) if flat else []
                if len(preds) != len(flat):
                    raise RuntimeError(f"predict returned {len(preds)} predictions for {len(flat)} windows")
                out, pos = [], 0
                for n in notes:
                    m = len(by_note_id[n.note_id])
                    out.append(preds[pos : pos + m])
                    pos += m
                return out

            preds, fails = run_recognizer(rec, [group.notes[i] for i in todo], group.stats, call=call)
            per_note: list[Any] = [None] * len(group.notes)
            for i, p, f in zip(todo, preds, fails, strict=True):
                if f is not None:
                    group.fail(i, k, f)
                else:
                    per_note[i] = p
            group.predictions[k] = per_note


class ModelStage(PredictStage):
    """Window → predict → assemble in one actor: used when inference runs on CPUs, where
    separate pools would share the same cores and only add a hop (and three model loads)."""

    def process(self, group: Group) -> None:
        # the three steps on one actor: ModelStage carries what WindowStage and AssembleStage read
        WindowStage.process(self, group)  # type: ignore[arg-type]
        PredictStage.process(self, group)
        AssembleStage.process(self, group)  # type: ignore[arg-type]


class AssembleStage(_Stage):
    loads = False

    def process(self, group: Group) -> None:

        for k, rec in self.recognizers.items():
            windows = group.windows.pop(k, None) or [None] * len(group.notes)
            preds = group.predictions.pop(k, None) or [None] * len(group.notes)
            for i, note in enumerate(group.notes):
                if not group.runs(i, k) or windows[i] is None or preds[i] is None:
                    continue
                try:
                    view_note, view = recognition_view(note)  # windows were cut from the view
                    spans = spans_to_original(view, rec.assemble(view_note, windows[i], preds[i]))
                except Exception as exc:  # fail closed
                    group.fail(i, k, NoteFailure(E_RAISED, describe_exception(rec.qualified_name, note.note_id, exc)))
                    continue
                spans, failure = checked_spans(note, spans, rec.qualified_name)
                if failure is not None:
                    group.fail(i, k, failure)
                else:
                    group.spans[i].extend(spans or [])


class MatchStage(_Stage):
    def process(self, group: Group) -> None:
        for k in sorted(self.recognizers):
            rec = self.recognizers[k]
            if k in group.rows:  # known-PHI: this group's patients' rows
                rec = build_recognizers([{**self.specs[k], "rows": group.rows[k]}], self.factories, [0])[0]
            todo = [i for i in range(len(group.notes)) if group.runs(i, k)]
            spans_per, fails = run_recognizer(rec, [group.notes[i] for i in todo], group.stats)
            for i, spans, f in zip(todo, spans_per, fails, strict=True):
                if f is None:
                    spans, f = checked_spans(group.notes[i], spans or [], rec.qualified_name)
                if f is not None:
                    group.fail(i, k, f)
                else:
                    group.spans[i].extend(spans or [])


def resolve_group(g: Group, policy: Any = None) -> None:
    """Resolution: a failed note gets no spans; ok notes get resolved spans.  Runs at the end of
    the last actor stage (no extra hop per group); drops the text so it is not shipped back."""
    if g.fatal is not None:
        return
    for i, note in enumerate(g.notes):
        failure = g.failures.get(i)
        resolved, record = finish_note(note.note_id, g.spans[i], failure[1] if failure else None, policy, note.text)
        if record.ok:
            g.resolved[note.note_id] = resolved
        else:
            g.stats.failed_notes += 1
        g.records.append(record)
    g.spans, g.windows, g.predictions = [], {}, {}
    g.notes = [Note(n.note_id, n.patient_id, "", {}) for n in g.notes]


class MapStage:
    """Generic per-note stage for :func:`~tide_core.execution.ray_pipeline.map_notes`."""

    def __init__(self, make_fn: Callable[[], Callable[[Any], Any]]):
        self.fn = make_fn()

    def __call__(self, batch: Mapping[str, Any]) -> dict[str, np.ndarray]:
        out = np.empty(len(batch["payload"]), dtype=object)
        for j, p in enumerate(batch["payload"]):
            items = pickle.loads(bytes(p))
            out[j] = pickle.dumps([self.fn(item) for item in items], protocol=pickle.HIGHEST_PROTOCOL)
        return {"gid": np.asarray(batch["gid"], dtype=np.int64), "payload": out}
