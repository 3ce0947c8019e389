"""Study-level entry points used by the CLI and the Dagster assets.

The runner sits above both execution paths: it asks :mod:`tide_core.execution.dispatch` to
recognize (locally or on Ray) and nothing below imports it (engine <- execution <- runner).

``recognize_study`` reads a study's notes, quarantines bad rows, recognizes the notes whose
cached spans are missing or stale and writes the span cache.  It never changes text.
``anonymize_study`` reads the same notes and the cache only, anonymizes under (study, key) and
writes the released tables.  Both are idempotent: a rerun replaces the partition's rows.

Both stream the study in chunks (:mod:`tide_core.engine.study_chunks`): memory holds one chunk,
each chunk is committed as it finishes with a ``<stage>.chunk`` row in ``tide_runs``, and a rerun
after a crash redoes only uncommitted chunks.  ``on_chunk`` receives a
:class:`tide_core.chunk_progress.ChunkProgress` after every chunk.

With ``executor="ray"`` on a warehouse that can stage and shard (DuckDB, BigQuery), the driver
only plans chunks from ids (``iter_plans``), reads their cache entries and commits: Ray workers
read each chunk from its shard (:mod:`tide_core.io.shards`), recognize or release it and stage
its tables.  Otherwise the driver reads each chunk (``iter_chunks``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import re
import time
import uuid
from collections import Counter
from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from tqdm import tqdm

from tide_core.anonymize.engine import Anonymizer, pseudonym
from tide_core.chunk_progress import ChunkProgress, ProgressHook
from tide_core.config import TideConfig
from tide_core.engine.recognition import recognition_fingerprint
from tide_core.engine.recognize_chunk import RecognizedChunk, ShardRecognitionJob, failed_quarantine
from tide_core.engine.release_chunk import ReleaseCounts, ReleaseJob, quarantine_rows
from tide_core.engine.release_input import ShardReleaseJob, cache_quarantines, release_digest, release_job
from tide_core.engine.study_chunks import (
    ChunkInfo,
    delete_absent,
    iter_chunks,
    iter_plans,
    open_source,
    study_value_warnings,
)
from tide_core.engine.validation import ValidatedInput, sort_quarantined, validate_table
from tide_core.errors import ConfigError
from tide_core.execution.dispatch import recognize_batches, recognize_shards, release_chunks
from tide_core.io.shards import ShardRef, remove_shard
from tide_core.io.staging import StagedWrite, StagingTarget, StagingWarehouse, discard
from tide_core.io.warehouse import PartitionWrite, RefreshableWarehouse, ShardingWarehouse, Warehouse
from tide_core.recognizers.known_phi import patient_key
from tide_core.recognizers.registry import create
from tide_core.spans import Note, Quarantined, Span
from tide_core.store import tables
from tide_core.store.span_cache import SpanCache, chunk_cache_writes, current_hits

if TYPE_CHECKING:
    from tide_core.engine.recognition import RecognitionBatch
    from tide_core.recognizers.base import TideRecognizer

log = logging.getLogger("tide.runner")


@dataclass(frozen=True)
class RecognitionReport:
    study: str
    fingerprint: str
    n_rows: int
    n_valid: int
    n_quarantined: int
    n_cached: int
    n_recognized: int
    n_failed: int
    n_spans: int
    spans_by_label: dict[str, int]
    recognizers: list[str]
    seconds: float
    warnings: list[str] = field(default_factory=list)
    n_review_applied: int = 0  # reviewer decisions re-applied to this recognition
    n_review_stale: int = 0  # decisions on notes whose text changed since review: kept, not applied
    n_known_phi_patients: int = 0  # patients of the notes recognized this run that known-PHI matching looked up
    known_phi_patients_matched: int = 0  # those of them the patients table has a row for

    @property
    def notes_per_s(self) -> float:
        return self.n_recognized / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True)
class AnonymizationReport:
    study: str
    key: str
    fingerprint: str
    anonymizer: str
    n_rows: int
    n_released: int
    n_quarantined: int
    quarantined_by_code: dict[str, int]
    n_spans: int
    spans_by_label: dict[str, int]
    operators: dict[str, int]
    seconds: float

    @property
    def notes_per_s(self) -> float:
        return self.n_rows / self.seconds if self.seconds > 0 else 0.0


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def read_study_input(wh: Warehouse, study: str, config: TideConfig, notes_table: str | None = None) -> ValidatedInput:
    """Read and validate the study's notes.  A ``study`` column, when present, selects the rows."""
    name = notes_table or config.tables.notes
    if not wh.table_exists(name):
        raise ConfigError(
            "E609",
            f"notes table {name!r} not found in {wh.url}",
            hint="create it (tide demo loads a synthetic one) or pass --notes-table",
        )
    cols = wh.columns(name)
    table = wh.read_table(name, where={"study": study}) if "study" in cols else wh.read_table(name)
    return validate_table(table, name, config.max_note_chars)


