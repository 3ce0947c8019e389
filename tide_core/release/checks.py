"""Release checks as plain functions over the warehouse (the Dagster asset checks call these).

Every outcome carries counts only: no note text, no surface strings, no identifiers beyond
note ids' counts.  A check that cannot find its inputs fails (fail closed), saying what to run.
"""

from __future__ import annotations

import re
from collections import defaultdict
from itertools import pairwise
from typing import Any

from tide_core.cache.release_store import ReleaseStore
from tide_core.cache.span_cache import SpanCache
from tide_core.cache.tables import TableNames
from tide_core.config import TideConfig
from tide_core.io.warehouse import Warehouse
from tide_core.release.outcome import CheckOutcome
from tide_core.runner import read_study_input

#: Labels whose operator may keep the original value (ages <= 89); see tide_core.engine.anonymization.
KEEPS_VALUE = frozenset({"AGE"})
#: Shorter surfaces ("3/4", "Al") are too common to search for elsewhere in a note without noise.
MIN_SEARCH_LEN = 4
#: Quarantine code of an exact duplicate source row (tide_core.engine.validation): its first row is released once.
EXACT_DUPLICATE = "E608"


def _release_rows(
    wh: Warehouse, tables: TableNames, study: str, key: str, table: str, columns: list[str] | None = None
) -> list[dict[str, Any]]:
    """Rows of one released table of (study, key), through the ReleaseStore."""
    return ReleaseStore(wh, tables).rows(table, study, key, columns)


def _source_notes(wh: Warehouse, config: TideConfig, study: str) -> dict[str, Any]:

    validated = read_study_input(wh, study, config)
    return {"n_rows": validated.n_rows, "notes": {n.note_id: n for n in validated.notes}}


def source_notes(wh: Warehouse, config: TideConfig, study: str) -> dict[str, Any]:
    """The study's valid source notes by note id."""
    return dict(_source_notes(wh, config, study)["notes"])


def source_rows(wh: Warehouse, config: TideConfig, study: str) -> int:
    """The study's source rows (valid or not)."""
    return int(_source_notes(wh, config, study)["n_rows"])


def rows_accounted(wh: Warehouse, config: TideConfig, study: str, key: str) -> CheckOutcome:
    """Rows in = de-identified + quarantined, each note in exactly one of the two.

    An exact duplicate row (same note_id, text and patient as an earlier row) is quarantined as
    E608 while its first row is released once; that E608 row is accounted for by its original
    (released or otherwise quarantined) and is not "both released and quarantined".
    """
    src = _source_notes(wh, config, study)
    released = [r["note_id"] for r in _release_rows(wh, config.tables, study, key, "deid_notes", ["note_id"])]
    q_rows = _release_rows(wh, config.tables, study, key, "quarantine", ["note_id", "code"])
    quarantined = [r["note_id"] for r in q_rows]
    exact_dups = [r["note_id"] for r in q_rows if r["code"] == EXACT_DUPLICATE]
    other_q = [r["note_id"] for r in q_rows if r["code"] != EXACT_DUPLICATE]
    both = len(set(released) & set(other_q))
    accounted = set(released) | set(other_q)
    orphan_dups = sum(1 for nid in exact_dups if nid not in accounted)
    dup_released = len(released) - len(set(released))
    n_out = len(released) + len(quarantined)
    passed = src["n_rows"] == n_out and both == 0 and dup_released == 0 and orphan_dups == 0 and src["n_rows"] > 0
    md = {
        "n_in": src["n_rows"],
        "n_released": len(released),
        "n_quarantined": len(quarantined),
        "n_released_and_quarantined": both,
        "n_duplicate_releases": dup_released,
        "n_exact_duplicate_rows": len(exact_dups),
        "n_duplicates_without_original": orphan_dups,
    }
    desc = (
        "every source row is released or quarantined, once"
        if passed
        else f"{src['n_rows']} rows in, {len(released)} released + {len(quarantined)} quarantined"
        f" ({both} in both, {dup_released} duplicated"
        + (f", {orphan_dups} exact duplicates without their original" if orphan_dups else "")
        + f"); rematerialize deidentified_notes for {study}/{key}"
    )
    return CheckOutcome(passed, desc, md)


def offsets_in_text(wh: Warehouse, config: TideConfig, study: str, key: str) -> CheckOutcome:
    """Every released span's output offsets lie inside its released text; inputs inside the source."""
    src = _source_notes(wh, config, study)["notes"]
    texts = {
        r["note_id"]: r["text"] or ""
        for r in _release_rows(wh, config.tables, study, key, "deid_notes", ["note_id", "text"])
    }
    spans = _release_rows(
        wh, config.tables, study, key, "released_spans", ["note_id", "start", "end", "out_start", "out_end"]
    )
    bad_out = bad_in = orphans = overlaps = 0
    by_note: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for s in spans:
        text = texts.get(s["note_id"])
        if text is None:
            orphans += 1
            continue
        o0, o1 = s["out_start"], s["out_end"]
        if o0 is None or o1 is None or not (0 <= o0 <= o1 <= len(text)):
            bad_out += 1
        else:
            by_note[s["note_id"]].append((o0, o1))
        note = src.get(s["note_id"])
        if note is None or s["start"] is None or s["end"] is None or not (0 <= s["start"] < s["end"] <= len(note.text)):
            bad_in += 1
    for ranges in by_note.values():
        ranges.sort()
        overlaps += sum(1 for a, b in pairwise(ranges) if b[0] < a[1])
    passed = bad_out == 0 and bad_in == 0 and orphans == 0 and overlaps == 0
    md = {
        "n_spans": len(spans),
        "n_out_of_text": bad_out,
        "n_bad_source_offsets": bad_in,
        "n_orphan_spans": orphans,
        "n_overlapping_outputs": overlaps,
    }
    return CheckOutcome(
        passed,
        "released span offsets lie inside their texts"
        if passed
        else "released span offsets are inconsistent with the released texts; rematerialize "
        f"deidentified_notes for {study}/{key}",
        md,
    )


