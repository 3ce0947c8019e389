"""The release checks (tide_core.release.checks) on a real release, clean and then tampered with.

One small study is recognized (regex + known-PHI recognizers) and released into DuckDB once;
each test works on its own copy of that warehouse and changes one thing the way a bug or a
later edit would (an original put back at its own span, a row dropped, an offset moved, a
version missing) and checks that the check fails for exactly that reason, while the same
edit with a harmless value passes.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from dataclasses import replace

import pyarrow as pa
import pytest

from tide_core.anonymize.keys import FileKeyProvider
from tide_core.assurance.audit_table import TABLE_NAME as AUDITS_TABLE
from tide_core.assurance.audit_table import AuditRecord, records_to_table
from tide_core.assurance.drift_table import DRIFT
from tide_core.assurance.drift_table import TABLE_NAME as DRIFT_TABLE
from tide_core.assurance.gate import ReleaseGatePolicy
from tide_core.config import TideConfig
from tide_core.io.open import open_warehouse
from tide_core.release import evidence
from tide_core.release.checks import (
    MIN_SEARCH_LEN,
    no_surface_survives,
    offsets_in_text,
    rows_accounted,
    versions_recorded,
)
from tide_core.release.lifecycle import gate
from tide_core.runner import anonymize_study, recognize_study
from tide_core.store import tables
from tide_core.store.release_content import row_hash

CONFIG = TideConfig.preset(
    "rules",
    metadata_vocabulary={"site": ("site1", "site2"), "source": ("ehr",), "note_type": ("progress", "phone")},
)
S, K = "s", "k"
NOTES = [
    {"note_id": "a", "patient_id": "p1", "text": "Pt Mary Lee seen 03/04/2021, age 45. Lee is well."},
    {"note_id": "b", "patient_id": "p2", "text": "Call 617-555-0100 re: Bob Stone."},
    {"note_id": "c", "patient_id": "p3", "text": "Seen by Ann Ito today."},
    {"note_id": "d", "patient_id": None, "text": "No patient: quarantined at input."},
]
META = {
    "a": ("site1", "ehr", "progress"),
    "b": ("site1", "ehr", "phone"),
    "c": ("site2", "ehr", "progress"),
    "d": ("site2", "ehr", "progress"),
}
PATIENTS = [
    {"patient_id": "p1", "first_name": "Mary", "last_name": "Lee"},
    {"patient_id": "p2", "first_name": "Bob", "last_name": "Stone"},
    {"patient_id": "p3", "first_name": "Ann", "last_name": "Ito"},
]
BUCKETS = ["site1|ehr|phone", "site1|ehr|progress", "site2|ehr|progress"]


def _rows():
    return [
        dict(r, site=META[r["note_id"]][0], source=META[r["note_id"]][1], note_type=META[r["note_id"]][2])
        for r in NOTES
    ]


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    root = tmp_path_factory.mktemp("release_checks")
    wh = open_warehouse(f"duckdb:{root / 'wh.duckdb'}")
    try:
        wh.replace_table("notes", pa.Table.from_pylist(_rows()))
        specs = ({"name": "tide.regex"}, {"name": "tide.known_phi", "rows": PATIENTS})
        recognize_study(wh, S, CONFIG.with_(recognizers=specs), progress=False)
        keys = FileKeyProvider(root / "keys")
        keys.create(S, K)
        anonymize_study(wh, S, K, keys, CONFIG, progress=False)
    finally:
        wh.close()
    return root / "wh.duckdb"


@pytest.fixture
def wh(base, tmp_path):
    shutil.copy(base, tmp_path / "wh.duckdb")
    w = open_warehouse(f"duckdb:{tmp_path / 'wh.duckdb'}")
    yield w
    w.close()


def _read(wh, table):
    return wh.read_table(table, where={"study": S, "key": K}).to_pylist()


def _write(wh, table, kind, rows):
    wh.replace_partition(table, tables.to_table(kind, rows), {"study": S, "key": K})


def _edit_text(wh, note_id, fn):
    rows = _read(wh, "tide_deid_notes")
    for r in rows:
        if r["note_id"] == note_id:
            r["text"] = fn(r["text"])
    _write(wh, "tide_deid_notes", "deid_notes", rows)


def _splice(wh, note_id, label, new):
    """Write ``new`` as the released value of the note's first ``label`` span, offsets kept consistent."""
    spans = _read(wh, "tide_released_spans")
    target = next(r for r in spans if r["note_id"] == note_id and r["label"] == label)
    a, b = target["out_start"], target["out_end"]
    _edit_text(wh, note_id, lambda t: t[:a] + new + t[b:])
    delta = len(new) - (b - a)
    for r in spans:
        if r["note_id"] == note_id and r["out_start"] >= b:
            r["out_start"] += delta
            r["out_end"] += delta
    target["out_end"] = a + len(new)
    _write(wh, "tide_released_spans", "released_spans", spans)


def _span(wh, note_id, label):
    return next(s for s in _read(wh, "tide_released_spans") if s["note_id"] == note_id and s["label"] == label)


def _outcome(check, wh):
    return check(wh, CONFIG, S, K)


# -- the clean release ----------------------------------------------------------------------