def _patients_rows(wh: Warehouse, table: str, patient_ids: set[str]) -> list[dict[str, Any]] | None:
    if not wh.table_exists(table):
        return None
    keys = _keys(patient_ids)
    return [r for r in wh.read_table(table).to_pylist() if patient_key(r.get("patient_id")) in keys]


def _keys(patient_ids: Iterable[object]) -> set[str]:
    """The :func:`patient_key` of each id (empty ones left out)."""
    return {k for k in map(patient_key, patient_ids) if k is not None}


def build_recognizers(
    wh: Warehouse, config: TideConfig, notes: Sequence[Note]
) -> tuple[list[TideRecognizer], list[dict[str, Any]], list[str]]:
    """Create the configured recognizers; known-PHI specs get this study's patient rows."""

    warnings: list[str] = []
    specs: list[dict[str, Any]] = []
    recognizers: list[TideRecognizer] = []
    patient_ids = {n.patient_id for n in notes}
    for spec in config.recognizers:
        spec = dict(spec)
        if spec["name"] == "tide.known_phi" and "rows" not in spec:
            rows = _patients_rows(wh, spec.pop("patients_table", config.tables.patients), patient_ids)
            if rows is None:
                warnings.append("patients table not found: known-PHI matching is off for this run")
                continue
            spec["rows"] = rows
        specs.append(spec)
        recognizers.append(create(spec))
    return recognizers, specs, warnings


