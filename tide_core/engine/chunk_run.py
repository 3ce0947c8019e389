"""The chunk-run loop that recognition and anonymization share: commit, progress, kill-safe resume.

A study run streams its input in chunks (:mod:`tide_core.engine.study_chunks`).  Each chunk's
outcome (worked in process or by a Ray worker that staged its tables) is committed in one
transaction together with its ``<stage>.chunk`` ledger row (:mod:`tide_core.engine.ledger`); a
chunk that an interrupted run committed is skipped and only counted.  :class:`ChunkRun` holds
what every run needs around that: the run id and start, the progress bar and hook, the staging
target and shards of a Ray run, a name on the exception of a failed chunk, the periodic DuckDB
refresh and the clean-up when the run ends (queued chunks cancelled, staged files removed).
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from tqdm import tqdm

from tide_core.chunk_progress import ChunkProgress, ProgressHook
from tide_core.config import TideConfig
from tide_core.engine.heap import trim_heap
from tide_core.engine.ledger import chunk_row, new_run_id, now, progress_write
from tide_core.engine.study_chunks import ChunkInfo, StudySource
from tide_core.errors import ConfigError
from tide_core.io.shards import ShardRef, remove_shard
from tide_core.io.staging import StagedWrite, StagingTarget, StagingWarehouse, discard
from tide_core.io.warehouse import PartitionWrite, RefreshableWarehouse, ShardingWarehouse, ShardSource, Warehouse

log = logging.getLogger("tide.runner")

#: Committed chunks between two reopenings of a DuckDB connection: DuckDB keeps memory for the
#: database it works on beyond its capped buffer pool, which grew a 200k-note run's memory with the
#: study; reopening hands it back (a checkpoint, well under a second here).
REFRESH_EVERY_CHUNKS = 10


class Outcome(Protocol):
    """What comes back for one chunk: its index, and a worker's error (the run stops on it)."""

    @property
    def chunk(self) -> int:
        """The chunk's index in the run's plan."""
        ...

    @property
    def error(self) -> BaseException | None:
        """The worker's exception, re-raised in the driver; ``None`` when the chunk succeeded."""
        ...


OutcomeT = TypeVar("OutcomeT", bound=Outcome)


def staging_target(
    wh: Warehouse, config: TideConfig, run_id: str, fallback: str = "anonymizing in the driver"
) -> StagingTarget | None:
    """Where Ray workers stage a run's released tables.

    ``None``: the driver releases in process (the local executor, or a warehouse that cannot take
    staged tables: same rows, one process).
    """
    if config.executor != "ray":
        return None
    if not isinstance(wh, StagingWarehouse):
        log.warning("warehouse %s cannot publish tables staged by Ray workers: %s", wh.url, fallback)
        return None
    return wh.staging_target().for_run(run_id)


def publish(wh: Warehouse, staged: Sequence[StagedWrite], writes: Sequence[PartitionWrite]) -> None:
    """Commit a chunk: staged tables (Ray workers wrote them) and in-memory writes, all or nothing."""
    if staged:
        if not isinstance(wh, StagingWarehouse):  # staging_target refused such a warehouse already
            raise ConfigError("E374", f"warehouse {wh.url} cannot publish staged tables")
        wh.publish(staged, writes)
    else:
        wh.replace_partitions(writes)


def chunk_failed(exc: BaseException, stage: str, study: str, index: int, n_chunks: int) -> None:
    """Name the failed chunk (on the exception and in the log); committed chunks stay committed."""
    where = f"{stage} of study {study}: chunk {index + 1}/{n_chunks} failed"
    exc.add_note(f"{where}; earlier chunks are committed, a rerun resumes from this chunk")
    log.error("%s (%s)", where, type(exc).__name__)


