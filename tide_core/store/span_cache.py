"""The span cache: recognition output, stored before any text changes.

Recognition depends on the study only; anonymization under any key reads spans from here and
never re-runs a recognizer.  A note is a cache hit when its text hash and the recognition
fingerprint are unchanged and its last recognition succeeded.

One recognition commit (``store``) writes the study's ``tide_spans`` rows and its
``tide_recognized_notes`` rows through ``Warehouse.replace_partitions``: both land or neither
does, so a crash can never leave a note marked recognized without its spans.

Reviewer decisions are data, not cache: they live in their own table
(``tide_review_decisions``), keyed by (study, note_id, text hash of the note, start, end,
label, decision) with the reviewer's name, and recognition never rewrites it.  ``spans``
re-applies them on every read, after every recognition (``tide run --force``, a new recognizer
set or model): an added span is added back; a rejected span is removed when the recognizers
produce the same span again.  A decision made on text that has changed since is kept but not
applied, and counted by ``review_summary``.  Reviewer rows of older versions
(``tide_spans.origin = "reviewer"``) are honoured and moved into the decisions table by the
next ``store``.
"""

from __future__ import annotations

import datetime as dt
import getpass
import hashlib
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from tide_core.errors import InputError
from tide_core.io.warehouse import PartitionWrite, Warehouse
from tide_core.spans import Note, Span
from tide_core.store import tables
from tide_core.store.tables import TableNames

REVIEWER = "reviewer@human"
DECISIONS = ("reject", "add")
MAX_REVIEWER_CHARS = 100


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def default_reviewer() -> str:
    """The OS user name (the reviewer recorded when none is given)."""
    try:
        return getpass.getuser() or "unknown"
    except Exception:  # no user name in the environment or the password database
        return "unknown"


def check_reviewer(name: object) -> str:
    """A reviewer name: 1..100 printable characters, no control characters."""
    if (
        not isinstance(name, str)
        or not name.strip()
        or len(name) > MAX_REVIEWER_CHARS
        or any(unicodedata.category(c).startswith("C") for c in name)
    ):
        raise InputError(
            "E382",
            "invalid reviewer name",
            hint=f"pass --reviewer NAME: 1 to {MAX_REVIEWER_CHARS} printable characters",
        )
    return name.strip()


@dataclass(frozen=True)
class CacheEntry:
    note_id: str
    patient_id: str
    text_sha256: str
    fingerprint: str
    status: str
    error_code: str | None
    n_spans: int


def chunk_cache_writes(
    names: TableNames,
    study: str,
    fingerprint: str,
    notes: Sequence[Note],
    recognized: Mapping[str, list[Span]],
    statuses: Mapping[str, tuple[str, str | None]],
    owned: Iterable[str],
) -> list[PartitionWrite]:
    """The span cache's rows of one recognized chunk (:meth:`SpanCache.store_chunk`; a Ray worker stages them).

    ``owned`` are the note ids whose cache rows the commit replaces (the chunk's, less its cache
    hits); spans outside their note's text are refused before anything is written.
    """
    now = _now()
    by_id = {n.note_id: n for n in notes}
    ids = sorted(set(owned))
    span_rows: list[dict[str, Any]] = []
    entry_rows: list[dict[str, Any]] = []
    for nid, (status, code) in statuses.items():
        n = by_id[nid]
        spans = recognized.get(nid, []) if status == "ok" else []
        for sp in spans:
            sp.check_inside(n.text)
            span_rows.append(_span_row(study, nid, sp, fingerprint, now))
        entry_rows.append(_entry_row(study, n, fingerprint, status, code, len(spans), now))
    if set(statuses) - set(ids):
        raise InputError("E386", "a chunk commit writes notes it does not own", hint="this is a bug in the caller")
    if not ids:
        return []
    part = {"study": study, "note_id": ids}
    return [
        PartitionWrite(names.spans, tables.to_table("spans", span_rows), part),
        PartitionWrite(names.recognized_notes, tables.to_table("recognized_notes", entry_rows), part),
    ]