def _fixed_recognizers(
    wh: Warehouse, config: TideConfig
) -> tuple[list[Any], list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """The recognizers built once per run, the known-PHI specs rebuilt per chunk, and warnings.

    Returns ``(recognizers, specs, per_chunk_specs, warnings)``: ``recognizers`` has ``None`` at
    the place of each per-chunk known-PHI recognizer (built by :func:`_chunk_recognizers` from
    the chunk's patients only).
    """

    warnings: list[str] = []
    specs: list[dict[str, Any]] = []
    recognizers: list[Any] = []
    per_chunk: list[dict[str, Any]] = []
    for spec in config.recognizers:
        spec = dict(spec)
        if spec["name"] == "tide.known_phi" and "rows" not in spec:
            table = spec.pop("patients_table", config.tables.patients)
            if not wh.table_exists(table):
                warnings.append("patients table not found: known-PHI matching is off for this run")
                continue
            spec["_patients_table"] = table
            per_chunk.append(spec)
            specs.append(spec)
            recognizers.append(None)
            continue
        specs.append(spec)
        recognizers.append(create(spec))
    return recognizers, specs, per_chunk, warnings


def _patient_rows_for(wh: Warehouse, table: str, patient_ids: set[str], everyone: bool) -> list[dict[str, Any]]:
    """The patients rows of ``patient_ids``, ids compared as :func:`patient_key` whatever the types.

    A filtered read when the id column is text (the notes' ids as written and their keys) or an
    integer (the keys that are integers); all rows when ``everyone`` or for any other column type.
    A text id stored with other zero padding or surrounding spaces than the notes' is not found
    by the filtered read: ``known_phi_patients_matched`` in the run report counts who was.
    """
    keys = _keys(patient_ids)
    if not everyone:
        kind = wh.read_table(table, ["patient_id"], where={"patient_id": []}).schema.field("patient_id").type
        pushed: list[str] | list[int] | None = None
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            pushed = sorted(keys | set(patient_ids))
        elif pa.types.is_integer(kind):
            pushed = sorted(int(k) for k in keys if _INT_ID.fullmatch(k))
        if pushed is not None:
            if not pushed:
                return []
            rows = wh.read_table(table, where={"patient_id": pushed}).to_pylist()
            return [r for r in rows if patient_key(r.get("patient_id")) in keys]
    rows = wh.read_table(table).to_pylist()
    return rows if everyone else [r for r in rows if patient_key(r.get("patient_id")) in keys]


#: A patient key an INTEGER (BIGINT, INT64) column can hold.
_INT_ID = re.compile(r"-?[1-9][0-9]{0,17}|0")


@dataclass
class KnownPHIMatches:
    """Patient keys (:func:`patient_key`) whose notes known-PHI matching looked at, and those the
    patients table had rows for (keys only, never values)."""

    looked_up: set[str] = field(default_factory=set)
    matched: set[str] = field(default_factory=set)

    def add(self, patient_ids: set[str], rows: Sequence[dict[str, Any]]) -> None:
        keys = _keys(patient_ids)
        self.looked_up |= keys
        self.matched |= keys & _keys(r.get("patient_id") for r in rows)

    def warning(self, table: str) -> str | None:
        """The E624 warning when the patients table matched none of the patients looked up."""
        if not self.looked_up or self.matched:
            return None
        return (
            f"[E624] known-PHI matching found none of the {len(self.looked_up)} patient(s) of the notes "
            f"recognized in this run in the patients table {table!r} (known_phi_patients_matched: 0): "
            "registered names, addresses and numbers are not recognized from it; check that its patient_id "
            "holds the notes' patient ids (compared as text without surrounding spaces; digits without "
            "leading zeros), then rerun recognition with --force"
        )


def _chunk_specs(
    wh: Warehouse,
    fixed: list[Any],
    specs: list[dict[str, Any]],
    patient_ids: set[str],
    seen: KnownPHIMatches | None = None,
) -> list[dict[str, Any]]:
    """This chunk's recognizer specs: known-PHI ones carry the chunk's patients' rows only (``seen``
    counts whom they found)."""
    out: list[dict[str, Any]] = []
    for rec, spec in zip(fixed, specs, strict=True):
        if rec is not None:
            out.append(spec)
            continue
        chunk_spec = {k: v for k, v in spec.items() if k != "_patients_table"}
        everyone = bool(chunk_spec.get("match_any_patient"))  # matches any patient's values: needs them all
        chunk_spec["rows"] = _patient_rows_for(wh, spec["_patients_table"], patient_ids, everyone)
        if seen is not None:
            seen.add(patient_ids, chunk_spec["rows"])
        out.append(chunk_spec)
    return out


def _chunk_recognizers(
    wh: Warehouse,
    fixed: list[Any],
    specs: list[dict[str, Any]],
    patient_ids: set[str],
    seen: KnownPHIMatches | None = None,
) -> tuple[list[Any], list[dict[str, Any]]]:
    """This chunk's recognizers and specs (:func:`_chunk_specs`; known-PHI recognizers created here)."""
    chunk_specs = _chunk_specs(wh, fixed, specs, patient_ids, seen)
    recs = [rec if rec is not None else create(spec) for rec, spec in zip(fixed, chunk_specs, strict=True)]
    return recs, chunk_specs


def _chunk_row(
    run_id: str,
    study: str,
    key: str,
    stage: str,
    started: dt.datetime,
    chunk: ChunkInfo,
    **counts: Any,
) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "study": study,
        "key": key,
        "stage": f"{stage}.chunk",
        "started_at": started,
        "finished_at": _now(),
        "chunk": chunk.index,
        "n_chunks": chunk.n_chunks,
        "n_in": chunk.n_rows,
        **counts,
    }


def _progress_write(config: TideConfig, row: dict[str, Any]) -> PartitionWrite:
    return PartitionWrite(
        config.tables.runs,
        tables.to_table("runs", [row]),
        {"run_id": row["run_id"], "stage": row["stage"], "chunk": row["chunk"]},
    )


def _report(
    hook: ProgressHook | None,
    stage: str,
    study: str,
    key: str,
    chunk: ChunkInfo,
    worked: int,
    resumed: bool,
    n_done: int,
    n_total: int,
    t0: float,
) -> None:
    """Tell ``hook`` that ``chunk`` is committed (or was skipped as already committed)."""
    if hook is not None:
        where = (stage, study, key, chunk.index, chunk.n_chunks)
        hook(ChunkProgress(*where, chunk.n_notes, worked, resumed, n_done, n_total, time.perf_counter() - t0))


#: Committed chunks between two reopenings of a DuckDB connection: DuckDB keeps memory for the
#: database it works on beyond its capped buffer pool, which grew a 200k-note run's memory with the
#: study; reopening hands it back (a checkpoint, well under a second here).
REFRESH_EVERY_CHUNKS = 10