@dataclass
class ChunkRun:
    """One study run over its chunks (``key`` is ``""`` for recognition)."""

    wh: Warehouse
    config: TideConfig
    study: str
    key: str
    stage: str
    src: StudySource
    on_chunk: ProgressHook | None = None
    progress: bool = True
    run_id: str = field(default_factory=new_run_id)
    started: dt.datetime = field(default_factory=now)
    t0: float = field(default_factory=time.perf_counter)
    n_rows: int = 0  # input rows decided so far (committed or resumed chunks)
    n_committed: int = 0
    target: StagingTarget | None = None  # where Ray workers stage this run's tables
    source: ShardSource | None = None  # the study's rows, open for export to shards
    shards: dict[int, ShardRef] = field(default_factory=dict)  # chunk index -> its shard, until committed
    bar: tqdm[Any] | None = None  # the progress bar, while the chunks are drained

    def stage_on_ray(self, fallback: str, *, shards_only: bool = False) -> None:
        """Set the staging target of a Ray run, and open the study for shards where the warehouse can.

        ``shards_only``: no target unless the chunks go out as shards too.
        """
        self.target = staging_target(self.wh, self.config, self.run_id, fallback)
        if self.target is not None and isinstance(self.wh, ShardingWarehouse):
            self.source = self.wh.open_shards(self.src.table, self.src.where)
        elif shards_only:
            self.target = None

    @contextmanager
    def naming(self, index: int, n_chunks: int | None = None) -> Iterator[None]:
        """Name chunk ``index`` on any exception raised inside (committed chunks stay committed)."""
        try:
            yield
        except Exception as exc:
            chunk_failed(exc, self.stage, self.study, index, self.src.n_chunks if n_chunks is None else n_chunks)
            raise

    def commit(
        self,
        info: ChunkInfo,
        staged: Sequence[StagedWrite],
        writes: Sequence[PartitionWrite],
        started: dt.datetime | None = None,
        **counts: Any,
    ) -> None:
        """Commit a chunk's tables with its ledger row (``counts``), in one transaction."""
        row = chunk_row(self.run_id, self.study, self.key, self.stage, started or self.started, info, **counts)
        publish(self.wh, staged, [*writes, progress_write(self.config, row)])

    def advance(self, info: ChunkInfo, worked: int, resumed: bool) -> None:
        """Count a committed (or resumed) chunk: progress bar, DuckDB refresh, the progress hook."""
        n = info.n_rows + len(info.null_id_rows)
        self.n_rows += n
        if self.bar is not None:
            self.bar.update(n)
        if not resumed:
            self.n_committed += 1
            if self.n_committed % REFRESH_EVERY_CHUNKS == 0 and isinstance(self.wh, RefreshableWarehouse):
                self.wh.refresh()
            trim_heap()  # the committed chunk's objects are freed: hand their pages back
        if self.on_chunk is not None:
            where = (self.stage, self.study, self.key, info.index, info.n_chunks)
            seconds = time.perf_counter() - self.t0
            self.on_chunk(
                ChunkProgress(*where, info.n_notes, worked, resumed, self.n_rows, self.src.n_source_rows, seconds)
            )

    def drain(self, outcomes: Generator[OutcomeT, None, None], handle: Callable[[OutcomeT], None]) -> None:
        """Hand each chunk's outcome to ``handle`` as it comes; the first failure stops the run.

        Whatever happens, queued chunks are cancelled, shards removed and staged files discarded.
        """
        what = f"{self.study}/{self.key}" if self.key else self.study
        verb = "recognize" if self.stage == "recognition" else "anonymize"
        self.bar = tqdm(
            total=self.src.n_source_rows, desc=f"{verb} {what}", unit="row", disable=not self.progress, leave=False
        )
        try:
            for outcome in outcomes:
                try:
                    with self.naming(outcome.chunk):
                        if outcome.error is not None:
                            raise outcome.error
                        handle(outcome)
                finally:
                    if (shard := self.shards.pop(outcome.chunk, None)) is not None:
                        remove_shard(shard)
        finally:
            outcomes.close()  # a failed run: cancel the chunks still queued on Ray workers
            self.bar.close()
            self.bar = None
            if self.source is not None:
                assert isinstance(self.wh, ShardingWarehouse)
                self.wh.close_shards(self.source)  # BigQuery: the run's copy of the study
            if self.target is not None:
                discard(self.target)  # staged files and shards of chunks that never committed (a failed run)

    @property
    def seconds(self) -> float:
        """Wall-clock seconds since the run started."""
        return time.perf_counter() - self.t0
