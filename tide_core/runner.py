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

import hashlib
import logging
from dataclasses import dataclass, field
from functools import partial

from tide_core.anonymize.engine import Anonymizer, pseudonym
from tide_core.anonymize.keys import KeyProvider
from tide_core.chunk_progress import ProgressHook
from tide_core.config import TideConfig
from tide_core.engine.chunk_run import ChunkRun
from tide_core.engine.ledger import committed_chunks, interrupted_chunks, record_run
from tide_core.engine.recognition_run import RecognitionPass
from tide_core.engine.recognizer_setup import recognizer_set
from tide_core.engine.release_chunk import quarantine_rows
from tide_core.engine.release_run import ReleasePass
from tide_core.engine.study_chunks import delete_absent, open_source, study_value_warnings
from tide_core.engine.validation import sort_quarantined
from tide_core.execution.dispatch import recognize_batches, recognize_shards, release_chunks
from tide_core.io.warehouse import Warehouse
from tide_core.store import tables
from tide_core.store.span_cache import SpanCache

log = logging.getLogger("tide.runner")


@dataclass(frozen=True)
class RecognitionReport:
    """What one recognition run did, by count: returned by :func:`recognize_study`.

    Counts, labels, recognizer names and coded warnings only; nothing from the notes.
    """

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
        """Notes recognized per second of the run (cache hits excluded; 0 for a zero-length run)."""
        return self.n_recognized / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True)
class AnonymizationReport:
    """What one anonymization run did, by count: returned by :func:`anonymize_study`.

    Counts by code, label and operator only; nothing from the notes.
    """

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
    n_chunks: int = 0  # chunks in the study's plan
    n_chunks_kept: int = 0  # of those, chunks kept from their committed rows (not anonymized again)

    @property
    def notes_per_s(self) -> float:
        """Input rows decided per second of the run (0 for a zero-length run)."""
        return self.n_rows / self.seconds if self.seconds > 0 else 0.0


def recognize_study(
    wh: Warehouse,
    study: str,
    config: TideConfig,
    *,
    notes_table: str | None = None,
    progress: bool = True,
    force: bool = False,
    chunk_rows: int | None = None,
    on_chunk: ProgressHook | None = None,
) -> RecognitionReport:
    """Recognize a study chunk by chunk, committing each chunk's spans and statuses as it finishes.

    Memory holds one chunk (``chunk_rows`` notes, default ``DEFAULT_CHUNK_ROWS``).  A rerun after
    a crash redoes only what no chunk committed: committed notes are cache hits.  Each commit
    also appends a ``recognition.chunk`` row to ``tide_runs`` (``chunk``, ``n_chunks``);
    ``on_chunk`` is called after every chunk.  The recognizers are the configuration's, or those
    of a factory registered for the study (:func:`tide_core.engine.recognizer_setup.register_setup`).
    """
    src = open_source(wh, study, config, notes_table, chunk_rows)
    run = ChunkRun(wh, config, study, "", "recognition", src, on_chunk, progress)
    rset = recognizer_set(wh, config, study)
    fingerprint, names = rset.identity(wh)  # known-PHI rows are not in the fingerprint
    cache = SpanCache(wh, config.tables)
    cache.migrate_legacy(study)
    if rset.specs is not None:  # recognizer objects (a registered factory) are never sent to Ray workers
        run.stage_on_ray("chunks read and written in the driver", shards_only=True)
    p = RecognitionPass(run, cache, rset, fingerprint, names, force)
    recognize = partial(
        recognize_batches,
        policy=rset.policy,
        executor=config.executor,
        ray_address=config.ray_address,
        batch_size=config.batch_size,
        progress=False,
    )
    if run.source is not None and run.target is not None:
        run.drain(recognize_shards(p.shard_jobs(), config, run.target), p.commit)
    else:
        run.drain(p.driver_chunks(recognize), p.commit)
    # notes that left the source: entries first, so a crash in between never leaves an entry without its spans
    delete_absent(src, config.tables.recognized_notes, {"study": study})
    delete_absent(src, config.tables.spans, {"study": study})
    review = cache.review_summary(study)  # decisions are data: re-applied by cache.spans on every read
    warnings = [*rset.warnings, *study_value_warnings(wh, src.table), *p.known_phi_warnings()]
    if review.n_stale:
        warnings.append(
            f"{review.n_stale} reviewer decision(s) on {len(review.stale_notes)} note(s) whose text changed "
            "since review are kept but not applied: review those notes again (tide review)"
        )
    wh.replace_partition(
        config.tables.quarantine,
        tables.to_table("quarantine", quarantine_rows(study, "", sort_quarantined(p.input_q) + p.failed_q)),
        {"study": study, "key": ""},
    )
    n_failed = len(p.failed_q)
    report = RecognitionReport(
        study,
        fingerprint,
        run.n_rows,
        p.n_valid,
        len(p.input_q),
        p.n_cached,
        p.n_recognized,
        n_failed,
        sum(p.by_label.values()),
        dict(sorted(p.by_label.items())),
        names,
        run.seconds,
        warnings,
        review.n_applied,
        review.n_stale,
        len(p.seen.looked_up),
        len(p.seen.matched),
    )
    record_run(wh, config, p.run_row(report.notes_per_s))
    log.info(
        "recognized study %s: %d notes (%d cached, %d failed), %d spans",
        study,
        p.n_valid,
        p.n_cached,
        n_failed,
        report.n_spans,
    )
    return report


