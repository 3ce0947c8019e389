"""The review server's single view of the warehouse: notes, cached spans, released output.

A DuckDB file has one writing process, so the server opens the warehouse once and every
request goes through this object, which serialises access with one lock (a decision is a
check-then-write and must not interleave with another).  Nothing here anonymizes: the
de-identified side shows only what ``anonymize_study`` released under a key; a note that
was not released under that key is reported as such.

Decisions are validated here (note known and recognized, offsets inside the text, label
known, the rejected span exists) and written with ``SpanCache.add_review`` /
``undo_review`` into ``tide_review_decisions`` with the reviewer's name and the hash of the
text they were made on; recognition never rewrites that table.
"""

from __future__ import annotations

import datetime as dt
import threading
from dataclasses import dataclass
from typing import Any

from tide_core.config import TideConfig
from tide_core.engine.study_input import read_study_input
from tide_core.errors import InputError
from tide_core.io.warehouse import Warehouse
from tide_core.spans import Note
from tide_core.store.release_store import ReleaseStore
from tide_core.store.span_cache import (
    REVIEWER,
    CacheEntry,
    SpanCache,
    check_reviewer,
    default_reviewer,
    text_sha256,
)
from tide_core.types import LABELS

DECISIONS = ("reject", "add")


class ReviewError(InputError):
    """A review request that cannot be honoured; ``status`` is the HTTP status it maps to."""

    def __init__(self, code: str, message: str, hint: str = "", status: int = 400):
        super().__init__(code, message, hint)
        self.status = status

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_rebuild_review_error, (self.code, self.message, self.hint, self.status))


def _rebuild_review_error(code: str, message: str, hint: str, status: int) -> ReviewError:
    return ReviewError(code, message, hint, status)


@dataclass(frozen=True)
class NoteSummary:
    note_id: str
    note_type: str | None
    note_date: str | None
    recognized: bool
    stale: bool
    n_spans: int
    n_review: int


