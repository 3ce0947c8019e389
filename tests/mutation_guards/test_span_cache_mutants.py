"""The span cache (``tide_core/store/span_cache.py``), checked column by column on a real DuckDB in memory.

What is pinned: every column ``store``/``store_chunk`` write for a recognizer span and a recognized note;
a cache hit needs status ``ok``, the same fingerprint and the same text hash; kept notes keep their rows
(and their recognition time) verbatim, other notes are recognized again or dropped; reviewer decisions
apply only to the text they were made on (rejects remove the same span and label, additions add a
``reviewer@human`` span), are counted as applied / stale / orphaned, and survive recognition; an older
version's reviewer rows in ``tide_spans`` are read as decisions and moved (by ``store`` or
``migrate_legacy``) without losing the current ones; every read and write stays inside its study and
its configured table names.  Each negative case differs from a positive one in one property.
"""

from __future__ import annotations

import datetime as dt
import getpass
import hashlib

import pytest

from tide_core.errors import InputError
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.io.warehouse import PartitionWrite
from tide_core.spans import Note, Span
from tide_core.store import span_cache, tables
from tide_core.store.span_cache import REVIEWER, CacheEntry, ReviewSummary, SpanCache
from tide_core.store.tables import TableNames

N1 = Note("n1", "p1", "Seen by Dr. Adams on 3/4/2021.")  # DOCTOR 12-17, DATE 21-29
N2 = Note("n2", "p2", "Call 555-123-4567.")  # PHONE 5-17
N3 = Note("n3", "p3", "Ward 7 at Mercy Hospital.")  # HOSPITAL 10-24
NOTES = [N1, N2, N3]
SPANS = {
    "n1": [Span("n1", 12, 17, "DOCTOR", 0.75, "names@1"), Span("n1", 21, 29, "DATE", 1.0, "dates@2")],
    "n2": [Span("n2", 5, 17, "PHONE", 0.5, "phones@3")],
    "n3": [Span("n3", 10, 24, "HOSPITAL", 0.25, "orgs@4")],
}
OK = {"n1": ("ok", None), "n2": ("ok", None), "n3": ("ok", None)}
T0 = dt.datetime(2020, 1, 2, 3, 4, 5, tzinfo=dt.UTC)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.fixture
def wh():
    w = DuckDBWarehouse(":memory:")
    yield w
    w.close()


@pytest.fixture
def cache(wh):
    return SpanCache(wh)


def rows(wh, name, **where):
    if not wh.table_exists(name):
        return []
    got = wh.read_table(name, where=where or None).to_pylist()
    return sorted(got, key=lambda r: tuple(str(v) for v in r.values()))


def legacy_row(study, note_id, start, end, label, decision, created_at=T0, fingerprint="old-fp"):
    """A reviewer row as an older version kept it in tide_spans."""
    return {
        "study": study,
        "note_id": note_id,
        "start": start,
        "end": end,
        "label": label,
        "score": 1.0,
        "recognizer": REVIEWER,
        "fingerprint": fingerprint,
        "origin": "reviewer",
        "decision": decision,
        "created_at": created_at,
    }


def decision_row(study, note_id, text_hash, start, end, label, decision, decided_at=T0, reviewer="rev"):
    return {
        "study": study,
        "note_id": note_id,
        "text_sha256": text_hash,
        "start": start,
        "end": end,
        "label": label,
        "decision": decision,
        "reviewer": reviewer,
        "fingerprint": "fp-d",
        "decided_at": decided_at,
    }


def add_legacy(wh, rows_, names=None):
    wh.append((names or TableNames()).spans, tables.to_table("spans", rows_))


def add_decisions(wh, rows_):
    wh.append("tide_review_decisions", tables.to_table("review_decisions", rows_))


def triples(spans):
    return [(s.start, s.end, s.label) for s in spans]


# -- module functions ----------------------------------------------------------------------------


def test_text_hash_is_the_hex_sha256_of_the_utf8_text():
    text = "Zo\u00eb \u2013 \U0001d504 r\u00e9sum\u00e9"
    assert span_cache.text_sha256(text) == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert span_cache.text_sha256(text) != span_cache.text_sha256(text + " ")


def test_now_is_an_aware_utc_time():
    before = dt.datetime.now(dt.UTC)
    now = span_cache._now()
    after = dt.datetime.now(dt.UTC)
    assert now.utcoffset() == dt.timedelta(0)
    assert before <= now <= after


def test_the_default_reviewer_is_the_os_user(monkeypatch):
    monkeypatch.setattr(getpass, "getuser", lambda: "guard-user")
    assert span_cache.default_reviewer() == "guard-user"


