"""A chunk's release input: which notes the span cache vouches for, and the chunk's digest.

Both execution paths use these.  The driver decides them for a chunk it read itself; with shards
(:mod:`tide_core.io.shards`) a Ray worker reads its chunk, decides them the same way
(:func:`open_shard_job`) and compares the digest with the one an interrupted run committed, so
the driver never holds the chunk's text.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tide_core.engine.release_chunk import ReleaseJob
from tide_core.engine.study_chunks import ChunkInfo, ChunkPlan, StudyChunk, chunk_from_rows, digest, note_identity
from tide_core.io.shards import ShardRef
from tide_core.spans import Note, Quarantined, Span
from tide_core.store.span_cache import CacheEntry, SpanRows, effective_spans, text_sha256


def cache_quarantines(
    study: str, notes: Sequence[Note], entries: Mapping[str, CacheEntry]
) -> tuple[list[Note], list[Quarantined]]:
    """Notes ready to anonymize, and those the span cache cannot vouch for (fail closed)."""
    ready: list[Note] = []
    quarantined: list[Quarantined] = []
    for n in notes:
        e = entries.get(n.note_id)
        if e is None:
            quarantined.append(
                Quarantined(
                    n.note_id,
                    n.patient_id,
                    "anonymization",
                    "E401",
                    f"note {n.note_id} has no cached spans; run recognition for study {study}",
                )
            )
        elif e.status != "ok":
            quarantined.append(
                Quarantined(
                    n.note_id,
                    n.patient_id,
                    "recognition",
                    e.error_code or "E402",
                    f"note {n.note_id}: recognition failed ({e.error_code}); not released",
                )
            )
        elif e.text_sha256 != text_sha256(n.text):
            quarantined.append(
                Quarantined(
                    n.note_id,
                    n.patient_id,
                    "anonymization",
                    "E403",
                    f"note {n.note_id} changed since recognition; rerun recognition",
                )
            )
        else:
            ready.append(n)
    return ready, quarantined


def release_digest(
    key_id: str,
    settings: Sequence[object],
    chunk: StudyChunk,
    entries: Mapping[str, CacheEntry],
    spans: Mapping[str, Sequence[Span]],
) -> str:
    """What decides a chunk's released rows, hashed: a rerun skips a committed chunk with the same digest."""
    return digest(
        [
            key_id,
            list(settings),
            note_identity(chunk.notes),
            [[q.note_id, q.code, q.row_number] for q in chunk.quarantined],
            sorted([nid, e.fingerprint, e.status, e.text_sha256] for nid, e in entries.items()),
            sorted([nid, [[s.start, s.end, s.label] for s in ss]] for nid, ss in spans.items()),
        ]
    )


def release_job(
    study: str,
    key: str,
    chunk: StudyChunk,
    entries: Mapping[str, CacheEntry],
    ready: Sequence[Note],
    quarantined: Sequence[Quarantined],
    spans: Mapping[str, Sequence[Span]],
    stamp: dt.datetime | None = None,
) -> ReleaseJob:
    """The release job of one decided chunk: the notes the span cache vouches for and their spans.

    ``quarantined`` are the chunk's input and cache quarantines; the job owns all of the chunk's
    note ids, so its commit replaces their rows whether they are released or quarantined.
    """
    return ReleaseJob(
        study,
        key,
        chunk.index,
        list(ready),
        spans,
        {n.note_id: entries[n.note_id].fingerprint for n in ready},
        list(chunk.quarantined) + list(quarantined),
        chunk.owned_ids,
        stamp,
    )


@dataclass(frozen=True)
class ShardReleaseJob:
    """One chunk to release from its shard: the plan, the shard's path and the chunk's cache rows.

    ``span_rows`` holds the cache rows of every note the cache has as recognized: the worker turns
    them into spans (:func:`~tide_core.store.span_cache.effective_spans`, reviewer decisions
    applied) for the notes it finds ready, so the driver never builds span objects;
    ``committed`` is the digest an interrupted run committed for this chunk, if any.
    """

    study: str
    key: str
    plan: ChunkPlan
    shard: ShardRef
    entries: Mapping[str, CacheEntry]
    span_rows: SpanRows  # the cache's span and decision rows of the chunk's recognized notes
    key_id: str
    settings: tuple[object, ...]
    max_note_chars: int
    committed: str | None = None
    stamp: dt.datetime | None = None  # the run's one released_at stamp

    @property
    def chunk(self) -> int:
        """The chunk's index in the run's plan."""
        return self.plan.index


@dataclass(frozen=True)
class OpenedShard:
    """A shard job decided in the worker: the chunk's summary, digest, and the job (None: already committed)."""

    info: ChunkInfo
    digest: str
    fingerprints: frozenset[str]
    job: ReleaseJob | None


def open_shard_job(job: ShardReleaseJob, rows: Sequence[tuple[int, Mapping[str, Any]]]) -> OpenedShard:
    """Decide a shard job's chunk from its rows (read by the worker) exactly as the driver decides a chunk it read."""
    chunk = chunk_from_rows(job.plan, rows, job.max_note_chars)
    ready, cache_q = cache_quarantines(job.study, chunk.notes, job.entries)
    cached = effective_spans(job.span_rows, job.entries, {n.note_id for n in ready})
    spans = {n.note_id: cached[n.note_id] for n in ready}
    chunk_digest = release_digest(job.key_id, job.settings, chunk, job.entries, spans)
    fingerprints = frozenset(job.entries[n.note_id].fingerprint for n in ready)
    if job.committed == chunk_digest:
        return OpenedShard(chunk.info(), chunk_digest, fingerprints, None)
    release = release_job(job.study, job.key, chunk, job.entries, ready, cache_q, spans, job.stamp)
    return OpenedShard(chunk.info(), chunk_digest, fingerprints, release)
