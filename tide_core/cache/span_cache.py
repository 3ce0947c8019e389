"""The span cache: recognition output, stored before any text changes.

Recognition depends on the study only; anonymization under any key reads spans from here and
never re-runs a recognizer.  A note is a cache hit when its text hash and the recognition
fingerprint are unchanged and its last recognition succeeded.  Reviewer decisions are rows
with ``origin = "reviewer"`` and ``decision`` = "reject" (drop the matching recognizer span)
or "add" (a span the recognizers missed); they survive re-recognition of unchanged notes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from tide_core.cache import tables
from tide_core.cache.tables import TableNames
from tide_core.errors import InputError
from tide_core.io.warehouse import Warehouse
from tide_core.spans import Note, Span

REVIEWER = "reviewer@human"


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass(frozen=True)
class CacheEntry:
    note_id: str
    patient_id: str
    text_sha256: str
    fingerprint: str
    status: str
    error_code: str | None
    n_spans: int


class SpanCache:
    def __init__(self, warehouse: Warehouse, names: TableNames | None = None):
        self.wh = warehouse
        self.names = names or TableNames()

    # -- reads -----------------------------------------------------------------------------
    def entries(self, study: str) -> dict[str, CacheEntry]:
        if not self.wh.table_exists(self.names.recognized_notes):
            return {}
        rows = self.wh.read_table(self.names.recognized_notes, where={"study": study}).to_pylist()
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
        entries = self.entries(study)
        out = set()
        for n in notes:
            e = entries.get(n.note_id)
            if e and e.status == "ok" and e.fingerprint == fingerprint and e.text_sha256 == text_sha256(n.text):
                out.add(n.note_id)
        return out

    def _rows(self, study: str) -> list[dict]:
        if not self.wh.table_exists(self.names.spans):
            return []
        return self.wh.read_table(self.names.spans, where={"study": study}).to_pylist()

    def spans(
        self, study: str, note_ids: Iterable[str] | None = None, apply_review: bool = True
    ) -> dict[str, list[Span]]:
        """Spans per note after reviewer decisions (rejects removed, additions included)."""
        wanted = None if note_ids is None else set(note_ids)
        model: dict[str, list[Span]] = defaultdict(list)
        rejected: dict[str, set] = defaultdict(set)
        added: dict[str, list[Span]] = defaultdict(list)
        for r in self._rows(study):
            nid = r["note_id"]
            if wanted is not None and nid not in wanted:
                continue
            span = Span(nid, int(r["start"]), int(r["end"]), r["label"], float(r["score"]), r["recognizer"])
            if r["origin"] == "reviewer":
                if r["decision"] == "reject":
                    rejected[nid].add((span.start, span.end, span.label))
                elif r["decision"] == "add":
                    added[nid].append(span)
            else:
                model[nid].append(span)
        out: dict[str, list[Span]] = {}
        for nid in set(model) | set(added) | (wanted or set()):
            spans = model.get(nid, [])
            if apply_review:
                spans = [s for s in spans if (s.start, s.end, s.label) not in rejected.get(nid, ())]
                spans = spans + added.get(nid, [])
            out[nid] = sorted(spans)
        return out

    def review_rows(self, study: str, note_id: str | None = None) -> list[dict]:
        return [
            r for r in self._rows(study) if r["origin"] == "reviewer" and (note_id is None or r["note_id"] == note_id)
        ]

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
        """Write the study's cache partition.

        ``notes`` is the full current input of the study; ``recognized`` holds new spans of the
        notes recognized in this run, ``statuses`` their (status, error_code); ``keep`` the note
        ids whose cached rows are still valid (cache hits).  Notes no longer in the input are
        dropped from the cache; reviewer rows of kept notes are preserved.
        """
        now = _now()
        by_id = {n.note_id: n for n in notes}
        old_spans = [r for r in self._rows(study) if r["note_id"] in keep]
        old_entries = self.entries(study)
        span_rows = list(old_spans)
        for nid, spans in recognized.items():
            text = by_id[nid].text
            for s in spans:
                s.check_inside(text)
                span_rows.append(
                    {
                        "study": study,
                        "note_id": nid,
                        "start": s.start,
                        "end": s.end,
                        "label": s.label,
                        "score": float(s.score),
                        "recognizer": s.recognizer,
                        "fingerprint": fingerprint,
                        "origin": "recognizer",
                        "decision": None,
                        "created_at": now,
                    }
                )
        entry_rows = []
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
                    "recognized_at": None,
                }
            )
        keep_times = {}
        if keep and self.wh.table_exists(self.names.recognized_notes):
            for r in self.wh.read_table(
                self.names.recognized_notes, ["note_id", "recognized_at"], where={"study": study}
            ).to_pylist():
                keep_times[r["note_id"]] = r["recognized_at"]
        for row in entry_rows:
            row["recognized_at"] = keep_times.get(row["note_id"], now)
        for nid, (status, code) in statuses.items():
            n = by_id[nid]
            entry_rows.append(
                {
                    "study": study,
                    "note_id": nid,
                    "patient_id": n.patient_id,
                    "text_sha256": text_sha256(n.text),
                    "fingerprint": fingerprint,
                    "status": status,
                    "error_code": code,
                    "n_spans": len(recognized.get(nid, [])),
                    "recognized_at": now,
                }
            )
        self.wh.replace_partition(self.names.spans, tables.to_table("spans", span_rows), {"study": study})
        self.wh.replace_partition(
            self.names.recognized_notes, tables.to_table("recognized_notes", entry_rows), {"study": study}
        )
        return len(span_rows)

    def add_review(self, study: str, note: Note, start: int, end: int, label: str, decision: str) -> None:
        """Record a reviewer decision on a span of ``note`` (validated against its text)."""
        if decision not in ("reject", "add"):
            raise InputError("E380", f"unknown review decision {decision!r}", hint="use 'reject' or 'add'")
        span = Span(note.note_id, start, end, label, 1.0, REVIEWER)
        span.check_inside(note.text)
        entries = self.entries(study)
        e = entries.get(note.note_id)
        if e is None or e.text_sha256 != text_sha256(note.text):
            raise InputError(
                "E381",
                f"note {note.note_id} has no current recognition in study {study}",
                hint="run recognition for the study before reviewing",
            )
        row = {
            "study": study,
            "note_id": note.note_id,
            "start": start,
            "end": end,
            "label": label,
            "score": 1.0,
            "recognizer": REVIEWER,
            "fingerprint": e.fingerprint,
            "origin": "reviewer",
            "decision": decision,
            "created_at": _now(),
        }
        self.wh.append(self.names.spans, tables.to_table("spans", [row]))

    def undo_review(self, study: str, note_id: str, start: int, end: int, label: str) -> int:
        """Remove reviewer decisions on exactly this span (a targeted delete, not a rewrite)."""
        return self.wh.delete(
            self.names.spans,
            {"study": study, "note_id": note_id, "origin": "reviewer", "start": start, "end": end, "label": label},
        )
