"""A study's recognition on Ray with workers that read their own chunk and stage its cache rows.

Used when the warehouse exports shards (DuckDB, :mod:`tide_core.io.shards`): the driver plans
each chunk from its note ids and sends a :class:`~tide_core.engine.recognize_chunk.ShardRecognitionJob`
to a pool of long-lived ``ShardRecognizeStage`` actors (one per CPU, at most two chunks per actor
in flight).  The worker reads the chunk from its shard, recognizes the notes the span cache does
not already hold (:func:`~tide_core.engine.recognize_chunk.recognize_shard`), stages the chunk's
``tide_spans`` and ``tide_recognized_notes`` rows (:mod:`tide_core.io.staging`) and returns
counts, note ids and quarantine reasons.  The driver publishes each chunk with its progress row
in one commit, so DuckDB keeps its one writer.

Recognizers are created once per actor and kept (a model is loaded once); a known-PHI spec,
which carries the chunk's patients' rows, is created per chunk.  A worker that dies is restarted
and its chunk re-run (``max_retries``); a chunk whose retries run out comes back as ``E519``
(a ``TideError`` raised in the worker comes back as itself).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from ray import cloudpickle

from tide_core.engine.recognize_chunk import RecognizedChunk, ShardRecognitionJob, recognize_shard
from tide_core.errors import TideError
from tide_core.execution.ray_chunk_pool import RayChunkConfig, run_chunks
from tide_core.execution.ray_pipeline import _factories
from tide_core.io.shards import read_shard
from tide_core.io.staging import StagedWrite, StagingTarget, discard, stage
from tide_core.recognizers import registry

if TYPE_CHECKING:
    from tide_core.config import TideConfig


class ShardRecognizeStage:
    """Actor stage: one pickled ``(ShardRecognitionJob, factories, StagingTarget)`` in, one pickled
    :class:`~tide_core.engine.recognize_chunk.RecognizedChunk` (counts and staged handles) out."""

    def __init__(self, config: TideConfig) -> None:
        self.config = config
        self._made: dict[str, Any] = {}  # spec (without rows) -> created recognizer, kept for later chunks

    def __call__(self, batch: Mapping[str, Any]) -> dict[str, np.ndarray]:
        out = np.empty(len(batch["payload"]), dtype=object)
        for j, payload in enumerate(batch["payload"]):
            job, factories, target = cloudpickle.loads(bytes(payload))
            out[j] = cloudpickle.dumps(self.recognize(job, factories, target))
        return {"gid": np.asarray(batch["gid"], dtype=np.int64), "payload": out}

    def _recognizers(self, job: ShardRecognitionJob, factories: Mapping[str, Callable[..., Any]]) -> list[Any]:
        for name, factory in factories.items():
            if name not in registry.names():
                registry.register(name, factory)
        recs = []
        for spec in job.specs:
            if "rows" in spec:  # a chunk's known-PHI rows: this chunk only
                recs.append(registry.create(dict(spec)))
                continue
            key = json.dumps(spec, sort_keys=True, default=str)
            if key not in self._made:
                self._made[key] = registry.create(dict(spec))
            recs.append(self._made[key])
        return recs

    def recognize(
        self, job: ShardRecognitionJob, factories: Mapping[str, Callable[..., Any]], target: StagingTarget
    ) -> RecognizedChunk:
        rows = read_shard(job.shard, target)  # the worker reads its own chunk
        done = recognize_shard(job, rows, self._recognizers(job, factories), self.config.tables)
        staged: list[StagedWrite] = []
        try:
            for w in done.writes:
                staged.append(stage(target, w.name, w.table, w.partition))
        except BaseException:
            discard(target, staged)  # nothing half-staged outlives a failed chunk
            raise
        done.writes, done.staged = [], staged
        return done


def recognize_shards_on_ray(
    jobs: Iterable[ShardRecognitionJob],
    config: TideConfig,
    target: StagingTarget,
    ray_config: RayChunkConfig | None = None,
) -> Iterator[RecognizedChunk]:
    """Recognize every shard job on a Ray actor pool; yield each chunk's staged rows as it finishes.

    ``jobs`` is consumed lazily (at most two chunks per actor in flight), so the driver plans and
    exports a bounded number of chunks ahead of the workers.
    """
    rc = ray_config or RayChunkConfig(address=config.ray_address)
    payloads = ((job.chunk, cloudpickle.dumps((job, _factories(list(job.specs)), target))) for job in jobs)
    for chunk, out in run_chunks(ShardRecognizeStage, {"config": config}, payloads, rc, "recognition", "E519"):
        if isinstance(out, TideError):
            yield RecognizedChunk(chunk, error=out)
            return  # the caller stops the run; the chunks still queued are cancelled
        recognized: RecognizedChunk = cloudpickle.loads(out)
        yield recognized