@pytest.mark.parametrize("failure", ["empty", "raises"])
def test_the_default_reviewer_without_an_os_user_is_unknown(monkeypatch, failure):
    def getuser():
        if failure == "raises":
            raise OSError("no user name")
        return ""

    monkeypatch.setattr(getpass, "getuser", getuser)
    assert span_cache.default_reviewer() == "unknown"


@pytest.mark.parametrize(
    "name, expected",
    [("alice", "alice"), ("  alice  ", "alice"), ("x" * 100, "x" * 100), ("Zo\u00eb \u00dcnal", "Zo\u00eb \u00dcnal")],
)
def test_a_reviewer_name_is_accepted_stripped(name, expected):
    assert span_cache.check_reviewer(name) == expected


@pytest.mark.parametrize(
    "name",
    [None, 7, b"alice", "", "   ", "x" * 101, "ali\tce", "ali\x00ce", "alice\n", "ali\u200bce", "ali\u0378ce"],
)
def test_a_bad_reviewer_name_is_e382(name):
    with pytest.raises(InputError) as e:
        span_cache.check_reviewer(name)
    assert e.value.code == "E382"
    assert "reviewer" in e.value.message
    assert "--reviewer NAME" in e.value.hint and "1 to 100" in e.value.hint


# -- store and its reads ---------------------------------------------------------------------------


def test_store_writes_every_column_of_spans_and_entries(wh, cache):
    before = dt.datetime.now(dt.UTC)
    n = cache.store(
        "s", "fp1", [N1, N2], {"n1": SPANS["n1"], "n2": []}, {"n1": ("ok", None), "n2": ("failed", "E510")}, keep=set()
    )
    after = dt.datetime.now(dt.UTC)
    assert n == 2
    got = rows(wh, "tide_spans")
    stamp = got[0]["created_at"]
    assert before <= stamp <= after
    assert got == [
        {
            "study": "s",
            "note_id": "n1",
            "start": s.start,
            "end": s.end,
            "label": s.label,
            "score": s.score,
            "recognizer": s.recognizer,
            "fingerprint": "fp1",
            "origin": "recognizer",
            "decision": None,
            "created_at": stamp,
        }
        for s in sorted(SPANS["n1"], key=lambda s: str(s.start))
    ]
    assert rows(wh, "tide_recognized_notes") == [
        {
            "study": "s",
            "note_id": "n1",
            "patient_id": "p1",
            "text_sha256": sha(N1.text),
            "fingerprint": "fp1",
            "status": "ok",
            "error_code": None,
            "n_spans": 2,
            "recognized_at": stamp,
        },
        {
            "study": "s",
            "note_id": "n2",
            "patient_id": "p2",
            "text_sha256": sha(N2.text),
            "fingerprint": "fp1",
            "status": "failed",
            "error_code": "E510",
            "n_spans": 0,
            "recognized_at": stamp,
        },
    ]
    assert not wh.table_exists("tide_review_decisions")  # no legacy rows: the decisions table is not touched


def test_entries_are_read_back_per_study_and_per_note(wh, cache):
    assert cache.entries("s") == {}  # no table yet
    cache.store("s", "fp1", NOTES, SPANS, OK, keep=set())
    cache.store("t", "fp9", [N1], {}, {"n1": ("failed", "E510")}, keep=set())
    assert cache.entries("s") == {
        n.note_id: CacheEntry(n.note_id, n.patient_id, sha(n.text), "fp1", "ok", None, len(SPANS[n.note_id]))
        for n in NOTES
    }
    assert cache.entries("t") == {"n1": CacheEntry("n1", "p1", sha(N1.text), "fp9", "failed", "E510", 0)}
    assert set(cache.entries("s", ["n2", "n3"])) == {"n2", "n3"}
    assert set(cache.entries("s", iter(["n2"]))) == {"n2"}
    assert cache.entries("s", []) == {}


def test_an_entry_without_a_span_count_counts_zero(wh, cache):
    row = {"study": "s", "note_id": "n1", "patient_id": "p1", "text_sha256": "h", "status": "ok", "n_spans": None}
    wh.append("tide_recognized_notes", tables.to_table("recognized_notes", [row]))
    assert cache.entries("s")["n1"].n_spans == 0


def test_a_hit_needs_status_ok_the_fingerprint_and_the_text(cache):
    cache.store("s", "fp1", NOTES, SPANS, {**OK, "n3": ("failed", "E510")}, keep=set())
    assert cache.hits("s", [N1, N2, N3], "fp1") == {"n1", "n2"}  # n3 failed
    assert cache.hits("s", [N1, N2], "fp2") == set()  # fingerprint differs
    assert cache.hits("s", [Note("n1", "p1", N1.text + " "), N2], "fp1") == {"n2"}  # text differs
    assert cache.hits("s", [Note("n9", "p1", N1.text), N2], "fp1") == {"n2"}  # never recognized
    assert cache.hits("t", [N1, N2], "fp1") == set()  # another study