def test_the_clean_release_passes_every_check(wh):
    assert [r["note_id"] for r in _read(wh, "tide_deid_notes")] == ["a", "b", "c"]
    out = _outcome(rows_accounted, wh)
    assert out.passed and out.description == "every source row is released or quarantined, once"
    assert out.metadata == {
        "n_in": 4,
        "n_released": 3,
        "n_quarantined": 1,
        "n_released_and_quarantined": 0,
        "n_duplicate_releases": 0,
        "n_exact_duplicate_rows": 0,
        "n_duplicates_without_original": 0,
    }
    out = _outcome(offsets_in_text, wh)
    assert out.passed and out.description == "released span offsets lie inside their texts"
    n_spans = len(_read(wh, "tide_released_spans"))
    assert n_spans == 7
    assert out.metadata == {
        "n_spans": n_spans,
        "n_out_of_text": 0,
        "n_bad_source_offsets": 0,
        "n_orphan_spans": 0,
        "n_overlapping_outputs": 0,
    }
    out = _outcome(no_surface_survives, wh)
    assert out.passed and out.description == "no original surface survives in the released text"
    assert out.metadata == {  # the AGE span (45, kept by rule) is not a surface to search for
        "n_surfaces_checked": n_spans - 1,
        "n_surviving_in_place": 0,
        "n_surviving_elsewhere": 0,
        "n_released_without_source": 0,
        "n_notes": 3,
    }
    out = _outcome(versions_recorded, wh)
    assert out.passed and out.description == "versions recorded"
    assert out.metadata["anonymizers"] == "tide.anonymizer@6"
    assert out.metadata["recognizers"] == "tide.known_phi@1, tide.regex@4"
    assert out.metadata["recognition_run_recorded"] is True and out.metadata["anonymization_run_recorded"] is True
    assert _buckets(wh) == BUCKETS


# -- no_surface_survives ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "note_id,label,put_back,survives",
    [
        ("b", "PHONE", "617-555-0100", True),  # the original, at its own span
        ("b", "PHONE", "000-000-0000", False),
        ("a", "PATIENT", "MARY LEE", True),  # in another case
        ("a", "PATIENT", "Mary Lea", False),
        ("a", "DATE", "03/04/2021", True),  # any label but AGE
    ],
)
def test_an_original_put_back_at_its_own_span_is_caught(wh, note_id, label, put_back, survives):
    """In place: the released span holds the original itself (an operator that returned its input)."""
    _splice(wh, note_id, label, put_back)
    assert _outcome(offsets_in_text, wh).passed  # the tampered release is otherwise consistent
    out = _outcome(no_surface_survives, wh)
    assert out.passed is not survives
    assert out.metadata["n_surviving_in_place"] == int(survives)
    assert out.metadata["n_surviving_elsewhere"] == 0  # inside its own span it is not "elsewhere"
    if survives:
        assert out.description == (
            "1 original surfaces survive in released notes of s/k; block this release, review the notes (tide review) "
            "and rerun"
        )
        assert put_back not in out.description + json.dumps(out.metadata)


@pytest.mark.parametrize("put_back,survives", [("Lee", True), ("Lea", False)])
def test_a_short_original_is_checked_in_place(wh, put_back, survives):
    """ "Lee" (3 characters) is too short to search for elsewhere, but not at its own span."""
    spans = [r for r in _read(wh, "tide_released_spans") if r["note_id"] == "a" and r["label"] == "PATIENT"]
    assert [r["end"] - r["start"] for r in spans] == [8, 3]
    rows = _read(wh, "tide_released_spans")
    second = max(spans, key=lambda r: r["start"])
    _edit_text(wh, "a", lambda t: t[: second["out_start"]] + put_back + t[second["out_end"] :])
    for r in rows:
        if r["note_id"] == "a" and r["start"] == second["start"]:
            r["out_end"] = r["out_start"] + len(put_back)
    _write(wh, "tide_released_spans", "released_spans", rows)
    out = _outcome(no_surface_survives, wh)
    assert out.passed is not survives and out.metadata["n_surviving_in_place"] == int(survives)


@pytest.mark.parametrize(
    "appended,elsewhere",
    [
        (" Mary Lee called.", 1),  # a later edit brings the name back
        (" mary lee called.", 1),  # in any case
        (" Mary Lea called.", 0),  # another name
        (" Mary Leeds called.", 0),  # not on a word boundary
        (" Lee called.", 0),  # "Lee" is shorter than MIN_SEARCH_LEN: only checked in place
    ],
)
def test_an_original_elsewhere_in_the_released_note_is_caught(wh, appended, elsewhere):
    assert MIN_SEARCH_LEN == 4
    _edit_text(wh, "a", lambda t: t + appended)
    out = _outcome(no_surface_survives, wh)
    assert out.passed is (elsewhere == 0)
    assert (out.metadata["n_surviving_elsewhere"], out.metadata["n_surviving_in_place"]) == (elsewhere, 0)


@pytest.mark.parametrize("appended,elsewhere", [(" Mary Lee, Mary Lee.", 2), (" Ann Ito.", 0)])
def test_every_repeat_is_counted_and_each_note_is_searched_for_its_own_surfaces(wh, appended, elsewhere):
    _edit_text(wh, "a", lambda t: t + appended)  # Ann Ito is note c's patient, not a's
    out = _outcome(no_surface_survives, wh)
    assert out.metadata["n_surviving_elsewhere"] == elsewhere and out.passed is (elsewhere == 0)


def test_a_released_note_without_its_source_fails(wh):
    wh.replace_table("notes", pa.Table.from_pylist([r for r in _rows() if r["note_id"] != "c"]))
    out = _outcome(no_surface_survives, wh)
    assert out.passed is False and out.metadata["n_released_without_source"] == 1
    assert out.metadata["n_surviving_in_place"] == out.metadata["n_surviving_elsewhere"] == 0


# -- rows_accounted -------------------------------------------------------------------------


def _drop_released(wh):
    _write(wh, "tide_deid_notes", "deid_notes", [r for r in _read(wh, "tide_deid_notes") if r["note_id"] != "c"])


def _duplicate_released(wh):
    rows = _read(wh, "tide_deid_notes")
    _write(wh, "tide_deid_notes", "deid_notes", rows + [rows[0]])


def _release_a_quarantined_row(wh):
    """The quarantined row d is also released (and one released note lost, so the totals match)."""
    rows = [r for r in _read(wh, "tide_deid_notes") if r["note_id"] != "c"]
    _write(wh, "tide_deid_notes", "deid_notes", rows + [dict(rows[0], note_id="d")])


