"""The PHI Guard hold (``tide_core/assurance/guard_hold.py``) on DuckDB in memory, in about a second.

A real ``GuardModel`` with hand-set weights: "zorblax" is certain PHI to it, "quibbet" just above its 0.5
threshold, every other word nothing.  The candidate is hand-made ``tide_deid_notes`` rows (no recognition, no
anonymizer) of the asked (study, key) beside rows of another study and another key, with an earlier quarantine
row (E604) and released spans.  A hold takes exactly the flagged documents (and their spans) out of the
candidate, adds one E773 quarantine row per held note while keeping every earlier quarantine row, and ranks the
review pile riskiest first; a second pass holds nothing new and keeps the pile.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import numpy as np
import pytest

from tide_core.assurance import guard_hold as gh
from tide_core.assurance.guard_model import N_FEATURES, GuardModel, _hash
from tide_core.config import TideConfig
from tide_core.errors import ConfigError
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.store import tables
from tide_core.store.tables import TableNames

NAMES = TableNames.with_prefix("x_")
CONFIG = TideConfig(recognizers=({"name": "tide.regex"},), tables=NAMES)
STRONG, WEAK = "zorblax", "quibbet"
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def planted_guard(threshold=0.5) -> GuardModel:
    coef = np.zeros(N_FEATURES, dtype=np.float32)
    coef[_hash(f"w={STRONG}")] = 20.0  # sigmoid(10): certain
    coef[_hash(f"w={WEAK}")] = 10.5  # sigmoid(0.5) = 0.62
    return GuardModel(coef, -10.0, threshold=threshold)


GUARD = planted_guard()
P_STRONG = 1 / (1 + np.exp(-10.0))
P_WEAK = 1 / (1 + np.exp(-0.5))


def deid(note_id, text, source, study="s", key="k"):
    return {"study": study, "key": key, "note_id": note_id, "note_ref": f"N-{note_id}", "patient_ref": f"P-{note_id}",
            "text": text, "source": source, "released_at": T0}  # fmt: skip


SOURCE_TEXTS = {
    "n1": f"Seen {STRONG} today",
    "n2": f"Call {WEAK} back",
    "n3": f"Routine visit {STRONG}",  # the source word was replaced: its released text is clean
    "n4": "All well",
}
SOURCE_PATIENTS = {"n1": "p1", "n2": "p2", "n3": "p3", "n4": None}


def put(wh, kind, rows):
    wh.replace_table(NAMES.of(kind), tables.to_table(kind, rows))


def read(wh, kind, study="s", key="k"):
    rows = wh.read_table(NAMES.of(kind)).to_pylist()
    return [r for r in rows if (r["study"], r["key"]) == (study, key)]


FOREIGN = [deid("f1", f"{STRONG}", "clinical", study="t"), deid("f2", f"{STRONG}", "clinical", key="k2")]
EARLIER_Q = {"study": "s", "key": "k", "note_id": "n9", "patient_id": "p9", "stage": "input", "code": "E604",
             "reason": "row 9 (note n9): text is null or empty", "row_number": 9, "quarantined_at": T0}  # fmt: skip


@pytest.fixture
def wh():
    w = DuckDBWarehouse(":memory:")
    put(
        w,
        "deid_notes",
        [
            deid("n1", f"Seen {STRONG} today", "clinical"),
            deid("n2", f"Call {WEAK} back", "messages"),
            deid("n3", "Routine visit Dr [X]", "clinical"),
            deid("n4", f"All well {STRONG}", "messages"),  # inside a surrogate range: masked
            *FOREIGN,
        ],
    )
    put(
        w,
        "released_spans",
        [
            {"study": "s", "key": "k", "note_id": "n1", "start": 0, "end": 4, "out_start": 0, "out_end": 4,
             "label": "X"},
            {"study": "s", "key": "k", "note_id": "n3", "start": 14, "end": 21, "out_start": 14, "out_end": 20,
             "label": "PATIENT"},
            {"study": "s", "key": "k", "note_id": "n4", "start": 9, "end": 16, "out_start": 9, "out_end": 16,
             "label": "PATIENT"},
            {"study": "t", "key": "k", "note_id": "f1", "start": 0, "end": 1, "out_start": 0, "out_end": 1,
             "label": "X"},
        ],
    )  # fmt: skip
    put(w, "quarantine", [EARLIER_Q, dict(EARLIER_Q, key="k2", note_id="m1")])
    yield w
    w.close()


def apply(wh, config=CONFIG, guard=GUARD):
    return gh.apply_guard(wh, config, "s", "k", guard, SOURCE_TEXTS, SOURCE_PATIENTS)


def test_flagged_documents_are_held_and_every_earlier_quarantine_row_stays(wh):
    before = dt.datetime.now(dt.UTC)
    report = apply(wh)
    assert sorted(r["note_id"] for r in read(wh, "deid_notes")) == ["n3", "n4"]
    assert sorted((r["note_id"], r["start"]) for r in read(wh, "released_spans")) == [("n3", 14), ("n4", 9)]
    q = sorted(read(wh, "quarantine"), key=lambda r: r["note_id"])
    assert q[-1] == EARLIER_Q  # the earlier E604 row is kept as it was
    held_q = q[:-1]
    reason = (
        f"held by the PHI Guard ({GUARD.version}) for review: the released text still looks like it holds PHI; "
        "review the note (tide review), then re-run the release"
    )
    assert [{k: v for k, v in r.items() if k != "quarantined_at"} for r in held_q] == [
        {"study": "s", "key": "k", "note_id": nid, "patient_id": pid, "stage": "guard", "code": "E773",
         "reason": reason, "row_number": None}
        for nid, pid in (("n1", "p1"), ("n2", "p2"))
    ]  # fmt: skip
    assert all(r["quarantined_at"] >= before for r in held_q)
    assert STRONG not in reason and WEAK not in reason
    # another study's and key's rows are untouched
    assert [r["note_id"] for r in read(wh, "deid_notes", "t")] == ["f1"]
    assert [r["note_id"] for r in read(wh, "deid_notes", "s", "k2")] == ["f2"]
    assert len(read(wh, "released_spans", "t")) == 1
    assert read(wh, "quarantine", "s", "k2") == [dict(EARLIER_Q, key="k2", note_id="m1")]
    assert report == gh.HoldReport("s", "k", GUARD.version, {"clinical": 0.5, "messages": 0.5}, 4, 2,
                                   {"clinical": 1, "messages": 1}, {"clinical": 2, "messages": 2})  # fmt: skip
    assert report.n_held == 2 and report.flag_rates() == {"clinical": 0.5, "messages": 0.5}


def test_the_scores_rank_the_review_pile_riskiest_first(wh):
    apply(wh)
    rows = {r["note_id"]: r for r in read(wh, "guard_scores")}
    assert sorted(rows) == ["n1", "n2", "n3", "n4"]
    assert {n: (r["held"], r["rank"]) for n, r in rows.items()} == {
        "n1": (True, 1),
        "n2": (True, 2),
        "n3": (False, None),
        "n4": (False, None),
    }
    assert rows["n1"]["masked"] == pytest.approx(P_STRONG, rel=1e-5)
    assert rows["n2"]["masked"] == pytest.approx(P_WEAK, rel=1e-5)
    assert rows["n4"]["masked"] < 0.01 and rows["n3"]["masked"] < 0.01
    for n, r in rows.items():
        want = GUARD.score(n, SOURCE_TEXTS[n])
        assert r["richness"] == pytest.approx(want.richness, rel=1e-6)
        assert (r["note_ref"], r["patient_ref"], r["guard_version"], r["threshold"]) == (
            f"N-{n}",
            f"P-{n}",
            GUARD.version,
            0.5,
        )
        assert r["scored_at"] is not None
    assert rows["n3"]["richness"] > 0  # scored from the source text, not the released one
    assert [r["source"] for r in sorted(rows.values(), key=lambda r: r["note_id"])] == [
        "clinical",
        "messages",
        "clinical",
        "messages",
    ]


def test_equal_scores_rank_by_note_id(wh):
    put(wh, "deid_notes", [deid("b", STRONG, "c"), deid("a", STRONG, "c"), deid("c", WEAK, "c")])
    gh.apply_guard(wh, CONFIG, "s", "k", GUARD, {}, {})
    ranks = {r["note_id"]: r["rank"] for r in read(wh, "guard_scores")}
    assert ranks == {"a": 1, "b": 2, "c": 3}
    q = {r["note_id"]: r["patient_id"] for r in read(wh, "quarantine") if r["code"] == "E773"}
    assert q == {"a": None, "b": None, "c": None}
    assert {r["note_id"]: r["richness"] for r in read(wh, "guard_scores")} == {"a": 0.0, "b": 0.0, "c": 0.0}


def test_a_second_pass_holds_nothing_new_and_keeps_the_pile(wh):
    apply(wh)
    first = {r["note_id"]: r for r in read(wh, "guard_scores")}
    q = read(wh, "quarantine")
    again = apply(wh)
    assert again == gh.HoldReport("s", "k", GUARD.version, {"clinical": 0.5, "messages": 0.5}, 2, 0,
                                  {"clinical": 1, "messages": 1}, {"clinical": 2, "messages": 2})  # fmt: skip
    assert sorted(read(wh, "quarantine"), key=str) == sorted(q, key=str)
    rows = {r["note_id"]: r for r in read(wh, "guard_scores")}
    assert sorted(rows) == ["n1", "n2", "n3", "n4"]
    for n in ("n1", "n2"):
        assert rows[n] == first[n]  # kept as scored, with its rank and time
    assert sorted(r["note_id"] for r in read(wh, "deid_notes")) == ["n3", "n4"]


def test_a_kept_row_without_a_time_gets_one(wh):
    apply(wh)
    rows = read(wh, "guard_scores")
    put(wh, "guard_scores", [dict(r, scored_at=None) for r in rows])
    apply(wh)
    assert all(r["scored_at"] is not None for r in read(wh, "guard_scores"))


def test_a_hold_whose_quarantine_row_is_gone_is_dropped_from_the_pile(wh):
    apply(wh)
    put(wh, "quarantine", [r for r in read(wh, "quarantine") if r["note_id"] != "n1"])
    apply(wh)
    rows = {r["note_id"]: r for r in read(wh, "guard_scores")}
    assert sorted(rows) == ["n2", "n3", "n4"] and rows["n2"]["rank"] == 1


def test_a_released_row_of_a_held_note_is_not_a_kept_hold(wh):
    apply(wh)
    # the quarantine row stands but the score row says it was not held: not part of the pile
    put(wh, "guard_scores", [dict(r, held=False) if r["note_id"] == "n2" else r for r in read(wh, "guard_scores")])
    apply(wh)
    assert sorted(r["note_id"] for r in read(wh, "guard_scores")) == ["n1", "n3", "n4"]


def test_a_frozen_threshold_per_source(wh):
    config = dataclasses.replace(CONFIG, guard_thresholds={"messages": 0.9})
    report = apply(wh, config)
    assert sorted(r["note_id"] for r in read(wh, "deid_notes")) == ["n2", "n3", "n4"]
    assert report.thresholds == {"clinical": 0.5, "messages": 0.9}
    assert {r["note_id"]: r["threshold"] for r in read(wh, "guard_scores")} == {
        "n1": 0.5,
        "n2": 0.9,
        "n3": 0.5,
        "n4": 0.9,
    }
    assert report.held_by_source == {"clinical": 1} and report.flag_rates() == {"clinical": 0.5, "messages": 0.0}


def test_nothing_flagged_writes_only_the_scores(wh):
    report = apply(wh, guard=planted_guard(threshold=0.9999999))
    assert report.n_newly_held == 0 and report.n_held == 0 and report.n_scored == 4
    assert sorted(r["note_id"] for r in read(wh, "deid_notes")) == ["n1", "n2", "n3", "n4"]
    assert read(wh, "quarantine") == [EARLIER_Q] and len(read(wh, "released_spans")) == 3
    assert len(read(wh, "guard_scores")) == 4 and not any(r["held"] for r in read(wh, "guard_scores"))


def test_a_missing_source_counts_as_the_empty_source(wh):
    put(wh, "deid_notes", [deid("n2", STRONG, None), deid("n5", "fine", None)])
    report = gh.apply_guard(wh, CONFIG, "s", "k", GUARD, SOURCE_TEXTS, SOURCE_PATIENTS)
    assert report.held_by_source == {"": 1} and report.scored_by_source == {"": 2}
    assert {r["source"] for r in read(wh, "guard_scores")} == {""}


def test_the_report_and_the_release_columns_hold_counts_version_and_thresholds_only():
    r = gh.HoldReport("s", "k", "guard@abc", {"b": 0.7, "a": 0.5}, 7, 1, {"a": 1, "b": 2}, {"b": 4, "a": 3, "z": 0})
    assert r.n_held == 3
    assert r.flag_rates() == {"a": 0.3333, "b": 0.5}
    assert list(r.flag_rates()) == ["a", "b"]
    md = r.metadata()
    assert md == {
        "guard_version": "guard@abc",
        "guard_thresholds": {"a": 0.5, "b": 0.7},
        "n_guard_scored": 7,
        "n_held": 3,
        "n_newly_held": 1,
        "held_by_source": {"a": 1, "b": 2},
        "flag_rate_by_source": {"a": 0.3333, "b": 0.5},
    }
    assert list(md["guard_thresholds"]) == ["a", "b"] and list(md["held_by_source"]) == ["a", "b"]
    cols = gh.release_guard_columns(r)
    assert cols == {
        "n_held": 3,
        "guard_version": "guard@abc",
        "guard_thresholds": json.dumps({"thresholds": {"a": 0.5, "b": 0.7}, "flag_rate_by_source": r.flag_rates()}),
    }
    assert (
        cols["guard_thresholds"]
        == '{"thresholds": {"a": 0.5, "b": 0.7}, "flag_rate_by_source": {"a": 0.3333, "b": 0.5}}'
    )
    assert gh.release_guard_columns(None) == {"n_held": None, "guard_version": "", "guard_thresholds": ""}
    empty = gh.HoldReport("s", "k", "v", {}, 0, 0)
    assert empty.held_by_source == {} and empty.scored_by_source == {} and empty.n_held == 0


def test_the_pinned_guard_is_loaded_or_refused(tmp_path):
    assert gh.load_pinned_guard(CONFIG) is None
    GUARD.save(tmp_path)
    loaded = gh.load_pinned_guard(dataclasses.replace(CONFIG, guard_dir=str(tmp_path)))
    assert loaded is not None and loaded.version == GUARD.version
    pinned = gh.load_pinned_guard(dataclasses.replace(CONFIG, guard_dir=str(tmp_path), guard_version=GUARD.version))
    assert pinned is not None and pinned.version == GUARD.version
    with pytest.raises(ConfigError) as e:
        gh.load_pinned_guard(dataclasses.replace(CONFIG, guard_dir=str(tmp_path), guard_version="guard@other"))
    assert e.value.code == "E774"
    assert GUARD.version in e.value.message and "guard@other" in e.value.message and "guard_version" in e.value.hint
    assert gh.HELD_CODE == "E773" and gh.HELD_STAGE == "guard"


def test_the_riskiest_note_ranks_first_whatever_its_id(wh):
    put(wh, "deid_notes", [deid("a", "", "c"), deid("b", WEAK, "c"), deid("c", STRONG, "c"), deid("d", None, "c")])
    put(wh, "released_spans", [])
    gh.apply_guard(wh, CONFIG, "s", "k", planted_guard(threshold=0.0), {}, {})
    rows = {r["note_id"]: r for r in read(wh, "guard_scores")}
    assert {n: r["rank"] for n, r in rows.items()} == {"c": 1, "b": 2, "a": 3, "d": 4}
    assert rows["a"]["masked"] == 0.0 and rows["d"]["masked"] == 0.0  # an empty or NULL text scores nothing


def test_another_keys_spans_and_scores_are_not_this_ones(wh):
    other_span = {"study": "s", "key": "k2", "note_id": "n2", "start": 5, "end": 12, "out_start": 5, "out_end": 12,
                  "label": "PATIENT"}  # fmt: skip
    kept_span = dict(other_span, note_id="n3")  # a span of another key's note that this hold does not take
    wh.append(NAMES.released_spans, tables.to_table("released_spans", [other_span, kept_span]))
    other_score = {"study": "s", "key": "k2", "note_id": "n1", "held": True, "rank": 1, "masked": 0.9,
                   "scored_at": T0}  # fmt: skip
    put(wh, "guard_scores", [other_score])
    report = apply(wh)
    assert report.n_newly_held == 2  # n2 is held: another key's span does not mask its word
    apply(wh)
    assert sorted(r["note_id"] for r in read(wh, "guard_scores")) == ["n1", "n2", "n3", "n4"]
    assert len(read(wh, "released_spans", "s", "k2")) == 2 and len(read(wh, "guard_scores", "s", "k2")) == 1


def test_scores_and_holds_are_stamped_in_utc_whatever_the_local_zone(wh, monkeypatch):
    import time

    monkeypatch.setenv("TZ", "Etc/GMT+5")
    time.tzset()
    try:
        before = dt.datetime.now(dt.UTC)
        apply(wh)
        after = dt.datetime.now(dt.UTC)
    finally:
        monkeypatch.undo()
        time.tzset()
    assert all(before <= r["scored_at"] <= after for r in read(wh, "guard_scores"))
    assert all(before <= r["quarantined_at"] <= after for r in read(wh, "quarantine") if r["code"] == "E773")


def test_the_pin_refusal_names_what_to_set(tmp_path):
    GUARD.save(tmp_path)
    with pytest.raises(ConfigError) as e:
        gh.load_pinned_guard(dataclasses.replace(CONFIG, guard_dir=str(tmp_path), guard_version="guard@other"))
    assert "guard_thresholds) in the config file" in e.value.hint