def test_spans_are_read_back_sorted_per_note(cache):
    assert cache.spans("s") == {}  # no table yet
    assert cache.spans("s", ["n1"]) == {"n1": []}
    cache.store("s", "fp1", NOTES, SPANS, OK, keep=set())
    cache.store("t", "fp1", [N2], {"n2": SPANS["n2"]}, {"n2": ("ok", None)}, keep=set())
    assert cache.spans("s") == {k: sorted(v) for k, v in SPANS.items()}
    assert cache.spans("s", ["n2", "n9"]) == {"n2": SPANS["n2"], "n9": []}
    assert cache.spans("t") == {"n2": SPANS["n2"]}
    assert cache.spans("s", []) == {}


def test_a_span_past_the_end_of_its_note_is_refused_and_nothing_is_written(wh, cache):
    bad = Span("n2", 5, len(N2.text) + 1, "PHONE")
    with pytest.raises(InputError) as e:
        cache.store("s", "fp1", [N2], {"n2": [bad]}, {"n2": ("ok", None)}, keep=set())
    assert e.value.code == "E014"
    assert not wh.table_exists("tide_spans")
    ok = Span("n2", 5, len(N2.text), "PHONE")
    assert cache.store("s", "fp1", [N2], {"n2": [ok]}, {"n2": ("ok", None)}, keep=set()) == 1


def test_store_keeps_the_rows_of_kept_notes_verbatim_and_replaces_the_rest(wh, cache):
    cache.store("s", "fp1", NOTES, SPANS, {**OK, "n3": ("failed", "E510")}, keep=set())
    cache.store("t", "fp1", NOTES, SPANS, OK, keep=set())  # same note ids in another study, a later time
    old_kept = [r for r in rows(wh, "tide_spans", study="s") if r["note_id"] != "n2"]
    old_entries = {r["note_id"]: r for r in rows(wh, "tide_recognized_notes", study="s")}
    new = [Span("n2", 0, 4, "OTHER", 0.5, "new@1")]
    before = dt.datetime.now(dt.UTC)
    # n1 and n3 are hits (kept verbatim, even a failed row), n2 is recognized again
    n = cache.store("s", "fp2", NOTES, {"n2": new}, {"n2": ("ok", None)}, keep={"n1", "n3"})
    assert n == 4
    entries = {r["note_id"]: r for r in rows(wh, "tide_recognized_notes", study="s")}
    assert entries["n1"] == old_entries["n1"] and entries["n3"] == old_entries["n3"]
    assert entries["n2"]["fingerprint"] == "fp2" and entries["n2"]["recognized_at"] >= before
    spans = rows(wh, "tide_spans", study="s")
    assert [r for r in spans if r["note_id"] != "n2"] == old_kept  # n1's and n3's rows, verbatim
    assert [(r["start"], r["end"], r["label"], r["fingerprint"]) for r in spans if r["note_id"] == "n2"] == [
        (0, 4, "OTHER", "fp2")
    ]
    assert len(rows(wh, "tide_spans", study="t")) == 4  # the other study is untouched
    # n2 leaves the source, n3 is recognized again with no spans
    cache.store("s", "fp3", [N1, N3], {}, {"n3": ("ok", None)}, keep={"n1"})
    assert set(cache.entries("s")) == {"n1", "n3"}
    assert cache.spans("s") == {"n1": sorted(SPANS["n1"])}  # n3 has no span now
    assert cache.entries("s")["n1"] == CacheEntry("n1", "p1", sha(N1.text), "fp1", "ok", None, 2)


# -- reviewer decisions ------------------------------------------------------------------------------


def test_a_review_row_is_recorded_for_the_current_text(wh, cache, monkeypatch):
    monkeypatch.setattr(getpass, "getuser", lambda: "os-user")
    cache.store("s", "fp1", NOTES, SPANS, OK, keep=set())
    before = dt.datetime.now(dt.UTC)
    row = cache.add_review("s", N1, 0, 4, "OTHER", "add")
    after = dt.datetime.now(dt.UTC)
    assert before <= row["decided_at"] <= after
    assert row == {
        "study": "s",
        "note_id": "n1",
        "text_sha256": sha(N1.text),
        "start": 0,
        "end": 4,
        "label": "OTHER",
        "decision": "add",
        "reviewer": "os-user",
        "fingerprint": "fp1",
        "decided_at": row["decided_at"],
    }
    assert rows(wh, "tide_review_decisions") == [row]
    second = cache.add_review("s", N1, 21, 29, "DATE", "reject", reviewer="  bob ")
    assert second["reviewer"] == "bob" and second["decision"] == "reject"
    assert len(rows(wh, "tide_review_decisions")) == 2  # appended