@pytest.mark.parametrize(
    "tamper,md",
    [
        (_drop_released, {"n_released": 2, "n_released_and_quarantined": 0, "n_duplicate_releases": 0}),
        (_duplicate_released, {"n_released": 4, "n_released_and_quarantined": 0, "n_duplicate_releases": 1}),
        (_release_a_quarantined_row, {"n_released": 3, "n_released_and_quarantined": 1, "n_duplicate_releases": 0}),
    ],
)
def test_rows_lost_duplicated_or_both_released_and_quarantined_fail(wh, tamper, md):
    tamper(wh)
    out = _outcome(rows_accounted, wh)
    assert out.passed is False
    assert out.metadata == {
        "n_in": 4,
        "n_quarantined": 1,
        "n_exact_duplicate_rows": 0,
        "n_duplicates_without_original": 0,
        **md,
    }
    n_q = 1
    assert out.description == (
        f"4 rows in, {md['n_released']} released + {n_q} quarantined ({md['n_released_and_quarantined']} in both, "
        f"{md['n_duplicate_releases']} duplicated); rematerialize deidentified_notes for s/k"
    )


def test_a_study_with_no_rows_is_not_accounted_for(wh):
    wh.replace_table("notes", pa.Table.from_pylist([dict(_rows()[0], study="other")]))
    out = rows_accounted(wh, CONFIG, "nothing", K)
    assert out.passed is False and out.metadata["n_in"] == 0 and out.metadata["n_released"] == 0


def test_a_release_that_was_never_written_fails_every_check(wh):
    """No deid rows for this key at all: fail closed, not 'nothing to complain about'."""
    assert rows_accounted(wh, CONFIG, S, "never").passed is False
    assert versions_recorded(wh, CONFIG, S, "never").passed is False
    assert gate(wh, CONFIG, S, "never").passed is False


# -- offsets_in_text ------------------------------------------------------------------------


def _move_span(field, delta, note_id="a", label="DATE"):
    def tamper(wh):
        rows = _read(wh, "tide_released_spans")
        for r in rows:
            if r["note_id"] == note_id and r["label"] == label:
                r[field] += delta if isinstance(delta, int) else delta(r)
        _write(wh, "tide_released_spans", "released_spans", rows)

    return tamper


def _orphan_span(wh):
    rows = _read(wh, "tide_released_spans")
    _write(wh, "tide_released_spans", "released_spans", rows + [dict(rows[0], note_id="zz")])


def _text_len(wh, note_id):
    return len(next(r["text"] for r in _read(wh, "tide_deid_notes") if r["note_id"] == note_id))


@pytest.mark.parametrize(
    "make_tamper,failure",
    [
        (lambda wh: _move_span("out_end", _text_len(wh, "b") + 1, "b", "PHONE"), "n_out_of_text"),
        (lambda wh: _move_span("out_start", lambda r: r["out_end"] - r["out_start"] + 1), "n_out_of_text"),
        (lambda wh: _move_span("out_start", lambda r: -r["out_start"] - 1), "n_out_of_text"),
        (lambda wh: _move_span("end", 100), "n_bad_source_offsets"),
        (lambda wh: _move_span("start", lambda r: r["end"] - r["start"]), "n_bad_source_offsets"),
        (lambda wh: _move_span("start", lambda r: -r["start"] - 1), "n_bad_source_offsets"),
        (lambda wh: _orphan_span, "n_orphan_spans"),
        (lambda wh: _move_span("out_start", -8), "n_overlapping_outputs"),
    ],
)
def test_offsets_outside_their_texts_fail(wh, make_tamper, failure):
    make_tamper(wh)(wh)
    out = _outcome(offsets_in_text, wh)
    assert out.passed is False
    assert {k: v for k, v in out.metadata.items() if v and k != "n_spans"} == {failure: 1}
    assert out.description == (
        "released span offsets are inconsistent with the released texts; rematerialize deidentified_notes for s/k"
    )


def test_spans_reaching_both_ends_of_texts_pass(wh):
    """Edge offsets: a span over the whole released text and its whole source is in range."""
    text = NOTES[2]["text"]
    _write(
        wh,
        "tide_released_spans",
        "released_spans",
        [r for r in _read(wh, "tide_released_spans") if r["note_id"] != "c"]
        + [
            {
                "study": S,
                "key": K,
                "note_id": "c",
                "start": 0,
                "end": len(text),
                "out_start": 0,
                "out_end": _text_len(wh, "c"),
                "label": "OTHER",
                "operator": "org.surrogate",
                "recognizer": "test@1",
            }
        ],
    )
    out = _outcome(offsets_in_text, wh)
    assert out.passed, out.metadata


# -- versions_recorded ----------------------------------------------------------------------


def _set(table, kind, field, value):
    def tamper(wh):
        rows = _read(wh, table)
        rows[0][field] = value
        _write(wh, table, kind, rows)

    return tamper


def _drop_runs(stage):
    def tamper(wh):
        rows = [r for r in wh.read_table("tide_runs").to_pylist() if r["stage"] != stage]
        wh.replace_table("tide_runs", tables.to_table("runs", rows))

    return tamper


def _runs_set(stage, field, value):
    def tamper(wh):
        rows = wh.read_table("tide_runs").to_pylist()
        for r in rows:
            if r["stage"] == stage:
                r[field] = value
        wh.replace_table("tide_runs", tables.to_table("runs", rows))

    return tamper