def current_hits(entries: Mapping[str, CacheEntry], notes: Sequence[Note], fingerprint: str) -> set[str]:
    """Notes whose cached recognition is current (same text, same fingerprint, status ok)."""
    out = set()
    for n in notes:
        e = entries.get(n.note_id)
        if e and e.status == "ok" and e.fingerprint == fingerprint and e.text_sha256 == text_sha256(n.text):
            out.add(n.note_id)
    return out


def legacy_decisions(rows: Iterable[Mapping[str, Any]], entries: Mapping[str, CacheEntry]) -> list[dict[str, Any]]:
    """Reviewer rows an older version kept in tide_spans, as decision rows (on the cached text)."""
    out = []
    for r in rows:
        if r["origin"] != "reviewer" or r["decision"] not in DECISIONS:
            continue
        e = entries.get(r["note_id"])
        out.append(
            {
                "study": r["study"],
                "note_id": r["note_id"],
                "text_sha256": e.text_sha256 if e else None,
                "start": int(r["start"]),
                "end": int(r["end"]),
                "label": r["label"],
                "decision": r["decision"],
                "reviewer": None,
                "fingerprint": r["fingerprint"],
                "decided_at": r["created_at"],
            }
        )
    return out


def oldest_first(decisions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Decision rows in the order they were made (ties: note, start, end, label)."""
    epoch = dt.datetime.min.replace(tzinfo=dt.UTC)
    decisions.sort(key=lambda r: (r["decided_at"] or epoch, r["note_id"], r["start"], r["end"], r["label"]))
    return decisions


@dataclass(frozen=True)
class SpanRows:
    """A span-cache read for some notes before reviewer decisions apply: small enough to travel to
    a Ray worker, which turns it into spans (:func:`effective_spans`) instead of the driver."""

    spans: pa.Table  # tide_spans rows: recognizer spans (and an older version's reviewer rows)
    decisions: tuple[dict[str, Any], ...] = ()  # tide_review_decisions rows of those notes


def effective_spans(
    rows: SpanRows, entries: Mapping[str, CacheEntry], wanted: set[str] | None = None, apply_review: bool = True
) -> dict[str, list[Span]]:
    """Spans per note after reviewer decisions (:meth:`SpanCache.spans`), from rows already read.

    ``entries`` must hold the cache entries of the notes (a decision applies only to the text it
    was made on); ``wanted`` notes without spans get an empty list.
    """
    t = rows.spans
    col = {c: t.column(c).to_pylist() for c in ("note_id", "start", "end", "label", "score", "recognizer", "origin")}
    model: dict[str, list[Span]] = defaultdict(list)
    legacy_at: list[int] = []
    for i, nid in enumerate(col["note_id"]):
        if col["origin"][i] == "reviewer":
            legacy_at.append(i)
            continue
        model[nid].append(
            Span(
                nid,
                int(col["start"][i]),
                int(col["end"][i]),
                col["label"][i],
                float(col["score"][i]),
                col["recognizer"][i],
            )
        )
    rejected: dict[str, set[tuple[int, int, str]]] = defaultdict(set)
    added: dict[str, dict[tuple[int, int, str], Span]] = defaultdict(dict)
    if apply_review:
        legacy = t.take(legacy_at).to_pylist() if legacy_at else []
        for d in oldest_first([*rows.decisions, *legacy_decisions(legacy, entries)]):
            nid = d["note_id"]
            e = entries.get(nid)
            if e is None or d["text_sha256"] != e.text_sha256:
                continue  # made on other text: kept, not applied (see review_summary)
            k = (int(d["start"]), int(d["end"]), d["label"])
            if d["decision"] == "reject":
                rejected[nid].add(k)
            elif d["decision"] == "add":
                added[nid][k] = Span(nid, k[0], k[1], k[2], 1.0, REVIEWER)
    out: dict[str, list[Span]] = {}
    for nid in set(model) | set(added) | (wanted or set()):
        spans = [s for s in model.get(nid, []) if (s.start, s.end, s.label) not in rejected.get(nid, ())]
        out[nid] = sorted(spans + list(added.get(nid, {}).values()))
    return out


@dataclass(frozen=True)
class ReviewSummary:
    """Reviewer decisions of a study against its current recognition."""

    n_decisions: int
    n_applied: int  # made on the text that is recognized now: applied on every read
    n_stale: int  # the note's text changed since the decision: kept, not applied
    n_orphaned: int  # the note has no cache entry (left the source or never recognized): kept, not applied
    stale_notes: tuple[str, ...]


def _span_row(study: str, note_id: str, span: Span, fingerprint: str, now: dt.datetime) -> dict[str, Any]:
    """One ``tide_spans`` row of a recognizer span of note ``note_id``."""
    return {
        "study": study,
        "note_id": note_id,
        "start": span.start,
        "end": span.end,
        "label": span.label,
        "score": float(span.score),
        "recognizer": span.recognizer,
        "fingerprint": fingerprint,
        "origin": "recognizer",
        "decision": None,
        "created_at": now,
    }


def _entry_row(
    study: str, note: Note, fingerprint: str, status: str, code: str | None, n_spans: int, now: dt.datetime
) -> dict[str, Any]:
    """One ``tide_recognized_notes`` row of a note recognized now."""
    return {
        "study": study,
        "note_id": note.note_id,
        "patient_id": note.patient_id,
        "text_sha256": text_sha256(note.text),
        "fingerprint": fingerprint,
        "status": status,
        "error_code": code,
        "n_spans": n_spans,
        "recognized_at": now,
    }


class SpanCache:
    def __init__(self, warehouse: Warehouse, names: TableNames | None = None):
        self.wh = warehouse
        self.names = names or TableNames()

    # -- reads -----------------------------------------------------------------------------
    def entries(self, study: str, note_ids: Iterable[str] | None = None) -> dict[str, CacheEntry]:
        if not self.wh.table_exists(self.names.recognized_notes):
            return {}
        where: dict[str, object] = {"study": study}
        if note_ids is not None:
            where["note_id"] = list(note_ids)
        rows = self.wh.read_table(self.names.recognized_notes, where=where).to_pylist()
        return {
            r["note_id"]: CacheEntry(
                r["note_id"],
                r["patient_id"],
                r["text_sha256"],
                r["fingerprint"],
                r["status"],
                r["error_code"],
                int(r["n_spans"] or 0),
            )
            for r in rows
        }

    def hits(self, study: str, notes: Sequence[Note], fingerprint: str) -> set[str]:
        return current_hits(self.entries(study), notes, fingerprint)

    def _rows(self, study: str, note_ids: Iterable[str] | None = None) -> list[dict[str, Any]]:
        if not self.wh.table_exists(self.names.spans):
            return []
        where: dict[str, object] = {"study": study}
        if note_ids is not None:
            where["note_id"] = list(note_ids)
        rows: list[dict[str, Any]] = self.wh.read_table(self.names.spans, where=where).to_pylist()
        return rows

    def decisions(
        self, study: str, note_ids: Iterable[str] | None = None, _legacy: list[dict[str, Any]] | None = None
    ) -> list[dict[str, Any]]:
        """Reviewer decision rows (``tables.REVIEW_DECISIONS`` columns), oldest first."""
        ids = None if note_ids is None else list(note_ids)
        rows: list[dict[str, Any]] = []
        if self.wh.table_exists(self.names.review_decisions):
            where: dict[str, object] = {"study": study}
            if ids is not None:
                where["note_id"] = ids
            rows = self.wh.read_table(self.names.review_decisions, where=where).to_pylist()
        if _legacy is None:
            legacy = []
            if self.wh.table_exists(self.names.spans):
                where = {"study": study, "origin": "reviewer"}
                if ids is not None:
                    where["note_id"] = ids
                legacy = self.wh.read_table(self.names.spans, where=where).to_pylist()
        else:
            legacy = _legacy
        if legacy:
            rows += legacy_decisions(legacy, self.entries(study, {r["note_id"] for r in legacy}))
        return oldest_first(rows)

    def span_rows(self, study: str, note_ids: Iterable[str] | None = None, apply_review: bool = True) -> SpanRows:
        """The cache's rows for some notes (all of the study's: ``None``), before decisions are applied."""
        where: dict[str, object] = {"study": study}
        if note_ids is not None:
            where["note_id"] = sorted(set(note_ids))
        spans = tables.empty("spans")
        if self.wh.table_exists(self.names.spans):
            spans = self.wh.read_table(self.names.spans, where=where)
        decisions: list[dict[str, Any]] = []
        if apply_review and self.wh.table_exists(self.names.review_decisions):
            decisions = self.wh.read_table(self.names.review_decisions, where=where).to_pylist()
        return SpanRows(spans, tuple(decisions))

    def spans(
        self, study: str, note_ids: Iterable[str] | None = None, apply_review: bool = True
    ) -> dict[str, list[Span]]:
        """Spans per note after reviewer decisions (rejects removed, additions included).

        A decision applies only to the text it was made on: its ``text_sha256`` must equal the
        hash of the text the note was last recognized from.
        """
        wanted = None if note_ids is None else set(note_ids)
        rows = self.span_rows(study, wanted, apply_review)
        entries = self.entries(study, None if wanted is None else sorted(wanted)) if apply_review else {}
        return effective_spans(rows, entries, wanted, apply_review)

    def review_rows(self, study: str, note_id: str | None = None) -> list[dict[str, Any]]:
        return self.decisions(study, None if note_id is None else [note_id])

    def review_summary(self, study: str) -> ReviewSummary:
        decisions = self.decisions(study)
        entries = self.entries(study, {d["note_id"] for d in decisions}) if decisions else {}
        applied = stale = orphaned = 0
        stale_notes = set()
        for d in decisions:
            e = entries.get(d["note_id"])
            if e is None:
                orphaned += 1
            elif d["text_sha256"] == e.text_sha256:
                applied += 1
            else:
                stale += 1
                stale_notes.add(d["note_id"])
        return ReviewSummary(len(decisions), applied, stale, orphaned, tuple(sorted(stale_notes)))

    # -- writes ----------------------------------------------------------------------------
    def store(
        self,
        study: str,
        fingerprint: str,
        notes: Sequence[Note],
        recognized: Mapping[str, list[Span]],
        statuses: Mapping[str, tuple[str, str | None]],
        keep: set[str],
    ) -> int:
        """Write the study's cache partition in one atomic commit.

        ``notes`` is the full current input of the study; ``recognized`` holds new spans of the
        notes recognized in this run, ``statuses`` their (status, error_code); ``keep`` the note
        ids whose cached rows are still valid (cache hits).  Notes no longer in the input are
        dropped from the cache.  Reviewer decisions are not touched (they are not cache).
        """
        now = _now()
        by_id = {n.note_id: n for n in notes}
        old_rows = self._rows(study)
        old_entries = self.entries(study)
        legacy = [r for r in old_rows if r["origin"] == "reviewer"]
        span_rows = [r for r in old_rows if r["note_id"] in keep and r["origin"] != "reviewer"]
        for nid, spans in recognized.items():
            text = by_id[nid].text
            for s in spans:
                s.check_inside(text)
                span_rows.append(_span_row(study, nid, s, fingerprint, now))
        entry_rows = []
        keep_times = {}
        if keep and self.wh.table_exists(self.names.recognized_notes):
            for r in self.wh.read_table(
                self.names.recognized_notes, ["note_id", "recognized_at"], where={"study": study}
            ).to_pylist():
                keep_times[r["note_id"]] = r["recognized_at"]
        for nid in keep:
            e = old_entries[nid]
            entry_rows.append(
                {
                    "study": study,
                    "note_id": nid,
                    "patient_id": e.patient_id,
                    "text_sha256": e.text_sha256,
                    "fingerprint": e.fingerprint,
                    "status": e.status,
                    "error_code": e.error_code,
                    "n_spans": e.n_spans,
                    "recognized_at": keep_times.get(nid, now),
                }
            )
        for nid, (status, code) in statuses.items():
            n = by_id[nid]
            entry_rows.append(_entry_row(study, n, fingerprint, status, code, len(recognized.get(nid, [])), now))
        writes = [
            PartitionWrite(self.names.spans, tables.to_table("spans", span_rows), {"study": study}),
            PartitionWrite(
                self.names.recognized_notes, tables.to_table("recognized_notes", entry_rows), {"study": study}
            ),
        ]
        if legacy:  # move an older version's reviewer rows into the decisions table, in the same commit
            current = []
            if self.wh.table_exists(self.names.review_decisions):
                current = self.wh.read_table(self.names.review_decisions, where={"study": study}).to_pylist()
            moved = legacy_decisions(legacy, old_entries)
            writes.append(
                PartitionWrite(
                    self.names.review_decisions,
                    tables.to_table("review_decisions", current + moved),
                    {"study": study},
                )
            )
        self.wh.replace_partitions(writes)
        return len(span_rows)

    def migrate_legacy(self, study: str) -> int:
        """Move an older version's reviewer rows (``tide_spans.origin = "reviewer"``) into the
        decisions table, in one commit.  Chunked recognition calls it first, so its per-chunk
        commits (which replace a chunk's spans) never drop a reviewer row."""
        if not self.wh.table_exists(self.names.spans):
            return 0
        legacy = self.wh.read_table(self.names.spans, where={"study": study, "origin": "reviewer"}).to_pylist()
        if not legacy:
            return 0
        current = []
        if self.wh.table_exists(self.names.review_decisions):
            current = self.wh.read_table(self.names.review_decisions, where={"study": study}).to_pylist()
        moved = legacy_decisions(legacy, self.entries(study, {r["note_id"] for r in legacy}))
        self.wh.replace_partitions(
            [
                PartitionWrite(
                    self.names.review_decisions, tables.to_table("review_decisions", current + moved), {"study": study}
                ),
                PartitionWrite(self.names.spans, tables.empty("spans"), {"study": study, "origin": "reviewer"}),
            ]
        )
        return len(moved)

    def store_chunk(
        self,
        study: str,
        fingerprint: str,
        notes: Sequence[Note],
        recognized: Mapping[str, list[Span]],
        statuses: Mapping[str, tuple[str, str | None]],
        owned: Iterable[str],
        extra: Sequence[PartitionWrite] = (),
    ) -> int:
        """Commit one chunk of a study's recognition atomically (idempotent: a rerun replaces it).

        ``owned`` are the note ids this chunk decides: their cache rows are replaced by the rows of
        the notes in ``statuses`` (recognized now) and deleted for the others, except cache hits,
        which the caller leaves out of ``owned`` and which stay as they are.  ``extra`` writes
        (the chunk's progress row) land in the same commit.  Reviewer decisions are not touched;
        an older version's reviewer rows must have been moved first (:meth:`migrate_legacy`).
        """
        writes = [*chunk_cache_writes(self.names, study, fingerprint, notes, recognized, statuses, owned), *extra]
        if writes:
            self.wh.replace_partitions(writes)
        return sum(w.table.num_rows for w in writes if w.name == self.names.spans)

    def add_review(
        self,
        study: str,
        note: Note,
        start: int,
        end: int,
        label: str,
        decision: str,
        reviewer: str | None = None,
    ) -> dict[str, Any]:
        """Record a reviewer decision on a span of ``note`` (validated against its text)."""
        if decision not in DECISIONS:
            raise InputError("E380", f"unknown review decision {decision!r}", hint="use 'reject' or 'add'")
        who = check_reviewer(default_reviewer() if reviewer is None else reviewer)
        span = Span(note.note_id, start, end, label, 1.0, REVIEWER)
        span.check_inside(note.text)
        e = self.entries(study, [note.note_id]).get(note.note_id)
        if e is None or e.text_sha256 != text_sha256(note.text):
            raise InputError(
                "E381",
                f"note {note.note_id} has no current recognition in study {study}",
                hint="run recognition for the study before reviewing",
            )
        row = {
            "study": study,
            "note_id": note.note_id,
            "text_sha256": e.text_sha256,
            "start": start,
            "end": end,
            "label": label,
            "decision": decision,
            "reviewer": who,
            "fingerprint": e.fingerprint,
            "decided_at": _now(),
        }
        self.wh.append(self.names.review_decisions, tables.to_table("review_decisions", [row]))
        return row

    def undo_review(
        self, study: str, note_id: str, start: int, end: int, label: str, text_hash: str | None = None
    ) -> int:
        """Remove reviewer decisions on exactly this span (made on the text ``text_hash``, when given)."""
        where: dict[str, object] = {"study": study, "note_id": note_id, "start": start, "end": end, "label": label}
        n = self.wh.delete(
            self.names.review_decisions, where if text_hash is None else {**where, "text_sha256": text_hash}
        )
        n += self.wh.delete(self.names.spans, {**where, "origin": "reviewer"})  # rows of an older version
        return n