def _refresh_between_chunks(wh: Warehouse, n_committed: int) -> None:
    if n_committed and n_committed % REFRESH_EVERY_CHUNKS == 0 and isinstance(wh, RefreshableWarehouse):
        wh.refresh()


def _chunk_failed(exc: BaseException, stage: str, study: str, index: int, n_chunks: int) -> None:
    """Name the failed chunk (on the exception and in the log); committed chunks stay committed."""
    where = f"{stage} of study {study}: chunk {index + 1}/{n_chunks} failed"
    exc.add_note(f"{where}; earlier chunks are committed, a rerun resumes from this chunk")
    log.error("%s (%s)", where, type(exc).__name__)


def recognize_study(
    wh: Warehouse,
    study: str,
    config: TideConfig,
    *,
    notes_table: str | None = None,
    progress: bool = True,
    recognizers: Sequence[Any] | None = None,
    policy: Any = None,
    force: bool = False,
    chunk_rows: int | None = None,
    on_chunk: ProgressHook | None = None,
) -> RecognitionReport:
    """Recognize a study chunk by chunk, committing each chunk's spans and statuses as it finishes.

    Memory holds one chunk (``chunk_rows`` notes, default ``DEFAULT_CHUNK_ROWS``).  A rerun after
    a crash redoes only what no chunk committed: committed notes are cache hits.  Each commit
    also appends a ``recognition.chunk`` row to ``tide_runs`` (``chunk``, ``n_chunks``);
    ``on_chunk`` is called after every chunk.
    """
    t0 = time.perf_counter()
    started = _now()
    run_id = uuid.uuid4().hex
    src = open_source(wh, study, config, notes_table, chunk_rows)
    warnings: list[str] = []
    specs: list[dict[str, Any]] = []
    fixed: list[Any]
    seen = KnownPHIMatches()
    if recognizers is None:
        fixed, specs, _, warnings = _fixed_recognizers(wh, config)
        probe, _ = _chunk_recognizers(wh, fixed, specs, set())
        fingerprint = recognition_fingerprint(probe, policy)  # known-PHI rows are not in the fingerprint
        names = [r.qualified_name for r in probe]
    else:
        fixed, specs = list(recognizers), [{} for _ in recognizers]
        fingerprint = recognition_fingerprint(fixed, policy)
        names = [r.qualified_name for r in fixed]
    cache = SpanCache(wh, config.tables)
    cache.migrate_legacy(study)
    n_rows = n_valid = n_cached = n_recognized = n_failed = n_committed = 0
    input_q: list[Quarantined] = []
    failed_q: list[Quarantined] = []
    by_label: Counter[str] = Counter()
    target = (
        _staging_target(wh, config, run_id, "chunks read and written in the driver") if recognizers is None else None
    )
    source = wh.open_shards(src.table, src.where) if target and isinstance(wh, ShardingWarehouse) else None
    shards: dict[int, ShardRef] = {}  # chunk index -> its shard, until the chunk is committed
    bar = tqdm(total=src.n_source_rows, desc=f"recognize {study}", unit="row", disable=not progress, leave=False)

    def driver_chunks() -> Generator[RecognizedChunk, None, None]:
        """Read each chunk here and recognize it (in process, or on the Ray recognition pipeline)."""
        for chunk in iter_chunks(src):
            try:
                notes = chunk.notes
                entries = cache.entries(study, chunk.owned_ids) if chunk.owned_ids else {}
                hits = set() if force else current_hits(entries, notes, fingerprint)
                todo = [n for n in notes if n.note_id not in hits]
                recognized: dict[str, list[Span]] = {}
                statuses: dict[str, tuple[str, str | None]] = {}
                if todo:
                    if recognizers is None:
                        todo_patients = {n.patient_id for n in todo}
                        recs, chunk_specs = _chunk_recognizers(wh, fixed, specs, todo_patients, seen)
                    else:
                        recs, chunk_specs = fixed, []
                    for batch in recognize_batches(
                        todo,
                        recs,
                        chunk_specs,
                        policy,
                        executor=config.executor,
                        ray_address=config.ray_address,
                        batch_size=config.batch_size,
                        progress=False,
                    ):
                        _collect(batch, recognized, statuses)
                owned = [nid for nid in chunk.owned_ids if nid not in hits]  # hits stay as they are
                writes = chunk_cache_writes(config.tables, study, fingerprint, notes, recognized, statuses, owned)
            except Exception as exc:
                _chunk_failed(exc, "recognition", study, chunk.index, chunk.n_chunks)
                raise
            patients = {n.note_id: n.patient_id for n in todo}
            failed = [failed_quarantine(nid, patients[nid], code) for nid, (st, code) in statuses.items() if st != "ok"]
            yield RecognizedChunk(
                chunk.index, chunk.info(), list(chunk.quarantined), failed, len(todo), len(hits), writes
            )

    def shard_jobs() -> Iterator[ShardRecognitionJob]:
        """Plan each chunk from its ids, export its rows to a shard; a Ray worker reads and recognizes it."""
        assert target is not None and source is not None and isinstance(wh, ShardingWarehouse)
        for plan in iter_plans(src, source):
            try:
                entries = cache.entries(study, plan.owned_ids) if plan.owned_ids else {}
                chunk_specs = _chunk_specs(wh, fixed, specs, set(plan.patient_ids), seen)  # workers create them
                shard = wh.export_shard(source, plan.refs, plan.row_numbers, target, plan.index)
            except Exception as exc:
                _chunk_failed(exc, "recognition", study, plan.index, plan.n_chunks)
                raise
            shards[plan.index] = shard
            yield ShardRecognitionJob(
                study,
                plan,
                shard,
                entries,
                tuple(chunk_specs),
                fingerprint,
                policy,
                src.max_note_chars,
                config.batch_size,
                force,
            )

    outcomes = recognize_shards(shard_jobs(), config, target) if source and target else driver_chunks()
    try:
        for done in outcomes:
            try:
                if done.error is not None:
                    raise done.error
                info = done.info
                assert info is not None  # a chunk without error has its summary
                row = _chunk_row(
                    run_id,
                    study,
                    "",
                    "recognition",
                    started,
                    info,
                    n_quarantined=len(done.quarantined) + len(done.failed),
                    n_recognized=done.n_recognized,
                    n_cached=done.n_cached,
                    recognizers=json.dumps(names),
                    fingerprint=fingerprint,
                )
                publish(wh, done.staged, [*done.writes, _progress_write(config, row)])
                if info.owned_ids:
                    by_label.update(s.label for spans in cache.spans(study, info.owned_ids).values() for s in spans)
            except Exception as exc:
                _chunk_failed(exc, "recognition", study, done.chunk, src.n_chunks)
                raise
            finally:
                if done.chunk in shards:
                    remove_shard(shards.pop(done.chunk))
            failed_q.extend(done.failed)
            input_q.extend(done.quarantined)
            input_q.extend(info.null_id_rows)
            n_rows += info.n_rows + len(info.null_id_rows)
            n_valid += info.n_notes
            n_cached += done.n_cached
            n_recognized += done.n_recognized
            n_failed += len(done.failed)
            n_committed += 1
            _refresh_between_chunks(wh, n_committed)
            bar.update(info.n_rows + len(info.null_id_rows))
            _report(on_chunk, "recognition", study, "", info, done.n_recognized, False, n_rows, src.n_source_rows, t0)
    finally:
        outcomes.close()  # a failed run: cancel the chunks still queued on Ray workers
        bar.close()
        if source is not None and target is not None:
            assert isinstance(wh, ShardingWarehouse)
            wh.close_shards(source)  # BigQuery: the run's copy of the study
            discard(target)  # staged files and shards of chunks that never committed (a failed run)
    # notes that left the source: entries first, so a crash in between never leaves an entry without its spans
    delete_absent(src, config.tables.recognized_notes, {"study": study})
    delete_absent(src, config.tables.spans, {"study": study})
    review = cache.review_summary(study)  # decisions are data: re-applied by cache.spans on every read
    warnings.extend(study_value_warnings(wh, src.table))
    for spec in specs:
        if "_patients_table" in spec and (unmatched := seen.warning(spec["_patients_table"])):
            warnings.append(unmatched)
            log.warning("study %s: %s", study, unmatched)
    if review.n_stale:
        warnings.append(
            f"{review.n_stale} reviewer decision(s) on {len(review.stale_notes)} note(s) whose text changed "
            "since review are kept but not applied: review those notes again (tide review)"
        )
    wh.replace_partition(
        config.tables.quarantine,
        tables.to_table("quarantine", quarantine_rows(study, "", sort_quarantined(input_q) + failed_q)),
        {"study": study, "key": ""},
    )
    seconds = time.perf_counter() - t0
    n_input_q = len(input_q)
    report = RecognitionReport(
        study,
        fingerprint,
        n_rows,
        n_valid,
        n_input_q,
        n_cached,
        n_recognized,
        n_failed,
        sum(by_label.values()),
        dict(sorted(by_label.items())),
        names,
        seconds,
        warnings,
        review.n_applied,
        review.n_stale,
        len(seen.looked_up),
        len(seen.matched),
    )
    _record_run(
        wh,
        config,
        study,
        "",
        "recognition",
        started,
        n_rows,
        0,
        n_input_q + n_failed,
        report.n_spans,
        n_recognized,
        n_cached,
        report.notes_per_s,
        report.recognizers,
        None,
        fingerprint,
        run_id=run_id,
        n_chunks=src.n_chunks,
    )
    log.info(
        "recognized study %s: %d notes (%d cached, %d failed), %d spans",
        study,
        n_valid,
        n_cached,
        n_failed,
        report.n_spans,
    )
    return report