@pytest.mark.parametrize(
    "tamper,key,value",
    [
        (_set("tide_deid_notes", "deid_notes", "anonymizer", "tide.anonymizer"), "n_notes_without_anonymizer", 1),
        (_set("tide_deid_notes", "deid_notes", "anonymizer", "@1"), "n_notes_without_anonymizer", 1),
        (_set("tide_deid_notes", "deid_notes", "anonymizer", None), "n_notes_without_anonymizer", 1),
        (_set("tide_deid_notes", "deid_notes", "fingerprint", ""), "n_notes_without_fingerprint", 1),
        (_set("tide_released_spans", "released_spans", "recognizer", "regex"), "n_spans_without_recognizer", 1),
        (_drop_runs("recognition"), "recognition_run_recorded", False),
        (_runs_set("recognition", "recognizers", "[]"), "recognition_run_recorded", False),
        (_runs_set("recognition", "recognizers", ""), "recognition_run_recorded", False),
        (_drop_runs("anonymization"), "anonymization_run_recorded", False),
        (_runs_set("anonymization", "key", "other"), "anonymization_run_recorded", False),
        (_runs_set("anonymization", "anonymizer", "tide.anonymizer"), "anonymization_run_recorded", False),
    ],
)
def test_a_missing_version_fails(wh, tamper, key, value):
    tamper(wh)
    out = _outcome(versions_recorded, wh)
    assert out.passed is False and out.metadata[key] == value
    assert out.description == "released rows or runs lack recognizer/anonymizer versions; rerun the release"


@pytest.mark.parametrize("value", ["tide.anonymizer@4", "x@y"])
def test_any_name_at_version_is_a_version(wh, value):
    _set("tide_deid_notes", "deid_notes", "anonymizer", value)(wh)
    assert _outcome(versions_recorded, wh).passed


# -- the release gate (tide_core.release.lifecycle.gate) --------------------------------------


def _buckets(wh, config=CONFIG, key=K):
    """The audit buckets of the candidate's rows (site|source|note_type)."""
    return sorted({r.bucket for r in evidence.candidate_rows(wh, config.tables, S, key)})


def _audit(wh, buckets=BUCKETS, leaks=0, config=CONFIG):
    """Plan the audit of the content no round covers and record a census of each frame of
    ``buckets`` (``leaks`` leaking patients in each); the frames of other buckets get no round."""
    recs = []
    for plan in evidence.plan_audit(wh, config.tables, S, K):
        if plan.bucket in buckets:
            recs.append(
                evidence.record_round(wh, config.tables, S, K, plan.frame_id, plan.n_patients, leaks, reviewer="test")
            )
    return recs


def _drift(wh, band, seconds=0):
    row = {
        "study": S,
        "key": K,
        "band": band,
        "n_docs": 3,
        "low_confidence": False,
        "worst_component": "mix",
        "worst_band": band,
        "n_components": 1,
        "reference_name": "ref",
        "checked_at": dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=seconds),
        "result_json": json.dumps({"band": band}),
    }
    wh.append(DRIFT_TABLE, pa.Table.from_pylist([row], schema=DRIFT))


def _gate(wh, config=CONFIG, policy=None):
    out = gate(wh, config, S, K, policy)
    return out, out.metadata(policy or ReleaseGatePolicy())


def test_the_gate_blocks_without_audits_and_passes_with_them(wh):
    out, md = _gate(wh)
    assert out.passed is False and out.awaiting_audit is True and md["n_rounds_counted"] == 0
    assert out.reasons[0].startswith("no audit round covers this content: the release is unvalidated")
    assert md["n_batches"] == md["n_batches_unaudited"] == 3  # one batch per bucket (one note each)
    _audit(wh, BUCKETS[:2])  # one bucket left unaudited
    out, md = _gate(wh)
    assert out.passed is False and out.awaiting_audit is True and md["n_batches_unaudited"] == 1
    assert [r.endswith("(1 notes, 1 patients) has no audit: unvalidated") for r in out.reasons] == [True]
    _audit(wh, BUCKETS[2:])
    out, md = _gate(wh)
    assert out.passed is True and md["reasons"] == "none" and out.reasons == []
    assert (md["n_batches"], md["n_batches_unaudited"], md["n_rounds_counted"]) == (3, 0, 3)
    assert md["target_rate"] == 0.01 and md["confidence"] == 0.95 and md["worst_upper_bound"] == 0.0
    assert "release s/k" in out.statement and out.statement.endswith("[3 audit rounds, 3 batches]")


@pytest.mark.parametrize("leaks,passed", [(0, True), (1, False)])
def test_the_gate_reads_the_audited_leaks(wh, leaks, passed):
    _audit(wh, BUCKETS, leaks=leaks)
    out, md = _gate(wh)
    assert out.passed is passed and out.awaiting_audit is False
    assert md["worst_upper_bound"] == float(leaks)  # one patient per frame: a leak is all of it


@pytest.mark.parametrize("bands,passed", [(["stable"], True), (["drift"], False), (["drift", "stable"], True)])
def test_the_gate_reads_the_newest_drift_verdict(wh, bands, passed):
    _audit(wh)
    for i, band in enumerate(bands):
        _drift(wh, band, seconds=i)
    out, _ = _gate(wh)
    assert out.passed is passed and out.awaiting_audit is False
    assert out.reasons == (
        [] if passed else ["drift monitor band is 'drift': the batch differs from the validated reference"]
    )


def test_the_gate_honours_the_policy(wh):
    _audit(wh, BUCKETS[:2])
    assert _gate(wh)[0].passed is False
    # a policy that requires no audit of any bucket passes the unaudited batch
    assert _gate(wh, policy=ReleaseGatePolicy(require_audit=False, required_buckets=()))[0].passed is True
    _audit(wh, BUCKETS[2:])
    _drift(wh, "drift")
    assert _gate(wh)[0].passed is False
    assert _gate(wh, policy=ReleaseGatePolicy(block_on_drift=False))[0].passed is True
    out, md = _gate(wh, policy=ReleaseGatePolicy(block_on_drift=False, label="site-policy@3"))
    assert md["policy"].startswith("site-policy@3 sha256:")


def test_checks_read_only_their_own_study(wh):
    """Rows of another study in the same notes table are not this release's rows."""
    rows = [dict(r, study=S) for r in _rows()] + [dict(_rows()[0], note_id="x", study="other")]
    wh.replace_table("notes", pa.Table.from_pylist(rows))
    assert _outcome(rows_accounted, wh).metadata["n_in"] == 4 and _outcome(rows_accounted, wh).passed


