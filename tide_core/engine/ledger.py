"""The run ledger: the ``tide_runs`` table, one keyword row per study run and per committed chunk.

A study run appends one row when it finishes (``stage`` = ``recognition`` or ``anonymization``)
and, as it goes, one ``<stage>.chunk`` row per chunk, committed together with that chunk's tables.
A rerun reads the chunk rows written since the last finished run (:func:`interrupted_chunks`)
to skip what an interrupted run committed.  An anonymization run also reads the latest chunk row
of every chunk, finished run or not (:func:`committed_chunks`): its ``fingerprint`` is
``<release digest>/<rows digest>`` (:func:`chunk_fingerprint`), what decided the chunk's rows and
what the rows were, so a later run keeps a chunk whose inputs and committed rows are unchanged.
Rows hold counts, names, versions and digests only: never a value from the notes.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from tide_core.config import TideConfig
from tide_core.engine.study_chunks import ChunkInfo
from tide_core.io.warehouse import PartitionWrite, Warehouse, sorted_batches
from tide_core.store import tables


def now() -> dt.datetime:
    """The ledger's clock: timezone-aware UTC."""
    return dt.datetime.now(dt.UTC)


def new_run_id() -> str:
    """A fresh run id: random hex, so it carries nothing about the study or its notes."""
    return uuid.uuid4().hex


@dataclass(frozen=True)
class RunRow:
    """One ``tide_runs`` row.

    Counts left ``None`` are written as null (a chunk row carries only the counts of its stage);
    ``recognizers`` is stored as a JSON list.
    """

    study: str
    key: str
    stage: str
    started_at: dt.datetime
    run_id: str = field(default_factory=new_run_id)
    n_in: int | None = None
    n_released: int | None = None
    n_quarantined: int | None = None
    n_spans: int | None = None
    n_recognized: int | None = None
    n_cached: int | None = None
    notes_per_s: float | None = None
    recognizers: Sequence[str] | None = None
    anonymizer: str | None = None
    fingerprint: str | None = None
    chunk: int | None = None
    n_chunks: int | None = None

    def as_dict(self, finished_at: dt.datetime) -> dict[str, Any]:
        """The row as ``tables.to_table("runs", ...)`` takes it, finished at ``finished_at``."""
        row = asdict(self)
        row["finished_at"] = finished_at
        row["recognizers"] = None if self.recognizers is None else json.dumps(list(self.recognizers))
        row["notes_per_s"] = None if self.notes_per_s is None else float(self.notes_per_s)
        return row


def record_run(wh: Warehouse, config: TideConfig, row: RunRow) -> None:
    """Append a finished run's row (finished now)."""
    wh.append(config.tables.runs, tables.to_table("runs", [row.as_dict(now())]))


def chunk_row(
    run_id: str, study: str, key: str, stage: str, started: dt.datetime, chunk: ChunkInfo, **counts: Any
) -> RunRow:
    """The ``<stage>.chunk`` row of a committed chunk (its index, the run's chunk count, its input rows)."""
    return RunRow(
        study,
        key,
        f"{stage}.chunk",
        started,
        run_id,
        n_in=chunk.n_rows,
        chunk=chunk.index,
        n_chunks=chunk.n_chunks,
        **counts,
    )


def progress_write(config: TideConfig, row: RunRow) -> PartitionWrite:
    """A chunk row as a write that commits with the chunk's tables (replacing a retried commit's row)."""
    return PartitionWrite(
        config.tables.runs,
        tables.to_table("runs", [row.as_dict(now())]),
        {"run_id": row.run_id, "stage": row.stage, "chunk": row.chunk},
    )


#: Ledger rows per batch when a study's chunk rows are streamed.
LEDGER_BATCH_ROWS = 5_000


def interrupted_chunks(
    wh: Warehouse, config: TideConfig, study: str, key: str, stage: str
) -> dict[int, tuple[str, dt.datetime]]:
    """Chunks committed since the last finished ``stage`` run: index -> (digest, run start).

    The run rows (one per run) give the last finish; the chunk rows are streamed in chunk order
    and only those of runs started after it are kept.
    """
    if not wh.table_exists(config.tables.runs):
        return {}
    runs = wh.read_table(
        config.tables.runs, ["finished_at"], where={"study": study, "key": key, "stage": stage}
    ).to_pylist()
    finished = [r["finished_at"] for r in runs if r["finished_at"] is not None]
    since = max(finished) if finished else None
    out: dict[int, tuple[str, dt.datetime]] = {}
    where = {"study": study, "key": key, "stage": f"{stage}.chunk"}
    after = None if since is None else (lambda r: r["started_at"] > since)
    for r in _latest_per_chunk_since(wh, config, ["fingerprint"], where, after):
        out[int(r["chunk"])] = (r["fingerprint"], r["started_at"])
    return out


def _latest_per_chunk_since(
    wh: Warehouse,
    config: TideConfig,
    columns: Sequence[str],
    where: Mapping[str, object],
    keep: Callable[[Mapping[str, Any]], bool] | None,
) -> Iterator[dict[str, Any]]:
    """Each chunk's latest ledger row matching ``where`` that ``keep`` accepts (all when ``None``).

    Latest by ``finished_at``, then ``started_at``.  The warehouse sorts the rows by chunk: one
    batch and one chunk's row are held, not the ledger's history (one row per chunk per run, for
    every night the study was released).
    """
    cols = list(dict.fromkeys(["chunk", "finished_at", "started_at", *columns]))
    order = ["chunk", "finished_at", "started_at"]
    last: dict[str, Any] | None = None
    for batch in sorted_batches(wh, config.tables.runs, cols, order, where, LEDGER_BATCH_ROWS):
        for r in batch.to_pylist():
            if r["chunk"] is None or (keep is not None and not keep(r)):
                continue
            if last is not None and last["chunk"] != r["chunk"]:
                yield last
            last = r
    if last is not None:
        yield last


def chunk_fingerprint(release: str, rows: str) -> str:
    """An anonymization chunk row's ``fingerprint``: the chunk's release digest and its rows' digest."""
    return f"{release}/{rows}"


@dataclass(frozen=True)
class CommittedChunk:
    """The latest committed state of one anonymization chunk, from its ledger row.

    ``digest``: what decided its rows (key, settings, notes, cache entries, spans); ``rows``: the
    digest of the rows committed (``""`` for a row written before rows were digested: never
    kept); ``started``: the ``released_at`` stamp its rows were committed with.
    """

    digest: str
    rows: str
    started: dt.datetime
    anonymizer: str


def committed_chunks(wh: Warehouse, config: TideConfig, study: str, key: str) -> dict[int, CommittedChunk]:
    """Each anonymization chunk's latest ledger row, whichever run (finished or interrupted) wrote it."""
    if not wh.table_exists(config.tables.runs):
        return {}
    where = {"study": study, "key": key, "stage": "anonymization.chunk"}
    out: dict[int, CommittedChunk] = {}
    for r in _latest_per_chunk_since(
        wh, config, ["fingerprint", "anonymizer"], where, lambda r: bool(r["fingerprint"])
    ):
        release, _, digested = str(r["fingerprint"]).partition("/")
        out[int(r["chunk"])] = CommittedChunk(release, digested, r["started_at"], r["anonymizer"] or "")
    return out