def _collect(
    batch: RecognitionBatch, recognized: dict[str, list[Span]], statuses: dict[str, tuple[str, str | None]]
) -> None:
    for rec in batch.records:
        statuses[rec.note_id] = (rec.status, rec.error_code)
        recognized[rec.note_id] = list(batch.spans.get(rec.note_id, [])) if rec.status == "ok" else []


def _record_run(
    wh: Warehouse,
    config: TideConfig,
    study: str,
    key: str,
    stage: str,
    started: dt.datetime,
    n_in: int,
    n_released: int,
    n_quarantined: int,
    n_spans: int,
    n_recognized: int,
    n_cached: int,
    notes_per_s: float,
    recognizers: list[str],
    anonymizer: str | None,
    fingerprint: str,
    *,
    run_id: str | None = None,
    n_chunks: int | None = None,
) -> None:
    row = {
        "run_id": run_id or uuid.uuid4().hex,
        "study": study,
        "key": key,
        "stage": stage,
        "started_at": started,
        "finished_at": _now(),
        "n_in": n_in,
        "n_released": n_released,
        "n_quarantined": n_quarantined,
        "n_spans": n_spans,
        "n_recognized": n_recognized,
        "n_cached": n_cached,
        "notes_per_s": float(notes_per_s),
        "recognizers": json.dumps(recognizers),
        "anonymizer": anonymizer,
        "fingerprint": fingerprint,
        "chunk": None,
        "n_chunks": n_chunks,
    }
    wh.append(config.tables.runs, tables.to_table("runs", [row]))