@pytest.mark.parametrize("n_notes,passed", [(1, True), (0, False)])
def test_a_one_note_study_can_be_accounted_for(tmp_path, key_provider, n_notes, passed):
    w = open_warehouse(f"duckdb:{tmp_path / 'one.duckdb'}")
    try:
        w.replace_table("notes", pa.Table.from_pylist([dict(_rows()[2], study=S if n_notes else "other")]))
        recognize_study(w, S, CONFIG.with_(recognizers=({"name": "tide.regex"},)), progress=False)
        key_provider.create(S, K)
        anonymize_study(w, S, K, key_provider, CONFIG, progress=False)
        out = rows_accounted(w, CONFIG, S, K)
        assert out.passed is passed and out.metadata["n_in"] == n_notes
    finally:
        w.close()


def test_the_gate_reads_only_this_releases_audits_and_reports_them(wh):
    """Rounds of another study or key, even naming this release's frames, are not this release's."""
    frames = [p.frame_id for p in evidence.plan_audit(wh, CONFIG.tables, S, K)]
    recs = [AuditRecord.create("other-study", K, "b", 1, 0, reviewer="test", frame_id=f) for f in frames]
    recs += [AuditRecord.create(S, "other-key", "b", 1, 0, reviewer="test", frame_id=f) for f in frames]
    wh.append(AUDITS_TABLE, records_to_table(recs))
    out, md = _gate(wh)
    assert out.passed is False and md["passed"] is False and md["n_rounds_counted"] == 0
    assert md["statement"] == "" and md["n_rounds_without_frame"] == 0
    assert md["reasons"].startswith("no audit round covers this content: the release is unvalidated")
    assert md["reasons"].count("; ") == 3  # no audit + three unaudited batches, "; "-joined
    _audit(wh)
    out, md = _gate(wh)
    assert out.passed is True and md["passed"] is True and md["n_rounds_counted"] == 3
    assert "release s/k" in out.statement and md["statement"] == out.statement


def test_rounds_without_a_frame_count_for_nothing(wh):
    """A round that names no frame (or a frame this release does not have) covers no content: however
    large and clean, the release still awaits audit."""
    recs = [AuditRecord.create(S, K, b, 500, 0, reviewer="test") for b in BUCKETS]
    recs += [AuditRecord.create(S, K, b, 500, 0, reviewer="test", frame_id="fnosuchframe") for b in BUCKETS]
    wh.append(AUDITS_TABLE, records_to_table(recs))
    out, md = _gate(wh)
    assert out.passed is False and out.awaiting_audit is True
    assert (md["n_rounds_counted"], md["n_rounds_without_frame"], md["n_batches_unaudited"]) == (0, 6, 3)


def test_a_round_counts_only_for_the_content_its_frame_holds(wh):
    """The audited rows, re-made (here: note c's text changed, so its row hash changed), are new
    content: its earlier round no longer covers it, the other notes keep their evidence."""
    _audit(wh)
    assert _gate(wh)[0].passed
    rows = _read(wh, "tide_deid_notes")
    for r in rows:
        if r["note_id"] == "c":
            r["text"] += " Stable."
            r["row_hash"] = row_hash(S, K, r)
    _write(wh, "tide_deid_notes", "deid_notes", rows)
    out, md = _gate(wh)
    assert out.passed is False and out.awaiting_audit is True
    assert (md["n_batches"], md["n_batches_unaudited"], md["n_rounds_counted"]) == (3, 1, 3)
    plans = evidence.plan_audit(wh, CONFIG.tables, S, K)  # only the new content is planned
    assert [(p.bucket, p.n_notes) for p in plans] == [("site2|ehr|progress", 1)]


@pytest.mark.parametrize(
    "audited, leaks, drift, awaiting",
    [
        ([], 0, None, True),  # no audit at all: the audit is what is missing
        (BUCKETS[:1], 0, None, True),  # one round, two buckets unaudited
        (BUCKETS[:2], 0, None, True),  # one bucket unaudited
        (BUCKETS, 0, None, False),  # passed
        (BUCKETS, 1, None, False),  # audited, and a leak was found
        (BUCKETS[:2], 1, None, False),  # one bucket missing, and the others leak
        (BUCKETS[:2], 0, "drift", False),  # one bucket missing, and drift
    ],
)
def test_the_gate_says_when_it_waits_only_for_audit_evidence(wh, audited, leaks, drift, awaiting):
    """``awaiting_audit``: blocked, and every reason is a missing audit (nothing failed yet)."""
    _audit(wh, audited, leaks=leaks)
    if drift:
        _drift(wh, drift)
    out, md = _gate(wh)
    assert out.awaiting_audit is awaiting and md["awaiting_audit"] is awaiting
    assert out.passed is (audited == BUCKETS and not leaks and not drift)


def test_the_gate_joins_its_reasons_with_semicolons_and_names_no_bucket(wh):
    """Reasons reach tide_releases, Dagster metadata and logs: ids and counts only, never a metadata value."""
    _, md = _gate(wh)
    reasons = md["reasons"].split("; ")
    assert len(reasons) == 4 and reasons[0].startswith("no audit round covers this content")
    assert all(
        re.fullmatch(r"batch n[0-9a-f]{10} \(1 notes, 1 patients\) has no audit: unvalidated", r) for r in reasons[1:]
    )
    _audit(wh, leaks=1)
    _drift(wh, "drift")
    _, md = _gate(wh)
    assert md["reasons"].count("; ") == 3  # three leaking batches and the drift verdict
    for value in ("site1", "site2", "ehr", "progress", "phone", "|"):
        assert value not in md["reasons"]