def anonymize_study(
    wh: Warehouse,
    study: str,
    key: str,
    key_provider: KeyProvider,
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
    commit, replacing exactly that chunk's notes).  A rerun (after a crash, or the next night's run)
    keeps every committed chunk whose input, spans, key and settings are unchanged and whose rows the
    candidate still holds as committed, and anonymizes the others
    (:mod:`tide_core.engine.release_run`).
    """
    keyring = key_provider.keyring(study, key)
    key_id = hashlib.sha256(pseudonym(keyring, "note", "\x00tide-resume").encode()).hexdigest()[:16]
    src = open_source(wh, study, config, notes_table, chunk_rows)
    run = ChunkRun(wh, config, study, key, "anonymization", src, on_chunk, progress)
    interrupted = interrupted_chunks(wh, config, study, key, "anonymization")
    # one released_at stamp for the whole run: a run resuming an interrupted one continues its
    # stamp, so every row of the candidate comes from one run (its chunk rows carry it as started_at)
    stamp = min((at for _, at in interrupted.values()), default=run.started)
    released_metadata = {c: sorted(v) for c, v in sorted(config.released_metadata.items())}
    settings = [config.on_unparseable_date, released_metadata, Anonymizer.VERSION]
    # every chunk's latest commit (finished or interrupted run): unchanged chunks are kept, not redone
    done = committed_chunks(wh, config, study, key)
    p = ReleasePass(run, SpanCache(wh, config.tables), key_id, settings, done, stamp, Anonymizer.VERSION)
    run.stage_on_ray("anonymizing in the driver")
    jobs = p.shard_jobs() if run.source is not None else p.jobs()
    executor = "ray" if run.target else "local"
    run.drain(release_chunks(jobs, keyring, config, executor=executor, target=run.target), p.commit)
    # rows without a note id belong to no chunk: written once; then notes that left the source
    wh.replace_partition(
        config.tables.quarantine,
        tables.to_table("quarantine", quarantine_rows(study, key, p.null_id_rows)),
        {"study": study, "key": key, "note_id": None},
    )
    t = p.t
    t.n_quarantined += len(p.null_id_rows)
    t.quarantined_by_code.update(q.code for q in p.null_id_rows)
    part = {"study": study, "key": key}
    for name in (config.tables.deid_notes, config.tables.released_spans, config.tables.quarantine):
        delete_absent(src, name, part)
    fingerprint = ",".join(sorted(t.fingerprints))
    report = AnonymizationReport(
        study,
        key,
        fingerprint,
        p.anonymizer,
        run.n_rows,
        t.n_released,
        t.n_quarantined,
        dict(sorted(t.quarantined_by_code.items())),
        sum(t.by_label.values()),
        dict(sorted(t.by_label.items())),
        dict(sorted(t.operators.items())),
        run.seconds,
        src.n_chunks,
        p.n_kept,
    )
    record_run(wh, config, p.run_row(report.notes_per_s))
    log.info(
        "anonymized study %s key %s: %d released, %d quarantined; %d of %d chunks kept unchanged",
        study,
        key,
        t.n_released,
        t.n_quarantined,
        p.n_kept,
        src.n_chunks,
    )
    return report
