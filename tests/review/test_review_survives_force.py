"""Reviewer decisions are data, not cache: they survive `tide run --force` and recognizer changes.

A reviewer adds a name the recognizers miss and rejects a span; the study is then re-recognized
with --force and with another recognizer set.  The name must stay replaced in the release (it
used to come back verbatim: --force or a new fingerprint deleted every reviewer row).
"""

from __future__ import annotations

import datetime as dt
import json

import pyarrow as pa
import pytest

from tide_core.anonymize.keys import FileKeyProvider
from tide_core.cli.main import main
from tide_core.io.open import open_warehouse
from tide_core.review.store import ReviewStore
from tide_core.spans import Note, Span
from tide_core.store import tables
from tide_core.store.span_cache import REVIEWER, SpanCache, text_sha256

STUDY, KEY = "s", "k1"
T1 = "Follow-up call on 03/04/2021. Qwix Zorvath agreed to the plan; Qwix Zorvath will call back."
T2 = "Seen by Dr. Adams on 5/6/2021 for knee pain. Phone 555-123-4567."


@pytest.fixture
def site(tmp_path):
    url = f"duckdb:{tmp_path / 'wh.duckdb'}"
    wh = open_warehouse(url)
    _notes(wh, T1)
    wh.close()
    FileKeyProvider(tmp_path / "keys").create(STUDY, KEY)
    cfg_a = tmp_path / "a.json"
    cfg_a.write_text(json.dumps({"recognizers": [{"name": "tide.regex"}, {"name": "tide.ids"}]}))
    cfg_b = tmp_path / "b.json"
    cfg_b.write_text(json.dumps({"recognizers": [{"name": "tide.regex"}]}))

    def run(cfg, *extra) -> int:
        return main(
            ["run", "--warehouse", url, "--study", STUDY, "--key", KEY, "--config", str(cfg)]
            + ["--key-dir", str(tmp_path / "keys"), "--no-progress", *extra]
        )

    return url, run, cfg_a, cfg_b


def _notes(wh, t1: str) -> None:
    rows = [
        {"note_id": "n1", "patient_id": "p1", "text": t1, "note_date": "2021-03-04"},
        {"note_id": "n2", "patient_id": "p2", "text": T2, "note_date": "2021-05-06"},
    ]
    wh.replace_table("notes", pa.Table.from_pylist(rows))


def _released(url) -> dict[str, str]:
    wh = open_warehouse(url)
    try:
        rows = wh.read_table("tide_deid_notes", ["note_id", "text"], where={"study": STUDY, "key": KEY}).to_pylist()
        return {r["note_id"]: r["text"] for r in rows}
    finally:
        wh.close()


def _with(url, fn):
    wh = open_warehouse(url)
    try:
        return fn(wh)
    finally:
        wh.close()


def _occurrences(text: str, word: str) -> list[tuple[int, int]]:
    out, i = [], text.find(word)
    while i >= 0:
        out.append((i, i + len(word)))
        i = text.find(word, i + 1)
    return out


def test_added_and_rejected_spans_survive_force_and_recognizer_changes(site, capsys):
    url, run, cfg_a, cfg_b = site
    assert run(cfg_a) == 0
    before = _released(url)
    assert "Zorvath" in before["n1"]  # the recognizers miss the name: only the reviewer catches it
    assert "5/6/2021" not in before["n2"]

    def review(wh):
        store = ReviewStore(wh, STUDY, KEY, reviewer="alice")
        for a, b in _occurrences(T1, "Qwix Zorvath"):
            store.decide("n1", "add", a, b, "PATIENT")
        a, b = _occurrences(T2, "5/6/2021")[0]
        store.decide("n2", "reject", a, b, "DATE")  # (a reviewer's call: not PHI in this study)

    _with(url, review)

    def check(tag: str) -> None:
        rel = _released(url)
        assert "Zorvath" not in rel["n1"] and "Qwix" not in rel["n1"], tag
        assert "5/6/2021" in rel["n2"], tag  # the reject is still applied
        rows = _with(url, lambda wh: SpanCache(wh).review_rows(STUDY))
        assert len(rows) == 3 and {r["reviewer"] for r in rows} == {"alice"}, tag
        released = _with(
            url,
            lambda wh: wh.read_table(
                "tide_released_spans", ["note_id", "recognizer"], where={"study": STUDY, "key": KEY}
            ).to_pylist(),
        )
        assert sum(1 for r in released if r["recognizer"] == REVIEWER) == 2, tag

    assert run(cfg_a) == 0  # cached rerun
    check("cached")
    assert run(cfg_a, "--force") == 0
    check("--force")
    assert run(cfg_b) == 0  # another recognizer set: a new fingerprint, every note recognized again
    check("recognizer set changed")
    fps = _with(url, lambda wh: {e.fingerprint for e in SpanCache(wh).entries(STUDY).values()})
    assert len(fps) == 1
    assert run(cfg_a, "--force") == 0
    check("--force after a recognizer change")
    capsys.readouterr()

    # the note's text changes: its decisions are kept, not applied, and reported
    _with(url, lambda wh: _notes(wh, "Addendum. " + T1))
    assert run(cfg_a) == 0
    out = capsys.readouterr().out
    assert "warning: 2 reviewer decision(s) on 1 note(s) whose text changed since review" in out
    summary = _with(url, lambda wh: SpanCache(wh).review_summary(STUDY))
    assert (summary.n_decisions, summary.n_applied, summary.n_stale, summary.stale_notes) == (3, 1, 2, ("n1",))
    assert "Zorvath" not in out and "Qwix" not in out  # the warning names counts, never text
    # ... and apply again when the text they were made on comes back
    _with(url, lambda wh: _notes(wh, T1))
    assert run(cfg_a) == 0
    check("text restored")


