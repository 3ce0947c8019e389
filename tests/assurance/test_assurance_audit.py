"""Exact audit bounds, the patient-level planner and sampler, the tide_audits table and the gate."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from scipy.stats import binom

from tide_core.assurance.audit import buckets_from_notes, plan_audit, release_sentence, sample_patients
from tide_core.assurance.audit_table import AUDITS, AuditRecord, records_from_table, records_to_table
from tide_core.assurance.bounds import audit_bound, clopper_pearson_upper, pass_probability, required_sample_size
from tide_core.assurance.gate import ReleaseGatePolicy, evaluate_release
from tide_core.errors import ConfigError


def test_clopper_pearson_exact_figures():
    assert clopper_pearson_upper(300, 0) == pytest.approx(0.0099361, abs=1e-6)
    assert clopper_pearson_upper(300, 0) < 0.01
    assert clopper_pearson_upper(299, 0) == pytest.approx(0.0099691, abs=1e-6) and clopper_pearson_upper(299, 0) < 0.01
    assert clopper_pearson_upper(298, 0) == pytest.approx(0.0100024, abs=1e-6)
    assert not clopper_pearson_upper(298, 0) < 0.01
    # k = 0 closed form 1 - alpha^(1/n)
    assert clopper_pearson_upper(300, 0) == pytest.approx(1 - 0.05 ** (1 / 300), rel=1e-10)
    # the bound is the rate at which seeing <= k leaks has probability 1 - confidence
    ub = clopper_pearson_upper(500, 1)
    assert binom.cdf(1, 500, ub) == pytest.approx(0.05, rel=1e-6) and ub < 0.01
    assert clopper_pearson_upper(59, 0) < 0.05 <= clopper_pearson_upper(58, 0)
    assert clopper_pearson_upper(10, 10) == 1.0 and clopper_pearson_upper(0, 0) == 1.0
    with pytest.raises(ConfigError):
        clopper_pearson_upper(10, 11)


def test_required_sample_sizes_and_pass_probabilities():
    assert required_sample_size(0.01) == 299
    assert required_sample_size(0.05) == 59
    assert required_sample_size(0.01, max_leaks=1) == 473
    assert required_sample_size(0.001) == 2995
    # a good release (true rate 0.13%) fails a zero-in-300 rule about one time in three
    assert 1 - pass_probability(300, 0, 0.0013) == pytest.approx(0.323, abs=0.002)
    # "at most 1 leak in 500" is kinder to good releases
    assert pass_probability(500, 1, 0.0013) > pass_probability(300, 0, 0.0013)


def test_bound_object_and_release_sentence():
    b = audit_bound(300, 0)
    assert b.supports(0.01) and b.lower_bound == 0.0 and b.point_estimate == 0.0
    assert release_sentence(b, "the site A progress notes") == (
        "In an audit of 300 patients sampled from the site A progress notes, 0 leaked identifiers were "
        "found; with 95% confidence the per-patient leak rate is below 1.0%."
    )
    s = release_sentence(audit_bound(500, 2), "release R7")
    assert "leaked identifiers were found for 2 patients" in s
    assert clopper_pearson_upper(500, 2) == pytest.approx(0.01254, abs=1e-5)
    assert s.endswith("below 1.3%.")  # 1.254% is rounded up, never down


def _notes():
    from tide_core.synth import generate_demo_corpus

    return generate_demo_corpus(seed=7).notes


def test_plan_buckets_by_patient_not_note():
    notes = _notes()
    buckets = buckets_from_notes(notes)
    n_notes_by_bucket = {}
    for n in notes:
        key = f"{n.metadata['site']}|{n.metadata['source']}|{n.metadata['note_type']}"
        n_notes_by_bucket[key] = n_notes_by_bucket.get(key, 0) + 1
    assert set(buckets) == set(n_notes_by_bucket)
    for b, pats in buckets.items():
        assert len(pats) == len(set(pats)) <= n_notes_by_bucket[b]
    plan = plan_audit(buckets)
    assert plan.required_per_bucket == 299
    for bp in plan.buckets:  # small demo buckets: under 20 patients every patient is reviewed
        assert bp.n_patients == len(buckets[bp.bucket])
        if bp.n_patients < 20:  # a bound of 0 leaky patients needs (N - n) / N <= 5%: n = N
            assert bp.census and bp.n_sample == bp.n_patients
        else:  # the 25-patient bucket: 0 in 24 leaves P(X = 0 | D = 1) = 1/25 <= 5%
            assert (bp.n_patients, bp.n_sample, bp.census) == (25, 24, False)
    big = {
        "A|epic|progress": [f"p{i}" for i in range(5000)],
        "B|epic|progress": [f"q{i}" for i in range(120)],
        "C|cerner|radiology": [f"r{i}" for i in range(400)] + [f"r{i}" for i in range(400)],
    }
    plan = plan_audit(big, target_rate=0.01)
    # finite buckets (exact hypergeometric sizes, cf. tests/assurance/test_bounds_hypergeometric.py): 120
    # patients need 93 (D <= 1 is allowed; P(X = 0 | D = 2) = 27*26 / (120*119) = 0.049 <= 5%)
    assert [(b.bucket, b.n_sample, b.census) for b in plan.buckets] == [
        ("A|epic|progress", 290, False),
        ("B|epic|progress", 93, False),
        ("C|cerner|radiology", 211, False),
    ]
    assert plan.total_sample == 594
    assert plan["A|epic|progress"].pass_probability_at["0.001"] == pytest.approx(0.999**290)
    s1, s2 = sample_patients(big, plan, seed=42), sample_patients(big, plan, seed=42)
    assert s1 == s2 and len(s1["A|epic|progress"]) == 290 == len(set(s1["A|epic|progress"]))
    assert set(s1["A|epic|progress"]) <= set(big["A|epic|progress"])
    assert s1 != sample_patients(big, plan, seed=43)
    # the draw of a bucket does not depend on the order in which patients were listed
    shuffled = dict(big, **{"A|epic|progress": list(reversed(big["A|epic|progress"]))})
    assert sample_patients(shuffled, plan, seed=42) == s1


def test_audit_table_schema_and_roundtrip():
    when = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    recs = [
        AuditRecord.create("s1", "k1", "A|epic|progress", 300, 0, reviewer="rev-a", audited_at=when),
        AuditRecord("s1", "k1", "B|epic|progress", 120, 0, 0.95, None, "rev-b", when),
        AuditRecord.create(
            "s1", "k1", "b0123456789", 12, 0, reviewer="rev-c", audited_at=when, frame_id="f1", frame_patients=12
        ),
    ]
    table = records_to_table(recs)
    assert table.schema.equals(AUDITS)
    assert table.column_names == [
        "study",
        "key",
        "bucket",
        "n_patients_sampled",
        "n_leaks",
        "confidence",
        "upper_bound",
        "reviewer",
        "audited_at",
        "stratum",  # stratified audits (issue 17): empty / null for a simple round
        "stratum_population",
        "frame_id",  # the audit frame the round sampled (tide_audit_frames); empty / null: no frame
        "frame_patients",
    ]
    back = records_from_table(table)
    assert back[0] == recs[0] and back[2] == recs[2]
    assert (back[0].frame_id, back[0].frame_patients) == ("", None)
    assert (back[2].frame_id, back[2].frame_patients) == ("f1", 12)
    assert back[1].upper_bound == pytest.approx(clopper_pearson_upper(120, 0))
    # a table written before audit frames (no frame columns) still reads, as rounds without a frame
    old = table.drop_columns(["frame_id", "frame_patients"])
    assert [(r.frame_id, r.frame_patients) for r in records_from_table(old)] == [("", None)] * 3


def test_audit_table_in_duckdb_and_gate_from_table(tmp_path):
    from tide_core.io.open import open_warehouse

    wh = open_warehouse(f"duckdb:{tmp_path / 'wh.duckdb'}")
    try:
        wh.append("tide_audits", records_to_table([AuditRecord.create("s1", "k1", "A", 300, 0)]))
        wh.append(
            "tide_audits",
            records_to_table(
                [AuditRecord.create("s1", "k1", "B", 150, 0), AuditRecord.create("s1", "k1", "B", 150, 0)]
            ),
        )
        table = wh.read_table("tide_audits", where={"study": "s1", "key": "k1"})
    finally:
        wh.close()
    decision = evaluate_release(table)
    # bucket B: two rounds of 150 pool to 300 clean patients -> supports < 1%
    assert decision.passed, decision.reasons
    assert decision.buckets["B"] == {
        "n_patients_sampled": 300,
        "n_leaks": 0,
        "rounds": 2,
        "upper_bound": pytest.approx(clopper_pearson_upper(300, 0)),
        "passed": True,
    }
    assert decision.sentence.startswith("In an audit of 600 patients sampled from 2 buckets of study s1")


def test_gate_blocks_on_missing_audit_failed_bound_and_drift():
    ok = [AuditRecord.create("s", "k", "A", 300, 0)]
    assert evaluate_release(ok).passed
    assert evaluate_release(ok).sentence == (
        "In an audit of 300 patients sampled from 1 bucket of study s, 0 leaked "
        "identifiers were found; with 95% confidence the per-patient leak rate "
        "is below 1.0%."
    )
    missing = evaluate_release([])
    assert not missing.passed and missing.sentence is None and "unvalidated" in missing.reasons[0]
    short = evaluate_release([AuditRecord.create("s", "k", "A", 298, 0)])
    assert not short.passed and "298" in short.reasons[0]
    # a stored (wrong) upper bound is ignored: the gate recomputes from the counts
    lying = [AuditRecord("s", "k", "A", 100, 3, 0.95, 0.001, "x", None)]
    assert not evaluate_release(lying).passed
    leak = evaluate_release([AuditRecord.create("s", "k", "A", 500, 1), AuditRecord.create("s", "k", "B", 300, 1)])
    assert not leak.passed and leak.buckets["A"]["passed"] and not leak.buckets["B"]["passed"]
    drift = evaluate_release(ok, drift_result={"band": "drift"})
    assert not drift.passed and "drift" in drift.reasons[0]
    assert evaluate_release(ok, drift_result="watch").passed
    assert not evaluate_release(ok, "watch", ReleaseGatePolicy(block_on_watch=True)).passed
    assert not evaluate_release(ok, None, ReleaseGatePolicy(require_drift=True)).passed
    need_b = evaluate_release(ok, policy=ReleaseGatePolicy(required_buckets=["A", "B"]))
    assert not need_b.passed and "'B' has no audit" in need_b.reasons[0]
    strict = evaluate_release(ok, policy=ReleaseGatePolicy(target_rate=0.005))
    assert not strict.passed


def test_audit_cli(tmp_path, capsys):
    import json

    from tide_core.cli.main import main
    from tide_core.evaluation.gold_io import write_gold
    from tide_core.synth import generate_demo_corpus

    assert main(["audit", "bound", "--n", "298", "--leaks", "0", "--target", "0.01"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["supports_target"] is False and out["upper_bound"] == pytest.approx(0.0100024, abs=1e-6)
    assert main(["audit", "sentence", "--n", "300", "--leaks", "0", "--population", "release R1"]) == 0
    assert capsys.readouterr().out.strip().endswith("leak rate is below 1.0%.")
    gold = generate_demo_corpus(seed=7).gold
    write_gold(tmp_path / "notes.jsonl", gold)
    assert main(["audit", "plan", "--notes", str(tmp_path / "notes.jsonl"), "--out", str(tmp_path / "plan.json")]) == 0
    printed = capsys.readouterr().out
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert plan["required_per_bucket"] == 299 and plan["seed"] == 42
    assert sum(len(v) for v in plan["sample"].values()) == plan["total_sample"]
    assert not any(pid in printed for v in plan["sample"].values() for pid in v)  # ids go to the file only


def test_audit_record_and_gate_cli(tmp_path, capsys):
    import pyarrow as pa

    from tide_core.cli.main import main
    from tide_core.io.open import open_warehouse
    from tide_core.store.release_content import row_hash
    from tide_core.store.tables import DEID_NOTES

    wh = f"duckdb:{tmp_path / 'wh.duckdb'}"
    # a release of 300 patients in bucket A|epic|progress: an audit may review at most that many
    rows = [
        {
            "study": "s",
            "key": "k",
            "note_id": f"n{i}",
            "note_ref": f"N{i}",
            "patient_ref": f"P{i}",
            "text": "x",
            "site": "A",
            "source": "epic",
            "note_type": "progress",
        }
        for i in range(300)
    ]
    for r in rows:
        r["row_hash"] = row_hash("s", "k", r)
    w = open_warehouse(wh)
    table = pa.Table.from_pylist([{c: r.get(c) for c in DEID_NOTES.names} for r in rows], schema=DEID_NOTES)
    w.replace_table("tide_deid_notes", table)
    w.close()
    assert main(["audit", "gate", "--warehouse", wh, "--study", "s", "--key", "k"]) == 1
    assert capsys.readouterr().out.startswith("AWAITING AUDIT")
    base = ["--warehouse", wh, "--study", "s", "--key", "k"]
    # a round must name the frame it reviewed
    assert main(["audit", "record", *base, "--n", "300", "--leaks", "0", "--reviewer", "privacy-office"]) == 2
    assert "[E938]" in capsys.readouterr().err
    plan = tmp_path / "plan.json"
    assert main(["release", "audit", "plan", *base, "--out", str(plan)]) == 0
    (frame,) = json.loads(plan.read_text())["frames"]
    assert (frame["n_patients"], frame["sample_size"]) == (300, 189)  # finite population: fewer than 299
    record = ["audit", "record", *base, "--frame", frame["frame_id"], "--reviewer", "privacy-office"]
    assert main([*record, "--n", "301", "--leaks", "0"]) == 2  # more than the frame holds
    assert "[E747]" in capsys.readouterr().err
    assert main([*record, "--n", "189", "--leaks", "0"]) == 0
    capsys.readouterr()
    assert main(["audit", "gate", *base]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASSED") and "fewer than 0.67%" in out  # at most 2 of 300 patients
    (tmp_path / "drift.json").write_text('{"band": "drift"}')
    assert main(["audit", "gate", *base, "--drift", str(tmp_path / "drift.json")]) == 1
    assert "BLOCKED" in capsys.readouterr().out
    # another key of the same study has no audits of its own
    assert main(["audit", "gate", "--warehouse", wh, "--study", "s", "--key", "k2"]) == 1
