"""Per-chunk verified digests of the release checks: a chunk that did not change keeps its tallies.

The chunk-streamed checks (:func:`tide_core.release.scan.scan_release`) tally each source chunk
of a release on its own, and the tallies of the chunks add up to the study's.  After a chunk is
scanned, ``tide_chunk_verdicts`` keeps for (study, key, chunk) a **digest** of exactly what that
chunk's tallies depend on, and the tallies themselves (counts only, per check).  A later scan
computes the chunk's digest afresh from what it reads anyway, and when it equals the recorded one
it takes the recorded tallies instead of redoing the per-note work (surfaces, the Aho-Corasick
pass, offsets, known-PHI matching).  What the digest binds (:func:`chunk_digest`):

- the scan logic's version (:data:`SCAN_VERSION`), the study, the key and the checks run;
- the chunk's source rows as validated: per valid note its id, patient id, a SHA-256 of its
  text and its metadata (:func:`tide_core.engine.study_chunks.note_identity`), per quarantined
  input row its note id, patient id and code, the note ids the chunk owns and its row counts;
- the released rows of those note ids: note id and a SHA-256 of the released text itself (the
  text is read by the scan anyway, so no stored row hash has to be trusted);
- their released spans (note id, start, end, out_start, out_end, label) and quarantine rows
  (note id, code);
- the span cache's effective spans of those notes (start, end, label; reviewer decisions applied);
- what each rider of the pass reads for the chunk (the known-PHI check: the patients table's
  layout and the rows of the chunk's patients).

A recorded row is used only when its digest equals the fresh one, its scan version and checks are
the current ones, its tallies have exactly the expected counts (non-negative integers) and its
row checksum (:func:`row_check`, over every field that is used) verifies; otherwise the chunk is
scanned in full and its row rewritten.  The checksum catches an edited tally or digest; it is not
a keyed MAC (the checks hold no key), so it protects against accidents and casual edits, not
against someone who can write the table and recompute the checksum: that is write access to the
source schema, which the release tables trust everywhere.

The table holds counts and digests only: no text, no note id, no value.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from tide_core.engine.study_chunks import StudyChunk, note_identity
from tide_core.io.warehouse import Warehouse
from tide_core.store.tables import CHUNK_VERDICTS, TableNames

#: The version of the scan logic whose tallies are recorded: bump it whenever a check's logic
#: changes, and every recorded chunk is scanned again.
SCAN_VERSION = "tide-chunk-scan/1"
_DIGEST_DOMAIN = "tide-chunk-digest/1"
_ROW_DOMAIN = "tide-chunk-verdict/1"

#: Tallies of one chunk: check (or rider) name -> count name -> count.
Tallies = dict[str, dict[str, int]]


def text_sha256(text: object) -> str | None:
    """The SHA-256 of a text (None for a missing one)."""
    if text is None:
        return None
    return hashlib.sha256(str(text).encode("utf-8", "surrogatepass")).hexdigest()


def _canon(part: object) -> bytes:
    return json.dumps(part, sort_keys=True, default=str, separators=(",", ":")).encode()


class Digest:
    """An incremental SHA-256 over JSON parts (a JSON text never holds the separator byte)."""

    def __init__(self, *head: object) -> None:
        """Start a digest with ``head`` parts."""
        self._h = hashlib.sha256(_DIGEST_DOMAIN.encode())
        self.add(*head)

    def add(self, *parts: object) -> None:
        """Add parts, in order."""
        for p in parts:
            self._h.update(_canon(p))
            self._h.update(b"\x1e")

    def add_sorted(self, label: str, parts: Iterable[object]) -> None:
        """Add a labelled multiset of parts (order-free: the tallies do not depend on row order).

        Each part is written as its ``repr`` (lists and tuples of text, numbers and None: one
        exact, quoted form per value; several times faster than JSON for the many span rows);
        the items are joined by a byte that no ``repr`` holds unescaped.
        """
        items = sorted(repr(p) for p in parts)
        self.add(label, len(items))
        self._h.update("\x1f".join(items).encode("utf-8", "surrogatepass"))
        self._h.update(b"\x1e")

    def hexdigest(self) -> str:
        """The digest so far (64 hex characters)."""
        return self._h.hexdigest()


def chunk_digest(
    study: str,
    key: str,
    checks: Sequence[str],
    chunk: StudyChunk,
    released: Sequence[Mapping[str, Any]],
    spans: Sequence[Mapping[str, Any]],
    quarantine: Sequence[Mapping[str, Any]],
    cached: Mapping[str, Sequence[Any]] | None,
    riders: Sequence[tuple[str, Sequence[object]]],
) -> str:
    """The digest of everything one chunk's tallies depend on (see the module docstring).

    ``cached``: the span cache's spans of the chunk's released notes (None when no check reads
    them); ``riders``: (name, digest parts) of every rider of the pass.
    """
    d = Digest(SCAN_VERSION, study, key, list(checks))
    d.add("source", chunk.n_rows, len(chunk.null_id_rows), list(chunk.owned_ids))
    d.add_sorted("notes", note_identity(chunk.notes))
    d.add_sorted("input_quarantine", ([q.note_id, q.patient_id, q.code] for q in chunk.quarantined))
    d.add_sorted("released", ([r["note_id"], text_sha256(r["text"])] for r in released))
    d.add_sorted(
        "released_spans",
        ([s["note_id"], s["start"], s["end"], s["out_start"], s["out_end"], s["label"]] for s in spans),
    )
    d.add_sorted("quarantine", ([r["note_id"], r["code"]] for r in quarantine))
    if cached is None:
        d.add("cached_spans", None)
    else:
        d.add_sorted(
            "cached_spans", ([nid, sorted([sp.start, sp.end, sp.label] for sp in sps)] for nid, sps in cached.items())
        )
    for name, parts in riders:
        d.add("rider", name)
        d.add_sorted(name, parts)
    return d.hexdigest()


def row_check(study: str, key: str, chunk: int, digest: str, checks: str, scan_version: str, tallies: str) -> str:
    """The checksum of a recorded row over every field a later scan uses (32 hex characters)."""
    h = hashlib.sha256(_ROW_DOMAIN.encode())
    for part in (study, key, str(chunk), digest, checks, scan_version, tallies):
        h.update(len(part).to_bytes(8, "big"))
        h.update(part.encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:32]


def _tallies(text: object, expected: Mapping[str, Sequence[str]]) -> Tallies | None:
    """Recorded tallies, when they have exactly the expected counts, each a non-negative integer."""
    try:
        raw = json.loads(str(text))
    except ValueError:
        return None
    if not isinstance(raw, dict) or set(raw) != set(expected):
        return None
    out: Tallies = {}
    for name, want in expected.items():
        counts = raw[name]
        if not isinstance(counts, dict) or set(counts) != set(want):
            return None
        if not all(type(v) is int and v >= 0 for v in counts.values()):
            return None
        out[name] = dict(counts)
    return out


@dataclass
class ChunkVerdicts:
    """The recorded chunk verdicts of one (study, key) for one scan, and what the scan did with them.

    :meth:`load` reads the recorded rows (anything unreadable: none recorded), :meth:`reuse` hands
    out a chunk's tallies when its row is intact and its digest matches, :meth:`record` keeps a
    scanned chunk's row, :meth:`save` writes the partition once at the end (only when a chunk was
    scanned or a recorded row is stale: a scan that reused every chunk writes nothing).
    """

    wh: Warehouse
    names: TableNames
    study: str
    key: str
    n_reused: int = 0
    n_scanned: int = 0
    n_recorded: int = 0
    _stored: dict[int, dict[str, Any]] = field(default_factory=dict)
    _rows: dict[int, dict[str, Any]] = field(default_factory=dict)
    _stale: bool = False

    def load(self) -> ChunkVerdicts:
        """Read the recorded rows of (study, key); a row that is doubtful is not kept."""
        name = self.names.chunk_verdicts
        try:
            if not self.wh.table_exists(name):
                return self
            rows = self.wh.read_table(name, list(CHUNK_VERDICTS.names), {"study": self.study, "key": self.key})
            records = rows.to_pylist()
        except Exception:  # unreadable (an older layout, a broken table): scan every chunk, rewrite it
            self._stale = True
            return self
        by_chunk: dict[int, list[dict[str, Any]]] = {}
        for r in records:
            if isinstance(r.get("chunk"), int):
                by_chunk.setdefault(r["chunk"], []).append(r)
            else:
                self._stale = True
        for chunk, rs in by_chunk.items():
            if len(rs) == 1 and self._intact(rs[0]):
                self._stored[chunk] = rs[0]
            else:  # two rows for one chunk, or a row that does not verify
                self._stale = True
        return self

    def _intact(self, r: Mapping[str, Any]) -> bool:
        parts = [r.get(c) for c in ("digest", "checks", "scan_version", "tallies", "row_check")]
        texts = [p for p in parts if isinstance(p, str)]
        if len(texts) != len(parts):
            return False
        digest, checks, version, tallies, check = texts
        return check == row_check(self.study, self.key, r["chunk"], digest, checks, version, tallies)

    def reuse(
        self, chunk: int, n_chunks: int, digest: str, checks: Sequence[str], expected: Mapping[str, Sequence[str]]
    ) -> Tallies | None:
        """The recorded tallies of ``chunk`` when its row is intact, current and has ``digest``."""
        r = self._stored.get(chunk)
        if r is None or r["digest"] != digest or r["scan_version"] != SCAN_VERSION or r["checks"] != _checks(checks):
            return None
        tallies = _tallies(r["tallies"], expected)
        if tallies is None:
            self._stale = True
            return None
        self._rows[chunk] = dict(r)
        if r.get("n_chunks") != n_chunks:
            self._rows[chunk]["n_chunks"] = n_chunks
            self._stale = True
        self.n_reused += 1
        return tallies

    def scanned(self, chunk: int) -> None:
        """Count a chunk scanned in full without a row to record (its inputs were doubtful)."""
        self.n_scanned += 1
        self._stale = True

    def record(self, chunk: int, n_chunks: int, digest: str, checks: Sequence[str], tallies: Tallies) -> None:
        """Keep the row of a chunk scanned in full (written by :meth:`save`)."""
        self.n_scanned += 1
        self.n_recorded += 1
        names = _checks(checks)
        text = json.dumps(tallies, sort_keys=True, separators=(",", ":"))
        self._rows[chunk] = {
            "study": self.study,
            "key": self.key,
            "chunk": chunk,
            "n_chunks": n_chunks,
            "digest": digest,
            "checks": names,
            "scan_version": SCAN_VERSION,
            "tallies": text,
            "row_check": row_check(self.study, self.key, chunk, digest, names, SCAN_VERSION, text),
            "verified_at": dt.datetime.now(dt.UTC),
        }

    def save(self) -> int:
        """Replace the (study, key) partition by the rows of this scan's chunks (recorded or reused);
        rows of chunks beyond the current plan go.  Nothing is written when nothing changed."""
        if not self.n_recorded and not self._stale and set(self._rows) == set(self._stored):
            return 0
        rows = [self._rows[c] for c in sorted(self._rows)]
        table = pa.Table.from_pylist(rows, schema=CHUNK_VERDICTS)
        return self.wh.replace_partition(self.names.chunk_verdicts, table, {"study": self.study, "key": self.key})

    def metadata(self) -> dict[str, int]:
        """What a verdict covered: chunks whose recorded tallies were reused, chunks scanned in full."""
        return {"scan/n_chunks_reused": self.n_reused, "scan/n_chunks_scanned": self.n_scanned}


def _checks(checks: Sequence[str]) -> str:
    return ",".join(checks)