@pytest.mark.parametrize("decision", ["accept", "Reject", "ADD", ""])
def test_an_unknown_decision_is_e380(cache, decision):
    cache.store("s", "fp1", NOTES, SPANS, OK, keep=set())
    with pytest.raises(InputError) as e:
        cache.add_review("s", N1, 0, 4, "OTHER", decision)
    assert e.value.code == "E380"
    assert repr(decision) in e.value.message
    assert "'reject'" in e.value.hint and "'add'" in e.value.hint


def test_a_bad_reviewer_is_refused_before_anything_is_written(wh, cache):
    cache.store("s", "fp1", NOTES, SPANS, OK, keep=set())
    with pytest.raises(InputError) as e:
        cache.add_review("s", N1, 0, 4, "OTHER", "add", reviewer="a\tb")
    assert e.value.code == "E382"
    assert not wh.table_exists("tide_review_decisions")


@pytest.mark.parametrize(
    "recognized_in, note, start, end, label, code",
    [
        ("s", N1, 0, len(N1.text) + 1, "OTHER", "E014"),  # past the end of the text
        ("s", N1, 0, 4, "NOPE", "E012"),  # unknown label
        ("s", Note("n9", "p9", N1.text), 0, 4, "OTHER", "E381"),  # never recognized
        ("s", Note("n1", "p1", N1.text.upper()), 0, 4, "OTHER", "E381"),  # recognized on other text
        ("t", N1, 0, 4, "OTHER", "E381"),  # recognized in another study only
    ],
)
def test_a_review_must_lie_inside_the_currently_recognized_text(
    wh, cache, recognized_in, note, start, end, label, code
):
    cache.store(recognized_in, "fp1", NOTES, SPANS, OK, keep=set())
    with pytest.raises(InputError) as e:
        cache.add_review("s", note, start, end, label, "add", reviewer="rev")
    assert e.value.code == code
    if code == "E381":
        assert f"note {note.note_id} " in e.value.message and "study s" in e.value.message
        assert "run recognition" in e.value.hint
    else:  # the span's own check names the note
        assert repr(note.note_id) in e.value.message
    assert not wh.table_exists("tide_review_decisions")


def test_decisions_apply_to_the_text_they_were_made_on(wh, cache):
    cache.store("s", "fp1", NOTES, SPANS, OK, keep=set())
    cache.add_review("s", N1, 21, 29, "DATE", "reject", reviewer="rev")
    cache.add_review("s", N1, 0, 4, "OTHER", "add", reviewer="rev")
    cache.add_review("s", N1, 0, 4, "OTHER", "add", reviewer="rev2")  # the same addition twice: one span
    cache.add_review("s", N1, 12, 17, "PATIENT", "reject", reviewer="rev")  # another label: DOCTOR stays
    cache.add_review("s", N2, 0, 4, "ID", "reject", reviewer="rev")  # a span never recognized: nothing
    got = cache.spans("s")
    assert got["n1"] == [Span("n1", 0, 4, "OTHER", 1.0, REVIEWER), SPANS["n1"][0]]
    assert got["n2"] == SPANS["n2"]
    assert cache.spans("s", apply_review=False) == {k: sorted(v) for k, v in SPANS.items()}
    assert cache.spans("s", ["n2"]) == {"n2": SPANS["n2"]}  # n1's addition stays with n1
    # a reviewer decision in another study does not apply here
    cache.store("t", "fp1", NOTES, SPANS, OK, keep=set())
    assert cache.spans("t")["n1"] == sorted(SPANS["n1"])
    # n1 recognized again on other text: its decisions are kept but no longer applied
    changed = Note("n1", "p1", N1.text + " Again.")
    cache.store("s", "fp1", [changed, N2, N3], {"n1": SPANS["n1"]}, {"n1": ("ok", None)}, keep={"n2", "n3"})
    assert cache.spans("s")["n1"] == sorted(SPANS["n1"])
    assert len(cache.review_rows("s", "n1")) == 4
    # a decision whose note left the cache is kept, not applied
    cache.store("s", "fp1", [N2, N3], {}, {}, keep={"n2", "n3"})
    assert "n1" not in cache.spans("s")
    # an addition on a note with no recognizer span makes the note appear
    cache.add_review("s", N3, 0, 4, "OTHER", "add", reviewer="rev")
    cache.add_review("s", N3, 10, 24, "HOSPITAL", "reject", reviewer="rev")
    assert cache.spans("s")["n3"] == [Span("n3", 0, 4, "OTHER", 1.0, REVIEWER)]


