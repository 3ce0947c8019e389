"""A study's anonymization on Ray: each worker anonymizes a chunk and writes its tables itself.

With ``--executor ray`` the driver no longer anonymizes or serialises released rows.  It reads
each chunk (notes, cached spans) and sends a :class:`~tide_core.engine.release_chunk.ReleaseJob`
to a pool of long-lived ``ReleaseStage`` actors; a worker runs
:func:`~tide_core.engine.release_chunk.release_chunk` (the same function as the local path),
*stages* the chunk's ``deid_notes``, ``released_spans`` and ``quarantine`` tables itself
(:mod:`tide_core.io.staging`: a Parquet file beside a DuckDB database, or an expiring BigQuery
staging table loaded with the worker's own client) and returns only counts and the staged
handles.  The driver publishes each chunk (its three tables and its progress row) in one
transaction as it comes back, so DuckDB keeps one writer and BigQuery one atomic commit per
chunk.  Chunks finish in any order; each commit replaces exactly its own note ids.

The key ring and the run's staging target travel to the worker inside the job's payload, in
Ray's object store like the notes themselves, so one actor pool serves every run; the key ring
is never an actor constructor argument (those are kept by Ray's control store for restarts).  A
worker that dies is restarted and its chunk re-run (``max_retries``); a chunk whose retries run
out comes back as ``E518`` (a ``TideError`` raised in the worker comes back as itself) and the
runner stops the run naming that chunk; every chunk committed before stays committed (a rerun
resumes after them).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from tide_core.engine.release_chunk import ChunkOutcome, ReleaseCounts, ReleaseJob, release_chunk
from tide_core.engine.release_input import ShardReleaseJob, open_shard_job
from tide_core.errors import TideError
from tide_core.execution.ray_chunk_pool import RayChunkConfig, run_chunks
from tide_core.io.shards import read_shard
from tide_core.io.staging import StagedWrite, StagingTarget, discard, stage

if TYPE_CHECKING:
    from tide_core.anonymize.keys import KeyRing
    from tide_core.config import TideConfig


class ReleaseStage:
    """Actor stage: one pickled ``(ReleaseJob, KeyRing, StagingTarget)`` in, one pickled
    :class:`~tide_core.engine.release_chunk.ChunkOutcome` (counts and staged handles) out.

    Only the configuration is a constructor argument, so one pool serves every run and study with
    that configuration; the run's staging target travels with each job, like its key ring.
    """

    def __init__(self, config: TideConfig) -> None:
        self.config = config

    def __call__(self, batch: Mapping[str, Any]) -> dict[str, np.ndarray]:
        out = np.empty(len(batch["payload"]), dtype=object)
        for j, payload in enumerate(batch["payload"]):
            job, keyring, target = pickle.loads(bytes(payload))
            out[j] = pickle.dumps(self.release(job, keyring, target), protocol=pickle.HIGHEST_PROTOCOL)
        return {"gid": np.asarray(batch["gid"], dtype=np.int64), "payload": out}

    def release(self, job: ReleaseJob | ShardReleaseJob, keyring: KeyRing, target: StagingTarget) -> ChunkOutcome:
        if isinstance(job, ShardReleaseJob):
            opened = open_shard_job(job, read_shard(job.shard, target))  # the worker reads its own chunk
            extra: dict[str, Any] = {
                "info": opened.info,
                "digest": opened.digest,
                "fingerprints": opened.fingerprints,
                "n_ready": 0 if opened.job is None else len(opened.job.notes),
            }
            if opened.job is None:
                return ChunkOutcome(job.chunk, ReleaseCounts(), resumed=True, **extra)
            return self._release(opened.job, keyring, target, extra)
        return self._release(job, keyring, target, {})

    def _release(self, job: ReleaseJob, keyring: KeyRing, target: StagingTarget, extra: dict[str, Any]) -> ChunkOutcome:
        released = release_chunk(job, keyring, self.config)
        staged: list[StagedWrite] = []
        try:
            for name, table in released.tables(self.config):
                staged.append(stage(target, name, table, job.partition))
        except BaseException:
            discard(target, staged)  # nothing half-staged outlives a failed chunk
            raise
        return ChunkOutcome(job.chunk, released.counts, staged=staged, **extra)


#: the release pool's configuration (the same as every chunk pool's)
RayReleaseConfig = RayChunkConfig


def release_on_ray(
    jobs: Iterable[ReleaseJob | ShardReleaseJob],
    keyring: KeyRing,
    config: TideConfig,
    target: StagingTarget,
    ray_config: RayChunkConfig | None = None,
) -> Iterator[ChunkOutcome]:
    """Release every job on a Ray actor pool; yield each chunk's staged tables as it finishes.

    ``jobs`` is consumed lazily: at most two chunks per actor are read and in flight at once, so
    the driver holds a bounded number of chunks whatever the study size.
    """
    rc = ray_config or RayChunkConfig(address=config.ray_address)
    payloads = ((job.chunk, pickle.dumps((job, keyring, target), protocol=pickle.HIGHEST_PROTOCOL)) for job in jobs)
    for chunk, out in run_chunks(ReleaseStage, {"config": config}, payloads, rc, "anonymization", "E518"):
        if isinstance(out, TideError):
            yield ChunkOutcome(chunk, None, error=out)
            return  # the caller stops the run; the chunks still queued are cancelled
        released: ChunkOutcome = pickle.loads(out)
        yield released
