"""A chunk's release input (``tide_core/engine/release_input.py``): which notes the span cache vouches for, the
resume digest, and a shard job decided in the worker; pure, in about a second.

The digest is recomputed here from its documented construction (JSON parts joined by a record separator,
sha256, 32 hex), and every input that decides a chunk's released rows is shown to change it: the key, the
settings, each note's id, patient, text and metadata, the input quarantines (id, code, row number), each cache
entry's fingerprint, status and text hash, and each span's offsets and label.  What does not decide the rows
(the order of cache entries or of notes' span lists in the mappings) does not change it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json

from tide_core.engine import release_input as ri
from tide_core.engine.study_chunks import ChunkPlan, StudyChunk
from tide_core.io.shards import ShardRef
from tide_core.spans import Note, Quarantined, Span
from tide_core.store import tables
from tide_core.store.span_cache import CacheEntry, SpanRows


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def entry(note, status="ok", fingerprint="rec@1", code=None, text=None):
    return CacheEntry(note.note_id, note.patient_id, sha(text if text is not None else note.text), fingerprint,
                      status, code, 0)  # fmt: skip


A = Note("a", "p1", "Maria seen today", {"note_date": "2020-01-02", "site": "S1"})
B = Note("b", "p2", "Call 617-555-0100", {"source": "ehr"})
C = Note("c", "p3", "no phi here")
Q = Quarantined("x", "p9", "input", "E603", "empty text", 7)


def chunk(notes=(A, B), quarantined=(Q,), index=2):
    ids = tuple(sorted({n.note_id for n in notes} | {q.note_id for q in quarantined if q.note_id}))
    return StudyChunk(index, 5, len(notes) + len(quarantined), list(notes), list(quarantined), [], ids)


def expected_digest(key_id, settings, ch, entries, spans):
    parts = [
        key_id,
        list(settings),
        [[n.note_id, n.patient_id, sha(n.text), sorted(n.metadata.items())] for n in ch.notes],
        [[q.note_id, q.code, q.row_number] for q in ch.quarantined],
        sorted([nid, e.fingerprint, e.status, e.text_sha256] for nid, e in entries.items()),
        sorted([nid, [[s.start, s.end, s.label] for s in ss]] for nid, ss in spans.items()),
    ]
    h = hashlib.sha256()
    for p in parts:
        h.update(json.dumps(p, sort_keys=True, default=str, separators=(",", ":")).encode())
        h.update(b"\x1e")
    return h.hexdigest()[:32]


ENTRIES = {"a": entry(A), "b": entry(B)}
SPANS = {"a": [Span("a", 0, 5, "PATIENT")], "b": [Span("b", 5, 17, "PHONE"), Span("b", 0, 4, "PATIENT")]}


def test_the_digest_is_the_hash_of_what_decides_the_rows():
    got = ri.release_digest("key1", ("anon@1", 3), chunk(), ENTRIES, SPANS)
    assert got == expected_digest("key1", ("anon@1", 3), chunk(), ENTRIES, SPANS) and len(got) == 32


def test_every_input_that_decides_the_rows_changes_the_digest():
    base = ri.release_digest("key1", ("anon@1", 3), chunk(), ENTRIES, SPANS)
    a2 = Note("a", "p1", "Maria seen today", {"note_date": "2020-01-03", "site": "S1"})
    variants = [
        ("key2", ("anon@1", 3), chunk(), ENTRIES, SPANS),
        ("key1", ("anon@2", 3), chunk(), ENTRIES, SPANS),
        ("key1", ("anon@1", 3), chunk(notes=(a2, B)), ENTRIES, SPANS),
        ("key1", ("anon@1", 3), chunk(notes=(Note("a", "p7", A.text, A.metadata), B)), ENTRIES, SPANS),
        ("key1", ("anon@1", 3), chunk(notes=(Note("a", "p1", "Maria seen", A.metadata), B)), ENTRIES, SPANS),
        ("key1", ("anon@1", 3), chunk(notes=(A,)), ENTRIES, SPANS),
        ("key1", ("anon@1", 3), chunk(quarantined=()), ENTRIES, SPANS),
        ("key1", ("anon@1", 3), chunk(quarantined=(Quarantined("y", "p9", "input", "E603", "empty text", 7),)),
         ENTRIES, SPANS),
        ("key1", ("anon@1", 3), chunk(quarantined=(Quarantined("x", "p9", "input", "E604", "empty text", 7),)),
         ENTRIES, SPANS),
        ("key1", ("anon@1", 3), chunk(quarantined=(Quarantined("x", "p9", "input", "E603", "empty text", 8),)),
         ENTRIES, SPANS),
        ("key1", ("anon@1", 3), chunk(), {**ENTRIES, "a": entry(A, fingerprint="rec@2")}, SPANS),
        ("key1", ("anon@1", 3), chunk(), {**ENTRIES, "a": entry(A, status="error")}, SPANS),
        ("key1", ("anon@1", 3), chunk(), {**ENTRIES, "a": entry(A, text="other")}, SPANS),
        ("key1", ("anon@1", 3), chunk(), {"a": ENTRIES["a"]}, SPANS),
        ("key1", ("anon@1", 3), chunk(), ENTRIES, {**SPANS, "a": [Span("a", 1, 5, "PATIENT")]}),
        ("key1", ("anon@1", 3), chunk(), ENTRIES, {**SPANS, "a": [Span("a", 0, 6, "PATIENT")]}),
        ("key1", ("anon@1", 3), chunk(), ENTRIES, {**SPANS, "a": [Span("a", 0, 5, "DATE")]}),
        ("key1", ("anon@1", 3), chunk(), ENTRIES, {**SPANS, "a": []}),
        ("key1", ("anon@1", 3), chunk(), ENTRIES, {"b": SPANS["b"]}),
    ]  # fmt: skip
    got = [ri.release_digest(*v) for v in variants]
    assert base not in got and len(set(got)) == len(got)
    assert got == [expected_digest(*v) for v in variants]


def test_what_does_not_decide_the_rows_does_not_change_the_digest():
    base = ri.release_digest("key1", ["anon@1", 3], chunk(), ENTRIES, SPANS)
    assert ri.release_digest("key1", ("anon@1", 3), chunk(index=4), ENTRIES, SPANS) == base
    assert ri.release_digest("key1", ("anon@1", 3), chunk(), dict(reversed(ENTRIES.items())), SPANS) == base
    assert ri.release_digest("key1", ("anon@1", 3), chunk(), ENTRIES, dict(reversed(SPANS.items()))) == base
    scored = {"a": [Span("a", 0, 5, "PATIENT", 0.3, "other@9")], "b": SPANS["b"]}
    assert ri.release_digest("key1", ("anon@1", 3), chunk(), ENTRIES, scored) == base
    renamed = chunk(quarantined=(Quarantined("x", "p0", "validation", "E603", "another reason", 7),))
    assert ri.release_digest("key1", ("anon@1", 3), renamed, ENTRIES, SPANS) == base


def test_the_cache_vouches_only_for_recognized_unchanged_notes():
    c2 = Note("c", "p3", "no phi here, edited")
    d = Note("d", "p4", "recognition failed here")
    e = Note("e", "p5", "recognition failed without a code")
    entries = {
        "a": entry(A),
        "c": entry(c2, text="no phi here"),
        "d": entry(d, status="error", code="E409"),
        "e": entry(e, status="timeout"),
        "z": entry(C),
    }
    ready, q = ri.cache_quarantines("st", [A, B, c2, d, e], entries)
    assert ready == [A]
    assert q == [
        Quarantined("b", "p2", "anonymization", "E401", "note b has no cached spans; run recognition for study st"),
        Quarantined("c", "p3", "anonymization", "E403", "note c changed since recognition; rerun recognition"),
        Quarantined("d", "p4", "recognition", "E409", "note d: recognition failed (E409); not released"),
        Quarantined("e", "p5", "recognition", "E402", "note e: recognition failed (None); not released"),
    ]
    assert ri.cache_quarantines("st", [], entries) == ([], [])


T = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def test_a_release_job_carries_the_ready_notes_and_every_quarantine():
    ch = chunk()
    extra = Quarantined("b", "p2", "anonymization", "E401", "no cache")
    entries = {"a": entry(A, fingerprint="rec@7"), "b": entry(B)}
    job = ri.release_job("st", "k", ch, entries, [A], [extra], {"a": SPANS["a"]}, T)
    assert (job.study, job.key, job.chunk, job.notes, job.stamp) == ("st", "k", 2, [A], T)
    assert job.spans == {"a": SPANS["a"]} and job.fingerprints == {"a": "rec@7"}
    assert job.quarantined == [Q, extra] and job.owned_ids == ("a", "b", "x")
    assert ri.release_job("st", "k", ch, entries, [], [], {}).stamp is None


def span_rows(rows):
    return SpanRows(tables.to_table("spans", rows))


def test_a_shard_job_is_decided_in_the_worker_as_in_the_driver():
    rows = [
        (0, {"note_id": "a", "patient_id": "p1", "text": A.text}),
        (1, {"note_id": "b", "patient_id": "p2", "text": B.text}),
        (2, {"note_id": "c", "patient_id": "p3", "text": C.text}),
        (3, {"note_id": "x", "patient_id": "p9", "text": ""}),
    ]
    plan = ChunkPlan(1, 3, (10, 11, 12, 13), (0, 1, 2, 3), ("a", "b", "c", "x"))
    entries = {"a": entry(A, fingerprint="rec@1"), "b": entry(B, fingerprint="rec@2")}
    cache = span_rows(
        [
            {"study": "st", "note_id": "a", "start": 0, "end": 5, "label": "PATIENT", "score": 1.0,
             "recognizer": "r@1", "origin": "model"},
            {"study": "st", "note_id": "c", "start": 0, "end": 2, "label": "PATIENT", "score": 1.0,
             "recognizer": "r@1", "origin": "model"},
        ]
    )  # fmt: skip
    job = ri.ShardReleaseJob("st", "k", plan, ShardRef("parquet", "/x.parquet"), entries, cache, "key1", ("s",), 100,
                             stamp=T)  # fmt: skip
    assert job.chunk == 1
    opened = ri.open_shard_job(job, rows)
    assert opened.info.index == 1 and opened.info.n_notes == 3 and opened.info.owned_ids == ("a", "b", "c", "x")
    assert opened.fingerprints == frozenset({"rec@1", "rec@2"})
    rel = opened.job
    assert rel is not None and [n.note_id for n in rel.notes] == ["a", "b"] and rel.stamp == T
    assert (rel.study, rel.key) == ("st", "k")
    assert [q.reason for q in rel.quarantined if q.code == "E401"] == [
        "note c has no cached spans; run recognition for study st"
    ]
    assert {k: [(s.start, s.end, s.label) for s in v] for k, v in rel.spans.items()} == {
        "a": [(0, 5, "PATIENT")],
        "b": [],
    }
    assert [(q.note_id, q.code) for q in rel.quarantined] == [("x", "E604"), ("c", "E401")]
    assert rel.fingerprints == {"a": "rec@1", "b": "rec@2"}
    # the digest is the driver's for the same chunk
    meta = dict.fromkeys(("note_date", "note_type", "source", "site"))  # validation fills every metadata column
    notes = [Note("a", "p1", A.text, meta), Note("b", "p2", B.text, meta), Note("c", "p3", C.text, meta)]
    ch = StudyChunk(1, 3, 4, notes, [q for q in rel.quarantined if q.code == "E604"], [], ("a", "b", "c", "x"))
    assert opened.digest == expected_digest("key1", ("s",), ch, entries, {"a": [Span("a", 0, 5, "PATIENT")], "b": []})
    # a chunk an interrupted run committed with the same digest is not released again
    done = ri.open_shard_job(
        ri.ShardReleaseJob("st", "k", plan, job.shard, entries, cache, "key1", ("s",), 100, opened.digest), rows
    )
    assert done.job is None and done.digest == opened.digest and done.fingerprints == opened.fingerprints
    assert done.info == opened.info
    other = ri.open_shard_job(
        ri.ShardReleaseJob("st", "k", plan, job.shard, entries, cache, "key1", ("s",), 100, "0" * 32), rows
    )
    assert other.job is not None and other.job.stamp is None


def test_a_reviewer_decision_applies_in_the_worker():
    rows = [(0, {"note_id": "a", "patient_id": "p1", "text": A.text})]
    plan = ChunkPlan(0, 1, (10,), (0,), ("a",))
    entries = {"a": entry(A)}
    spans = tables.to_table(
        "spans",
        [{"study": "st", "note_id": "a", "start": 0, "end": 5, "label": "PATIENT", "score": 1.0, "recognizer": "r@1",
          "origin": "model"}],
    )  # fmt: skip
    reject = {"study": "st", "note_id": "a", "text_sha256": sha(A.text), "start": 0, "end": 5, "label": "PATIENT",
              "decision": "reject", "reviewer": "dr x", "decided_at": T}  # fmt: skip
    job = ri.ShardReleaseJob("st", "k", plan, ShardRef("parquet", "/x"), entries, SpanRows(spans, (reject,)), "key1",
                             (), 100)  # fmt: skip
    rel = ri.open_shard_job(job, rows).job
    assert rel is not None and rel.spans == {"a": []}