def test_only_reject_and_add_rows_are_decisions(wh, cache):
    cache.store("s", "fp1", NOTES, SPANS, OK, keep=set())
    add_decisions(wh, [decision_row("s", "n1", sha(N1.text), 21, 29, "DATE", "maybe")])
    assert cache.spans("s")["n1"] == sorted(SPANS["n1"])
    add_decisions(wh, [decision_row("s", "n1", sha(N1.text), 21, 29, "DATE", "reject")])
    assert triples(cache.spans("s")["n1"]) == [(12, 17, "DOCTOR")]


def test_review_rows_are_ordered_by_time_then_position(wh, cache):
    t = [T0 + dt.timedelta(hours=h) for h in range(3)]
    h = "hash"
    shuffled = [
        decision_row("s", "n2", h, 0, 4, "ID", "add", t[1]),
        decision_row("s", "n1", h, 5, 9, "ID", "add", t[1]),
        decision_row("s", "n1", h, 0, 9, "ID", "add", t[1]),
        decision_row("s", "n1", h, 0, 4, "OTHER", "add", t[1]),
        decision_row("s", "n1", h, 0, 4, "ID", "add", t[1]),
        decision_row("s", "n3", h, 0, 4, "ID", "add", t[0]),
        decision_row("s", "n0", h, 0, 4, "ID", "add", t[2]),
        decision_row("t", "n1", h, 0, 4, "ID", "add", t[0]),
    ]
    add_decisions(wh, shuffled)
    add_legacy(wh, [legacy_row("s", "n9", 0, 4, "ID", "reject", created_at=None)])  # no time: first
    got = [(r["note_id"], r["start"], r["end"], r["label"]) for r in cache.review_rows("s")]
    assert got == [
        ("n9", 0, 4, "ID"),
        ("n3", 0, 4, "ID"),
        ("n1", 0, 4, "ID"),
        ("n1", 0, 4, "OTHER"),
        ("n1", 0, 9, "ID"),
        ("n1", 5, 9, "ID"),
        ("n2", 0, 4, "ID"),
        ("n0", 0, 4, "ID"),
    ]
    assert [(r["note_id"], r["label"]) for r in cache.review_rows("s", "n1")] == [
        ("n1", "ID"),
        ("n1", "OTHER"),
        ("n1", "ID"),
        ("n1", "ID"),
    ]
    assert [r["note_id"] for r in cache.review_rows("s", "n9")] == ["n9"]
    assert cache.review_rows("s", "n7") == []
    assert [r["study"] for r in cache.review_rows("t")] == ["t"]
    assert cache.review_rows("u") == []


def test_the_review_summary_counts_applied_stale_and_orphaned_decisions(cache):
    assert cache.review_summary("s") == ReviewSummary(0, 0, 0, 0, ())
    cache.store("s", "fp1", NOTES, SPANS, OK, keep=set())
    for n in NOTES:
        cache.add_review("s", n, 0, 4, "OTHER", "add", reviewer="rev")
    cache.add_review("s", N2, 5, 17, "PHONE", "reject", reviewer="rev")
    cache.add_review("s", N1, 21, 29, "DATE", "reject", reviewer="rev")
    cache.add_review("s", N3, 10, 24, "HOSPITAL", "reject", reviewer="rev")
    assert cache.review_summary("s") == ReviewSummary(6, 6, 0, 0, ())
    # n2 and n1 recognized on other text (two stale decisions each), n3 left the source (two orphaned)
    c1, c2 = Note("n1", "p1", N1.text + "!"), Note("n2", "p2", N2.text + "!")
    cache.store("s", "fp1", [c2, c1], {}, {"n1": ("ok", None), "n2": ("ok", None)}, keep=set())
    assert cache.review_summary("s") == ReviewSummary(6, 0, 4, 2, ("n1", "n2"))
    cache.add_review("s", c1, 0, 4, "OTHER", "add", reviewer="rev")
    cache.add_review("s", c2, 5, 9, "OTHER", "add", reviewer="rev")
    assert cache.review_summary("s") == ReviewSummary(8, 2, 4, 2, ("n1", "n2"))
    assert cache.review_summary("t") == ReviewSummary(0, 0, 0, 0, ())


