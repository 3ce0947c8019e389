"""An anonymization run's chunk steps: read each chunk and its cached spans, keep, release, commit.

The driver either reads each chunk and its span-cache entries and hands on a
:class:`~tide_core.engine.release_chunk.ReleaseJob` (:meth:`ReleasePass.jobs`), or plans each chunk
from ids and exports it to a shard that a Ray worker reads and releases
(:meth:`ReleasePass.shard_jobs`).  Each released chunk is committed with its ledger row by
:meth:`ReleasePass.commit`.

A chunk is **kept** instead of released when its digest (input, spans, key, settings) equals the
one its latest ledger row records (:func:`~tide_core.engine.ledger.committed_chunks`: an earlier
finished run, or the interrupted run this one resumes) *and* the candidate still holds exactly the
rows committed then (:func:`read_committed`: every row's hash verified against its content, and
the digest of the chunk's rows equal to the recorded one).  A kept chunk is counted from its
committed rows, never anonymized again; rows another run stamped are restamped with this run's
``released_at`` (one commit with the chunk's ledger row; the row hash does not cover the stamp),
so a candidate still carries one stamp.  A chunk whose rows were edited or deleted is released.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from tide_core.config import TideConfig
from tide_core.engine.chunk_run import REFRESH_EVERY_CHUNKS, ChunkRun
from tide_core.engine.ledger import CommittedChunk, RunRow, chunk_fingerprint
from tide_core.engine.release_chunk import ChunkOutcome, ReleaseCounts, ReleaseJob, rows_digest
from tide_core.engine.release_input import ShardReleaseJob, cache_quarantines, release_digest, release_job
from tide_core.engine.study_chunks import ChunkInfo, iter_chunks, iter_plans
from tide_core.errors import InputError
from tide_core.io.warehouse import PartitionWrite, RefreshableWarehouse, ShardingWarehouse, Warehouse
from tide_core.spans import Quarantined
from tide_core.store import tables
from tide_core.store.release_content import row_hash
from tide_core.store.span_cache import SpanCache

log = logging.getLogger("tide.runner")


@dataclass
class ReleaseTotals(ReleaseCounts):
    """A run's release counts, plus the recognition fingerprints it used."""

    fingerprints: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class CommittedRows:
    """A chunk's rows as the candidate holds them now: the released notes, the rows' digest, the counts.

    ``rows`` is ``""`` when a released row's stored hash is not the hash of its content (edited
    after anonymization): such a chunk is never kept.
    """

    deid: list[dict[str, Any]]
    rows: str
    counts: ReleaseCounts


def read_committed(wh: Warehouse, config: TideConfig, study: str, key: str, ids: Sequence[str]) -> CommittedRows:
    """Read one chunk's committed rows (its owned note ids) from the candidate's three tables.

    The counts are what the chunk adds to the run's totals (as a full release of it would); the digest is
    :func:`~tide_core.engine.release_chunk.rows_digest` of what is there now, to compare with the
    one recorded when the chunk was committed.
    """
    names = config.tables
    if not ids:  # a chunk of rows without note ids only: nothing of its own is committed
        return CommittedRows([], rows_digest([], [], []), ReleaseCounts())
    if not all(wh.table_exists(n) for n in (names.deid_notes, names.released_spans, names.quarantine)):
        return CommittedRows([], "", ReleaseCounts())  # dropped meanwhile: never kept
    where = {"study": study, "key": key, "note_id": list(ids)}
    deid = wh.read_table(names.deid_notes, None, where).to_pylist()
    spans = wh.read_table(names.released_spans, None, where).to_pylist()
    quarantine = wh.read_table(names.quarantine, None, where).to_pylist()
    codes = [r["code"] for r in quarantine]
    counts = ReleaseCounts(
        n_released=len(deid),
        n_quarantined=len(codes),
        n_spans=len(spans),
        quarantined_by_code=Counter(codes),
        by_label=Counter(r["label"] for r in spans),
        operators=Counter(r["operator"] for r in spans),
    )
    sealed = all(r["row_hash"] and r["row_hash"] == row_hash(study, key, r) for r in deid)
    return CommittedRows(deid, rows_digest(deid, spans, quarantine) if sealed else "", counts)