def _iso(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    return str(value)


class ReviewStore:
    """Notes of one study plus span-cache reads and writes, behind one lock."""

    def __init__(
        self,
        wh: Warehouse,
        study: str,
        key: str | None = None,
        *,
        config: TideConfig | None = None,
        notes_table: str | None = None,
        reviewer: str | None = None,
    ):
        self.wh = wh
        self.reviewer = check_reviewer(default_reviewer() if reviewer is None else reviewer)
        self.study = study
        self.key = key or None
        self.config = config or TideConfig.preset("rules")  # only its table names are used
        self.names = self.config.tables
        self.notes_table = notes_table
        self.cache = SpanCache(wh, self.names)
        self.released = ReleaseStore(wh, self.names)
        self._lock = threading.RLock()
        self._notes: dict[str, Note] = {}
        self.n_quarantined = 0
        self.reload_notes()

    # -- notes -----------------------------------------------------------------------------
    def reload_notes(self) -> int:
        """(Re)read the study's notes; rows that fail validation are not reviewable."""

        with self._lock:
            validated = read_study_input(self.wh, self.study, self.config, self.notes_table)
            self._notes = {n.note_id: n for n in validated.notes}
            self.n_quarantined = len(validated.quarantined)
            return len(self._notes)

    @property
    def n_notes(self) -> int:
        return len(self._notes)

    def note(self, note_id: str) -> Note:
        n = self._notes.get(note_id)
        if n is None:
            raise ReviewError(
                "E851",
                f"note {note_id!r} is not in study {self.study!r}",
                hint="pick a note from /api/notes (input rows that failed validation are not listed)",
                status=404,
            )
        return n

    def _span_rows(self, note_id: str) -> list[dict[str, Any]]:
        """Recognizer rows of one note (reviewer rows of an older version are decisions)."""
        if not self.wh.table_exists(self.names.spans):
            return []
        rows = self.wh.read_table(self.names.spans, where={"study": self.study, "note_id": note_id}).to_pylist()
        return [r for r in rows if r["origin"] != "reviewer"]

    def _decisions(self, note: Note, entry: CacheEntry | None) -> tuple[list[dict[str, Any]], int]:
        """Decisions made on the text the note was recognized from (else its current text), and
        how many others (made on text that has changed since) are kept but not applied."""
        h = entry.text_sha256 if entry is not None else text_sha256(note.text)
        rows = self.cache.decisions(self.study, [note.note_id])
        current = [r for r in rows if r["text_sha256"] == h]
        return current, len(rows) - len(current)

    def keys(self) -> list[str]:
        """Key names (never key material) the study has released output under."""
        with self._lock:
            return self.released.keys(self.study)

    def _entries(self, note_ids: list[str]) -> dict[str, CacheEntry]:
        """Cache entries of just these notes (a page, one note): no full-study read per request."""
        if not note_ids or not self.wh.table_exists(self.names.recognized_notes):
            return {}
        rows = self.wh.read_table(
            self.names.recognized_notes, where={"study": self.study, "note_id": list(note_ids)}
        ).to_pylist()
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

    def list_notes(self, offset: int = 0, limit: int = 100, query: str = "") -> dict[str, Any]:
        with self._lock:
            ids = [nid for nid in self._notes if query.lower() in nid.lower()] if query else list(self._notes)
            page = ids[offset : offset + limit]
            entries = self._entries(page)
            review_counts: dict[str, int] = {}
            if page:
                for r in self.cache.decisions(self.study, page):
                    e = entries.get(r["note_id"])
                    if e is not None and r["text_sha256"] == e.text_sha256:
                        review_counts[r["note_id"]] = review_counts.get(r["note_id"], 0) + 1
            out = []
            for nid in page:
                n = self._notes[nid]
                e = entries.get(nid)
                ok = e is not None and e.status == "ok"
                out.append(
                    NoteSummary(
                        nid,
                        n.metadata.get("note_type"),
                        _iso(n.metadata.get("note_date")),
                        ok,
                        bool(ok and e is not None and e.text_sha256 != text_sha256(n.text)),
                        e.n_spans if e else 0,
                        review_counts.get(nid, 0),
                    ).__dict__
                )
            return {"total": len(ids), "offset": offset, "limit": limit, "notes": out}

    def review_pile(self, key: str | None = None) -> dict[str, Any]:
        """Notes the PHI Guard held out of the release under ``key``, riskiest first.

        The order is the guard's; its scores are never shown (a score would anchor the review).
        A held note is reviewed like any other; the release step scores it again once the
        partition is re-released.
        """
        with self._lock:
            key = key if key is not None else self.key
            ids = self.released.review_pile(self.study, key) if key else []
            listed = [nid for nid in ids if nid in self._notes]
            entries = self._entries(listed)
            notes = []
            for nid in listed:
                n, e = self._notes[nid], entries.get(nid)
                ok = e is not None and e.status == "ok"
                notes.append(
                    NoteSummary(
                        nid,
                        n.metadata.get("note_type"),
                        _iso(n.metadata.get("note_date")),
                        ok,
                        bool(ok and e is not None and e.text_sha256 != text_sha256(n.text)),
                        e.n_spans if e else 0,
                        0,
                    ).__dict__
                )
            return {"key": key, "total": len(notes), "notes": notes}

    # -- one note --------------------------------------------------------------------------
    def note_view(self, note_id: str, key: str | None = None) -> dict[str, Any]:
        """Original text, cached spans with their review status, and the released output."""
        with self._lock:
            note = self.note(note_id)
            entry = self._entries([note_id]).get(note_id)
            rows = self._span_rows(note_id)
            review, n_stale = self._decisions(note, entry)
            rejects = {(r["start"], r["end"], r["label"]): r for r in review if r["decision"] == "reject"}
            spans, matched = [], set()
            for r in rows:
                k = (r["start"], r["end"], r["label"])
                status = "rejected" if k in rejects else "active"
                item = self._span_json(r, note, "recognizer", status)
                if status == "rejected":
                    matched.add(k)
                    item["reviewer"] = rejects[k].get("reviewer")
                spans.append(item)
            for r in review:
                k = (r["start"], r["end"], r["label"])
                if r["decision"] == "add":
                    spans.append(self._span_json(r, note, "reviewer", "added"))
                elif r["decision"] == "reject" and k not in matched:
                    # a reject whose recognizer span is gone (re-recognition): still undoable
                    spans.append(self._span_json(r, note, "reviewer", "rejected"))
            spans.sort(key=lambda s: (s["start"], s["end"], s["label"], s["origin"]))
            recognition = None
            if entry is not None:
                recognition = {
                    "status": entry.status,
                    "error_code": entry.error_code,
                    "fingerprint": entry.fingerprint,
                    "stale": entry.text_sha256 != text_sha256(note.text),
                }
            last_review = max((r["decided_at"] for r in review if r["decided_at"] is not None), default=None)
            return {
                "note_id": note.note_id,
                "patient_id": note.patient_id,
                "text": note.text,
                "length": len(note.text),
                "metadata": {k: _iso(v) for k, v in note.metadata.items()},
                "recognition": recognition,
                "spans": spans,
                "stale_decisions": n_stale,
                "deid": self._deid_view(note, key if key is not None else self.key, last_review),
            }

    @staticmethod
    def _span_json(r: dict[str, Any], note: Note, origin: str, status: str) -> dict[str, Any]:
        start, end = int(r["start"]), int(r["end"])
        decision = origin == "reviewer"
        return {
            "start": start,
            "end": end,
            "label": r["label"],
            "score": 1.0 if decision else float(r["score"] or 0.0),
            "recognizer": REVIEWER if decision else r["recognizer"],
            "origin": origin,
            "status": status,
            "in_text": 0 <= start < end <= len(note.text),
            "created_at": _iso(r["decided_at"] if decision else r["created_at"]),
            "reviewer": r.get("reviewer") if decision else None,
        }

    def _deid_view(self, note: Note, key: str | None, last_review: dt.datetime | None) -> dict[str, Any]:
        if not key:
            return {
                "status": "no_key",
                "key": None,
                "message": "no key chosen: start with --key K or pick a released key",
            }
        base = {"key": key, "message": "not released under this key"}
        rows = self.released.deid_notes(
            self.study, key, ["text", "note_ref", "released_at", "fingerprint"], note_ids=note.note_id
        )
        if not rows:
            return {"status": "not_released", **base, "quarantine": self._quarantine(note.note_id, key)}
        row = rows[0]
        spans = self.released.released_spans(
            self.study,
            key,
            ["start", "end", "out_start", "out_end", "label", "operator", "recognizer"],
            note_ids=note.note_id,
        )
        spans.sort(key=lambda s: (s["out_start"], s["out_end"]))
        released_at = row["released_at"]
        outdated = bool(last_review is not None and released_at is not None and last_review > released_at)
        return {
            "status": "released",
            "key": key,
            "text": row["text"],
            "note_ref": row["note_ref"],
            "released_at": _iso(released_at),
            "outdated": outdated,
            "spans": [{k: (int(v) if isinstance(v, int) else v) for k, v in s.items()} for s in spans],
        }

    def _quarantine(self, note_id: str, key: str) -> list[dict[str, Any]]:
        """Codes and reasons (never text) of why the note was held back under ``key``."""
        return self.released.quarantine(self.study, key, ["stage", "code", "reason"], note_ids=note_id)

    # -- decisions -------------------------------------------------------------------------
    @staticmethod
    def _check_fields(start: Any, end: Any, label: Any) -> None:
        for name, v in (("start", start), ("end", end)):
            if not isinstance(v, int) or isinstance(v, bool):
                raise ReviewError(
                    "E852",
                    f"{name} must be an integer character offset",
                    hint='send {"start": int, "end": int, "label": str}',
                )
        if label not in LABELS:
            raise ReviewError("E854", f"unknown label {label!r}", hint=f"use one of {', '.join(LABELS)}")

    def _check_span(self, note: Note, start: Any, end: Any, label: Any) -> tuple[int, int, str]:
        self._check_fields(start, end, label)
        if not 0 <= start < end <= len(note.text):
            raise ReviewError(
                "E853",
                f"span [{start}, {end}) is not inside note {note.note_id!r} (length {len(note.text)})",
                hint="offsets are end-exclusive character offsets with 0 <= start < end <= length",
            )
        return start, end, label

    def _require_recognized(self, note: Note) -> CacheEntry:
        e = self._entries([note.note_id]).get(note.note_id)
        if e is None or e.status != "ok" or e.text_sha256 != text_sha256(note.text):
            raise ReviewError(
                "E855",
                f"note {note.note_id!r} has no current recognition in study {self.study!r}",
                hint="run `tide run --stage recognize` for the study, then review",
                status=409,
            )
        return e

    def decide(self, note_id: str, decision: str, start: Any, end: Any, label: Any) -> dict[str, Any]:
        """Record ``reject`` (a recognizer span is wrong) or ``add`` (a missed span)."""
        if decision not in DECISIONS:
            raise ReviewError("E856", f"unknown decision {decision!r}", hint="use 'reject' or 'add'")
        with self._lock:
            note = self.note(note_id)
            start, end, label = self._check_span(note, start, end, label)
            entry = self._require_recognized(note)
            k = (start, end, label)
            same = [r for r in self._span_rows(note_id) if (r["start"], r["end"], r["label"]) == k]
            same += [
                {**r, "origin": "reviewer"}
                for r in self._decisions(note, entry)[0]
                if (r["start"], r["end"], r["label"]) == k
            ]
            if decision == "reject":
                if not any(r["origin"] != "reviewer" for r in same):
                    raise ReviewError(
                        "E857",
                        f"no recognizer span [{start}, {end}) {label} in note {note_id!r}",
                        hint="reject only spans listed for the note; undo a reviewer addition instead",
                        status=404,
                    )
                if any(r["origin"] == "reviewer" and r["decision"] == "reject" for r in same):
                    raise ReviewError(
                        "E858",
                        f"span [{start}, {end}) {label} of note {note_id!r} is already rejected",
                        hint="undo the decision to restore the span",
                        status=409,
                    )
            else:
                if not note.text[start:end].strip():
                    raise ReviewError(
                        "E859",
                        f"span [{start}, {end}) of note {note_id!r} covers only whitespace",
                        hint="select the identifier's characters",
                    )
                if any(r["origin"] == "reviewer" and r["decision"] == "add" for r in same):
                    raise ReviewError(
                        "E860", f"span [{start}, {end}) {label} was already added to note {note_id!r}", status=409
                    )
            self.cache.add_review(self.study, note, start, end, label, decision, reviewer=self.reviewer)
            return {
                "note_id": note_id,
                "decision": decision,
                "start": start,
                "end": end,
                "label": label,
                "recognizer": REVIEWER,
                "reviewer": self.reviewer,
            }

    def undo(self, note_id: str, start: Any, end: Any, label: Any) -> dict[str, Any]:
        """Remove the reviewer decision(s) on exactly [start, end) with ``label``."""
        with self._lock:
            note = self.note(note_id)
            self._check_fields(start, end, label)  # no inside-text check: a stale decision stays undoable
            k = (start, end, label)
            entry = self._entries([note_id]).get(note_id)
            mine = [r for r in self._decisions(note, entry)[0] if (r["start"], r["end"], r["label"]) == k]
            n = 0
            if mine:
                n = self.cache.undo_review(self.study, note_id, start, end, label, text_hash=mine[0]["text_sha256"])
            if n == 0:
                raise ReviewError(
                    "E861",
                    f"no reviewer decision on [{start}, {end}) {label} in note {note_id!r}",
                    hint="only reviewer rows (rejected or added spans) can be undone",
                    status=404,
                )
            return {"note_id": note_id, "undone": n, "start": start, "end": end, "label": label}