def test_decisions_apply_only_to_the_text_they_were_made_on(tmp_path):
    wh = open_warehouse(f"duckdb:{tmp_path / 'c.duckdb'}")
    cache = SpanCache(wh)
    n1 = Note("n1", "p1", T1)
    span = Span("n1", 0, 9, "OTHER", 1.0, "r@1")
    cache.store(STUDY, "fp1", [n1], {"n1": [span]}, {"n1": ("ok", None)}, keep=set())
    a, b = _occurrences(T1, "Qwix Zorvath")[0]
    cache.add_review(STUDY, n1, a, b, "PATIENT", "add", reviewer="alice")
    cache.add_review(STUDY, n1, 0, 9, "OTHER", "reject", reviewer="alice")
    assert cache.spans(STUDY)["n1"] == [Span("n1", a, b, "PATIENT", 1.0, REVIEWER)]
    for keep in (set(), {"n1"}):  # a forced recognition and a cached one
        cache.store(STUDY, "fp2", [n1], {} if keep else {"n1": [span]}, {} if keep else {"n1": ("ok", None)}, keep)
        assert cache.spans(STUDY)["n1"] == [Span("n1", a, b, "PATIENT", 1.0, REVIEWER)]
    # the reject only removes a span the recognizers produce; it stays recorded when they do not
    cache.store(STUDY, "fp3", [n1], {"n1": []}, {"n1": ("ok", None)}, keep=set())
    assert cache.spans(STUDY)["n1"] == [Span("n1", a, b, "PATIENT", 1.0, REVIEWER)]
    assert len(cache.review_rows(STUDY)) == 2
    # new text: decisions kept, not applied
    n1b = Note("n1", "p1", "x" + T1)
    cache.store(STUDY, "fp3", [n1b], {"n1": []}, {"n1": ("ok", None)}, keep=set())
    assert cache.spans(STUDY).get("n1", []) == []
    s = cache.review_summary(STUDY)
    assert (s.n_decisions, s.n_applied, s.n_stale) == (2, 0, 2)
    assert {r["text_sha256"] for r in cache.review_rows(STUDY)} == {text_sha256(T1)}
    # a note that leaves the source: its decisions are kept (orphaned), not applied
    cache.store(STUDY, "fp3", [], {}, {}, keep=set())
    s = cache.review_summary(STUDY)
    assert (s.n_decisions, s.n_orphaned) == (2, 2)
    wh.close()


def test_reviewer_rows_of_an_older_version_are_honoured_and_moved(tmp_path):
    """Before the decisions table, reviewer rows lived in tide_spans (origin = "reviewer")."""
    wh = open_warehouse(f"duckdb:{tmp_path / 'c.duckdb'}")
    cache = SpanCache(wh)
    n1 = Note("n1", "p1", T1)
    cache.store(STUDY, "fp1", [n1], {"n1": []}, {"n1": ("ok", None)}, keep=set())
    a, b = _occurrences(T1, "Qwix Zorvath")[0]
    legacy = {
        "study": STUDY,
        "note_id": "n1",
        "start": a,
        "end": b,
        "label": "PATIENT",
        "score": 1.0,
        "recognizer": REVIEWER,
        "fingerprint": "fp1",
        "origin": "reviewer",
        "decision": "add",
        "created_at": dt.datetime.now(dt.UTC),
    }
    wh.append("tide_spans", tables.to_table("spans", [legacy]))
    want = [Span("n1", a, b, "PATIENT", 1.0, REVIEWER)]
    assert cache.spans(STUDY)["n1"] == want
    cache.store(STUDY, "fp1", [n1], {}, {}, keep={"n1"})  # moves it, in the same commit
    assert wh.count("tide_spans", {"study": STUDY, "origin": "reviewer"}) == 0
    assert wh.count("tide_review_decisions", {"study": STUDY}) == 1
    cache.store(STUDY, "fp2", [n1], {"n1": []}, {"n1": ("ok", None)}, keep=set())  # then --force
    assert cache.spans(STUDY)["n1"] == want
    assert cache.undo_review(STUDY, "n1", a, b, "PATIENT") == 1
    assert cache.spans(STUDY).get("n1", []) == []
    wh.close()
