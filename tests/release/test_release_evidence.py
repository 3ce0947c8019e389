"""The gate's evidence rules, on hand-made rows, frames and rounds (pure; no warehouse).

Expected bounds come from the exact formulas computed here with scipy, not from the module.
"""

from __future__ import annotations

import math

from scipy.stats import beta, hypergeom

from tide_core.assurance.audit_table import AuditRecord
from tide_core.assurance.gate import ReleaseGatePolicy
from tide_core.release.evidence import CandidateRow, Frame, evaluate_evidence, frame_leak_bound

POLICY = ReleaseGatePolicy()


def rows(n_patients: int, notes_each: int = 1, bucket: str = "b1", tag: str = "") -> list[CandidateRow]:
    return [
        CandidateRow(f"h{tag}{p}-{j}", f"P{tag}{p}", "site|src|type", bucket)
        for p in range(n_patients)
        for j in range(notes_each)
    ]


def frame(fid: str, members: list[CandidateRow]) -> Frame:
    return Frame(
        fid, members[0].bucket_id, frozenset(m.row_hash for m in members), frozenset(m.patient_ref for m in members)
    )


def rnd(fid: str, n: int, k: int, n_frame: int, stratum: str = "", pop: int | None = None) -> AuditRecord:
    return AuditRecord.create("s", "k", "b1", n, k, 0.95, "test", stratum=stratum, stratum_population=pop,
                              frame_id=fid, frame_patients=n_frame)  # fmt: skip


def hyper_count(N: int, n: int, k: int, conf: float = 0.95) -> int:  # noqa: N803
    """Largest D with P(X <= k) > 1 - conf (scipy's hypergeometric)."""
    return max(D for D in range(k, N - (n - k) + 1) if hypergeom.cdf(k, N, D, n) > 1 - conf)


def test_a_census_with_no_leak_bounds_the_rate_at_zero():
    r = rows(40)
    d = evaluate_evidence(r, {"f": frame("f", r)}, [rnd("f", 40, 0, 40)], POLICY)
    assert d.passed and [b["upper_bound"] for b in d.batches.values()] == [0.0]


def test_one_simple_round_uses_the_hypergeometric_bound():
    r = rows(200)
    d = evaluate_evidence(r, {"f": frame("f", r)}, [rnd("f", 150, 0, 200)], POLICY)
    (b,) = d.batches.values()
    assert b["upper_bound"] == hyper_count(200, 150, 0) / 200
    assert d.passed == (hyper_count(200, 150, 0) / 200 < 0.01)


def test_a_failed_simple_round_is_not_outweighed_by_clean_stratified_rounds():
    r = rows(300)
    f = {"f": frame("f", r)}
    clean = [rnd("f", 100, 0, 300, stratum=f"richness-{i}", pop=100) for i in (1, 2, 3)]
    assert evaluate_evidence(r, f, clean, POLICY).passed  # clean strata alone: a census, passes
    failed = rnd("f", 300, 10, 300)
    d = evaluate_evidence(r, f, [*clean, failed], POLICY)
    assert not d.passed and not d.awaiting_audit
    (b,) = d.batches.values()
    assert b["upper_bound"] >= 10 / 300


def test_several_rounds_of_a_frame_pool_with_the_exact_binomial_bound():
    r = rows(5000)
    d = evaluate_evidence(r, {"f": frame("f", r)}, [rnd("f", 300, 0, 5000), rnd("f", 300, 0, 5000)], POLICY)
    (b,) = d.batches.values()
    expected = math.ceil(beta.ppf(0.95, 1, 600) * 5000) / 5000
    assert math.isclose(b["upper_bound"], expected, rel_tol=1e-9) and d.passed


def test_content_no_round_covers_awaits_audit_and_keeps_the_rest():
    old, new = rows(30), rows(5, tag="x")
    d = evaluate_evidence([*old, *new], {"f": frame("f", old)}, [rnd("f", 30, 0, 30)], POLICY)
    assert not d.passed and d.awaiting_audit
    by_frames = {tuple(b["frames"]): b for b in d.batches.values()}
    assert by_frames[("f",)]["passed"] and by_frames[("f",)]["n_notes"] == 30
    assert by_frames[()]["n_notes"] == 5 and not by_frames[()]["passed"]


def test_a_part_of_a_frame_is_bounded_by_the_frames_count_over_its_own_patients():
    r = rows(100)
    part = r[:10]  # only 10 of the frame's rows are still in the candidate
    d = evaluate_evidence(part, {"f": frame("f", r)}, [rnd("f", 60, 0, 100)], POLICY)
    (b,) = d.batches.values()
    assert b["upper_bound"] == min(1.0, hyper_count(100, 60, 0) / 10)
    assert not d.passed and d.awaiting_audit  # no leak found: more evidence, not a block


def test_every_frame_holding_a_row_counts():
    r = rows(50)
    f = {"f1": frame("f1", r), "f2": frame("f2", r)}
    d = evaluate_evidence(r, f, [rnd("f1", 50, 0, 50), rnd("f2", 50, 2, 50)], POLICY)
    assert not d.passed and not d.awaiting_audit
    (b,) = d.batches.values()
    assert b["upper_bound"] == 2 / 50 and b["n_leaks"] == 2


def test_rounds_without_a_frame_count_for_nothing():
    r = rows(20)
    legacy = AuditRecord.create("s", "k", "b1", 500, 0, 0.95, "old")
    d = evaluate_evidence(r, {}, [legacy], POLICY)
    assert not d.passed and d.awaiting_audit and d.n_rounds_without_frame == 1 and d.n_rounds_counted == 0


def test_drift_blocks_even_with_evidence():
    r = rows(20)
    d = evaluate_evidence(r, {"f": frame("f", r)}, [rnd("f", 20, 0, 20)], POLICY, drift_band="drift")
    assert not d.passed and not d.awaiting_audit


def test_frame_leak_bound_takes_the_larger_design():
    simple = [rnd("f", 50, 1, 100)]
    strata = [rnd("f", 50, 0, 100, stratum="richness-1", pop=50), rnd("f", 50, 0, 100, stratum="richness-2", pop=50)]
    assert frame_leak_bound(strata, 100, 0.95) == 0
    assert frame_leak_bound([*simple, *strata], 100, 0.95) == hyper_count(100, 50, 1)


def test_reasons_name_ids_and_counts_only():
    r = [CandidateRow(f"h{i}", f"P{i}", "Quartermaine Pavilion|mqz@gmail.com|consult", "bq1") for i in range(5)]
    d = evaluate_evidence(r, {}, [], POLICY)
    text = " ".join(d.reasons) + str(d.batches) + str(d.metadata(POLICY))
    assert "Quartermaine" not in text and "mqz" not in text
