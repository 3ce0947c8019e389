"""Audit frames, rounds and the gate's evidence rules (``tide_core/release/evidence.py``) on DuckDB in memory.

The candidate is hand-made ``tide_deid_notes`` rows (with valid row hashes) of the asked (study, key) beside rows
of another study and another key; no recognition, no model.  Ids (bucket, frame, batch) and the expected bounds
and sample sizes are recomputed here from their documented formulas (hashlib, scipy, ``random``), not read from
the module.  Tables carry a prefix, so a read or write of a default table name finds nothing.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import random

import numpy as np
import pytest
from scipy.stats import beta, hypergeom

from tide_core.assurance.audit_table import AuditRecord
from tide_core.assurance.gate import ReleaseGatePolicy
from tide_core.errors import InputError
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.release import evidence as ev
from tide_core.release.evidence import CandidateRow, Frame, evaluate_evidence, frame_leak_bound
from tide_core.store import tables
from tide_core.store.release_content import row_hash
from tide_core.store.tables import TableNames

NAMES = TableNames.with_prefix("x_")
POLICY = ReleaseGatePolicy()
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


# -- independent recomputation of the ids ------------------------------------------------------------------------


def fp(values) -> str:
    h = hashlib.sha256(b"tide-release/1")
    for v in sorted(values):
        h.update(v.encode() + b"\n")
    return h.hexdigest()[:24]


def bid(name: str) -> str:
    return "b" + hashlib.sha256(f"tide-bucket/1|{name}".encode()).hexdigest()[:10]


def fid(bucket: str, hashes) -> str:
    return "f" + fp([bucket, *hashes])[:15]


def nid(bucket: str, hashes) -> str:
    return "n" + fp([bucket, *hashes])[:10]


def hyper_count(N: int, n: int, k: int, conf: float = 0.95) -> int:  # noqa: N803
    """Largest D with P(X <= k) > 1 - conf (scipy's hypergeometric, every D at once)."""
    ds = np.arange(k, N - (n - k) + 1)
    return int(ds[hypergeom.cdf(k, N, ds, n) > 1 - conf].max())


def cp(n: int, k: int, conf: float) -> float:
    return 1.0 if n == 0 or k >= n else float(beta.ppf(conf, k + 1, n - k))


def sample_size(pop: int, target: float, conf: float, max_leaks: int) -> int:
    """Smallest n whose bound with ``max_leaks`` leaks is below target (a census when none is); the bound
    falls as n grows, so a bisection finds it."""
    if hyper_count(pop, pop, max_leaks, conf) / pop >= target:
        return pop
    lo, hi = max_leaks, pop
    while lo < hi:
        mid = (lo + hi) // 2
        if hyper_count(pop, mid, max_leaks, conf) / pop < target:
            hi = mid
        else:
            lo = mid + 1
    return lo


# -- the warehouse -------------------------------------------------------------------------------------------


def deid(study, key, note_id, patient, site="S1", source="ehr", note_type="consult", text=None, **more):
    row = {
        "study": study,
        "key": key,
        "note_id": note_id,
        "note_ref": f"N{note_id}",
        "patient_ref": patient,
        "text": text if text is not None else f"released text {note_id}",
        "note_date": "2020-01-01",
        "note_type": note_type,
        "source": source,
        "site": site,
        "anonymizer": "anon@1",
        "fingerprint": "fp1",
        "released_at": T0,
        **more,
    }
    row["row_hash"] = row_hash(study, key, row)
    return row


def put(wh, kind, rows):
    wh.replace_table(NAMES.of(kind), tables.to_table(kind, rows))


@pytest.fixture
def wh():
    w = DuckDBWarehouse(":memory:")
    yield w
    w.close()


def candidate(wh, a=6, b=3):
    """``a`` notes in bucket S1|ehr|consult (patients PA0..), ``b`` in S2|lab|report, plus foreign rows."""
    rows = [deid("s", "k", f"a{i}", f"PA{i % 4}") for i in range(a)]
    rows += [deid("s", "k", f"b{i}", f"PB{i}", site="S2", source="lab", note_type="report") for i in range(b)]
    foreign = [deid("t", "k", "z1", "PZ"), deid("s", "k2", "z2", "PZ", site="S2", source="lab", note_type="report")]
    put(wh, "deid_notes", rows + foreign)
    return rows


# -- candidate_rows and frames -------------------------------------------------------------------------------


def test_candidate_rows_are_the_release_rows_with_their_bucket_and_bucket_id(wh):
    rows = candidate(wh, a=2, b=1)
    rows.append(deid("s", "k", "c0", None, site=None, source="", note_type="x"))
    put(wh, "deid_notes", rows + [deid("t", "k", "z", "PZ")])
    got = sorted(ev.candidate_rows(wh, NAMES, "s", "k"), key=lambda r: r.row_hash)
    want = sorted(
        [
            CandidateRow(
                r["row_hash"],
                r["patient_ref"] or "",
                f"{r['site'] or 'unknown'}|{r['source'] or 'unknown'}|{r['note_type']}",
                bid(f"{r['site'] or 'unknown'}|{r['source'] or 'unknown'}|{r['note_type']}"),
            )
            for r in rows
        ],
        key=lambda r: r.row_hash,
    )
    assert got == want
    assert {r.bucket for r in got} == {"S1|ehr|consult", "S2|lab|report", "unknown|unknown|x"}
    assert [r.patient_ref for r in got if r.bucket.startswith("unknown")] == [""]


def test_candidate_rows_fail_closed_on_an_edited_or_unhashed_row(wh):
    rows = candidate(wh, a=2, b=1)
    put(wh, "deid_notes", [dict(rows[0], text="edited"), *rows[1:]])
    with pytest.raises(InputError) as e:
        ev.candidate_rows(wh, NAMES, "s", "k")
    assert e.value.code == "E937"
    put(wh, "deid_notes", [dict(rows[0], row_hash=None), *rows[1:]])
    with pytest.raises(InputError) as e:
        ev.candidate_rows(wh, NAMES, "s", "k")
    assert e.value.code == "E932"


def frame_row(study, key, frame, bucket, h, patient):
    return {
        "study": study,
        "key": key,
        "frame_id": frame,
        "bucket_id": bucket,
        "row_hash": h,
        "patient_ref": patient,
        "created_at": T0,
    }


def test_frames_group_rows_of_the_release_by_frame(wh):
    put(
        wh,
        "audit_frames",
        [
            frame_row("s", "k", "f1", "b1", "h1", "P1"),
            frame_row("s", "k", "f1", "b1", "h2", "P1"),
            frame_row("s", "k", "f1", "b1", "h3", None),
            frame_row("s", "k", "f2", "b2", "h9", "P2"),
            frame_row("s", "k2", "f3", "b1", "h1", "P1"),
            frame_row("t", "k", "f4", "b1", "h1", "P1"),
            frame_row("t", "k", "f1", "b1", "h7", "P7"),
        ],
    )
    assert ev.frames(wh, NAMES, "s", "k") == {
        "f1": Frame("f1", "b1", frozenset({"h1", "h2", "h3"}), frozenset({"P1", ""})),
        "f2": Frame("f2", "b2", frozenset({"h9"}), frozenset({"P2"})),
    }
    assert ev.frames(wh, NAMES, "u", "k") == {}


# -- plan_audit ----------------------------------------------------------------------------------------------


def test_planning_with_no_released_rows_is_refused(wh):
    put(wh, "deid_notes", [deid("t", "k", "z", "PZ")])
    with pytest.raises(InputError) as e:
        ev.plan_audit(wh, NAMES, "s", "k")
    assert e.value.code == "E930" and "s/k" in e.value.message


def test_a_plan_writes_one_frame_per_bucket_and_draws_its_sample(wh):
    rows = candidate(wh, a=6, b=3)
    plans = ev.plan_audit(wh, NAMES, "s", "k", seed=7)
    a = [r for r in rows if r["site"] == "S1"]
    b = [r for r in rows if r["site"] == "S2"]
    ba, bb = bid("S1|ehr|consult"), bid("S2|lab|report")
    fa, fb = fid(ba, [r["row_hash"] for r in a]), fid(bb, [r["row_hash"] for r in b])
    assert [p.bucket for p in plans] == ["S1|ehr|consult", "S2|lab|report"]
    assert [(p.frame_id, p.bucket_id, p.n_notes, p.n_patients) for p in plans] == [(fa, ba, 6, 4), (fb, bb, 3, 3)]
    # a 1% target cannot be supported on 4 patients short of a census
    for p, pats in ((plans[0], ["PA0", "PA1", "PA2", "PA3"]), (plans[1], ["PB0", "PB1", "PB2"])):
        assert p.sample_size == len(pats) and p.census
        assert p.sample == sorted(random.Random(f"7|{p.frame_id}").sample(pats, len(pats)))
    stored = ev.frames(wh, NAMES, "s", "k")
    assert stored == {
        fa: Frame(fa, ba, frozenset(r["row_hash"] for r in a), frozenset(r["patient_ref"] for r in a)),
        fb: Frame(fb, bb, frozenset(r["row_hash"] for r in b), frozenset(r["patient_ref"] for r in b)),
    }
    written = wh.read_table(NAMES.audit_frames).to_pylist()
    assert len(written) == 9 and {(r["study"], r["key"]) for r in written} == {("s", "k")}
    assert all(r["created_at"] is not None for r in written)
    assert plans[0].to_dict() == {
        "frame_id": fa,
        "bucket": "S1|ehr|consult",
        "bucket_id": ba,
        "n_notes": 6,
        "n_patients": 4,
        "sample_size": 4,
        "census": True,
        "sample": plans[0].sample,
    }


def test_a_plan_is_idempotent_for_the_same_content(wh):
    candidate(wh)
    first = ev.plan_audit(wh, NAMES, "s", "k")
    second = ev.plan_audit(wh, NAMES, "s", "k")
    assert [p.to_dict() for p in first] == [p.to_dict() for p in second]
    assert wh.count(NAMES.audit_frames) == 9


def test_a_frame_already_in_the_table_is_not_rewritten(wh):
    rows = candidate(wh, a=6, b=0)
    b = bid("S1|ehr|consult")
    f = fid(b, [r["row_hash"] for r in rows])
    put(wh, "audit_frames", [frame_row("s", "k", f, b, "hX", "PX")])  # a frame id known already
    (plan,) = ev.plan_audit(wh, NAMES, "s", "k")
    assert plan.frame_id == f
    assert [r["row_hash"] for r in wh.read_table(NAMES.audit_frames).to_pylist()] == ["hX"]


def test_the_sample_size_follows_the_target_confidence_and_allowed_leaks(wh):
    rows = [deid("s", "k", f"n{i}", f"P{i:03d}") for i in range(300)]
    put(wh, "deid_notes", rows)
    for target, conf, leaks, seed in ((0.05, 0.9, 0, 1), (0.05, 0.95, 1, 2), (0.02, 0.95, 0, 3)):
        (p,) = ev.plan_audit(
            wh, NAMES, "s", "k", target_rate=target, confidence=conf, max_leaks=leaks, seed=seed, everything=True
        )
        n = sample_size(300, target, conf, leaks)
        assert p.sample_size == n < 300 and not p.census
        pats = sorted(r["patient_ref"] for r in rows)
        assert p.sample == sorted(random.Random(f"{seed}|{p.frame_id}").sample(pats, n))
    # a claim no census supports (5 allowed leaks of 300 against 1%): the whole frame is reviewed
    (p,) = ev.plan_audit(wh, NAMES, "s", "k", target_rate=0.01, max_leaks=5, everything=True)
    assert p.sample_size == 300 and p.census


def test_the_default_plan_is_a_95_percent_claim_of_one_percent_with_no_leak(wh):
    rows = [deid("s", "k", f"n{i}", f"P{i:03d}") for i in range(400)]
    put(wh, "deid_notes", rows)
    (p,) = ev.plan_audit(wh, NAMES, "s", "k")
    n = sample_size(400, 0.01, 0.95, 0)
    assert p.sample_size == n < 400
    pats = sorted(r["patient_ref"] for r in rows)
    assert p.sample == sorted(random.Random(f"42|{p.frame_id}").sample(pats, n))
    assert len(set(p.sample)) == n


def test_content_a_round_covers_is_not_planned_again_unless_everything(wh):
    candidate(wh)
    fa, fb = ev.plan_audit(wh, NAMES, "s", "k")
    ev.record_round(wh, NAMES, "s", "k", fa.frame_id, 4, 0, reviewer="r")
    (only,) = ev.plan_audit(wh, NAMES, "s", "k")
    assert only.frame_id == fb.frame_id
    assert [p.frame_id for p in ev.plan_audit(wh, NAMES, "s", "k", everything=True)] == [fa.frame_id, fb.frame_id]


def test_new_rows_of_a_covered_bucket_get_a_frame_of_their_own(wh):
    rows = candidate(wh, a=6, b=0)
    (f1,) = ev.plan_audit(wh, NAMES, "s", "k")
    ev.record_round(wh, NAMES, "s", "k", f1.frame_id, 4, 0, reviewer="r")
    extra = [deid("s", "k", "new1", "PN1"), deid("s", "k", "new2", "PA0")]
    put(wh, "deid_notes", rows + extra)
    (f2,) = ev.plan_audit(wh, NAMES, "s", "k")
    b = bid("S1|ehr|consult")
    assert (f2.frame_id, f2.n_notes, f2.n_patients) == (fid(b, [r["row_hash"] for r in extra]), 2, 2)


def test_a_frame_whose_round_found_leaks_blocks_another_draw_of_its_content(wh):
    candidate(wh)
    fa, fb = ev.plan_audit(wh, NAMES, "s", "k")
    ev.record_round(wh, NAMES, "s", "k", fa.frame_id, 4, 1, reviewer="r")
    with pytest.raises(InputError) as e:
        ev.plan_audit(wh, NAMES, "s", "k", everything=True)
    assert e.value.code == "E769" and "s/k" in e.value.message and e.value.hint
    # the clean bucket can still be planned (the failed frame's rows are covered, not redrawn)
    assert [p.frame_id for p in ev.plan_audit(wh, NAMES, "s", "k")] == [fb.frame_id]
    assert "6 released rows of s/k are held" in e.value.message
    ev.record_round(wh, NAMES, "s", "k", fb.frame_id, 3, 0, reviewer="r")
    with pytest.raises(InputError) as e:  # nothing left to plan but held content: refused, not an empty plan
        ev.plan_audit(wh, NAMES, "s", "k")
    assert e.value.code == "E769" and e.value.message.startswith("6 released rows of s/k are held")
    with pytest.raises(InputError) as e:
        ev.record_round(wh, NAMES, "s", "k", fa.frame_id, 4, 0, reviewer="r")
    assert e.value.code == "E769" and e.value.hint


def test_a_clean_frame_can_be_planned_everything_again(wh):
    candidate(wh)
    fa, fb = ev.plan_audit(wh, NAMES, "s", "k")
    ev.record_round(wh, NAMES, "s", "k", fa.frame_id, 4, 0, reviewer="r")
    ev.record_round(wh, NAMES, "s", "k", fb.frame_id, 3, 0, reviewer="r")
    assert ev.plan_audit(wh, NAMES, "s", "k") == []
    assert len(ev.plan_audit(wh, NAMES, "s", "k", everything=True)) == 2


def test_a_failed_round_of_an_unknown_frame_blocks_nothing(wh):
    candidate(wh)
    rec = AuditRecord.create("s", "k", "b", 5, 2, 0.95, "r", frame_id="fgone", frame_patients=5)
    from tide_core.assurance.audit_table import records_to_table

    wh.append(NAMES.audits, records_to_table([rec]))
    assert len(ev.plan_audit(wh, NAMES, "s", "k", everything=True)) == 2


# -- record_round --------------------------------------------------------------------------------------------


def test_a_round_is_appended_with_its_frame_bucket_and_patients(wh):
    candidate(wh)
    fa, fb = ev.plan_audit(wh, NAMES, "s", "k")
    rec = ev.record_round(wh, NAMES, "s", "k", fa.frame_id, 3, 0, reviewer="dr x", confidence=0.9)
    assert (rec.study, rec.key, rec.bucket, rec.n_patients_sampled, rec.n_leaks) == ("s", "k", fa.bucket_id, 3, 0)
    assert (rec.confidence, rec.reviewer, rec.frame_id, rec.frame_patients) == (0.9, "dr x", fa.frame_id, 4)
    assert (rec.stratum, rec.stratum_population) == ("", None)
    ev.record_round(wh, NAMES, "s", "k", fb.frame_id, 3, 3, reviewer="dr y", stratum="richness-1", stratum_population=3)
    got = ev.audit_records(wh, NAMES, "s", "k")
    assert [(r.frame_id, r.n_patients_sampled, r.n_leaks, r.reviewer) for r in got] == [
        (fa.frame_id, 3, 0, "dr x"),
        (fb.frame_id, 3, 3, "dr y"),
    ]
    assert (got[1].stratum, got[1].stratum_population, got[1].frame_patients) == ("richness-1", 3, 3)
    assert ev.audit_records(wh, NAMES, "s", "k2") == []


@pytest.mark.parametrize(
    ("frame", "n", "leaks", "reviewer", "code"),
    [
        ("nope", 1, 0, "r", "E931"),
        (None, 1, 0, "  ", "E933"),
        (None, 1, 0, "", "E933"),
        (None, 0, 0, "r", "E740"),
        (None, 2, 3, "r", "E740"),
        (None, 2, -1, "r", "E740"),
        (None, 5, 0, "r", "E747"),
    ],
)
def test_a_round_is_refused(wh, frame, n, leaks, reviewer, code):
    candidate(wh)
    fa, _ = ev.plan_audit(wh, NAMES, "s", "k")
    with pytest.raises(InputError) as e:
        ev.record_round(wh, NAMES, "s", "k", frame or fa.frame_id, n, leaks, reviewer=reviewer)
    assert e.value.code == code and e.value.hint
    if code == "E931":
        assert "'nope'" in e.value.message and "s/k" in e.value.message
    if code == "E747":
        assert "5" in e.value.message and "4" in e.value.message
    assert ev.audit_records(wh, NAMES, "s", "k") == []


def test_a_round_may_review_the_whole_frame_and_find_every_patient_leaky(wh):
    candidate(wh)
    fa, _ = ev.plan_audit(wh, NAMES, "s", "k")
    assert ev.record_round(wh, NAMES, "s", "k", fa.frame_id, 4, 4, reviewer="r").n_leaks == 4


def test_a_stratum_round_is_capped_by_its_stratum_population(wh):
    candidate(wh)
    fa, _ = ev.plan_audit(wh, NAMES, "s", "k")
    with pytest.raises(InputError) as e:
        ev.record_round(wh, NAMES, "s", "k", fa.frame_id, 3, 0, reviewer="r", stratum="s1", stratum_population=2)
    assert e.value.code == "E747"
    with pytest.raises(InputError) as e:
        ev.record_round(wh, NAMES, "s", "k", fa.frame_id, 1, 0, reviewer="r", stratum="s1")
    assert e.value.code == "E747"
    # a stratum larger than the frame's patient count is the stratum's own cap
    rec = ev.record_round(wh, NAMES, "s", "k", fa.frame_id, 6, 0, reviewer="r", stratum="s1", stratum_population=6)
    assert rec.n_patients_sampled == 6 and rec.stratum_population == 6


def test_a_frame_of_another_release_is_unknown(wh):
    candidate(wh)
    fa, _ = ev.plan_audit(wh, NAMES, "s", "k")
    with pytest.raises(InputError) as e:
        ev.record_round(wh, NAMES, "s", "k2", fa.frame_id, 1, 0, reviewer="r")
    assert e.value.code == "E931"


# -- frame_leak_bound ----------------------------------------------------------------------------------------


def rnd(fid_: str, n: int, k: int, n_frame: int, stratum: str = "", pop: int | None = None, conf=0.95):
    return AuditRecord.create(
        "s",
        "k",
        "b1",
        n,
        k,
        conf,
        "test",
        stratum=stratum,
        stratum_population=pop,
        frame_id=fid_,
        frame_patients=n_frame,
    )


def strat(strata, conf):
    """The weighted bound of ``stratified.py`` recomputed: Sidak level over the sampled strata."""
    sampled = [s for s in strata if s[1] < s[0]]
    level = conf ** (1 / len(sampled)) if sampled else 1.0
    total = sum(s[0] for s in strata)
    return min(1.0, sum(pop / total * (k / pop if n >= pop else cp(n, k, level)) for pop, n, k in strata))


def test_no_round_bounds_a_frame_at_all_its_patients():
    assert frame_leak_bound([], 37, 0.95) == 37


def test_one_round_is_the_hypergeometric_count_at_the_asked_confidence():
    assert frame_leak_bound([rnd("f", 60, 1, 200)], 200, 0.9) == hyper_count(200, 60, 1, 0.9)
    assert frame_leak_bound([rnd("f", 60, 1, 200)], 200, 0.99) == hyper_count(200, 60, 1, 0.99)


def test_several_rounds_pool_their_counts_capped_by_the_frame():
    recs = [rnd("f", 120, 1, 1000), rnd("f", 80, 2, 1000), rnd("f", 50, 0, 1000)]
    assert frame_leak_bound(recs, 1000, 0.9) == math.ceil(cp(250, 3, 0.9) * 1000)
    # more reviewed than the frame holds: n is the frame, leaks at most n
    big = [rnd("f", 30, 0, 40), rnd("f", 30, 0, 40)]
    assert frame_leak_bound(big, 40, 0.95) == math.ceil(cp(40, 0, 0.95) * 40)
    leaky = [rnd("f", 30, 30, 40), rnd("f", 30, 30, 40)]
    assert frame_leak_bound(leaky, 40, 0.95) == 40


def test_rounds_of_one_stratum_pool_and_strata_combine_by_weight():
    recs = [
        rnd("f", 20, 0, 500, stratum="richness-1", pop=300),
        rnd("f", 30, 1, 500, stratum="richness-1", pop=250),  # the larger population counts
        rnd("f", 40, 0, 500, stratum="richness-2", pop=200),
    ]
    want = math.ceil(strat([(300, 50, 1), (200, 40, 0)], 0.9) * 500)
    assert frame_leak_bound(recs, 500, 0.9) == want
    assert 0 < want < 500


def test_inconsistent_strata_bound_the_frame_at_all_its_patients():
    recs = [rnd("f", 20, 0, 50, stratum="richness-1", pop=10)]  # sample larger than its stratum
    assert frame_leak_bound(recs, 50, 0.95) == 50
    recs = [rnd("f", 5, 0, 50, stratum="richness-1", pop=None)]  # no stratum size: nothing to audit
    assert frame_leak_bound(recs, 50, 0.95) == 50


def test_the_larger_design_wins_and_never_exceeds_the_frame():
    simple = [rnd("f", 10, 0, 60)]
    strata = [rnd("f", 30, 0, 60, stratum="a", pop=30), rnd("f", 30, 0, 60, stratum="b", pop=30)]
    assert frame_leak_bound([*simple, *strata], 60, 0.95) == hyper_count(60, 10, 0)
    assert frame_leak_bound(strata, 60, 0.95) == 0


# -- evaluate_evidence ---------------------------------------------------------------------------------------


def crows(n_patients, notes_each=1, bucket="b1", tag=""):
    return [
        CandidateRow(f"h{tag}{p}-{j}", f"P{tag}{p}", "site|src|type", bucket)
        for p in range(n_patients)
        for j in range(notes_each)
    ]


def frame(f, members):
    return Frame(
        f, members[0].bucket_id, frozenset(m.row_hash for m in members), frozenset(m.patient_ref for m in members)
    )


def test_a_passing_census_has_its_exact_statement_and_metadata():
    r = crows(40)
    d = evaluate_evidence(r, {"f": frame("f", r)}, [rnd("f", 40, 0, 40)], POLICY, population="release s/k")
    name = nid("b1", [x.row_hash for x in r])
    assert d.passed and not d.awaiting_audit and d.reasons == []
    assert d.batches == {
        name: {
            "bucket_id": "b1",
            "n_notes": 40,
            "n_patients": 40,
            "frames": ["f"],
            "n_patients_sampled": 40,
            "n_leaks": 0,
            "upper_bound": 0.0,
            "passed": True,
        }
    }
    assert d.statement == (
        "With 95% confidence, no patient of release s/k has a leaked identifier: the audits of every batch (all or "
        "nearly all of its patients reviewed) found none [1 audit rounds, 1 batches]"
    )
    assert (d.n_rounds_counted, d.n_rounds_without_frame) == (1, 0)
    assert d.metadata(POLICY) == {
        "passed": True,
        "awaiting_audit": False,
        "n_batches": 1,
        "n_batches_unaudited": 0,
        "n_rounds_counted": 1,
        "n_rounds_without_frame": 0,
        "worst_upper_bound": 0.0,
        "reasons": "none",
        "drift_band": "none recorded",
        "statement": d.statement,
        "target_rate": 0.01,
        "confidence": 0.95,
        "policy": POLICY.describe(),
        "approval": "",
    }


def test_a_passing_sample_states_its_worst_bound():
    r = crows(5000, notes_each=2)
    d = evaluate_evidence(r, {"f": frame("f", r)}, [rnd("f", 400, 0, 5000), rnd("f", 400, 0, 5000)], POLICY)
    bound = math.ceil(cp(800, 0, 0.95) * 5000) / 5000
    (b,) = d.batches.values()
    assert d.passed and math.isclose(b["upper_bound"], bound) and b["n_notes"] == 10000 and b["n_patients"] == 5000
    assert b["n_patients_sampled"] == 800
    assert d.statement == (
        f"With 95% confidence, fewer than {bound * 100:.2f}% of the patients of this release have a leaked "
        "identifier, in every audited batch [2 audit rounds, 1 batches]"
    )


def test_a_bound_at_the_target_does_not_pass():
    r = crows(100)
    # a census that found exactly one leak in 100: bound 1/100 == target 1%
    d = evaluate_evidence(r, {"f": frame("f", r)}, [rnd("f", 100, 1, 100)], POLICY)
    (name, b) = next(iter(d.batches.items()))
    assert b["upper_bound"] == 0.01 and not b["passed"] and not d.passed and not d.awaiting_audit
    assert d.reasons == [
        f"batch {name}: 1 leaks in 100 patients reviewed gives an upper bound of 1.0000% at 95% confidence, "
        "not below 1%"
    ]
    assert d.statement == ""
    md = d.metadata(POLICY)
    assert md["reasons"] == d.reasons[0] and md["worst_upper_bound"] == 0.01 and md["statement"] == ""


def test_a_looser_policy_passes_what_the_default_does_not():
    r = crows(100)
    loose = ReleaseGatePolicy(target_rate=0.02, confidence=0.9, approval="ok by x")
    d = evaluate_evidence(r, {"f": frame("f", r)}, [rnd("f", 100, 1, 100)], loose)
    assert d.passed and d.statement.startswith("With 90% confidence, fewer than 1.00% of the patients of this release")
    md = d.metadata(loose)
    assert (md["target_rate"], md["confidence"], md["approval"], md["policy"]) == (
        0.02,
        0.9,
        "ok by x",
        loose.describe(),
    )
    # the bound is taken at the policy's confidence, not the rounds'
    r2 = crows(200)
    d2 = evaluate_evidence(r2, {"f": frame("f", r2)}, [rnd("f", 150, 0, 200)], ReleaseGatePolicy(confidence=0.8))
    assert next(iter(d2.batches.values()))["upper_bound"] == hyper_count(200, 150, 0, 0.8) / 200


def test_unaudited_content_has_its_reason_and_awaits_audit():
    old, new = crows(30), crows(5, notes_each=2, tag="x")
    d = evaluate_evidence([*old, *new], {"f": frame("f", old)}, [rnd("f", 30, 0, 30)], POLICY)
    name = nid("b1", [x.row_hash for x in new])
    assert not d.passed and d.awaiting_audit
    assert d.reasons == [f"batch {name} (10 notes, 5 patients) has no audit: unvalidated"]
    assert d.batches[name]["frames"] == [] and d.batches[name]["upper_bound"] == 1.0
    assert d.batches[name]["n_patients_sampled"] == 0 and d.batches[name]["n_leaks"] == 0
    md = d.metadata(POLICY)
    assert (md["n_batches"], md["n_batches_unaudited"], md["worst_upper_bound"]) == (2, 1, 1.0)


def test_no_round_at_all_says_the_release_is_unvalidated():
    r = crows(3)
    d = evaluate_evidence(r, {}, [], POLICY)
    name = nid("b1", [x.row_hash for x in r])
    assert d.reasons == [
        "no audit round covers this content: the release is unvalidated (tide release audit plan)",
        f"batch {name} (3 notes, 3 patients) has no audit: unvalidated",
    ]
    assert d.awaiting_audit and d.statement == ""
    # no audit required and no bucket required: nothing is missing
    lax = ReleaseGatePolicy(require_audit=False, required_buckets=())
    d = evaluate_evidence(r, {}, [], lax)
    assert d.passed and d.reasons == [] and not d.awaiting_audit
    assert d.statement == ""  # nothing audited: nothing to state
    # required buckets named: every unaudited batch is still reported
    named = ReleaseGatePolicy(require_audit=False, required_buckets=("x",))
    assert evaluate_evidence(r, {}, [], named).reasons == [
        f"batch {name} (3 notes, 3 patients) has no audit: unvalidated"
    ]


def test_an_empty_candidate_with_no_requirement_passes_without_a_statement():
    lax = ReleaseGatePolicy(require_audit=False)
    d = evaluate_evidence([], {}, [], lax)
    assert d.passed and d.batches == {} and d.statement == ""
    assert d.metadata(lax)["worst_upper_bound"] == 1.0


def test_batches_split_by_bucket_and_by_covering_frames():
    a, b = crows(10, bucket="bA", tag="a"), crows(6, bucket="bB", tag="b")
    frames_ = {"f1": frame("f1", a[:6]), "f2": frame("f2", a[4:] + b)}
    recs = [rnd("f1", 6, 0, 6), rnd("f2", 12, 0, 12)]
    d = evaluate_evidence([*a, *b], frames_, recs, POLICY)
    got = {(v["bucket_id"], tuple(v["frames"])): (k, v["n_notes"]) for k, v in d.batches.items()}
    assert got == {
        ("bA", ("f1",)): (nid("bA", [x.row_hash for x in a[:4]]), 4),
        ("bA", ("f1", "f2")): (nid("bA", [x.row_hash for x in a[4:6]]), 2),
        ("bA", ("f2",)): (nid("bA", [x.row_hash for x in a[6:]]), 4),
        ("bB", ("f2",)): (nid("bB", [x.row_hash for x in b]), 6),
    }
    assert list(d.batches) == [got[k][0] for k in sorted(got)]
    both = d.batches[got[("bA", ("f1", "f2"))][0]]
    assert both["n_patients_sampled"] == 18 and both["upper_bound"] == 0.0 and d.passed


def test_a_batch_bound_is_the_worst_frame_over_the_batch_patients():
    r = crows(100)
    fr = {"f1": frame("f1", r), "f2": frame("f2", r)}
    d1 = hyper_count(100, 60, 0)
    d = evaluate_evidence(r[:50], fr, [rnd("f1", 60, 0, 100), rnd("f2", 100, 0, 100)], POLICY)
    (b,) = d.batches.values()
    assert b["upper_bound"] == d1 / 50 and b["n_leaks"] == 0 and b["n_patients_sampled"] == 160
    d = evaluate_evidence(r[:2], fr, [rnd("f1", 60, 0, 100), rnd("f2", 100, 0, 100)], POLICY)
    assert next(iter(d.batches.values()))["upper_bound"] == 1.0  # capped at 1
    assert not d.passed and d.awaiting_audit


def test_patients_are_counted_once_per_batch():
    r = crows(20, notes_each=3)
    d = evaluate_evidence(r, {"f": frame("f", r)}, [rnd("f", 10, 0, 20)], POLICY)
    (b,) = d.batches.values()
    assert (b["n_notes"], b["n_patients"]) == (60, 20)
    assert b["upper_bound"] == hyper_count(20, 10, 0) / 20


def test_a_leak_blocks_and_names_counts_only():
    r = crows(50)
    d = evaluate_evidence(r, {"f": frame("f", r)}, [rnd("f", 20, 1, 50)], POLICY)
    assert not d.passed and not d.awaiting_audit
    (name, b) = next(iter(d.batches.items()))
    bound = hyper_count(50, 20, 1) / 50
    assert d.reasons == [
        f"batch {name}: 1 leaks in 20 patients reviewed gives an upper bound of {bound * 100:.4f}% at 95% "
        "confidence, not below 1%"
    ]


def test_a_leak_in_one_batch_blocks_even_beside_an_unaudited_one():
    r, new = crows(50), crows(3, tag="n")
    d = evaluate_evidence([*r, *new], {"f": frame("f", r)}, [rnd("f", 50, 2, 50)], POLICY)
    assert not d.passed and not d.awaiting_audit and len(d.reasons) == 2


def test_rounds_of_unknown_frames_or_none_count_for_nothing():
    r = crows(20)
    recs = [
        AuditRecord.create("s", "k", "b1", 20, 0, 0.95, "old"),
        rnd("fgone", 20, 0, 20),
        rnd("f", 20, 0, 20),
    ]
    d = evaluate_evidence(r, {"f": frame("f", r)}, recs, POLICY)
    assert d.passed and (d.n_rounds_counted, d.n_rounds_without_frame) == (1, 2)
    assert d.metadata(POLICY)["n_rounds_without_frame"] == 2
    d = evaluate_evidence(r, {"f": frame("f", r)}, iter(recs[:2]), POLICY)
    assert not d.passed and d.awaiting_audit and (d.n_rounds_counted, d.n_rounds_without_frame) == (0, 2)


def test_a_frame_with_no_round_covers_nothing():
    r = crows(20)
    fr = {"f": frame("f", r), "g": frame("g", r)}
    d = evaluate_evidence(r, fr, [rnd("f", 20, 0, 20)], POLICY)
    (b,) = d.batches.values()
    assert b["frames"] == ["f"] and d.passed


def test_drift_blocks_and_a_watch_band_does_not_by_default():
    r = crows(20)
    f = {"f": frame("f", r)}
    d = evaluate_evidence(r, f, [rnd("f", 20, 0, 20)], POLICY, drift_band="drift")
    assert not d.passed and not d.awaiting_audit and d.reasons and d.statement == ""
    assert d.metadata(POLICY)["drift_band"] == "drift"
    assert evaluate_evidence(r, f, [rnd("f", 20, 0, 20)], POLICY, drift_band="ok").passed
    # an unaudited batch beside drift: blocked, not awaiting audit
    d = evaluate_evidence([*r, *crows(2, tag="z")], f, [rnd("f", 20, 0, 20)], POLICY, drift_band="drift")
    assert not d.awaiting_audit


def test_reasons_and_metadata_never_name_a_bucket():
    r = [CandidateRow(f"h{i}", f"P{i}", "Quartermaine Pavilion|mqz@gmail.com|consult", "bq1") for i in range(5)]
    fr = {"f": frame("f", r[:3])}
    d = evaluate_evidence(r, fr, [rnd("f", 3, 1, 3)], POLICY)
    text = " ".join(d.reasons) + str(d.batches) + str(d.metadata(POLICY)) + d.statement
    assert "Quartermaine" not in text and "mqz" not in text and "bq1" in text


def test_a_leak_in_an_earlier_batch_is_not_forgotten_by_a_later_clean_one():
    a, b = crows(40, bucket="bA", tag="a"), crows(200, bucket="bB", tag="b")
    fr = {"fa": frame("fa", a), "fb": frame("fb", b)}
    d = evaluate_evidence([*a, *b], fr, [rnd("fa", 40, 1, 40), rnd("fb", 20, 0, 200)], POLICY)
    assert [v["n_leaks"] for v in d.batches.values()] == [1, 0]  # the leaky batch is judged first
    assert [v["passed"] for v in d.batches.values()] == [False, False]
    assert not d.passed and not d.awaiting_audit
    assert d.metadata(POLICY)["reasons"] == f"{d.reasons[0]}; {d.reasons[1]}"


def test_a_stratum_of_unknown_size_adds_nothing_to_the_weighted_bound():
    recs = [
        rnd("f", 1, 0, 10000, stratum="richness-0", pop=None),
        rnd("f", 50, 0, 10000, stratum="richness-1", pop=100),
        rnd("f", 50, 0, 10000, stratum="richness-2", pop=100),
    ]
    want = math.ceil(strat([(100, 50, 0), (100, 50, 0)], 0.95) * 10000)
    assert frame_leak_bound(recs, 10000, 0.95) == want
    assert want != math.ceil(strat([(1, 1, 0), (100, 50, 0), (100, 50, 0)], 0.95) * 10000)


def test_the_refusals_name_what_to_pass(wh):
    candidate(wh)
    fa, _ = ev.plan_audit(wh, NAMES, "s", "k")
    cases = [
        (dict(frame_id="nope", n_patients=1, n_leaks=0, reviewer="r"), "E931", "frame", "tide release audit plan"),
        (
            dict(frame_id=fa.frame_id, n_patients=1, n_leaks=0, reviewer=" "),
            "E933",
            "reviewer",
            "--reviewer NAME-OR-ROLE",
        ),
        (dict(frame_id=fa.frame_id, n_patients=2, n_leaks=3, reviewer="r"), "E740", "leaks", "--n and --leaks"),
        (dict(frame_id=fa.frame_id, n_patients=9, n_leaks=0, reviewer="r"), "E747", "9 patients", "--n as the number"),
    ]
    for kw, code, said, hint in cases:
        with pytest.raises(InputError) as e:
            ev.record_round(wh, NAMES, "s", "k", **kw)
        assert (e.value.code, said in e.value.message, hint in e.value.hint) == (code, True, True)
    ev.record_round(wh, NAMES, "s", "k", fa.frame_id, 4, 1, reviewer="r")
    with pytest.raises(InputError) as e:
        ev.record_round(wh, NAMES, "s", "k", fa.frame_id, 4, 0, reviewer="r")
    assert e.value.code == "E769" and "found leaks" in e.value.message and "re-make the release" in e.value.hint


def test_a_failed_round_of_another_key_does_not_hold_this_frame(wh):
    candidate(wh)
    fa, _ = ev.plan_audit(wh, NAMES, "s", "k")
    other = AuditRecord.create("s", "k2", "b", 4, 2, 0.95, "r", frame_id=fa.frame_id, frame_patients=4)
    from tide_core.assurance.audit_table import records_to_table

    wh.append(NAMES.audits, records_to_table([other]))
    assert ev.record_round(wh, NAMES, "s", "k", fa.frame_id, 4, 0, reviewer="r").n_leaks == 0


def test_a_bucket_of_one_row_is_one_frame(wh):
    rows = candidate(wh, a=1, b=0)
    (p,) = ev.plan_audit(wh, NAMES, "s", "k")
    b = bid("S1|ehr|consult")
    assert (p.frame_id, p.bucket_id, p.n_notes, p.n_patients, p.sample) == (
        fid(b, [rows[0]["row_hash"]]),
        b,
        1,
        1,
        ["PA0"],
    )


def test_the_refusal_to_plan_says_what_to_do(wh):
    put(wh, "deid_notes", [deid("t", "k", "z", "PZ")])
    with pytest.raises(InputError) as e:
        ev.plan_audit(wh, NAMES, "s", "k")
    assert "run anonymization" in e.value.hint
    candidate(wh)
    fa, _ = ev.plan_audit(wh, NAMES, "s", "k")
    ev.record_round(wh, NAMES, "s", "k", fa.frame_id, 4, 1, reviewer="r")
    with pytest.raises(InputError) as e:
        ev.plan_audit(wh, NAMES, "s", "k", everything=True)
    assert "another draw of the same content is refused" in e.value.message
    assert "re-make the release (new content)" in e.value.hint


def test_frames_and_rounds_of_another_key_do_not_count_for_a_plan(wh):
    rows = candidate(wh)
    a = [r for r in rows if r["site"] == "S1"]
    b = bid("S1|ehr|consult")
    f = fid(b, [r["row_hash"] for r in a])
    # another key holds a frame of the same id (hand-made) and a failed round of it
    put(wh, "audit_frames", [frame_row("s", "k2", f, b, "hX", "PX")])
    other = AuditRecord.create("s", "k2", b, 1, 1, 0.95, "r", frame_id=f, frame_patients=1)
    from tide_core.assurance.audit_table import records_to_table

    wh.append(NAMES.audits, records_to_table([other]))
    plans = ev.plan_audit(wh, NAMES, "s", "k", everything=True)
    assert [p.frame_id for p in plans][0] == f
    assert ev.frames(wh, NAMES, "s", "k")[f].hashes == frozenset(r["row_hash"] for r in a)
    assert len(ev.plan_audit(wh, NAMES, "s", "k")) == 2


def test_frames_are_stamped_in_utc_whatever_the_local_zone(wh, monkeypatch):
    import time

    monkeypatch.setenv("TZ", "Etc/GMT+5")
    time.tzset()
    try:
        candidate(wh, a=2, b=0)
        before = dt.datetime.now(dt.UTC)
        ev.plan_audit(wh, NAMES, "s", "k")
        after = dt.datetime.now(dt.UTC)
    finally:
        monkeypatch.undo()
        time.tzset()
    stamps = {r["created_at"] for r in wh.read_table(NAMES.audit_frames).to_pylist()}
    assert len(stamps) == 1 and before <= stamps.pop() <= after
