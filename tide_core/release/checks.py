"""Release checks as plain functions over the warehouse (the Dagster asset checks call these).

Every outcome carries counts only: no note text, no surface strings, no identifiers beyond
note ids' counts.  A check that cannot find its inputs fails (fail closed), saying what to run.
"""

from __future__ import annotations

from tide_core.config import TideConfig
from tide_core.engine.study_chunks import open_source
from tide_core.io.warehouse import Warehouse
from tide_core.release.outcome import CheckOutcome
from tide_core.release.scan import (
    EXACT_DUPLICATE,
    KEEPS_VALUE,
    MIN_SEARCH_LEN,
    NO_SURFACE_SURVIVES,
    OFFSETS_IN_TEXT,
    ROWS_ACCOUNTED,
    scan_release,
    stream_rows,
)
from tide_core.store.release_store import ReleaseStore

__all__ = [
    "EXACT_DUPLICATE",
    "KEEPS_VALUE",
    "MIN_SEARCH_LEN",
    "no_surface_survives",
    "offsets_in_text",
    "rows_accounted",
    "source_rows",
    "versions_recorded",
]


def source_rows(wh: Warehouse, config: TideConfig, study: str) -> int:
    """The study's source rows (valid or not), counted by the warehouse."""
    return open_source(wh, study, config).n_source_rows


def rows_accounted(wh: Warehouse, config: TideConfig, study: str, key: str) -> CheckOutcome:
    """Rows in = de-identified + quarantined, each note in exactly one of the two.

    An exact duplicate row (same note_id, text and patient as an earlier row) is quarantined as
    E608 while its first row is released once; that E608 row is accounted for by its original
    (released or otherwise quarantined) and is not "both released and quarantined".  Streamed
    chunk by chunk (:mod:`tide_core.release.scan`).
    """
    return scan_release(wh, config, study, key, [ROWS_ACCOUNTED])[ROWS_ACCOUNTED]


def offsets_in_text(wh: Warehouse, config: TideConfig, study: str, key: str) -> CheckOutcome:
    """Every released span's output offsets lie inside its released text; inputs inside the source."""
    return scan_release(wh, config, study, key, [OFFSETS_IN_TEXT])[OFFSETS_IN_TEXT]


def no_surface_survives(wh: Warehouse, config: TideConfig, study: str, key: str) -> CheckOutcome:
    """No original PHI surface (from the span cache + source text) appears in the released text.

    Two ways to survive: at its own span (the replacement equals the original), or anywhere else
    in the released note not inside a replaced range (an unrecognized repeat mention, or an edit
    after release).  Ages <= 89 may be kept and are not searched; surfaces shorter than
    ``MIN_SEARCH_LEN`` are only checked in place.  Streamed chunk by chunk.
    """
    return scan_release(wh, config, study, key, [NO_SURFACE_SURVIVES])[NO_SURFACE_SURVIVES]


def _versioned(v: object) -> bool:
    """A ``name@version`` string."""
    return isinstance(v, str) and "@" in v and not v.startswith("@")


def versions_recorded(wh: Warehouse, config: TideConfig, study: str, key: str) -> CheckOutcome:
    """Recognizer and anonymizer name@version are recorded on every released row and run (streamed)."""
    ok = _versioned
    names = config.tables
    where = {"study": study, "key": key}
    n_deid = no_anon = no_fp = no_rec = 0
    anonymizers: set[str] = set()
    recognizers: set[str] = set()
    for batch in stream_rows(wh, names.deid_notes, ["anonymizer", "fingerprint"], where):
        n_deid += len(batch)
        no_anon += sum(1 for r in batch if not ok(r["anonymizer"]))
        no_fp += sum(1 for r in batch if not r["fingerprint"])
        anonymizers.update(r["anonymizer"] for r in batch if r["anonymizer"])
    for batch in stream_rows(wh, names.released_spans, ["recognizer"], where):
        no_rec += sum(1 for r in batch if not ok(r["recognizer"]))
        recognizers.update(r["recognizer"] for r in batch if r["recognizer"])
    runs = ReleaseStore(wh, names).runs(study, ["stage", "key", "recognizers", "anonymizer"])
    has_rec_run = any(r["stage"] == "recognition" and r["recognizers"] not in (None, "", "[]") for r in runs)
    has_anon_run = any(r["stage"] == "anonymization" and r["key"] == key and ok(r["anonymizer"]) for r in runs)
    passed = n_deid > 0 and no_anon == 0 and no_fp == 0 and no_rec == 0 and has_rec_run and has_anon_run
    md = {
        "n_notes_without_anonymizer": no_anon,
        "n_notes_without_fingerprint": no_fp,
        "n_spans_without_recognizer": no_rec,
        "recognition_run_recorded": has_rec_run,
        "anonymization_run_recorded": has_anon_run,
        "anonymizers": ", ".join(sorted(anonymizers)),
        "recognizers": ", ".join(sorted(recognizers)),
    }
    return CheckOutcome(
        passed,
        "versions recorded"
        if passed
        else "released rows or runs lack recognizer/anonymizer versions; rerun the release",
        md,
    )