def test_the_gate_reads_the_audit_tables_of_the_config(wh):
    """Frames and rounds recorded in a site's renamed tables: the gate finds them there, and only there."""
    site = replace(CONFIG, tables=replace(CONFIG.tables, audits="site_audits", audit_frames="site_audit_frames"))
    _audit(wh, config=site)
    assert not wh.table_exists(AUDITS_TABLE) and not wh.table_exists(CONFIG.tables.audit_frames)
    assert _gate(wh, site)[0].passed is True
    out, md = _gate(wh)
    assert out.passed is False and md["n_rounds_counted"] == 0


def test_the_gate_requires_the_buckets_of_this_key_only(wh):
    """Released notes of another key in another bucket are not this release's buckets."""
    rows = _read(wh, "tide_deid_notes")
    other = [dict(rows[0], key="k2", site="site9", note_id="z")]
    wh.replace_partition("tide_deid_notes", tables.to_table("deid_notes", other), {"study": S, "key": "k2"})
    assert _buckets(wh) == BUCKETS
    _audit(wh)
    out, md = _gate(wh)
    assert out.passed is True and md["n_batches"] == 3


def test_a_gate_that_requires_nothing_passes_without_a_statement(wh):
    """A policy without required audit or buckets passes an unaudited release: no bound to state."""
    out, md = _gate(wh, policy=ReleaseGatePolicy(require_audit=False, required_buckets=()))
    assert out.passed is True and out.awaiting_audit is False and md["n_batches"] == 3
    assert md["reasons"] == "none"
    assert out.statement == "" and md["statement"] == ""


def test_versions_name_every_anonymizer_of_the_release(wh):
    _set("tide_deid_notes", "deid_notes", "anonymizer", "tide.anonymizer@9")(wh)
    out = _outcome(versions_recorded, wh)
    assert out.passed and out.metadata["anonymizers"] == "tide.anonymizer@6, tide.anonymizer@9"


def test_a_released_note_without_text_has_no_room_for_its_spans(wh):
    """Note c's spans moved to the first four output characters fit its text; with a NULL text they do not."""
    spans = _read(wh, "tide_released_spans")
    mine = [r for r in spans if r["note_id"] == "c"]
    assert 1 <= len(mine) <= 2
    for i, r in enumerate(mine):
        r["out_start"], r["out_end"] = 2 * i, 2 * i + 1
    _write(wh, "tide_released_spans", "released_spans", spans)
    assert _outcome(offsets_in_text, wh).passed
    _edit_text(wh, "c", lambda t: None)
    out = _outcome(offsets_in_text, wh)
    assert out.passed is False and out.metadata["n_out_of_text"] == len(mine)


RENAMED = {
    "deid_notes": "site_deid_notes",
    "released_spans": "site_released_spans",
    "quarantine": "site_quarantine",
    "runs": "site_runs",
    "spans": "site_spans",
    "recognized_notes": "site_recognized_notes",
}


def test_the_checks_read_the_configured_table_names(wh):
    """A site that renamed TIDE's tables: the checks read the renamed ones, never the defaults."""
    site = replace(CONFIG, tables=replace(CONFIG.tables, **RENAMED))
    before = {c.__name__: _outcome(c, wh).metadata for c in (rows_accounted, offsets_in_text, versions_recorded)}
    before["no_surface_survives"] = _outcome(no_surface_survives, wh).metadata
    for kind, name in RENAMED.items():
        table = wh.read_table(getattr(CONFIG.tables, kind))
        wh.replace_table(name, table)
        wh.replace_table(getattr(CONFIG.tables, kind), table.slice(0, 0))  # the defaults are now empty
    for check in (rows_accounted, offsets_in_text, versions_recorded, no_surface_survives):
        out = check(wh, site, S, K)
        assert out.passed, check.__name__
        assert out.metadata == before[check.__name__], check.__name__
        assert check(wh, CONFIG, S, K).metadata != before[check.__name__], check.__name__
    assert _buckets(wh, site) == BUCKETS and _buckets(wh, CONFIG) == []


def test_the_checks_read_only_their_own_key(wh):
    """Another key's release of the same study, broken in every way, does not touch this one's checks."""
    broken = {
        "tide_deid_notes": ("deid_notes", {"text": "", "anonymizer": "none", "fingerprint": "", "site": "site9"}),
        "tide_released_spans": ("released_spans", {"out_start": 10_000, "out_end": 10_001, "recognizer": "none"}),
        "tide_quarantine": ("quarantine", {}),
    }
    for name, (kind, change) in broken.items():
        rows = [dict(r, key="k2", **change) for r in _read(wh, name)]
        wh.replace_partition(name, tables.to_table(kind, rows), {"study": S, "key": "k2"})
    for check in (rows_accounted, offsets_in_text, versions_recorded, no_surface_survives):
        assert _outcome(check, wh).passed, check.__name__
    assert _buckets(wh) == BUCKETS


def test_offsets_are_checked_against_this_studys_source(wh):
    """A note of another study with the same id and a shorter text is not this note's source."""
    rows = [dict(r, study=S) for r in _rows()]
    rows += [dict(r, study="other", text="x") for r in _rows()]
    wh.replace_table("notes", pa.Table.from_pylist(rows))
    assert _outcome(offsets_in_text, wh).passed
    assert _outcome(no_surface_survives, wh).passed


def _set_span(field, value, index=0):
    """Set ``field`` of the ``index``-th released span (in table order) to ``value``."""

    def tamper(wh):
        rows = _read(wh, "tide_released_spans")
        rows[index][field] = value
        _write(wh, "tide_released_spans", "released_spans", rows)

    return tamper


@pytest.mark.parametrize(
    "tamper, failure",
    [
        (_set_span("out_start", None), "n_out_of_text"),  # one end missing is enough
        (_set_span("out_end", None), "n_out_of_text"),
        (_set_span("start", None), "n_bad_source_offsets"),
        (_set_span("end", None), "n_bad_source_offsets"),
    ],
)
def test_a_span_with_one_offset_missing_fails(wh, tamper, failure):
    tamper(wh)
    out = _outcome(offsets_in_text, wh)
    assert out.passed is False and out.metadata[failure] == 1


