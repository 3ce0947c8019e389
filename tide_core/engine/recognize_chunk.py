"""One chunk's recognition from its shard: what a Ray worker does when it reads its own chunk.

With shards (:mod:`tide_core.io.shards`) the driver sends a :class:`ShardRecognitionJob` (the
chunk's plan, its shard's path, its span-cache entries and the recognizer specs with the chunk's
known-PHI rows); :func:`recognize_shard` reads the chunk, decides it (validation, duplicates),
keeps the cache hits, recognizes the rest with the same per-note function and batches as the
local path, and builds the span cache's rows for the chunk.  A worker stages those rows; the
driver publishes them with the chunk's progress row in one commit.  Nothing that comes back
holds text: counts, note ids and quarantine reasons.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tide_core.engine.recognition import recognize_notes
from tide_core.engine.study_chunks import ChunkInfo, ChunkPlan, chunk_from_rows
from tide_core.io.shards import ShardRef
from tide_core.io.staging import StagedWrite
from tide_core.io.warehouse import PartitionWrite
from tide_core.recognizers.base import Recognizer
from tide_core.spans import Quarantined, Span
from tide_core.steps.resolve import ResolutionPolicy
from tide_core.store.span_cache import CacheEntry, chunk_cache_writes, current_hits
from tide_core.store.tables import TableNames


@dataclass(frozen=True)
class ShardRecognitionJob:
    """One chunk to recognize from its shard."""

    study: str
    plan: ChunkPlan
    shard: ShardRef
    entries: Mapping[str, CacheEntry]  # the chunk's span-cache entries (by note id)
    specs: tuple[dict[str, Any], ...]  # recognizer specs, known-PHI ones with the chunk's patients' rows
    fingerprint: str
    policy: ResolutionPolicy | Mapping[str, Any] | None
    max_note_chars: int
    batch_size: int
    force: bool = False  # recognize cache hits too

    @property
    def chunk(self) -> int:
        """The chunk's index in the run's plan."""
        return self.plan.index


@dataclass
class RecognizedChunk:
    """A recognized chunk, ready to commit: counts, quarantines, and the cache rows (in memory or staged)."""

    chunk: int
    info: ChunkInfo | None = None
    quarantined: list[Quarantined] = field(default_factory=list)  # input-validation quarantines (with an id)
    failed: list[Quarantined] = field(default_factory=list)  # notes recognition failed on
    n_recognized: int = 0
    n_cached: int = 0
    writes: list[PartitionWrite] = field(default_factory=list)
    staged: list[StagedWrite] = field(default_factory=list)
    error: BaseException | None = None  # a Ray worker's failure on this chunk (the run stops)


def failed_quarantine(note_id: str, patient_id: str, code: str | None) -> Quarantined:
    """The quarantine row of a note recognition failed on (``E500`` when no code came back).

    The message names the note id and the code only; the note is never released.
    """
    return Quarantined(
        note_id,
        patient_id,
        "recognition",
        code or "E500",
        f"note {note_id}: recognition failed ({code}); rerun after fixing the recognizer",
    )


def recognize_shard(
    job: ShardRecognitionJob,
    rows: Sequence[tuple[int, Mapping[str, Any]]],
    recognizers: Sequence[Recognizer],
    names: TableNames,
) -> RecognizedChunk:
    """Decide and recognize one chunk from its rows; its cache rows come back as writes (not yet committed)."""
    chunk = chunk_from_rows(job.plan, rows, job.max_note_chars)
    hits = set() if job.force else current_hits(job.entries, chunk.notes, job.fingerprint)
    todo = [n for n in chunk.notes if n.note_id not in hits]
    recognized: dict[str, list[Span]] = {}
    statuses: dict[str, tuple[str, str | None]] = {}
    for i in range(0, len(todo), job.batch_size):
        batch = recognize_notes(todo[i : i + job.batch_size], recognizers, job.policy)
        for rec in batch.records:
            statuses[rec.note_id] = (rec.status, rec.error_code)
            recognized[rec.note_id] = list(batch.spans.get(rec.note_id, [])) if rec.status == "ok" else []
    owned = [nid for nid in chunk.owned_ids if nid not in hits]  # hits stay as they are
    writes = chunk_cache_writes(names, job.study, job.fingerprint, chunk.notes, recognized, statuses, owned)
    patients = {n.note_id: n.patient_id for n in todo}
    failed = [failed_quarantine(nid, patients[nid], code) for nid, (st, code) in statuses.items() if st != "ok"]
    return RecognizedChunk(chunk.index, chunk.info(), list(chunk.quarantined), failed, len(todo), len(hits), writes)