def test_undo_removes_decisions_on_exactly_that_span(wh, cache):
    cache.store("s", "fp1", NOTES, SPANS, OK, keep=set())
    cache.store("t", "fp1", NOTES, SPANS, OK, keep=set())
    assert cache.undo_review("s", "n1", 21, 29, "DATE") == 0  # nothing to undo, no decisions table
    for study in ("s", "t"):
        cache.add_review(study, N1, 21, 29, "DATE", "reject", reviewer="rev")
    for other in [("n1", 21, 29, "ID"), ("n1", 21, 28, "DATE"), ("n1", 20, 29, "DATE"), ("n2", 5, 17, "PHONE")]:
        note = N1 if other[0] == "n1" else N2
        cache.add_review("s", note, *other[1:], "reject", reviewer="rev")
    old = decision_row("s", "n1", sha("old text"), 21, 29, "DATE", "reject")
    add_decisions(wh, [old])
    add_legacy(wh, [legacy_row("s", "n1", 21, 29, "DATE", "reject")])
    # made on the text given: only that decision
    assert cache.undo_review("s", "n1", 21, 29, "DATE", text_hash=sha("old text")) == 2  # + the legacy row
    assert [r["text_sha256"] for r in cache.review_rows("s") if r["label"] == "DATE" and r["end"] == 29][0] == sha(
        N1.text
    )
    assert cache.undo_review("s", "n1", 21, 29, "DATE") == 1
    left = {(r["note_id"], r["start"], r["end"], r["label"]) for r in cache.review_rows("s")}
    assert left == {("n1", 21, 29, "ID"), ("n1", 21, 28, "DATE"), ("n1", 20, 29, "DATE"), ("n2", 5, 17, "PHONE")}
    assert len(cache.review_rows("t")) == 1
    assert cache.spans("s", apply_review=False)["n1"] == sorted(SPANS["n1"])  # recognizer rows stay
    assert cache.undo_review("s", "n1", 21, 29, "DATE") == 0


# -- an older version's reviewer rows ------------------------------------------------------------------


def test_legacy_reviewer_rows_are_read_as_decisions_on_the_cached_text(wh, cache):
    cache.store("s", "fp1", NOTES, SPANS, OK, keep=set())
    t1 = T0 + dt.timedelta(days=1)
    add_legacy(
        wh,
        [
            legacy_row("s", "n1", 21, 29, "DATE", "reject", created_at=t1),
            legacy_row("s", "n1", 0, 4, "OTHER", "add"),
            legacy_row("s", "n1", 12, 17, "DOCTOR", None),  # no decision: ignored
            legacy_row("s", "n9", 0, 4, "OTHER", "add"),  # a note without a cache entry
            legacy_row("t", "n1", 12, 17, "DOCTOR", "reject"),
        ],
    )
    assert cache.review_rows("s") == [
        {
            "study": "s",
            "note_id": "n1",
            "text_sha256": sha(N1.text),
            "start": 0,
            "end": 4,
            "label": "OTHER",
            "decision": "add",
            "reviewer": None,
            "fingerprint": "old-fp",
            "decided_at": T0,
        },
        {
            "study": "s",
            "note_id": "n9",
            "text_sha256": None,
            "start": 0,
            "end": 4,
            "label": "OTHER",
            "decision": "add",
            "reviewer": None,
            "fingerprint": "old-fp",
            "decided_at": T0,
        },
        {
            "study": "s",
            "note_id": "n1",
            "text_sha256": sha(N1.text),
            "start": 21,
            "end": 29,
            "label": "DATE",
            "decision": "reject",
            "reviewer": None,
            "fingerprint": "old-fp",
            "decided_at": t1,
        },
    ]
    assert cache.decisions("s", ["n9"])[0]["note_id"] == "n9"
    assert cache.decisions("s", ["n2"]) == []
    got = cache.spans("s")
    assert got["n1"] == [Span("n1", 0, 4, "OTHER", 1.0, REVIEWER), SPANS["n1"][0]]
    assert "n9" not in got  # no cache entry: not applied
    assert cache.spans("s", apply_review=False)["n1"] == sorted(SPANS["n1"])
    assert cache.spans("s", ["n2"]) == {"n2": SPANS["n2"]}


def test_store_moves_legacy_rows_into_the_decisions_table_and_keeps_the_current_ones(wh, cache):
    cache.store("s", "fp1", NOTES, SPANS, OK, keep=set())
    current = decision_row("s", "n2", sha(N2.text), 5, 17, "PHONE", "reject")
    elsewhere = decision_row("t", "n2", sha(N2.text), 5, 17, "PHONE", "reject")
    add_decisions(wh, [current, elsewhere])
    add_legacy(
        wh,
        [
            legacy_row("s", "n1", 21, 29, "DATE", "reject"),
            legacy_row("s", "n1", 12, 17, "DOCTOR", None),
            legacy_row("t", "n1", 0, 4, "OTHER", "add"),
        ],
    )
    n = cache.store("s", "fp1", NOTES, {}, {}, keep={"n1", "n2", "n3"})
    assert n == 4  # recognizer rows only
    assert rows(wh, "tide_spans", study="s", origin="reviewer") == []
    assert len(rows(wh, "tide_spans", study="t", origin="reviewer")) == 1
    moved = {**decision_row("s", "n1", sha(N1.text), 21, 29, "DATE", "reject", reviewer=None), "fingerprint": "old-fp"}
    assert rows(wh, "tide_review_decisions", study="s") == rows_sorted([current, moved])
    assert rows(wh, "tide_review_decisions", study="t") == [elsewhere]
    assert triples(cache.spans("s")["n1"]) == [(12, 17, "DOCTOR")]
    assert triples(cache.spans("s")["n2"]) == []