def interrupted_chunks(
    wh: Warehouse, config: TideConfig, study: str, key: str, stage: str
) -> dict[int, tuple[str, dt.datetime]]:
    """Chunks committed since the last finished ``stage`` run: index -> (digest, run start)."""
    if not wh.table_exists(config.tables.runs):
        return {}
    rows = wh.read_table(
        config.tables.runs,
        ["stage", "started_at", "finished_at", "chunk", "fingerprint"],
        where={"study": study, "key": key, "stage": [stage, f"{stage}.chunk"]},
    ).to_pylist()
    finished = [r["finished_at"] for r in rows if r["stage"] == stage and r["finished_at"] is not None]
    since = max(finished) if finished else None
    out: dict[int, tuple[str, dt.datetime]] = {}
    for r in sorted((r for r in rows if r["stage"] != stage), key=lambda r: r["finished_at"]):
        if r["chunk"] is not None and (since is None or r["started_at"] > since):
            out[int(r["chunk"])] = (r["fingerprint"], r["started_at"])
    return out


def _staging_target(
    wh: Warehouse, config: TideConfig, run_id: str, fallback: str = "anonymizing in the driver"
) -> StagingTarget | None:
    """Where Ray workers stage a run's released tables; ``None``: the driver releases in process
    (the local executor, or a warehouse that cannot take staged tables: same rows, one process)."""
    if config.executor != "ray":
        return None
    if not isinstance(wh, StagingWarehouse):
        log.warning("warehouse %s cannot publish tables staged by Ray workers: %s", wh.url, fallback)
        return None
    return wh.staging_target().for_run(run_id)


def publish(wh: Warehouse, staged: Sequence[StagedWrite], writes: Sequence[PartitionWrite]) -> None:
    """Commit a chunk: staged tables (Ray workers wrote them) and in-memory writes, all or nothing."""
    if staged:
        if not isinstance(wh, StagingWarehouse):  # _staging_target refused such a warehouse already
            raise ConfigError("E374", f"warehouse {wh.url} cannot publish staged tables")
        wh.publish(staged, writes)
    else:
        wh.replace_partitions(writes)


