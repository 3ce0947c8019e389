"""Pick the execution path for recognition and release: in-process (the reference) or Ray.

The study runner (:mod:`tide_core.runner`) calls :func:`recognize_batches` and never imports an
execution path itself; execution modules import only engine primitives
(:mod:`tide_core.engine.recognition`), never the runner.  Layering:
engine primitives <- execution <- runner.  The Ray path imports Ray (seconds), so
:class:`~tide_core.execution.ray_pipeline.RayRecognition` is loaded by its dotted path
(:func:`tide_core.plugins.load_dotted`) only when ``executor="ray"``.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from tide_core.engine.recognition import RecognitionBatch, recognize_notes
from tide_core.engine.recognize_chunk import RecognizedChunk, ShardRecognitionJob
from tide_core.engine.release_chunk import ChunkOutcome, ReleaseJob, release_chunk
from tide_core.engine.release_input import ShardReleaseJob
from tide_core.io.staging import StagingTarget
from tide_core.io.warehouse import PartitionWrite
from tide_core.plugins import load_dotted
from tide_core.recognizers.base import Recognizer
from tide_core.spans import Note

if TYPE_CHECKING:
    from tide_core.anonymize.keys import KeyRing
    from tide_core.config import TideConfig

RAY_PIPELINE = "tide_core.execution.ray_pipeline"
RAY_RELEASE = "tide_core.execution.ray_release"
RAY_SHARDS = "tide_core.execution.ray_recognize_shards"


def recognize_batches(
    notes: Sequence[Note],
    recognizers: Sequence[Recognizer],
    specs: Sequence[dict[str, Any]],
    policy: Any = None,
    *,
    executor: str = "local",
    ray_address: str | None = None,
    batch_size: int = 64,
    progress: bool = True,
    desc: str = "recognize",
) -> Iterator[RecognitionBatch]:
    """Recognize ``notes`` and yield one :class:`RecognitionBatch` per chunk (same spans on either path).

    ``executor="ray"`` runs the Ray pipeline; it rebuilds the recognizers on its workers from
    ``specs``, so without specs (recognizers passed in as objects) recognition stays local.
    """
    if not notes:
        return
    if executor == "ray" and specs:
        ray_recognition = load_dotted(f"{RAY_PIPELINE}:RayRecognition")
        ray_config = load_dotted(f"{RAY_PIPELINE}:RayRecognitionConfig")
        config = ray_config(address=ray_address, progress=progress)
        batch: RecognitionBatch = ray_recognition(config).run(list(notes), list(specs), policy)
        yield batch
        return

    bar = tqdm(total=len(notes), desc=desc, unit="note", disable=not progress, leave=False)
    try:
        for i in range(0, len(notes), batch_size):
            chunk = notes[i : i + batch_size]
            yield recognize_notes(chunk, recognizers, policy)
            bar.update(len(chunk))
    finally:
        bar.close()


def release_chunks(
    jobs: Iterable[ReleaseJob | ShardReleaseJob],
    keyring: KeyRing,
    config: TideConfig,
    *,
    executor: str = "local",
    target: StagingTarget | None = None,
) -> Generator[ChunkOutcome, None, None]:
    """Anonymize each chunk's job; yield one :class:`ChunkOutcome` per chunk as it is ready.

    ``executor="ray"`` releases the chunks on Ray workers that stage their own tables in
    ``target`` (:mod:`tide_core.execution.ray_release`); results may come back out of order.
    Locally the rows stay in memory and come back in order.
    """
    if executor == "ray":
        if target is None:
            raise ValueError("a Ray release needs a staging target")
        release_on_ray = load_dotted(f"{RAY_RELEASE}:release_on_ray")
        yield from release_on_ray(jobs, keyring, config, target)
        return
    for job in jobs:
        if not isinstance(job, ReleaseJob):
            raise ValueError("a chunk read from its shard is released on Ray only")
        released = release_chunk(job, keyring, config)
        writes = [PartitionWrite(name, table, job.partition) for name, table in released.tables(config)]
        yield ChunkOutcome(job.chunk, released.counts, writes=writes)


def recognize_shards(
    jobs: Iterable[ShardRecognitionJob], config: TideConfig, target: StagingTarget
) -> Generator[RecognizedChunk, None, None]:
    """Recognize chunks that Ray workers read from their shards and whose cache rows they stage
    in ``target`` (:mod:`tide_core.execution.ray_recognize_shards`); out of order."""
    on_ray = load_dotted(f"{RAY_SHARDS}:recognize_shards_on_ray")
    yield from on_ray(jobs, config, target)