def test_a_span_of_a_note_without_source_has_bad_source_offsets(wh):
    """Note c is no longer in the source: its released spans cannot be checked against it."""
    n_c = sum(1 for r in _read(wh, "tide_released_spans") if r["note_id"] == "c")
    wh.replace_table("notes", pa.Table.from_pylist([r for r in _rows() if r["note_id"] != "c"]))
    out = _outcome(offsets_in_text, wh)
    assert out.passed is False and out.metadata["n_bad_source_offsets"] == n_c >= 1


def test_every_bad_span_is_counted(wh):
    rows = _read(wh, "tide_released_spans")
    orphans = [dict(rows[0], note_id="zz"), dict(rows[0], note_id="zy")]
    for r in rows[-2:]:
        r["out_end"] = r["out_start"] + 10_000
        r["end"] = r["start"] + 10_000
    _write(wh, "tide_released_spans", "released_spans", orphans + rows)  # the orphans come first
    out = _outcome(offsets_in_text, wh)
    assert out.passed is False
    assert (out.metadata["n_orphan_spans"], out.metadata["n_out_of_text"], out.metadata["n_bad_source_offsets"]) == (
        2,
        2,
        2,
    )


def test_empty_and_adjacent_output_ranges_pass(wh):
    """A span replaced by nothing (out_start == out_end), and two touching outputs, are in range."""
    rows = _read(wh, "tide_released_spans")
    a = sorted((r for r in rows if r["note_id"] == "a"), key=lambda r: r["out_start"])
    assert len(a) >= 3
    a[1]["out_start"] = a[0]["out_end"]  # touches the first
    a[2]["out_end"] = a[2]["out_start"]  # empty
    _write(wh, "tide_released_spans", "released_spans", rows)
    out = _outcome(offsets_in_text, wh)
    assert out.passed, out.metadata


def _exact_duplicate_of_a(wh, quarantined_as):
    """The source holds note a twice (an exact duplicate row); the duplicate is quarantined as E608 under
    the note id ``quarantined_as``."""
    wh.replace_table("notes", pa.Table.from_pylist(_rows() + [_rows()[0]]))
    q = _read(wh, "tide_quarantine")
    _write(wh, "tide_quarantine", "quarantine", q + [dict(q[0], note_id=quarantined_as, code="E608")])


def test_an_exact_duplicate_row_is_accounted_for_by_its_released_original(wh):
    _exact_duplicate_of_a(wh, "a")
    out = _outcome(rows_accounted, wh)
    assert out.passed, out.description
    assert out.metadata == {
        "n_in": 5,
        "n_released": 3,
        "n_quarantined": 2,
        "n_released_and_quarantined": 0,
        "n_duplicate_releases": 0,
        "n_exact_duplicate_rows": 1,
        "n_duplicates_without_original": 0,
    }


def test_an_exact_duplicate_row_without_its_original_fails(wh):
    _exact_duplicate_of_a(wh, "e")  # no note e was released or otherwise quarantined
    out = _outcome(rows_accounted, wh)
    assert out.passed is False
    assert out.metadata["n_exact_duplicate_rows"] == 1 and out.metadata["n_duplicates_without_original"] == 1
    assert out.description == (
        "5 rows in, 3 released + 2 quarantined (0 in both, 0 duplicated, 1 exact duplicates without their "
        "original); rematerialize deidentified_notes for s/k"
    )


def test_the_surface_check_reads_only_its_own_key(wh):
    """Another key's release that put every original back does not make this release's notes leak."""
    source = {r["note_id"]: r["text"] for r in NOTES}
    rows = [dict(r, key="k2", text=source[r["note_id"]]) for r in _read(wh, "tide_deid_notes")]
    wh.replace_partition("tide_deid_notes", tables.to_table("deid_notes", rows), {"study": S, "key": "k2"})
    assert no_surface_survives(wh, CONFIG, S, "k2").passed is False
    out = _outcome(no_surface_survives, wh)
    assert out.passed and out.metadata["n_notes"] == 3


def test_a_released_note_without_text_releases_no_surface(wh):
    """A NULL released text is empty: a surface that reads 'XXXX' cannot survive in it."""
    extra = " XXXX"
    notes = [dict(r, text=r["text"] + extra) if r["note_id"] == "c" else r for r in _rows()]
    wh.replace_table("notes", pa.Table.from_pylist(notes))
    n = len(NOTES[2]["text"])
    spans = _read(wh, "tide_released_spans")
    added = dict(spans[0], note_id="c", start=n + 1, end=n + len(extra), out_start=0, out_end=0, label="OTHER")
    _write(wh, "tide_released_spans", "released_spans", spans + [added])
    _edit_text(wh, "c", lambda t: None)
    out = _outcome(no_surface_survives, wh)
    assert out.passed, out.metadata
    _edit_text(wh, "c", lambda t: "XXXX")  # the same surface written out: caught
    assert _outcome(no_surface_survives, wh).passed is False


@pytest.mark.parametrize("keep_spans", [True, False])
def test_the_surface_check_reads_the_configured_span_tables(wh, keep_spans):
    """Note c released with its originals put back (with, or without, its released spans): the renamed
    span cache and released spans give the same verdict as the default ones."""
    _edit_text(wh, "c", lambda t: NOTES[2]["text"])
    if not keep_spans:  # only the span cache still knows c's surfaces
        spans = [r for r in _read(wh, "tide_released_spans") if r["note_id"] != "c"]
        _write(wh, "tide_released_spans", "released_spans", spans)
    ref = _outcome(no_surface_survives, wh)
    if not keep_spans:  # found outside every released range (with the spans kept, their ranges cover c's text)
        assert ref.passed is False and ref.metadata["n_surviving_elsewhere"] >= 1
    site = replace(CONFIG, tables=replace(CONFIG.tables, **RENAMED))
    for kind, name in RENAMED.items():
        table = wh.read_table(getattr(CONFIG.tables, kind))
        wh.replace_table(name, table)
        wh.replace_table(getattr(CONFIG.tables, kind), table.slice(0, 0))
    out = no_surface_survives(wh, site, S, K)
    assert out.passed is ref.passed and out.metadata == ref.metadata