def test_store_moves_legacy_rows_into_a_new_decisions_table(wh, cache):
    cache.store("s", "fp1", NOTES, SPANS, OK, keep=set())
    add_legacy(wh, [legacy_row("s", "n1", 21, 29, "DATE", "reject")])
    cache.store("s", "fp1", NOTES, {}, {}, keep={"n1", "n2", "n3"})
    assert [r["decision"] for r in rows(wh, "tide_review_decisions")] == ["reject"]
    assert rows(wh, "tide_spans", origin="reviewer") == []


def rows_sorted(rs):
    return sorted(rs, key=lambda r: tuple(str(v) for v in r.values()))


def test_migrate_legacy_moves_reviewer_rows_in_one_commit(wh, cache):
    assert cache.migrate_legacy("s") == 0  # no spans table
    cache.store("s", "fp1", NOTES, SPANS, OK, keep=set())
    assert cache.migrate_legacy("s") == 0  # no reviewer rows
    assert not wh.table_exists("tide_review_decisions")
    current = decision_row("s", "n2", sha(N2.text), 5, 17, "PHONE", "reject")
    add_decisions(wh, [current, decision_row("t", "n2", "h", 5, 17, "PHONE", "reject")])
    add_legacy(
        wh,
        [
            legacy_row("s", "n1", 21, 29, "DATE", "reject"),
            legacy_row("s", "n1", 0, 4, "OTHER", "add"),
            legacy_row("s", "n1", 12, 17, "DOCTOR", "keep"),  # not a decision: dropped, not moved
            legacy_row("t", "n1", 0, 4, "OTHER", "add"),
        ],
    )
    assert cache.migrate_legacy("s") == 2
    assert rows(wh, "tide_spans", study="s", origin="reviewer") == []
    assert len(rows(wh, "tide_spans", study="t", origin="reviewer")) == 1
    assert len(rows(wh, "tide_spans", study="s")) == 4  # recognizer rows stay
    got = cache.review_rows("s")
    assert [(r["note_id"], r["decision"], r["text_sha256"]) for r in got] == [
        ("n1", "add", sha(N1.text)),
        ("n1", "reject", sha(N1.text)),
        ("n2", "reject", sha(N2.text)),
    ]
    assert len(rows(wh, "tide_review_decisions", study="t")) == 1
    assert cache.migrate_legacy("s") == 0


def test_migrate_legacy_creates_the_decisions_table(wh, cache):
    cache.store("s", "fp1", NOTES, SPANS, OK, keep=set())
    add_legacy(wh, [legacy_row("s", "n1", 0, 4, "OTHER", "add")])
    assert cache.migrate_legacy("s") == 1
    assert [r["decision"] for r in rows(wh, "tide_review_decisions")] == ["add"]


# -- chunk commits ---------------------------------------------------------------------------------------


