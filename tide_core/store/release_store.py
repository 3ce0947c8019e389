"""Every read of the released tables, in one place (the write side is ``anonymize_study``).

``ReleaseStore`` sits beside :class:`~tide_core.store.span_cache.SpanCache`: the span cache owns
recognition's tables, this store owns what a release left in the source schema -- the released
notes and spans, the quarantine, the runs, the release rows, the audit rounds, the drift
verdicts and the PHI Guard scores -- under the configured (prefixable) :class:`TableNames`.
A table that does not exist reads as empty (the callers decide whether that fails closed).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from tide_core.io.warehouse import Warehouse
from tide_core.store.tables import SCHEMAS, TableNames


class ReleaseStore:
    """Reads of one warehouse's released tables, scoped by (study, key)."""

    def __init__(self, warehouse: Warehouse, names: TableNames | None = None) -> None:
        self.wh = warehouse
        self.names = names or TableNames()

    # -- generic ----------------------------------------------------------------------------
    def rows(
        self,
        kind: str,
        study: str,
        key: str | None = None,
        columns: Sequence[str] | None = None,
        note_ids: Sequence[str] | str | None = None,
    ) -> list[dict[str, Any]]:
        """Rows of table ``kind`` (a key of ``tables.TABLES``) for a study, a key, some notes."""
        name = self.names.of(kind)
        if not self.wh.table_exists(name):
            return []
        where: dict[str, Any] = {"study": study}
        if key is not None:
            where["key"] = key
        if note_ids is not None:
            where["note_id"] = note_ids if isinstance(note_ids, str) else list(note_ids)
        cols = list(columns) if columns is not None else None
        return list(self.wh.read_table(name, cols, where=where).to_pylist())

    def table(self, kind: str, study: str, key: str | None = None) -> pa.Table:
        """All columns of table ``kind`` for (study, key) as Arrow; the empty schema if absent."""
        name = self.names.of(kind)
        if not self.wh.table_exists(name):
            return SCHEMAS[kind].empty_table()
        where: dict[str, Any] = {"study": study} if key is None else {"study": study, "key": key}
        return self.wh.read_table(name, where=where)

    def count(self, kind: str, study: str, key: str) -> int:
        name = self.names.of(kind)
        return int(self.wh.count(name, {"study": study, "key": key})) if self.wh.table_exists(name) else 0

    # -- released notes and spans -------------------------------------------------------------
    def deid_notes(
        self, study: str, key: str, columns: Sequence[str] | None = None, note_ids: Sequence[str] | str | None = None
    ) -> list[dict[str, Any]]:
        return self.rows("deid_notes", study, key, columns, note_ids)

    def released_spans(
        self, study: str, key: str, columns: Sequence[str] | None = None, note_ids: Sequence[str] | str | None = None
    ) -> list[dict[str, Any]]:
        return self.rows("released_spans", study, key, columns, note_ids)

    def surrogate_ranges(self, study: str, key: str) -> dict[str, list[tuple[int, int]]]:
        """note_id -> (out_start, out_end) of every replaced span in its released text."""
        out: dict[str, list[tuple[int, int]]] = {}
        for r in self.released_spans(study, key, ["note_id", "out_start", "out_end"]):
            out.setdefault(r["note_id"], []).append((r["out_start"], r["out_end"]))
        return out

    def quarantine(
        self, study: str, key: str, columns: Sequence[str] | None = None, note_ids: Sequence[str] | str | None = None
    ) -> list[dict[str, Any]]:
        return self.rows("quarantine", study, key, columns, note_ids)

    def keys(self, study: str) -> list[str]:
        """Key names (never key material) the study has released output under."""
        return sorted({r["key"] for r in self.rows("deid_notes", study, None, ["key"]) if r["key"]})

    def stamps(self, study: str, key: str) -> list[dt.datetime | None]:
        """The distinct ``released_at`` stamps of the released rows: one per anonymization run."""
        rows = self.deid_notes(study, key, ["released_at"])
        return sorted({r["released_at"] for r in rows}, key=lambda v: (v is None, v))

    def runs(self, study: str, columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
        return self.rows("runs", study, None, columns)

    # -- release rows, audits, drift, guard --------------------------------------------------------
    def release(self, study: str, key: str) -> dict[str, Any] | None:
        """The ``tide_releases`` row of (study, key), or None."""
        rows = self.rows("releases", study, key)
        return rows[0] if rows else None

    def audits(self, study: str, key: str) -> pa.Table:
        """Every recorded audit round of (study, key) (Arrow; the gate pools them)."""
        return self.table("audits", study, key)

    def latest_drift(self, study: str, key: str) -> dict[str, Any] | None:
        """The newest drift verdict of (study, key) by ``checked_at``, with ``result`` parsed."""
        rows = self.rows("drift", study, key or "")
        if not rows:
            return None
        newest = max(rows, key=lambda r: r["checked_at"])
        out = dict(newest)
        out["result"] = json.loads(newest["result_json"]) if newest.get("result_json") else None
        return out

    def guard_scores(self, study: str, key: str) -> list[dict[str, Any]]:
        """PHI Guard rows of a release (ids, numbers, version): the review pile and richness."""
        return self.rows("guard_scores", study, key)

    def review_pile(self, study: str, key: str) -> list[str]:
        """Note ids held by the PHI Guard for (study, key), riskiest first (scores not returned)."""
        held = [r for r in self.guard_scores(study, key) if r["held"]]
        held.sort(key=lambda r: (r["rank"], r["note_id"]))
        return [r["note_id"] for r in held]
