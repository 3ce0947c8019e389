"""Study-level entry points used by the CLI and the Dagster assets.

The runner sits above both execution paths: it asks :mod:`tide_core.execution.dispatch` to
recognize (locally or on Ray) and nothing below imports it (engine <- execution <- runner).

``recognize_study`` reads a study's notes, quarantines bad rows, recognizes the notes whose
cached spans are missing or stale and writes the span cache.  It never changes text.
``anonymize_study`` reads the same notes and the cache only, anonymizes under (study, key) and
writes the released tables.  Both are idempotent: a rerun replaces the partition's rows.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tide_core.cache import tables
from tide_core.cache.span_cache import SpanCache, text_sha256
from tide_core.config import TideConfig
from tide_core.engine.anonymization import anonymize_notes
from tide_core.engine.release_columns import COLUMNS as RELEASE_COLUMNS
from tide_core.engine.release_columns import release_value
from tide_core.engine.validation import ValidatedInput, validate_table
from tide_core.errors import ConfigError
from tide_core.io.warehouse import Warehouse
from tide_core.spans import Note, Quarantined, Span

if TYPE_CHECKING:
    from tide_core.anonymize.keys import KeyProvider
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
    rows = wh.read_table(table).to_pylist()
    return [r for r in rows if str(r.get("patient_id")) in patient_ids]


def build_recognizers(
    wh: Warehouse, config: TideConfig, notes: Sequence[Note]
) -> tuple[list[TideRecognizer], list[dict[str, Any]], list[str]]:
    """Create the configured recognizers; known-PHI specs get this study's patient rows."""
    from tide_core.recognizers.registry import create

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


def _quarantine_rows(study: str, key: str, items: Sequence[Quarantined]) -> list[dict[str, Any]]:
    now = _now()
    return [
        {
            "study": study,
            "key": key,
            "note_id": q.note_id,
            "patient_id": q.patient_id,
            "stage": q.stage,
            "code": q.code,
            "reason": q.reason,
            "row_number": q.row_number,
            "quarantined_at": now,
        }
        for q in items
    ]


def recognize_study(
    wh: Warehouse,
    study: str,
    config: TideConfig,
    *,
    notes_table: str | None = None,
    progress: bool = True,
    recognizers: Sequence[TideRecognizer] | None = None,
    policy: Any = None,
    force: bool = False,
) -> RecognitionReport:
    from tide_core.engine.recognition import recognition_fingerprint
    from tide_core.execution.dispatch import recognize_batches

    t0 = time.perf_counter()
    started = _now()
    validated = read_study_input(wh, study, config, notes_table)
    notes = validated.notes
    warnings: list[str] = []
    specs: list[dict[str, Any]] = []
    if recognizers is None:
        recognizers, specs, warnings = build_recognizers(wh, config, notes)
    fingerprint = recognition_fingerprint(recognizers, policy)
    cache = SpanCache(wh, config.tables)
    hits = set() if force else cache.hits(study, notes, fingerprint)
    todo = [n for n in notes if n.note_id not in hits]
    recognized: dict[str, list[Span]] = {}
    statuses: dict[str, tuple[str, str | None]] = {}
    failed_q: list[Quarantined] = []
    for batch in recognize_batches(
        todo,
        recognizers,
        specs,
        policy,
        executor=config.executor,
        ray_address=config.ray_address,
        batch_size=config.batch_size,
        progress=progress,
        desc=f"recognize {study}",
    ):
        _collect(batch, recognized, statuses)
    by_id = {n.note_id: n for n in notes}
    for nid, (status, code) in statuses.items():
        if status != "ok":
            failed_q.append(
                Quarantined(
                    nid,
                    by_id[nid].patient_id,
                    "recognition",
                    code or "E500",
                    f"note {nid}: recognition failed ({code}); rerun after fixing the recognizer",
                )
            )
    cache.store(study, fingerprint, notes, recognized, statuses, hits)
    review = cache.review_summary(study)  # decisions are data: re-applied by cache.spans on every read
    if review.n_stale:
        warnings.append(
            f"{review.n_stale} reviewer decision(s) on {len(review.stale_notes)} note(s) whose text changed "
            "since review are kept but not applied: review those notes again (tide review)"
        )
    wh.replace_partition(
        config.tables.quarantine,
        tables.to_table("quarantine", _quarantine_rows(study, "", validated.quarantined + failed_q)),
        {"study": study, "key": ""},
    )
    all_spans = cache.spans(study)
    by_label = Counter(s.label for spans in all_spans.values() for s in spans)
    seconds = time.perf_counter() - t0
    n_failed = sum(1 for s, _ in statuses.values() if s != "ok")
    report = RecognitionReport(
        study,
        fingerprint,
        validated.n_rows,
        len(notes),
        len(validated.quarantined),
        len(hits),
        len(todo),
        n_failed,
        sum(by_label.values()),
        dict(sorted(by_label.items())),
        [r.qualified_name for r in recognizers],
        seconds,
        warnings,
        review.n_applied,
        review.n_stale,
    )
    _record_run(
        wh,
        config,
        study,
        "",
        "recognition",
        started,
        validated.n_rows,
        0,
        len(validated.quarantined) + n_failed,
        report.n_spans,
        len(todo),
        len(hits),
        report.notes_per_s,
        report.recognizers,
        None,
        fingerprint,
    )
    log.info(
        "recognized study %s: %d notes (%d cached, %d failed), %d spans",
        study,
        len(notes),
        len(hits),
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
    recognizers: Any,
    anonymizer: str | None,
    fingerprint: str,
) -> None:
    row = {
        "run_id": uuid.uuid4().hex,
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
    }
    wh.append(config.tables.runs, tables.to_table("runs", [row]))


