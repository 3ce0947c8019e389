"""The release's digests come from rows the warehouse sorts, never from a study held in a list.

``content_fingerprint`` and ``batch_id`` are digests of sorted row hashes.  The release path
computes them from ``iter_ordered`` (the warehouse sorts, one range of ``even_bounds`` at a time on
DuckDB) with :class:`SortedDigest` / :class:`BatchDigest`, one batch of rows in memory.  These tests
pin that the streamed digests equal the in-memory ones for any text and any split, that a
warehouse returning rows out of code-point order fails closed (E379), that the decision of a real
study is the same whatever the ranges, and that the Python memory of a fingerprint does not grow
with the number of rows.
"""

from __future__ import annotations

import random
import tracemalloc
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import release_study
from release_helpers import fixed_key
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.assurance.gate import ReleaseGatePolicy
from tide_core.config import TideConfig
from tide_core.errors import WarehouseError
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.io.open import open_warehouse
from tide_core.release import evidence, lifecycle, scan
from tide_core.runner import anonymize_study, recognize_study
from tide_core.store.release_content import BatchDigest, SortedDigest, batch_id, content_fingerprint

S, K = "big", "k1"  # release_study writes study "big"
CONFIG = TideConfig.preset("rules")
DEID = CONFIG.tables.deid_notes

# any text, surrogates aside (they cannot be stored as UTF-8): every Unicode plane, controls, NUL
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)


@given(st.lists(TEXT, max_size=40))
def test_a_sorted_digest_is_the_content_fingerprint(values):
    d = SortedDigest()
    for v in sorted(values):
        d.add(v)
    assert d.n == len(values)
    assert d.hexdigest() == content_fingerprint(values)
    assert d.hexdigest() == content_fingerprint(list(reversed(values)))  # order of the input is free


@given(st.lists(TEXT, min_size=2, max_size=20, unique=True))
def test_a_value_out_of_order_fails_closed(values):
    d = SortedDigest()
    ordered = sorted(values)
    d.add(ordered[1])
    with pytest.raises(WarehouseError) as err:
        d.add(ordered[0])
    assert err.value.code == "E379"
    assert "out of code-point order" in err.value.message and "collation" in (err.value.hint or "")


HEXISH = st.text("0123456789abcdefb|nuk", min_size=0, max_size=12)


@given(HEXISH, st.lists(HEXISH, max_size=30))
def test_a_batch_digest_is_the_batch_id(bucket, hashes):
    d = BatchDigest(bucket)
    for h in sorted(hashes):
        d.add(h)
    assert d.batch_id() == batch_id(bucket, hashes)
    assert d.batch_id() == batch_id(bucket, hashes)  # asking again changes nothing


def test_even_bounds_split_hex_digests_into_ranges_of_the_asked_size():
    assert scan.even_bounds(0, 100) == []
    assert scan.even_bounds(100, 100) == []
    for n, per in [(101, 100), (20_000, 10_000), (200_000, 10_000), (5_000_000, 1_000), (10**7, 7)]:
        b = scan.even_bounds(n, per)
        assert len(b) + 1 == -(-n // per)
        assert b == sorted(b) and len(set(b)) == len(b)  # strictly ascending split points
    # uniformly spread digests land in ranges of about the asked size
    rng = random.Random(7)
    hashes = sorted(f"{rng.getrandbits(128):032x}" for _ in range(20_000))
    bounds = scan.even_bounds(len(hashes), 2_000)
    edges: list[str | None] = [None, *bounds, None]
    sizes = [sum(1 for h in hashes if (lo is None or h >= lo) and (hi is None or h < hi)) for lo, hi in pairwise(edges)]
    assert sum(sizes) == len(hashes)
    assert max(sizes) < 2_500 and min(sizes) > 1_500


@pytest.fixture
def duck(tmp_path: Path) -> Iterator[DuckDBWarehouse]:
    w = DuckDBWarehouse(tmp_path / "o.duckdb")
    try:
        yield w
    finally:
        w.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(st.tuples(st.sampled_from(["a", "b"]), st.one_of(st.none(), TEXT)), max_size=40),
    cut=st.lists(TEXT, max_size=5),
    batch=st.integers(1, 7),
)
def test_duckdb_iter_ordered_is_pythons_sort_whatever_the_ranges(duck, rows, cut, batch):
    table = pa.table(
        {"g": [g for g, _ in rows], "v": [v for _, v in rows]},
        schema=pa.schema([("g", pa.string()), ("v", pa.string())]),
    )
    duck.replace_table("ordered", table)
    bounds = sorted(set(cut))
    got: list[str | None] = []
    for b in duck.iter_ordered("ordered", ["v"], ["v"], {"g": "a"}, batch, bounds):
        assert 0 < b.num_rows <= batch
        got.extend(b.column("v").to_pylist())
    want = [v for g, v in rows if g == "a"]
    nulls = [v for v in want if v is None]
    assert got == nulls + sorted(v for v in want if v is not None)  # nulls first, then code-point order


