"""The release lifecycle of one (study, key) (``tide_core/release/lifecycle.py``): decide, set_status, rollback.

On DuckDB in memory with a hand-made source ``notes`` table and candidate (``tide_deid_notes`` rows with valid
row hashes), no recognition, no model.  The blocking checks have their own tests (``test_guard_release_checks``);
here each entry of ``lifecycle.CHECKS`` is replaced by a stub that passes or fails (one rewrites the candidate
while it is verified), so what is asserted is the lifecycle itself: the status (published, blocked,
awaiting_audit, rolled_back), the reasons and their codes, what is published, the ``tide_releases`` row and the
decision's metadata.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json

import pyarrow as pa
import pytest

from tide_core.assurance.audit_table import AuditRecord, records_to_table
from tide_core.assurance.gate import ReleaseGatePolicy
from tide_core.assurance.guard_hold import NO_GUARD
from tide_core.config import TideConfig
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.release import lifecycle as lc
from tide_core.release import publish as pub
from tide_core.release.outcome import CheckOutcome
from tide_core.store import tables
from tide_core.store.release_content import row_hash
from tide_core.store.tables import RELEASES, TableNames

NAMES = TableNames.with_prefix("x_")
CONFIG = TideConfig(recognizers=({"name": "tide.regex"},), tables=NAMES)
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
T1 = dt.datetime(2026, 1, 2, tzinfo=dt.UTC)


def fp(hashes) -> str:
    h = hashlib.sha256(b"tide-release/1")
    for v in sorted(hashes):
        h.update(v.encode() + b"\n")
    return h.hexdigest()[:24]


def deid(note_id, text=None, patient="P1", study="s", key="k", at=T0, **more):
    row = {
        "study": study,
        "key": key,
        "note_id": note_id,
        "note_ref": f"N-{note_id}",
        "patient_ref": patient,
        "text": text if text is not None else f"released {note_id}",
        "note_date": "2020-02-03",
        "note_type": "consult",
        "source": "ehr",
        "site": "S1",
        "anonymizer": "anon@1",
        "fingerprint": "fp1",
        "released_at": at,
        **more,
    }
    row["row_hash"] = row_hash(study, key, row)
    return row


ROWS = [deid("a", patient="P1"), deid("b", patient="P2"), deid("c", patient="P3", anonymizer="anon@2")]


@pytest.fixture(autouse=True)
def _stubs(monkeypatch):
    monkeypatch.delenv(pub.STORE_ENV, raising=False)
    for name in list(lc.CHECKS):
        monkeypatch.setitem(lc.CHECKS, name, lambda wh, config, study, key: CheckOutcome(True, "ok"))


@pytest.fixture
def wh():
    w = DuckDBWarehouse(":memory:")
    notes = [
        {"study": "s", "note_id": n, "patient_id": f"p{i}", "text": f"source {n}"} for i, n in enumerate("abcd")
    ] + [{"study": "t", "note_id": "z", "patient_id": "pz", "text": "other"}]
    w.replace_table(NAMES.notes, pa.Table.from_pylist(notes))
    put(w, "deid_notes", ROWS + [deid("z", study="t")])
    put(
        w,
        "quarantine",
        [
            {"study": "s", "key": "k", "note_id": "d", "code": "E401"},
            {"study": "s", "key": "k2", "note_id": "a", "code": "E401"},
        ],
    )
    put(
        w,
        "released_spans",
        [
            {"study": "s", "key": "k", "note_id": "a", "label": "NAME", "recognizer": "tide.regex@2"},
            {"study": "s", "key": "k", "note_id": "a", "label": "DATE", "recognizer": "tide.regex@2"},
            {"study": "s", "key": "k", "note_id": "b", "label": "NAME", "recognizer": "tide.names@1"},
            {"study": "s", "key": "k", "note_id": "b", "label": "PHONE", "recognizer": None},
            {"study": "t", "key": "k", "note_id": "z", "label": "ZIP", "recognizer": "tide.zip@1"},
        ],
    )
    yield w
    w.close()


def put(wh, kind, rows):
    wh.replace_table(NAMES.of(kind), tables.to_table(kind, rows))


def audit_all(wh, rows=ROWS, leaks=0):
    """One frame over the candidate and a census round of it (a clean census passes the gate)."""
    from tide_core.release import evidence

    for p in evidence.plan_audit(wh, NAMES, "s", "k", everything=True):
        if p.frame_id not in {r.frame_id for r in evidence.audit_records(wh, NAMES, "s", "k")}:
            evidence.record_round(wh, NAMES, "s", "k", p.frame_id, p.n_patients, leaks, reviewer="r")


def release_row(wh, table=None):
    return lc.read_release(wh, "s", "k", table or NAMES.releases)


def test_a_verified_audited_candidate_is_published_as_v1(wh):
    audit_all(wh)
    policy = ReleaseGatePolicy(approval="")
    out = lc.decide(wh, CONFIG, "s", "k", policy, NAMES.releases, actor="ops")
    f = fp(r["row_hash"] for r in ROWS)
    assert out["status"] == "published" and out["gate_passed"] is True and out["gate_reasons"] == ""
    assert out["published_version"] == "v1" and out["content_fingerprint"] == f
    assert (out["n_in"], out["n_released"], out["n_quarantined"], out["n_spans"]) == (4, 3, 1, 4)
    assert json.loads(out["spans_by_label"]) == {"DATE": 1, "NAME": 2, "PHONE": 1}
    assert out["spans_by_label"] == '{"DATE": 1, "NAME": 2, "PHONE": 1}'
    assert out["anonymizer"] == "anon@1, anon@2" and out["recognizers"] == "tide.names@1, tide.regex@2"
    assert out["released_at"] == T0
    assert out["gate_statement"].startswith("With 95% confidence, no patient of release s/k has a leaked identifier")
    assert (out["gate_policy"], out["gate_approval"]) == (policy.describe(), "")
    assert (out["n_held"], out["guard_version"], out["guard_thresholds"]) == (None, "", "")
    assert out["gate"]["status"] == "published" and out["gate"]["published_version"] == "v1"
    assert out["gate"]["content_fingerprint"] == f and out["gate"]["passed"] is True
    assert out["gate"]["n_batches"] == 1
    assert out["checks"] == dict.fromkeys(lc.BLOCKING_CHECKS, True)
    assert out["guard"] == {"guard_version": NO_GUARD, "rebaseline": False}
    stored = release_row(wh)
    assert stored == {k: v for k, v in out.items() if k not in ("gate", "checks", "scan", "guard")}
    assert set(stored) == {f.name for f in RELEASES}
    assert stored["decided_at"] >= T0
    (h,) = pub.history(wh, NAMES, "s", "k")
    assert (h["actor"], h["gate_policy"], h["gate_statement"]) == ("ops", policy.describe(), out["gate_statement"])
    assert sorted(r["note_ref"] for r in pub.researcher_rows(wh, "s", "k")) == ["N-a", "N-b", "N-c"]
    # deciding the same content again changes nothing researchers see
    again = lc.decide(wh, CONFIG, "s", "k", policy, NAMES.releases)
    assert again["status"] == "published" and again["published_version"] == "v1"
    assert len(pub.history(wh, NAMES, "s", "k")) == 1


def test_the_default_policy_and_table(wh, monkeypatch):
    audit_all(wh)
    cfg = dataclasses.replace(CONFIG, tables=dataclasses.replace(NAMES, releases="tide_releases"))
    out = lc.decide(wh, cfg, "s", "k")
    assert out["status"] == "published" and out["gate_policy"] == ReleaseGatePolicy().describe()
    assert lc.read_release(wh, "s", "k")["status"] == "published"
    assert lc.read_release(wh, "s", "k2") is None


def test_a_failed_check_blocks_and_nothing_is_published(wh, monkeypatch):
    audit_all(wh)
    monkeypatch.setitem(lc.CHECKS, "no_surface_survives", lambda *a: CheckOutcome(False, "2 surfaces survive"))
    out = lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    assert out["status"] == "blocked" and out["gate_passed"] is False
    assert out["gate_reasons"] == "check no_surface_survives failed: 2 surfaces survive"
    assert out["published_version"] is None and out["gate_statement"] == ""
    assert out["checks"]["no_surface_survives"] is False and out["checks"]["rows_accounted"] is True
    assert out["gate"]["passed"] is True and out["gate"]["status"] == "blocked"
    assert pub.published_version(wh, NAMES, "s", "k") is None and pub.history(wh, NAMES, "s", "k") == []


def test_content_no_round_covers_awaits_audit(wh):
    out = lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    assert out["status"] == "awaiting_audit" and out["published_version"] is None
    assert out["gate_reasons"].startswith("no audit round covers this content")
    assert out["gate"]["awaiting_audit"] is True and out["gate"]["status"] == "awaiting_audit"


def test_missing_evidence_beside_a_failed_check_is_blocked(wh, monkeypatch):
    monkeypatch.setitem(lc.CHECKS, "rows_accounted", lambda *a: CheckOutcome(False, "1 row missing"))
    out = lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    assert out["status"] == "blocked"
    reasons = out["gate_reasons"].split("; ")
    assert reasons[0] == "check rows_accounted failed: 1 row missing" and len(reasons) == 3


def test_a_leak_blocks(wh):
    audit_all(wh, leaks=1)
    out = lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    assert out["status"] == "blocked" and "1 leaks in 3 patients" in out["gate_reasons"]


def test_a_published_version_stays_while_a_new_candidate_is_blocked(wh, monkeypatch):
    audit_all(wh)
    lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    put(wh, "deid_notes", [*ROWS, deid("d")])
    out = lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    assert out["status"] == "awaiting_audit" and out["published_version"] == "v1"
    assert out["gate"]["published_version"] == "v1"
    assert out["content_fingerprint"] == fp(r["row_hash"] for r in [*ROWS, deid("d")])


def test_a_candidate_of_two_runs_is_blocked(wh):
    audit_all(wh)
    put(wh, "deid_notes", [ROWS[0], ROWS[1], deid("c", patient="P3", anonymizer="anon@2", at=T1)])
    out = lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    assert out["status"] == "blocked" and out["released_at"] is None
    assert "[E920] the candidate of s/k mixes 2 anonymization runs; run it again" in out["gate_reasons"]


def test_an_interrupted_anonymization_run_is_blocked(wh):
    audit_all(wh)
    put(
        wh,
        "runs",
        [
            {"run_id": "r", "study": "s", "key": "k", "stage": "anonymization.chunk", "chunk": 0, "fingerprint": "d0",
             "started_at": T0, "finished_at": T0},
            {"run_id": "r", "study": "s", "key": "k", "stage": "anonymization.chunk", "chunk": 1, "fingerprint": "d1",
             "started_at": T0, "finished_at": T0},
        ],
    )  # fmt: skip
    out = lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    assert out["status"] == "blocked"
    assert out["gate_reasons"].startswith("[E920] the anonymization run of s/k was interrupted after 2 chunks")


def test_an_edited_candidate_is_blocked_with_its_code_and_no_gate(wh):
    audit_all(wh)
    put(wh, "deid_notes", [dict(ROWS[0], text="edited"), *ROWS[1:]])
    out = lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    assert out["status"] == "blocked" and out["content_fingerprint"] == ""
    assert out["gate_reasons"].startswith("[E937] 1 released rows of s/k do not match their row hash")
    assert out["gate"] == {
        "passed": False,
        "awaiting_audit": False,
        "reasons": out["gate_reasons"],
        "status": "blocked",
        "published_version": "",
        "content_fingerprint": "",
    }


def test_a_candidate_rewritten_while_it_is_verified_is_not_published(wh, monkeypatch):
    audit_all(wh)

    def rewrite(w, config, study, key):
        put(w, "deid_notes", [*ROWS, deid("d")])
        return CheckOutcome(True, "ok")

    monkeypatch.setitem(lc.CHECKS, "versions_recorded", rewrite)
    out = lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    assert out["status"] == "blocked" and out["published_version"] is None
    assert "[E921] the candidate of s/k changed while it was verified; decide it again" in out["gate_reasons"]
    assert pub.published_version(wh, NAMES, "s", "k") is None


def test_a_publish_refusal_is_a_blocking_reason(wh):
    audit_all(wh)
    lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    v2 = [*ROWS, deid("d", patient="P4")]
    put(wh, "deid_notes", v2)
    audit_all(wh)
    assert lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)["published_version"] == "v2"
    lc.rollback(wh, NAMES, "s", "k")
    out = lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    assert out["status"] == "blocked" and out["gate_reasons"].startswith("[E935] ")
    assert out["published_version"] == "v1"
    out = lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases, allow_withdrawn=True)
    assert out["status"] == "published" and out["published_version"] == "v2"


def test_drift_blocks(wh):
    audit_all(wh)
    put(wh, "drift", [{"study": "s", "key": "k", "band": "drift", "checked_at": T0}])
    out = lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    assert out["status"] == "blocked" and out["gate_reasons"]
    put(wh, "drift", [{"study": "s", "key": "k", "band": "ok", "checked_at": T0}])
    assert lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)["status"] == "published"


def test_a_changed_guard_version_is_a_rebaseline(wh):
    audit_all(wh)
    lc._write(wh, NAMES.releases, {"study": "s", "key": "k", "guard_version": "guard@1"})
    out = lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    assert out["guard"] == {"guard_version": NO_GUARD, "rebaseline": True}


# -- set_status, rollback, the table --------------------------------------------------------------------------


def test_set_status_keeps_what_researchers_see(wh):
    audit_all(wh)
    lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    before = release_row(wh)
    row = lc.set_status(wh, "s", "k", "pending", "anonymization running", NAMES.releases)
    assert row == release_row(wh)
    assert (row["status"], row["gate_passed"], row["gate_reasons"], row["gate_statement"]) == (
        "pending",
        False,
        "anonymization running",
        "",
    )
    assert row["published_version"] == "v1" and row["content_fingerprint"] == before["content_fingerprint"]
    assert row["n_released"] == 3 and row["decided_at"] >= before["decided_at"]
    assert lc.set_status(wh, "s", "k", "blocked", "x", NAMES.releases)["status"] == "blocked"
    for bad in ("published", "awaiting_audit", "rolled_back", "other"):
        with pytest.raises(ValueError, match=bad):
            lc.set_status(wh, "s", "k", bad, "x", NAMES.releases)
    assert release_row(wh)["status"] == "blocked"


def test_set_status_of_a_new_release_writes_its_row(wh):
    row = lc.set_status(wh, "s", "k9", "pending", "", NAMES.releases)
    assert (row["study"], row["key"], row["status"], row["published_version"]) == ("s", "k9", "pending", None)
    assert lc.read_release(wh, "s", "k9", NAMES.releases) == row
    assert set(row) == {f.name for f in RELEASES}


def test_set_status_uses_tide_releases_by_default(wh):
    lc.set_status(wh, "s", "k", "pending", "")
    assert wh.table_exists("tide_releases") and lc.read_release(wh, "s", "k")["status"] == "pending"


def test_rollback_marks_the_release_rolled_back(wh):
    audit_all(wh)
    lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    put(wh, "deid_notes", [*ROWS, deid("d", patient="P4")])
    audit_all(wh)
    lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    row = lc.rollback(wh, NAMES, "s", "k", actor="ops")
    assert row == release_row(wh)
    assert (row["status"], row["gate_passed"], row["published_version"]) == ("rolled_back", False, "v1")
    assert row["gate_reasons"] == "rolled back to v1; the content moved away from is withdrawn"
    assert row["n_released"] == 4  # the rest of the row is kept
    assert [h["actor"] for h in pub.history(wh, NAMES, "s", "k")][-2:] == ["ops", "ops"]


def test_rollback_to_a_named_version(wh):
    audit_all(wh)
    lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    for extra in ("d", "e"):
        put(wh, "deid_notes", [*ROWS, deid(extra, patient="P9")])
        audit_all(wh)
        lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    assert lc.rollback(wh, NAMES, "s", "k", "v1")["published_version"] == "v1"


def test_an_old_release_table_gets_the_lifecycle_columns(wh):
    wh.sql(f'CREATE TABLE "{NAMES.releases}" (study VARCHAR, key VARCHAR, status VARCHAR, n_in BIGINT)')
    wh.sql(f"INSERT INTO \"{NAMES.releases}\" VALUES ('s', 'k', 'published', 7)")
    row = lc.set_status(wh, "s", "k", "pending", "r", NAMES.releases)
    assert row["n_in"] == 7
    types = {
        r["column_name"]: r["data_type"]
        for r in wh.sql(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ?", [NAMES.releases]
        ).to_pylist()
    }
    assert set(types) == {f.name for f in RELEASES}
    assert types["gate_passed"] == "BOOLEAN" and types["decided_at"] == "TIMESTAMP WITH TIME ZONE"
    assert types["n_held"] == "BIGINT" and types["gate_reasons"] == "VARCHAR"
    assert release_row(wh)["gate_reasons"] == "r"


def test_release_stamps_are_the_distinct_run_stamps(wh):
    assert lc.release_stamps(wh, CONFIG, "s", "k") == [T0]
    put(wh, "deid_notes", [ROWS[0], deid("b", at=T1), deid("c", at=T1)])
    assert lc.release_stamps(wh, CONFIG, "s", "k") == [T0, T1]


def test_verify_release_runs_every_blocking_check(wh, monkeypatch):
    seen = []
    for name in lc.BLOCKING_CHECKS:
        monkeypatch.setitem(lc.CHECKS, name, lambda w, c, s, k, n=name: seen.append((n, s, k)) or CheckOutcome(True, n))
    out = lc.verify_release(wh, CONFIG, "s", "k")
    assert list(out) == list(lc.BLOCKING_CHECKS) and [d.description for d in out.values()] == list(lc.BLOCKING_CHECKS)
    assert seen == [(n, "s", "k") for n in lc.BLOCKING_CHECKS]
    assert lc.BLOCKING_CHECKS == (
        "rows_accounted",
        "offsets_in_text",
        "no_surface_survives",
        "known_phi_survives",
        "versions_recorded",
    )


# -- each input reaches its step, for this (study, key) only ----------------------------------------------------


def test_the_checks_get_the_config_study_and_key(wh, monkeypatch):
    audit_all(wh)
    got = []
    for name in lc.BLOCKING_CHECKS:
        monkeypatch.setitem(lc.CHECKS, name, lambda w, c, s, k: got.append((c, s, k)) or CheckOutcome(True, "ok"))
    lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    assert got == [(CONFIG, "s", "k")] * len(lc.BLOCKING_CHECKS)


def test_publish_gets_the_verified_fingerprint_approval_and_actor(wh, monkeypatch):
    audit_all(wh)
    calls = []
    real = pub.publish

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(pub, "publish", spy)
    policy = ReleaseGatePolicy(approval="approved by the DPO")
    out = lc.decide(wh, CONFIG, "s", "k", policy, NAMES.releases)
    (kw,) = calls
    assert kw["expect_fingerprint"] == fp(r["row_hash"] for r in ROWS) == out["content_fingerprint"]
    assert (kw["gate_approval"], kw["gate_policy"], kw["actor"]) == ("approved by the DPO", policy.describe(), "")
    assert kw["gate_statement"] == out["gate_statement"] != ""
    (h,) = pub.history(wh, NAMES, "s", "k")
    assert (h["gate_approval"], h["actor"]) == ("approved by the DPO", "")
    assert out["gate_approval"] == "approved by the DPO"


def test_the_decision_uses_the_given_policy(wh):
    lax = ReleaseGatePolicy(require_audit=False, required_buckets=())
    out = lc.decide(wh, CONFIG, "s", "k", lax, NAMES.releases)
    assert out["status"] == "published" and out["gate_policy"] == lax.describe()
    assert lc.gate(wh, CONFIG, "s", "k", lax).passed and not lc.gate(wh, CONFIG, "s", "k").passed


def test_frames_and_rounds_of_another_key_do_not_cover_this_candidate(wh):
    hashes = [r["row_hash"] for r in ROWS]
    frame_rows = lambda key: [  # noqa: E731
        {"study": "s", "key": key, "frame_id": "fz", "bucket_id": "b", "row_hash": h, "patient_ref": f"P{i}",
         "created_at": T0}
        for i, h in enumerate(hashes)
    ]  # fmt: skip
    rnd = lambda key: AuditRecord.create("s", key, "b", 3, 0, 0.95, "r", frame_id="fz", frame_patients=3)  # noqa: E731
    put(wh, "audit_frames", frame_rows("k2"))
    wh.append(NAMES.audits, records_to_table([rnd("k")]))
    assert lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)["status"] == "awaiting_audit"
    put(wh, "audit_frames", frame_rows("k"))
    wh.delete(NAMES.audits, {"study": "s"})
    wh.append(NAMES.audits, records_to_table([rnd("k2")]))
    assert lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)["status"] == "awaiting_audit"
    wh.append(NAMES.audits, records_to_table([rnd("k")]))
    assert lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)["status"] == "published"


def test_another_keys_rows_spans_and_release_row_are_not_this_ones(wh):
    audit_all(wh)
    put(wh, "deid_notes", ROWS + [deid("y", key="k2", at=T1)])
    put(
        wh,
        "released_spans",
        [
            {"study": "s", "key": "k", "note_id": "a", "label": "DATE", "recognizer": "tide.regex@2"},
            {"study": "s", "key": "k2", "note_id": "y", "label": "ZIP", "recognizer": "tide.zip@1"},
        ],
    )
    lc._write(wh, NAMES.releases, {"study": "s", "key": "k2", "guard_version": "guard@1", "status": "blocked"})
    out = lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    assert out["status"] == "published" and out["released_at"] == T0
    assert (out["n_spans"], out["spans_by_label"], out["recognizers"]) == (1, '{"DATE": 1}', "tide.regex@2")
    assert out["guard"]["rebaseline"] is False
    assert lc.read_release(wh, "s", "k2", NAMES.releases)["status"] == "blocked"


def test_the_interrupted_run_reason_says_to_run_it_again(wh):
    put(
        wh,
        "runs",
        [{"run_id": "r", "study": "s", "key": "k", "stage": "anonymization.chunk", "chunk": 0, "fingerprint": "d",
          "started_at": T0, "finished_at": T0}],
    )  # fmt: skip
    out = lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    assert out["gate_reasons"].startswith(
        "[E920] the anonymization run of s/k was interrupted after 1 chunks; run it again (it resumes) before the "
        "release can be decided"
    )


def test_a_configured_guard_holds_what_it_flags_before_the_release_is_decided(wh, tmp_path):
    import numpy as np

    from tide_core.assurance.guard_model import N_FEATURES, GuardModel, _hash

    coef = np.zeros(N_FEATURES, dtype=np.float32)
    coef[_hash("w=zorblax")] = 20.0
    guard = GuardModel(coef, -10.0, threshold=0.5)
    guard.save(tmp_path)
    put(wh, "deid_notes", [deid("a", text="zorblax here"), *ROWS[1:], deid("q", key="k2", text="zorblax")])
    put(wh, "released_spans", [])
    config = dataclasses.replace(CONFIG, guard_dir=str(tmp_path))
    lax = ReleaseGatePolicy(require_audit=False, required_buckets=())
    out = lc.decide(wh, config, "s", "k", lax, NAMES.releases)
    assert out["status"] == "published" and out["n_released"] == 2 and out["n_quarantined"] == 2
    assert (out["n_held"], out["guard_version"]) == (1, guard.version)
    assert out["guard"]["guard_version"] == guard.version and out["guard"]["n_held"] == 1
    assert out["guard"]["rebaseline"] is False
    assert sorted(r["note_ref"] for r in pub.researcher_rows(wh, "s", "k")) == ["N-b", "N-c"]
    assert [r["note_id"] for r in wh.read_table(NAMES.deid_notes).to_pylist() if r["key"] == "k2"] == ["q"]
    assert json.loads(out["guard_thresholds"])["thresholds"] == {"ehr": 0.5}


def test_decide_and_rollback_without_an_actor_record_none(wh):
    audit_all(wh)
    lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    put(wh, "deid_notes", [*ROWS, deid("d", patient="P4")])
    audit_all(wh)
    lc.decide(wh, CONFIG, "s", "k", table=NAMES.releases)
    lc.rollback(wh, NAMES, "s", "k")
    assert {h["actor"] for h in pub.history(wh, NAMES, "s", "k")} == {""}


def test_rollback_and_set_status_write_only_their_own_row(wh):
    lc._write(wh, NAMES.releases, {"study": "s", "key": "k2", "status": "blocked", "n_released": 9})
    row = lc.set_status(wh, "s", "k", "pending", "", NAMES.releases)
    assert (row["key"], row["n_released"]) == ("k", None)
    put(wh, "deid_notes", ROWS)
    pub.publish(wh, NAMES, "s", "k")
    put(wh, "deid_notes", [*ROWS, deid("d")])
    pub.publish(wh, NAMES, "s", "k")
    lc._write(wh, NAMES.releases, {"study": "s", "key": "k", "status": "published", "decided_at": T0})
    before = dt.datetime.now(dt.UTC)
    row = lc.rollback(wh, NAMES, "s", "k")
    assert (row["key"], row["status"]) == ("k", "rolled_back") and row["decided_at"] >= before
    assert lc.read_release(wh, "s", "k2", NAMES.releases)["status"] == "blocked"


def test_rollback_of_a_release_without_a_row_writes_one(wh):
    put(wh, "deid_notes", ROWS)
    pub.publish(wh, NAMES, "s", "k")
    put(wh, "deid_notes", [*ROWS, deid("d")])
    pub.publish(wh, NAMES, "s", "k")
    row = lc.rollback(wh, NAMES, "s", "k")
    assert (row["study"], row["key"], row["status"], row["published_version"]) == ("s", "k", "rolled_back", "v1")
    assert lc.read_release(wh, "s", "k", NAMES.releases) == row


def test_set_status_stamps_the_time_of_the_change(wh):
    lc._write(wh, NAMES.releases, {"study": "s", "key": "k", "status": "published", "decided_at": T0})
    before = dt.datetime.now(dt.UTC)
    assert lc.set_status(wh, "s", "k", "pending", "", NAMES.releases)["decided_at"] >= before