def anonymize_study(
    wh: Warehouse,
    study: str,
    key: str,
    key_provider: KeyProvider,
    config: TideConfig,
    *,
    notes_table: str | None = None,
    progress: bool = True,
) -> AnonymizationReport:
    """Anonymize a study's notes under ``key`` from cached spans only (recognition never runs here)."""
    t0 = time.perf_counter()
    started = _now()
    keyring = key_provider.keyring(study, key)
    validated = read_study_input(wh, study, config, notes_table)
    cache = SpanCache(wh, config.tables)
    entries = cache.entries(study)
    quarantined: list[Quarantined] = list(validated.quarantined)
    ready: list[Note] = []
    for n in validated.notes:
        e = entries.get(n.note_id)
        if e is None:
            quarantined.append(
                Quarantined(
                    n.note_id,
                    n.patient_id,
                    "anonymization",
                    "E401",
                    f"note {n.note_id} has no cached spans; run recognition for study {study}",
                )
            )
        elif e.status != "ok":
            quarantined.append(
                Quarantined(
                    n.note_id,
                    n.patient_id,
                    "recognition",
                    e.error_code or "E402",
                    f"note {n.note_id}: recognition failed ({e.error_code}); not released",
                )
            )
        elif e.text_sha256 != text_sha256(n.text):
            quarantined.append(
                Quarantined(
                    n.note_id,
                    n.patient_id,
                    "anonymization",
                    "E403",
                    f"note {n.note_id} changed since recognition; rerun recognition",
                )
            )
        else:
            ready.append(n)
    spans = cache.spans(study, [n.note_id for n in ready])
    fingerprints = {entries[n.note_id].fingerprint for n in ready}
    fingerprint = ",".join(sorted(fingerprints))
    result = anonymize_notes(ready, spans, keyring, config, progress=progress, desc=f"anonymize {study}/{key}")
    quarantined.extend(result.quarantined)
    now = _now()
    deid_rows: list[dict[str, Any]] = []
    span_rows: list[dict[str, Any]] = []
    for out in result.released:
        src = out.source
        deid_rows.append(
            {
                "study": study,
                "key": key,
                "note_id": src.note_id,
                "note_ref": out.note_ref,
                "patient_ref": out.patient_ref,
                "text": out.note.text,
                "note_date": out.note_date,
                **{c: release_value(src.metadata.get(c), config.metadata_allowlist) for c in RELEASE_COLUMNS},
                "anonymizer": result.anonymizer,
                "fingerprint": entries[src.note_id].fingerprint,
                "released_at": now,
            }
        )
        for s in out.note.spans:
            span_rows.append(
                {
                    "study": study,
                    "key": key,
                    "note_id": s.note_id,
                    "start": s.start,
                    "end": s.end,
                    "out_start": s.out_start,
                    "out_end": s.out_end,
                    "label": s.label,
                    "operator": s.operator,
                    "recognizer": s.recognizer,
                }
            )
    part = {"study": study, "key": key}
    wh.replace_partition(config.tables.deid_notes, tables.to_table("deid_notes", deid_rows), part)
    wh.replace_partition(config.tables.released_spans, tables.to_table("released_spans", span_rows), part)
    wh.replace_partition(
        config.tables.quarantine, tables.to_table("quarantine", _quarantine_rows(study, key, quarantined)), part
    )
    seconds = time.perf_counter() - t0
    by_label = Counter(r["label"] for r in span_rows)
    operators = Counter(r["operator"] for r in span_rows)
    report = AnonymizationReport(
        study,
        key,
        fingerprint,
        result.anonymizer,
        validated.n_rows,
        len(deid_rows),
        len(quarantined),
        dict(sorted(Counter(q.code for q in quarantined).items())),
        len(span_rows),
        dict(sorted(by_label.items())),
        dict(sorted(operators.items())),
        seconds,
    )
    _record_run(
        wh,
        config,
        study,
        key,
        "anonymization",
        started,
        validated.n_rows,
        len(deid_rows),
        len(quarantined),
        len(span_rows),
        0,
        0,
        report.notes_per_s,
        [],
        result.anonymizer,
        fingerprint,
    )
    log.info("anonymized study %s key %s: %d released, %d quarantined", study, key, len(deid_rows), len(quarantined))
    return report