def test_a_fingerprint_streams_in_constant_python_memory(duck):
    """The row hashes are digested as the warehouse sorts them: the Python heap holds one batch
    (a list of every hash, the old way, would be ~7 MB for these 60,000 rows)."""
    rng = random.Random(3)
    peaks = {}
    for n in (6_000, 60_000):
        hashes = [f"{rng.getrandbits(128):032x}" for _ in range(n)]
        duck.replace_table(DEID, pa.table({"study": [S] * n, "key": [K] * n, "row_hash": hashes}))
        tracemalloc.start()
        fp = scan.stored_fingerprint(duck, DEID, S, K)
        peaks[n] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert fp == content_fingerprint(hashes)
    assert peaks[60_000] < 2 * 2**20, peaks
    assert peaks[60_000] < 2 * peaks[6_000] + 2**20, peaks


def test_an_empty_or_absent_candidate_has_no_stored_fingerprint(duck):
    assert scan.stored_fingerprint(duck, DEID, S, K) == ""
    duck.replace_table(DEID, pa.table({"study": ["x"], "key": [K], "row_hash": ["ab"]}))
    assert scan.stored_fingerprint(duck, DEID, S, K) == ""


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("sorted")
    provider = FileKeyProvider(root / "keys")
    fixed_key(provider, S, K)
    with open_warehouse(f"duckdb:{root / 'wh.duckdb'}") as wh:
        release_study.write(wh, 80, 16)
        recognize_study(wh, S, CONFIG, progress=False)
        anonymize_study(wh, S, K, provider, CONFIG, progress=False)
    return root


def test_the_gate_and_the_fingerprints_are_the_same_whatever_the_ranges(study, tmp_path, monkeypatch):
    """Ranges of 7 rows (a dozen sorted queries) and one range give the decision the in-memory
    computation gives: the same fingerprint, batches, patients and reasons."""
    db = tmp_path / "wh.duckdb"
    db.write_bytes((study / "wh.duckdb").read_bytes())
    policy = ReleaseGatePolicy()
    with DuckDBWarehouse(db) as wh:
        rows = evidence.candidate_rows(wh, CONFIG.tables, S, K)
        assert len(rows) == 80
        want_fp = content_fingerprint(r.row_hash for r in rows)
        want = evidence.evaluate_evidence(rows, {}, [], policy)
        results = {}
        for per in (7, 10_000):
            monkeypatch.setattr(scan, "RANGE_ROWS", per)
            got = lifecycle.gate(wh, CONFIG, S, K, policy)
            results[per] = (scan.stored_fingerprint(wh, DEID, S, K), got.batches, got.reasons, got.passed)
        assert results[7] == results[10_000] == (want_fp, want.batches, want.reasons, want.passed)
        assert sum(b["n_notes"] for b in want.batches.values()) == 80
        assert sum(b["n_patients"] for b in want.batches.values()) >= 16
        # the batches' ids are batch_id of their members, recomputed here from the rows
        by_bucket: dict[str, list[str]] = {}
        for r in rows:
            by_bucket.setdefault(r.bucket_id, []).append(r.row_hash)
        assert set(want.batches) == {batch_id(b, hs) for b, hs in by_bucket.items()}


def test_a_stream_out_of_row_hash_order_fails_closed(study, tmp_path):
    db = tmp_path / "wh.duckdb"
    db.write_bytes((study / "wh.duckdb").read_bytes())
    with DuckDBWarehouse(db) as wh:
        rows = sorted(evidence.candidate_rows(wh, CONFIG.tables, S, K), key=lambda r: r.row_hash, reverse=True)
    with pytest.raises(WarehouseError) as err:
        evidence.evaluate_evidence(iter(rows), {}, [], ReleaseGatePolicy())
    assert err.value.code == "E379"
