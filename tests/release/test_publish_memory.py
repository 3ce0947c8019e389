"""Publishing streams the candidate: no process holds its row hashes, let alone its text.

The fingerprint and the members come from row hashes the warehouse sorts (digested as they pass),
the content from the candidate streamed in batches; what the commit streamed is checked against
the digest taken before it (E921).  The Python memory of a publish does not grow with the
candidate, a row repeated in two batches is written once, and a row that changes inside the
commit rolls it back.
"""

from __future__ import annotations

import datetime as dt
import tracemalloc

import pytest

from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.io.open import open_warehouse
from tide_core.release import publish as pub
from tide_core.store import tables
from tide_core.store.release_content import content_fingerprint, row_hash
from tide_core.store.tables import TableNames

NAMES = TableNames()
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def deid(note_id: str, text: str | None = None, note_ref: str | None = None) -> dict:
    row = {
        "study": "s",
        "key": "k",
        "note_id": note_id,
        "note_ref": note_ref or f"N-{note_id}",
        "patient_ref": f"P{note_id[-2:]}",
        "text": text if text is not None else f"released note {note_id}: seen in clinic, [NAME] follows up.",
        "note_date": "2020-02-03",
        "note_type": "consult",
        "source": "ehr",
        "site": "S1",
        "anonymizer": "anon@1",
        "fingerprint": "fp1",
        "released_at": T0,
    }
    row["row_hash"] = row_hash("s", "k", row)
    return row


@pytest.fixture(autouse=True)
def _no_override(monkeypatch):
    monkeypatch.delenv(pub.STORE_ENV, raising=False)


def _published_rows(wh) -> tuple[int, int]:
    with pub.researcher_store(wh, create=False) as rs:
        assert rs is not None
        return rs.count(NAMES.published_content), rs.count(NAMES.published_members)


def test_publish_memory_does_not_grow_with_the_candidate(tmp_path):
    """Python's peak while publishing 4,000 and 40,000 rows: the old way (every hash in a list, a
    set and a sorted copy) grows by several MB; the streamed publish by less than one."""
    peaks = {}
    for n in (4_000, 40_000):
        wh = open_warehouse(f"duckdb:{tmp_path / f'w{n}.duckdb'}")
        rows = [deid(f"n{i:06d}") for i in range(n)]
        wh.replace_table(NAMES.deid_notes, tables.to_table("deid_notes", rows))
        want = content_fingerprint(r["row_hash"] for r in rows)
        del rows
        tracemalloc.start()
        out = pub.publish(wh, NAMES, "s", "k")
        peaks[n] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert (out.version, out.n_notes, out.content_fingerprint) == ("v1", n, want)
        assert _published_rows(wh) == (n, n)
        wh.close()
    assert peaks[40_000] - peaks[4_000] < 1.5 * 2**20, peaks


@pytest.mark.parametrize("store", ["memory", "file"])
def test_a_row_repeated_in_another_batch_is_one_content_row(tmp_path, monkeypatch, store):
    monkeypatch.setattr(pub, "PUBLISH_BATCH_ROWS", 2)
    wh = DuckDBWarehouse(":memory:") if store == "memory" else open_warehouse(f"duckdb:{tmp_path / 'w.duckdb'}")
    rows = [deid(f"n{i}") for i in range(5)]
    twin = dict(rows[0], note_id="n0-twin")  # the same researcher columns: the same row hash
    assert twin["row_hash"] == rows[0]["row_hash"]
    wh.replace_table(NAMES.deid_notes, tables.to_table("deid_notes", [*rows, twin]))
    digest = pub.candidate_digest(wh, NAMES, "s", "k")
    assert (digest.n_notes, digest.n_rows, digest.repeated) == (5, 6, frozenset({rows[0]["row_hash"]}))
    out = pub.publish(wh, NAMES, "s", "k")
    assert (out.n_notes, out.content_fingerprint) == (5, content_fingerprint(r["row_hash"] for r in rows))
    assert _published_rows(wh) == (5, 5)
    wh.close()


def test_a_row_changed_inside_the_commit_rolls_it_back(tmp_path, monkeypatch):
    """The content streamed must be the rows digested before the commit (count and checksum) and
    the members must digest to the fingerprint: a row rewritten between them is E921, nothing
    published."""
    wh = open_warehouse(f"duckdb:{tmp_path / 'w.duckdb'}")
    rows = [deid(f"n{i}") for i in range(6)]
    wh.replace_table(NAMES.deid_notes, tables.to_table("deid_notes", rows))
    real = pub.candidate_digest

    def then_rewrite(*args, **kwargs):  # type: ignore[no-untyped-def]
        digest = real(*args, **kwargs)
        edited = deid("n5", text="another text, validly hashed")
        wh.replace_partition(NAMES.deid_notes, tables.to_table("deid_notes", [edited]), {"note_id": ["n5"]})
        return digest

    monkeypatch.setattr(pub, "candidate_digest", then_rewrite)
    with pytest.raises(Exception) as err:
        pub.publish(wh, NAMES, "s", "k")
    assert getattr(err.value, "code", None) == "E921"
    assert pub.published_version(wh, NAMES, "s", "k") is None
    wh.close()