@dataclass
class _AnonTotals(ReleaseCounts):
    """A run's release counts, plus its input rows and the recognition fingerprints it used."""

    n_rows: int = 0
    fingerprints: set[str] = field(default_factory=set)


def _count_committed(
    wh: Warehouse, config: TideConfig, study: str, key: str, ids: Sequence[str], t: _AnonTotals
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


def anonymize_study(
    wh: Warehouse,
    study: str,
    key: str,
    key_provider: Any,
    config: TideConfig,
    *,
    notes_table: str | None = None,
    progress: bool = True,
    chunk_rows: int | None = None,
    on_chunk: ProgressHook | None = None,
) -> AnonymizationReport:
    """Anonymize a study's notes under ``key`` from cached spans only (recognition never runs here).

    Streams the study chunk by chunk: each chunk's released notes, released spans and quarantine
    rows are committed together with its ``anonymization.chunk`` progress row (one atomic
    commit, replacing exactly that chunk's notes).  A rerun after a crash skips every chunk an
    interrupted run committed whose input, spans and key are unchanged.
    """
    t0 = time.perf_counter()
    started = _now()
    run_id = uuid.uuid4().hex
    keyring = key_provider.keyring(study, key)
    key_id = hashlib.sha256(pseudonym(keyring, "note", "\x00tide-resume").encode()).hexdigest()[:16]
    src = open_source(wh, study, config, notes_table, chunk_rows)
    cache = SpanCache(wh, config.tables)
    interrupted = interrupted_chunks(wh, config, study, key, "anonymization")
    done = {i: fp for i, (fp, _) in interrupted.items()}
    # one released_at stamp for the whole run: a run resuming an interrupted one continues its
    # stamp, so every row of the candidate comes from one run (its chunk rows carry it as started_at)
    stamp = min((at for _, at in interrupted.values()), default=started)
    released_metadata = {c: sorted(v) for c, v in sorted(config.released_metadata.items())}
    settings = [config.on_unparseable_date, released_metadata, Anonymizer.VERSION]
    t = _AnonTotals()
    null_id_rows: list[Quarantined] = []
    anonymizer_version = Anonymizer.VERSION
    target = _staging_target(wh, config, run_id)
    source = wh.open_shards(src.table, src.where) if target and isinstance(wh, ShardingWarehouse) else None
    #: chunk index -> (chunk summary, digest, notes worked, shard): the first three come back with a sharded chunk
    pending: dict[int, tuple[ChunkInfo | None, str | None, int, ShardRef | None]] = {}
    bar = tqdm(total=src.n_source_rows, desc=f"anonymize {study}/{key}", unit="row", disable=not progress, leave=False)

    def done_with(chunk: ChunkInfo, worked: int, resumed: bool) -> None:
        null_id_rows.extend(chunk.null_id_rows)
        t.n_rows += chunk.n_rows + len(chunk.null_id_rows)
        bar.update(chunk.n_rows + len(chunk.null_id_rows))
        _report(on_chunk, "anonymization", study, key, chunk, worked, resumed, t.n_rows, src.n_source_rows, t0)

    def jobs() -> Iterator[ReleaseJob]:
        """Read each chunk and its cached spans; skip committed chunks; hand on the rest."""
        for chunk in iter_chunks(src):
            try:
                entries = cache.entries(study, chunk.owned_ids) if chunk.owned_ids else {}
                ready, cache_q = cache_quarantines(study, chunk.notes, entries)
                spans = cache.spans(study, [n.note_id for n in ready]) if ready else {}
                t.fingerprints.update(entries[n.note_id].fingerprint for n in ready)
                chunk_digest = release_digest(key_id, settings, chunk, entries, spans)
                if done.get(chunk.index) == chunk_digest:
                    _count_committed(wh, config, study, key, chunk.owned_ids, t)
                    done_with(chunk.info(), 0, True)
                    continue
            except Exception as exc:
                _chunk_failed(exc, "anonymization", study, chunk.index, chunk.n_chunks)
                raise
            pending[chunk.index] = (chunk.info(), chunk_digest, len(ready), None)
            yield release_job(study, key, chunk, entries, ready, cache_q, spans, stamp)

    def shard_jobs() -> Iterator[ShardReleaseJob]:
        """Plan each chunk from note ids, export its rows to a shard; the worker reads and decides it."""
        assert target is not None and source is not None and isinstance(wh, ShardingWarehouse)
        for plan in iter_plans(src, source):
            try:
                entries = cache.entries(study, plan.owned_ids) if plan.owned_ids else {}
                recognized = [nid for nid, e in entries.items() if e.status == "ok"]
                span_rows = cache.span_rows(study, recognized)  # the worker builds the spans
                shard = wh.export_shard(source, plan.refs, plan.row_numbers, target, plan.index)
            except Exception as exc:
                _chunk_failed(exc, "anonymization", study, plan.index, plan.n_chunks)
                raise
            pending[plan.index] = (None, None, 0, shard)
            yield ShardReleaseJob(
                study,
                key,
                plan,
                shard,
                entries,
                span_rows,
                key_id,
                tuple(settings),
                src.max_note_chars,
                done.get(plan.index),
                stamp,
            )

    n_published = 0
    outcomes = release_chunks(
        shard_jobs() if source is not None else jobs(),
        keyring,
        config,
        executor="ray" if target else "local",
        target=target,
    )
    try:
        for outcome in outcomes:
            info, chunk_digest, worked, shard = pending.pop(outcome.chunk)
            try:
                if outcome.error is not None:
                    raise outcome.error
                if outcome.info is not None:  # the worker read the chunk from its shard
                    info, chunk_digest, worked = outcome.info, outcome.digest, outcome.n_ready
                    t.fingerprints.update(outcome.fingerprints)
                assert info is not None and chunk_digest is not None  # known to the driver or sent back
                if outcome.resumed:
                    _count_committed(wh, config, study, key, info.owned_ids, t)
                    done_with(info, 0, True)
                    continue
                c = outcome.counts
                assert c is not None  # an outcome without error has its counts
                anonymizer_version = c.anonymizer
                row = _chunk_row(
                    run_id,
                    study,
                    key,
                    "anonymization",
                    stamp,
                    info,
                    n_released=c.n_released,
                    n_quarantined=c.n_quarantined,
                    n_spans=c.n_spans,
                    anonymizer=c.anonymizer,
                    fingerprint=chunk_digest,
                )
                publish(wh, outcome.staged, [*outcome.writes, _progress_write(config, row)])
            except Exception as exc:
                _chunk_failed(exc, "anonymization", study, outcome.chunk, src.n_chunks)
                raise
            finally:
                if shard is not None:
                    remove_shard(shard)
            t.add(c)
            n_published += 1
            _refresh_between_chunks(wh, n_published)
            done_with(info, worked, False)
    finally:
        outcomes.close()  # a failed run: cancel the chunks still queued on Ray workers
        bar.close()
        if source is not None:
            assert isinstance(wh, ShardingWarehouse)
            wh.close_shards(source)  # BigQuery: the run's copy of the study
        if target is not None:
            discard(target)  # staged files and shards of chunks that never committed (a failed run)
    # rows without a note id belong to no chunk: written once; then notes that left the source
    wh.replace_partition(
        config.tables.quarantine,
        tables.to_table("quarantine", quarantine_rows(study, key, null_id_rows)),
        {"study": study, "key": key, "note_id": None},
    )
    t.n_quarantined += len(null_id_rows)
    t.quarantined_by_code.update(q.code for q in null_id_rows)
    part = {"study": study, "key": key}
    for name in (config.tables.deid_notes, config.tables.released_spans, config.tables.quarantine):
        delete_absent(src, name, part)
    fingerprint = ",".join(sorted(t.fingerprints))
    seconds = time.perf_counter() - t0
    report = AnonymizationReport(
        study,
        key,
        fingerprint,
        anonymizer_version,
        t.n_rows,
        t.n_released,
        t.n_quarantined,
        dict(sorted(t.quarantined_by_code.items())),
        sum(t.by_label.values()),
        dict(sorted(t.by_label.items())),
        dict(sorted(t.operators.items())),
        seconds,
    )
    _record_run(
        wh,
        config,
        study,
        key,
        "anonymization",
        started,
        t.n_rows,
        t.n_released,
        t.n_quarantined,
        report.n_spans,
        0,
        0,
        report.notes_per_s,
        [],
        anonymizer_version,
        fingerprint,
        run_id=run_id,
        n_chunks=src.n_chunks,
    )
    log.info("anonymized study %s key %s: %d released, %d quarantined", study, key, t.n_released, t.n_quarantined)
    return report