def test_every_released_note_without_source_is_counted(wh):
    wh.replace_table("notes", pa.Table.from_pylist([r for r in _rows() if r["note_id"] not in ("b", "c")]))
    out = _outcome(no_surface_survives, wh)
    assert out.passed is False and out.metadata["n_released_without_source"] == 2


def _leak_c_outside_spans(wh):
    """Note c released with its originals put back and without released spans: only the cache knows them."""
    _edit_text(wh, "c", lambda t: NOTES[2]["text"])
    _write(
        wh,
        "tide_released_spans",
        "released_spans",
        [r for r in _read(wh, "tide_released_spans") if r["note_id"] != "c"],
    )


def test_another_keys_spans_do_not_cover_this_releases_leak(wh):
    _leak_c_outside_spans(wh)
    assert _outcome(no_surface_survives, wh).passed is False
    cover = [dict(r, key="k2", note_id="c", out_start=0, out_end=10_000) for r in _read(wh, "tide_released_spans")]
    wh.replace_partition("tide_released_spans", tables.to_table("released_spans", cover), {"study": S, "key": "k2"})
    out = _outcome(no_surface_survives, wh)
    assert out.passed is False and out.metadata["n_surviving_elsewhere"] >= 1
    assert out.metadata["n_surviving_in_place"] == 0
    assert out.description.startswith(f"{out.metadata['n_surviving_elsewhere']} original surfaces survive ")


def test_a_released_note_missing_from_the_span_cache_is_checked_by_its_released_spans(wh):
    """Note c's cache rows are gone: its released spans still name its surfaces."""
    for name in ("tide_spans", "tide_recognized_notes"):
        wh.delete(name, {"study": S, "note_id": "c"})
    assert _outcome(no_surface_survives, wh).passed
    s = next(r for r in _read(wh, "tide_released_spans") if r["note_id"] == "c")
    _splice(wh, "c", s["label"], NOTES[2]["text"][s["start"] : s["end"]])
    out = _outcome(no_surface_survives, wh)
    assert out.passed is False and out.metadata["n_surviving_in_place"] == 1


def test_every_original_put_back_in_place_is_counted(wh):
    _splice(wh, "b", "PHONE", "617-555-0100")
    _splice(wh, "a", "DATE", "03/04/2021")
    out = _outcome(no_surface_survives, wh)
    assert out.passed is False and out.metadata["n_surviving_in_place"] == 2
    assert out.description.startswith("2 original surfaces survive in released notes of s/k; ")


# -- the last survivors of the seventh session's run -----------------------------------------


def _add_released_span(wh, note_id, start, end, label, out_start, out_end):
    spans = _read(wh, "tide_released_spans")
    added = dict(spans[0], note_id=note_id, start=start, end=end, label=label, out_start=out_start, out_end=out_end)
    _write(wh, "tide_released_spans", "released_spans", spans + [added])


def test_a_four_character_surface_is_searched_once_however_many_spans_name_it(wh):
    """'Mary' (exactly MIN_SEARCH_LEN) named by two spans, one with a leading space: searched, counted once."""
    text = NOTES[0]["text"]
    assert text[3:7] == "Mary" and len("Mary") == MIN_SEARCH_LEN
    first = _span(wh, "a", "PATIENT")
    _add_released_span(wh, "a", 3, 7, "PATIENT", first["out_start"], first["out_end"])
    _add_released_span(wh, "a", 2, 7, "PATIENT", first["out_start"], first["out_end"])
    assert _outcome(no_surface_survives, wh).passed  # nowhere else yet
    _edit_text(wh, "a", lambda t: t + " Mary called.")
    out = _outcome(no_surface_survives, wh)
    assert out.passed is False and out.metadata["n_surviving_elsewhere"] == 1


@pytest.mark.parametrize("before", [False, True])
def test_a_match_that_only_touches_a_released_range_is_not_covered_by_it(wh, before):
    """'Mary Lee' written right after (or right before) a one-character released range is outside it."""
    age = _span(wh, "a", "AGE")  # a kept value: its released range is only a range here
    out_text = next(r["text"] for r in _read(wh, "tide_deid_notes") if r["note_id"] == "a")
    n = len(out_text)
    if before:  # "….Mary Lee" with the released range on the "."
        _edit_text(wh, "a", lambda t: t + " .Mary Lee")
        rng = (n + 1, n + 2)
    else:  # "… Mary Lee." with the released range on the "."
        _edit_text(wh, "a", lambda t: t + " Mary Lee.")
        rng = (n + 9, n + 10)
    _add_released_span(wh, "a", age["start"], age["end"], "AGE", *rng)
    out = _outcome(no_surface_survives, wh)
    assert out.passed is False and out.metadata["n_surviving_elsewhere"] == 1


def test_span_cache_rows_of_another_study_name_no_surface_of_this_one(wh):
    """Another study holds note 'a' too, with a span on 'seen' (released unchanged here): not this release's PHI."""
    from tide_core.spans import Note, Span
    from tide_core.store.span_cache import SpanCache

    text = NOTES[0]["text"]
    start = text.index("seen")
    note = Note("a", "p1", text)
    SpanCache(wh, CONFIG.tables).store(
        "other",
        "fp",
        [note],
        {"a": [Span("a", start, start + 4, "PATIENT", 0.9, "t@1")]},
        {"a": ("ok", None)},
        keep=set(),
    )
    out = _outcome(no_surface_survives, wh)
    assert out.passed, out.metadata
    assert no_surface_survives(wh, CONFIG, "other", K).metadata["n_notes"] == 0
