"""A recognition run's chunk steps: read or plan each chunk, keep cache hits, recognize, commit.

The driver either reads each chunk and recognizes what the span cache lacks
(:meth:`RecognitionPass.driver_chunks`, in process or through the Ray recognition pipeline), or
plans each chunk from ids and exports it to a shard that a Ray worker reads and recognizes
(:meth:`RecognitionPass.shard_jobs`).  Either way :meth:`RecognitionPass.commit` commits the
chunk's cache rows with its ledger row and adds its counts to the run's totals.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from tide_core.engine.chunk_run import ChunkRun
from tide_core.engine.ledger import RunRow
from tide_core.engine.recognition import RecognitionBatch
from tide_core.engine.recognize_chunk import RecognizedChunk, ShardRecognitionJob, failed_quarantine
from tide_core.engine.recognizer_setup import KnownPHIMatches, RecognizerSet
from tide_core.engine.study_chunks import iter_chunks, iter_plans
from tide_core.io.warehouse import ShardingWarehouse
from tide_core.spans import Note, Quarantined, Span
from tide_core.store.span_cache import SpanCache, chunk_cache_writes, current_hits

log = logging.getLogger("tide.runner")

#: Recognizes notes with these recognizers and specs, one batch at a time (the executor's choice).
Recognize = Callable[[Sequence[Note], Sequence[Any], Sequence[dict[str, Any]]], Iterable[RecognitionBatch]]


@dataclass
class RecognitionPass:
    """One recognition run's chunk work and its totals."""

    run: ChunkRun
    cache: SpanCache
    rset: RecognizerSet
    fingerprint: str
    names: list[str]
    force: bool = False
    seen: KnownPHIMatches = field(default_factory=KnownPHIMatches)
    n_valid: int = 0
    n_cached: int = 0
    n_recognized: int = 0
    input_q: list[Quarantined] = field(default_factory=list)
    failed_q: list[Quarantined] = field(default_factory=list)
    by_label: Counter[str] = field(default_factory=Counter)

    def driver_chunks(self, recognize: Recognize) -> Generator[RecognizedChunk, None, None]:
        """Read each chunk here and recognize what the cache lacks (in process, or on the Ray pipeline)."""
        run, study = self.run, self.run.study
        for chunk in iter_chunks(run.src):
            with run.naming(chunk.index, chunk.n_chunks):
                notes = chunk.notes
                entries = self.cache.entries(study, chunk.owned_ids) if chunk.owned_ids else {}
                hits = set() if self.force else current_hits(entries, notes, self.fingerprint)
                todo = [n for n in notes if n.note_id not in hits]
                recognized: dict[str, list[Span]] = {}
                statuses: dict[str, tuple[str, str | None]] = {}
                if todo:
                    recs, specs = self.rset.for_patients(run.wh, {n.patient_id for n in todo}, self.seen)
                    for batch in recognize(todo, recs, specs):
                        _collect(batch, recognized, statuses)
                owned = [nid for nid in chunk.owned_ids if nid not in hits]  # hits stay as they are
                tables = run.config.tables
                writes = chunk_cache_writes(tables, study, self.fingerprint, notes, recognized, statuses, owned)
            patients = {n.note_id: n.patient_id for n in todo}
            failed = [failed_quarantine(nid, patients[nid], code) for nid, (st, code) in statuses.items() if st != "ok"]
            yield RecognizedChunk(
                chunk.index, chunk.info(), list(chunk.quarantined), failed, len(todo), len(hits), writes
            )

    def shard_jobs(self) -> Iterator[ShardRecognitionJob]:
        """Plan each chunk from its ids, export its rows to a shard; a Ray worker reads and recognizes it."""
        run, study = self.run, self.run.study
        assert run.target is not None and run.source is not None and isinstance(run.wh, ShardingWarehouse)
        for plan in iter_plans(run.src, run.source):
            with run.naming(plan.index, plan.n_chunks):
                entries = self.cache.entries(study, plan.owned_ids) if plan.owned_ids else {}
                specs = self.rset.chunk_specs(run.wh, set(plan.patient_ids), self.seen)  # workers create them
                shard = run.wh.export_shard(run.source, plan.refs, plan.row_numbers, run.target, plan.index)
            run.shards[plan.index] = shard
            yield ShardRecognitionJob(
                study,
                plan,
                shard,
                entries,
                tuple(specs),
                self.fingerprint,
                self.rset.policy,
                run.src.max_note_chars,
                run.config.batch_size,
                self.force,
            )

    def commit(self, done: RecognizedChunk) -> None:
        """Commit a recognized chunk's cache rows and ledger row; count its spans and quarantines."""
        info = done.info
        assert info is not None  # a chunk without error has its summary
        self.run.commit(
            info,
            done.staged,
            done.writes,
            n_quarantined=len(done.quarantined) + len(done.failed),
            n_recognized=done.n_recognized,
            n_cached=done.n_cached,
            recognizers=self.names,
            fingerprint=self.fingerprint,
        )
        if info.owned_ids:
            spans = self.cache.spans(self.run.study, info.owned_ids)
            self.by_label.update(s.label for note_spans in spans.values() for s in note_spans)
        self.failed_q.extend(done.failed)
        self.input_q.extend(done.quarantined)
        self.input_q.extend(info.null_id_rows)
        self.n_valid += info.n_notes
        self.n_cached += done.n_cached
        self.n_recognized += done.n_recognized
        self.run.advance(info, done.n_recognized, False)

    def known_phi_warnings(self) -> list[str]:
        """The E624 warning of each patients table that matched none of the patients looked up (logged too)."""
        out = []
        for table in self.rset.patients_tables:
            if unmatched := self.seen.warning(table):
                out.append(unmatched)
                log.warning("study %s: %s", self.run.study, unmatched)
        return out

    def run_row(self, notes_per_s: float) -> RunRow:
        """The run's ledger row."""
        run = self.run
        return RunRow(
            run.study,
            "",
            "recognition",
            run.started,
            run.run_id,
            n_in=run.n_rows,
            n_released=0,
            n_quarantined=len(self.input_q) + len(self.failed_q),
            n_spans=sum(self.by_label.values()),
            n_recognized=self.n_recognized,
            n_cached=self.n_cached,
            notes_per_s=notes_per_s,
            recognizers=self.names,
            fingerprint=self.fingerprint,
            n_chunks=run.src.n_chunks,
        )


def _collect(
    batch: RecognitionBatch, recognized: dict[str, list[Span]], statuses: dict[str, tuple[str, str | None]]
) -> None:
    for rec in batch.records:
        statuses[rec.note_id] = (rec.status, rec.error_code)
        recognized[rec.note_id] = list(batch.spans.get(rec.note_id, [])) if rec.status == "ok" else []