def test_a_chunk_commit_replaces_only_the_notes_it_owns(wh, cache):
    cache.store("s", "fp1", NOTES, SPANS, OK, keep=set())
    cache.store("t", "fp1", NOTES, SPANS, OK, keep=set())
    new = [Span("n1", 0, 4, "OTHER", 0.5, "new@1")]
    progress = tables.to_table("runs", [{"run_id": "r1", "study": "s", "stage": "recognition.chunk", "chunk": 0}])
    before = dt.datetime.now(dt.UTC)
    n = cache.store_chunk(
        "s",
        "fp2",
        NOTES,
        {"n1": new, "n2": SPANS["n2"]},
        {"n1": ("ok", None), "n2": ("failed", "E510")},
        ["n2", "n1", "n2"],
        [PartitionWrite("tide_runs", progress, {"run_id": "r1"})],
    )
    assert n == 1
    stamp = rows(wh, "tide_spans", study="s", note_id="n1")[0]["created_at"]
    assert stamp >= before
    assert rows(wh, "tide_spans", study="s", note_id="n1") == [
        {
            "study": "s",
            "note_id": "n1",
            "start": 0,
            "end": 4,
            "label": "OTHER",
            "score": 0.5,
            "recognizer": "new@1",
            "fingerprint": "fp2",
            "origin": "recognizer",
            "decision": None,
            "created_at": stamp,
        }
    ]
    assert rows(wh, "tide_spans", study="s", note_id="n2") == []  # a failed note: no spans
    assert cache.spans("s", ["n3"]) == {"n3": SPANS["n3"]}  # not owned: untouched
    assert cache.entries("s") == {
        "n1": CacheEntry("n1", "p1", sha(N1.text), "fp2", "ok", None, 1),
        "n2": CacheEntry("n2", "p2", sha(N2.text), "fp2", "failed", "E510", 0),  # a failed note counts no spans
        "n3": CacheEntry("n3", "p3", sha(N3.text), "fp1", "ok", None, 1),
    }
    assert [r["recognized_at"] for r in rows(wh, "tide_recognized_notes", study="s", note_id="n1")] == [stamp]
    assert [r["run_id"] for r in rows(wh, "tide_runs")] == ["r1"]
    assert cache.spans("t") == {k: sorted(v) for k, v in SPANS.items()}  # another study: untouched
    # statuses without a span list: no spans
    assert cache.store_chunk("s", "fp3", NOTES, {}, {"n1": ("ok", None), "n2": ("failed", "E500")}, ["n1", "n2"]) == 0
    got = cache.entries("s", ["n1", "n2"])
    assert {k: (e.fingerprint, e.status, e.n_spans) for k, e in got.items()} == {
        "n1": ("fp3", "ok", 0),
        "n2": ("fp3", "failed", 0),
    }
    # an owned note that is not recognized now is dropped
    assert cache.store_chunk("s", "fp2", NOTES, {}, {}, ["n1"]) == 0
    assert set(cache.entries("s")) == {"n2", "n3"}
    assert set(cache.spans("s")) == {"n3"}


def test_a_chunk_that_owns_nothing_writes_only_its_extra_rows(wh, cache):
    assert cache.store_chunk("s", "fp1", NOTES, {}, {}, []) == 0
    assert not wh.table_exists("tide_spans") and not wh.table_exists("tide_recognized_notes")
    progress = tables.to_table("runs", [{"run_id": "r2", "study": "s", "stage": "recognition.chunk", "chunk": 1}])
    assert (
        cache.store_chunk("s", "fp1", NOTES, {}, {}, [], [PartitionWrite("tide_runs", progress, {"run_id": "r2"})]) == 0
    )
    assert [r["run_id"] for r in rows(wh, "tide_runs")] == ["r2"]
    assert not wh.table_exists("tide_spans")


def test_a_chunk_commit_of_a_note_it_does_not_own_is_e386(wh, cache):
    cache.store("s", "fp1", NOTES, SPANS, OK, keep=set())
    with pytest.raises(InputError) as e:
        cache.store_chunk("s", "fp2", NOTES, {"n2": []}, {"n1": ("ok", None), "n2": ("ok", None)}, ["n1"])
    assert e.value.code == "E386"
    assert "own" in e.value.message and e.value.hint
    assert cache.entries("s")["n1"].fingerprint == "fp1"  # nothing written


def test_a_chunk_span_past_the_end_of_its_note_is_refused(wh, cache):
    bad = Span("n2", 5, len(N2.text) + 1, "PHONE")
    with pytest.raises(InputError) as e:
        cache.store_chunk("s", "fp1", [N2], {"n2": [bad]}, {"n2": ("ok", None)}, ["n2"])
    assert e.value.code == "E014"
    assert not wh.table_exists("tide_spans")


# -- configured table names --------------------------------------------------------------------------------


def test_every_read_and_write_uses_the_configured_table_names(wh):
    names = TableNames.with_prefix("g_")
    cache = SpanCache(wh, names)
    cache.store("s", "fp1", NOTES, SPANS, OK, keep=set())
    add_legacy(wh, [legacy_row("s", "n1", 0, 4, "OTHER", "add")], names)
    assert cache.migrate_legacy("s") == 1
    cache.add_review("s", N1, 21, 29, "DATE", "reject", reviewer="rev")
    cache.store_chunk("s", "fp1", NOTES, {"n2": SPANS["n2"]}, {"n2": ("ok", None)}, ["n2"])
    assert cache.hits("s", NOTES, "fp1") == {"n1", "n2", "n3"}
    assert triples(cache.spans("s")["n1"]) == [(0, 4, "OTHER"), (12, 17, "DOCTOR")]
    assert len(cache.review_rows("s")) == 2
    assert cache.undo_review("s", "n1", 21, 29, "DATE") == 1
    for kind in ("spans", "recognized_notes", "review_decisions"):
        assert wh.table_exists(f"g_{kind}") and not wh.table_exists(f"tide_{kind}"), kind
    assert SpanCache(wh).entries("s") == {}
