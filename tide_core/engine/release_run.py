"""An anonymization run's chunk steps: read each chunk and its cached spans, skip, release, commit.

The driver either reads each chunk and its span-cache entries and hands on a
:class:`~tide_core.engine.release_chunk.ReleaseJob` (:meth:`ReleasePass.jobs`), or plans each chunk
from ids and exports it to a shard that a Ray worker reads and releases
(:meth:`ReleasePass.shard_jobs`).  A chunk whose digest (input, spans, key, settings) equals the
one an interrupted run committed is skipped and its committed rows counted.  Each released chunk
is committed with its ledger row by :meth:`ReleasePass.commit`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from tide_core.config import TideConfig
from tide_core.engine.chunk_run import ChunkRun
from tide_core.engine.ledger import RunRow
from tide_core.engine.release_chunk import ChunkOutcome, ReleaseCounts, ReleaseJob
from tide_core.engine.release_input import ShardReleaseJob, cache_quarantines, release_digest, release_job
from tide_core.engine.study_chunks import ChunkInfo, iter_chunks, iter_plans
from tide_core.io.warehouse import ShardingWarehouse, Warehouse
from tide_core.spans import Quarantined
from tide_core.store.span_cache import SpanCache


@dataclass
class ReleaseTotals(ReleaseCounts):
    """A run's release counts, plus the recognition fingerprints it used."""

    fingerprints: set[str] = field(default_factory=set)


def count_committed(
    wh: Warehouse, config: TideConfig, study: str, key: str, ids: Sequence[str], t: ReleaseCounts
) -> None:
    """Add a resumed chunk's committed rows to the totals (read back, filtered to its notes)."""
    if not ids:
        return
    where = {"study": study, "key": key, "note_id": list(ids)}
    t.n_released += wh.count(config.tables.deid_notes, where)
    for r in wh.read_table(config.tables.released_spans, ["label", "operator"], where).to_pylist():
        t.by_label[r["label"]] += 1
        t.operators[r["operator"]] += 1
    codes = wh.read_table(config.tables.quarantine, ["code"], where).column("code").to_pylist()
    t.n_quarantined += len(codes)
    t.quarantined_by_code.update(codes)


@dataclass
class ReleasePass:
    """One anonymization run's chunk work and its totals.

    ``done``: chunk index -> the digest an interrupted run committed it under; ``stamp``: the
    run's ``released_at`` (an interrupted run's start when this run resumes it).
    """

    run: ChunkRun
    cache: SpanCache
    key_id: str
    settings: list[Any]
    done: dict[int, str]
    stamp: dt.datetime
    anonymizer: str
    t: ReleaseTotals = field(default_factory=ReleaseTotals)
    null_id_rows: list[Quarantined] = field(default_factory=list)
    #: chunk index -> (chunk summary, digest, notes worked): ``None``s come back with a sharded chunk
    pending: dict[int, tuple[ChunkInfo | None, str | None, int]] = field(default_factory=dict)

    def _resumed(self, info: ChunkInfo) -> None:
        run = self.run
        count_committed(run.wh, run.config, run.study, run.key, info.owned_ids, self.t)
        self._advance(info, 0, True)

    def _advance(self, info: ChunkInfo, worked: int, resumed: bool) -> None:
        self.null_id_rows.extend(info.null_id_rows)
        self.run.advance(info, worked, resumed)

    def jobs(self) -> Iterator[ReleaseJob]:
        """Read each chunk and its cached spans; skip committed chunks; hand on the rest."""
        run, study, cache = self.run, self.run.study, self.cache
        for chunk in iter_chunks(run.src):
            with run.naming(chunk.index, chunk.n_chunks):
                entries = cache.entries(study, chunk.owned_ids) if chunk.owned_ids else {}
                ready, cache_q = cache_quarantines(study, chunk.notes, entries)
                spans = cache.spans(study, [n.note_id for n in ready]) if ready else {}
                self.t.fingerprints.update(entries[n.note_id].fingerprint for n in ready)
                digest = release_digest(self.key_id, self.settings, chunk, entries, spans)
                if self.done.get(chunk.index) == digest:
                    self._resumed(chunk.info())
                    continue
            self.pending[chunk.index] = (chunk.info(), digest, len(ready))
            yield release_job(study, run.key, chunk, entries, ready, cache_q, spans, self.stamp)

    def shard_jobs(self) -> Iterator[ShardReleaseJob]:
        """Plan each chunk from note ids, export its rows to a shard; the worker reads and decides it."""
        run, study = self.run, self.run.study
        assert run.target is not None and run.source is not None and isinstance(run.wh, ShardingWarehouse)
        for plan in iter_plans(run.src, run.source):
            with run.naming(plan.index, plan.n_chunks):
                entries = self.cache.entries(study, plan.owned_ids) if plan.owned_ids else {}
                recognized = [nid for nid, e in entries.items() if e.status == "ok"]
                span_rows = self.cache.span_rows(study, recognized)  # the worker builds the spans
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
                self.done.get(plan.index),
                self.stamp,
            )

    def commit(self, outcome: ChunkOutcome) -> None:
        """Commit a released chunk with its ledger row (a chunk a worker found committed is counted)."""
        info, digest, worked = self.pending.pop(outcome.chunk)
        if outcome.info is not None:  # the worker read the chunk from its shard
            info, digest, worked = outcome.info, outcome.digest, outcome.n_ready
            self.t.fingerprints.update(outcome.fingerprints)
        assert info is not None and digest is not None  # known to the driver or sent back
        if outcome.resumed:
            self._resumed(info)
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
            anonymizer=c.anonymizer,
            fingerprint=digest,
        )
        self.t.add(c)
        self._advance(info, worked, False)

    def run_row(self, notes_per_s: float) -> RunRow:
        """The run's ledger row (its fingerprint: the recognition fingerprints it released from)."""
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
            n_cached=0,
            notes_per_s=notes_per_s,
            recognizers=[],
            anonymizer=self.anonymizer,
            fingerprint=",".join(sorted(t.fingerprints)),
            n_chunks=run.src.n_chunks,
        )