def no_surface_survives(wh: Warehouse, config: TideConfig, study: str, key: str) -> CheckOutcome:
    """No original PHI surface (from the span cache + source text) appears in the released text.

    Two ways to survive: at its own span (the replacement equals the original), or anywhere else
    in the released note not inside a replaced range (an unrecognized repeat mention, or an edit
    after release).  Ages <= 89 may be kept and are not searched; surfaces shorter than
    ``MIN_SEARCH_LEN`` are only checked in place.
    """

    src = _source_notes(wh, config, study)["notes"]
    released = {
        r["note_id"]: r["text"] or ""
        for r in _release_rows(wh, config.tables, study, key, "deid_notes", ["note_id", "text"])
    }
    rel_spans: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in _release_rows(
        wh, config.tables, study, key, "released_spans", ["note_id", "start", "end", "out_start", "out_end", "label"]
    ):
        rel_spans[s["note_id"]].append(s)
    cached = SpanCache(wh, config.tables).spans(study, list(released))
    in_place = elsewhere = checked = missing_source = 0
    for nid, out_text in released.items():
        note = src.get(nid)
        if note is None:
            missing_source += 1
            continue
        out_ranges = [(s["out_start"], s["out_end"]) for s in rel_spans.get(nid, [])]
        by_in = {(s["start"], s["end"]): s for s in rel_spans.get(nid, [])}
        folded = out_text.casefold()
        surfaces = {(sp.start, sp.end, sp.label) for sp in cached.get(nid, [])}
        surfaces |= {(s["start"], s["end"], s["label"]) for s in rel_spans.get(nid, [])}
        searched: set[str] = set()
        for start, end, label in sorted(surfaces):  # in text order: the same work under any hash seed
            if label in KEEPS_VALUE:
                continue
            surface = note.text[start:end].casefold()
            if not surface.strip():
                continue
            checked += 1
            r = by_in.get((start, end))
            if r is not None and out_text[r["out_start"] : r["out_end"]].casefold() == surface:
                in_place += 1
            term = surface.strip()
            if len(term) < MIN_SEARCH_LEN or term in searched:
                continue
            searched.add(term)
            pattern = re.compile(r"(?<!\w)" + re.escape(term) + r"(?!\w)")
            for m in pattern.finditer(folded):
                if not any(a <= m.start() and m.end() <= b for a, b in out_ranges):  # not inside a surrogate
                    elsewhere += 1
    passed = in_place == 0 and elsewhere == 0 and missing_source == 0
    md = {
        "n_surfaces_checked": checked,
        "n_surviving_in_place": in_place,
        "n_surviving_elsewhere": elsewhere,
        "n_released_without_source": missing_source,
        "n_notes": len(released),
    }
    return CheckOutcome(
        passed,
        "no original surface survives in the released text"
        if passed
        else f"{in_place + elsewhere} original surfaces survive in released notes of {study}/{key}; "
        "block this release, review the notes (tide review) and rerun",
        md,
    )


def _versioned(v: object) -> bool:
    """A ``name@version`` string."""
    return isinstance(v, str) and "@" in v and not v.startswith("@")


def versions_recorded(wh: Warehouse, config: TideConfig, study: str, key: str) -> CheckOutcome:
    """Recognizer and anonymizer name@version are recorded on every released row and run."""
    deid = _release_rows(wh, config.tables, study, key, "deid_notes", ["anonymizer", "fingerprint"])
    spans = _release_rows(wh, config.tables, study, key, "released_spans", ["recognizer"])
    ok = _versioned
    no_anon = sum(1 for r in deid if not ok(r["anonymizer"]))
    no_fp = sum(1 for r in deid if not r["fingerprint"])
    no_rec = sum(1 for r in spans if not ok(r["recognizer"]))
    runs = ReleaseStore(wh, config.tables).runs(study, ["stage", "key", "recognizers", "anonymizer"])
    has_rec_run = any(r["stage"] == "recognition" and r["recognizers"] not in (None, "", "[]") for r in runs)
    has_anon_run = any(r["stage"] == "anonymization" and r["key"] == key and ok(r["anonymizer"]) for r in runs)
    anonymizers = sorted({r["anonymizer"] for r in deid if r["anonymizer"]})
    recognizers = sorted({r["recognizer"] for r in spans if r["recognizer"]})
    passed = bool(deid) and no_anon == 0 and no_fp == 0 and no_rec == 0 and has_rec_run and has_anon_run
    md = {
        "n_notes_without_anonymizer": no_anon,
        "n_notes_without_fingerprint": no_fp,
        "n_spans_without_recognizer": no_rec,
        "recognition_run_recorded": has_rec_run,
        "anonymization_run_recorded": has_anon_run,
        "anonymizers": ", ".join(anonymizers),
        "recognizers": ", ".join(recognizers),
    }
    return CheckOutcome(
        passed,
        "versions recorded"
        if passed
        else "released rows or runs lack recognizer/anonymizer versions; rerun the release",
        md,
    )