@dataclass
class ReleasePass:
    """One anonymization run's chunk work and its totals.

    ``done``: chunk index -> its latest committed state (:func:`~tide_core.engine.ledger.committed_chunks`);
    ``stamp``: the run's ``released_at`` (an interrupted run's start when this run resumes it).
    """

    run: ChunkRun
    cache: SpanCache
    key_id: str
    settings: list[Any]
    done: dict[int, CommittedChunk]
    stamp: dt.datetime
    anonymizer: str
    t: ReleaseTotals = field(default_factory=ReleaseTotals)
    null_id_rows: list[Quarantined] = field(default_factory=list)
    #: chunk index -> (chunk summary, digest, notes worked): ``None``s come back with a sharded chunk
    pending: dict[int, tuple[ChunkInfo | None, str | None, int]] = field(default_factory=dict)
    n_kept: int = 0  # chunks kept (committed rows reused), not anonymized by this run
    n_restamped: int = 0  # of those, chunks whose rows this run restamped

    def _committed(self, index: int, ids: Sequence[str], prev: CommittedChunk | None) -> CommittedRows | None:
        """The chunk's committed rows when they are still exactly what ``prev`` recorded, else ``None``."""
        if prev is None or not prev.rows:
            return None
        run = self.run
        now = read_committed(run.wh, run.config, run.study, run.key, ids)
        if now.rows != prev.rows:
            log.info(
                "anonymization of %s/%s: chunk %d/%d: the candidate's rows of its notes are not those its "
                "last commit recorded (edited, deleted or chunked differently): releasing it again",
                run.study,
                run.key,
                index + 1,
                run.src.n_chunks,
            )
            return None
        return now

    def _keep(self, info: ChunkInfo, prev: CommittedChunk, rows: CommittedRows) -> None:
        """Count a kept chunk from its committed rows; restamp rows another run stamped (with a ledger row)."""
        run = self.run
        if prev.started != self.stamp or any(r["released_at"] != self.stamp for r in rows.deid):
            deid = [dict(r, released_at=self.stamp) for r in rows.deid]
            where = {"study": run.study, "key": run.key, "note_id": list(info.owned_ids)}
            c = rows.counts
            run.commit(
                info,
                [],
                [PartitionWrite(run.config.tables.deid_notes, tables.to_table("deid_notes", deid), where)],
                self.stamp,
                n_released=c.n_released,
                n_quarantined=c.n_quarantined,
                n_spans=c.n_spans,
                n_cached=1,
                anonymizer=prev.anonymizer,
                fingerprint=chunk_fingerprint(prev.digest, prev.rows),
            )
            self.n_restamped += 1
            if self.n_restamped % REFRESH_EVERY_CHUNKS == 0 and isinstance(run.wh, RefreshableWarehouse):
                run.wh.refresh()
        self.t.add(rows.counts)
        self.n_kept += 1
        self._advance(info, 0, True)

    def _advance(self, info: ChunkInfo, worked: int, resumed: bool) -> None:
        self.null_id_rows.extend(info.null_id_rows)
        self.run.advance(info, worked, resumed)

    def jobs(self) -> Iterator[ReleaseJob]:
        """Read each chunk and its cached spans; keep unchanged committed chunks; hand on the rest."""
        run, study, cache = self.run, self.run.study, self.cache
        for chunk in iter_chunks(run.src):
            with run.naming(chunk.index, chunk.n_chunks):
                entries = cache.entries(study, chunk.owned_ids) if chunk.owned_ids else {}
                ready, cache_q = cache_quarantines(study, chunk.notes, entries)
                spans = cache.spans(study, [n.note_id for n in ready]) if ready else {}
                self.t.fingerprints.update(entries[n.note_id].fingerprint for n in ready)
                digest = release_digest(self.key_id, self.settings, chunk, entries, spans)
                prev = self.done.get(chunk.index)
                if prev is not None and prev.digest == digest:
                    rows = self._committed(chunk.index, chunk.owned_ids, prev)
                    if rows is not None:
                        self._keep(chunk.info(), prev, rows)
                        continue
            self.pending[chunk.index] = (chunk.info(), digest, len(ready))
            yield release_job(study, run.key, chunk, entries, ready, cache_q, spans, self.stamp)

    def shard_jobs(self) -> Iterator[ShardReleaseJob]:
        """Plan each chunk from note ids, export its rows to a shard; the worker reads and decides it.

        A chunk whose committed rows are unchanged goes out with its committed digest: the worker
        that finds the same digest sends it back unreleased, and :meth:`commit` keeps it.
        """
        run, study = self.run, self.run.study
        assert run.target is not None and run.source is not None and isinstance(run.wh, ShardingWarehouse)
        for plan in iter_plans(run.src, run.source):
            with run.naming(plan.index, plan.n_chunks):
                entries = self.cache.entries(study, plan.owned_ids) if plan.owned_ids else {}
                recognized = [nid for nid, e in entries.items() if e.status == "ok"]
                span_rows = self.cache.span_rows(study, recognized)  # the worker builds the spans
                prev = self.done.get(plan.index)
                unchanged = self._committed(plan.index, plan.owned_ids, prev) is not None
                shard = run.wh.export_shard(run.source, plan.refs, plan.row_numbers, run.target, plan.index)
            self.pending[plan.index] = (None, None, 0)
            run.shards[plan.index] = shard
            yield ShardReleaseJob(
                study,
                run.key,
                plan,
                shard,
                entries,
                span_rows,
                self.key_id,
                tuple(self.settings),
                run.src.max_note_chars,
                prev.digest if prev is not None and unchanged else None,
                self.stamp,
            )

    def commit(self, outcome: ChunkOutcome) -> None:
        """Commit a released chunk with its ledger row (a chunk a worker found unchanged is kept)."""
        info, digest, worked = self.pending.pop(outcome.chunk)
        if outcome.info is not None:  # the worker read the chunk from its shard
            info, digest, worked = outcome.info, outcome.digest, outcome.n_ready
            self.t.fingerprints.update(outcome.fingerprints)
        assert info is not None and digest is not None  # known to the driver or sent back
        if outcome.resumed:
            prev = self.done[outcome.chunk]
            rows = self._committed(info.index, info.owned_ids, prev)
            if rows is None:  # checked before the chunk went out: edited while the worker read it
                raise InputError(
                    "E615",
                    f"the committed rows of chunk {info.index + 1}/{info.n_chunks} changed during the run",
                    hint="rerun: a chunk whose committed rows changed is anonymized again",
                    terminal=False,
                )
            self._keep(info, prev, rows)
            return
        c = outcome.counts
        assert c is not None  # an outcome without error has its counts
        self.anonymizer = c.anonymizer
        self.run.commit(
            info,
            outcome.staged,
            outcome.writes,
            self.stamp,
            n_released=c.n_released,
            n_quarantined=c.n_quarantined,
            n_spans=c.n_spans,
            n_cached=0,
            anonymizer=c.anonymizer,
            fingerprint=chunk_fingerprint(digest, c.rows),
        )
        self.t.add(c)
        self._advance(info, worked, False)

    def run_row(self, notes_per_s: float) -> RunRow:
        """The run's ledger row (its fingerprint: the recognition fingerprints it released from).

        ``n_cached``: chunks kept from their committed rows (not anonymized by this run); the run
        anonymized ``n_chunks - n_cached`` chunks.
        """
        run, t = self.run, self.t
        return RunRow(
            run.study,
            run.key,
            "anonymization",
            run.started,
            run.run_id,
            n_in=run.n_rows,
            n_released=t.n_released,
            n_quarantined=t.n_quarantined,
            n_spans=sum(t.by_label.values()),
            n_recognized=0,
            n_cached=self.n_kept,
            notes_per_s=notes_per_s,
            recognizers=[],
            anonymizer=self.anonymizer,
            fingerprint=",".join(sorted(t.fingerprints)),
            n_chunks=run.src.n_chunks,
        )
