import pytest

from tide_core.errors import InputError
from tide_core.io.open import open_warehouse
from tide_core.spans import Note, Span
from tide_core.store.span_cache import SpanCache


@pytest.fixture
def cache(tmp_path):
    wh = open_warehouse(f"duckdb:{tmp_path / 'c.duckdb'}")
    yield SpanCache(wh)
    wh.close()


NOTES = [Note("n1", "p1", "Seen by Dr. Adams on 3/4/2021."), Note("n2", "p2", "Call 555-123-4567.")]
SPANS = {
    "n1": [Span("n1", 12, 17, "DOCTOR", 0.9, "r@1"), Span("n1", 21, 29, "DATE", 1.0, "r@1")],
    "n2": [Span("n2", 5, 17, "PHONE", 1.0, "r@1")],
}
OK = {"n1": ("ok", None), "n2": ("ok", None)}


def test_store_and_hits(cache):
    cache.store("s", "fp1", NOTES, SPANS, OK, keep=set())
    assert cache.hits("s", NOTES, "fp1") == {"n1", "n2"}
    assert cache.hits("s", NOTES, "fp2") == set()  # config changed -> recognize again
    changed = [Note("n1", "p1", NOTES[0].text + " "), NOTES[1]]
    assert cache.hits("s", changed, "fp1") == {"n2"}  # text changed -> stale
    assert cache.hits("other", NOTES, "fp1") == set()  # partitions are per study
    got = cache.spans("s")
    assert got == {k: sorted(v) for k, v in SPANS.items()}


def test_rerun_keeps_hits_and_is_idempotent(cache):
    cache.store("s", "fp1", NOTES, SPANS, OK, keep=set())
    cache.store("s", "fp1", NOTES, {}, {}, keep={"n1", "n2"})
    cache.store("s", "fp1", NOTES, {}, {}, keep={"n1", "n2"})
    assert cache.wh.count("tide_spans", {"study": "s"}) == 3
    assert cache.wh.count("tide_recognized_notes", {"study": "s"}) == 2
    cache.store("s", "fp1", NOTES[:1], {}, {}, keep={"n1"})  # n2 left the source
    assert set(cache.spans("s")) == {"n1"}


def test_failed_notes_are_not_hits(cache):
    cache.store(
        "s", "fp1", NOTES, {"n1": SPANS["n1"], "n2": []}, {"n1": ("ok", None), "n2": ("failed", "E510")}, keep=set()
    )
    assert cache.hits("s", NOTES, "fp1") == {"n1"}
    assert cache.entries("s")["n2"].error_code == "E510"


def test_spans_outside_text_are_refused(cache):
    with pytest.raises(InputError):
        cache.store("s", "fp1", NOTES, {"n2": [Span("n2", 5, 99, "PHONE")]}, {"n2": ("ok", None)}, keep=set())


def test_reviewer_decisions(cache):
    cache.store("s", "fp1", NOTES, SPANS, OK, keep=set())
    cache.add_review("s", NOTES[0], 21, 29, "DATE", "reject")
    cache.add_review("s", NOTES[0], 0, 4, "OTHER", "add")
    spans = cache.spans("s")["n1"]
    assert [(x.start, x.end, x.label) for x in spans] == [(0, 4, "OTHER"), (12, 17, "DOCTOR")]
    assert len(cache.spans("s", apply_review=False)["n1"]) == 2
    cache.store("s", "fp1", NOTES, {}, {}, keep={"n1", "n2"})  # survives a cached rerun
    assert len(cache.spans("s")["n1"]) == 2
    assert cache.undo_review("s", "n1", 21, 29, "DATE") == 1
    assert len(cache.spans("s")["n1"]) == 3
    with pytest.raises(InputError):
        cache.add_review("s", NOTES[0], 0, 400, "DATE", "add")
    with pytest.raises(InputError):
        cache.add_review("s", Note("n1", "p1", "different text"), 0, 4, "DATE", "add")
