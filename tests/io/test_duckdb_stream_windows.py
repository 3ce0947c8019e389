"""Streamed reads of a DuckDB table cost a bounded window per batch, at any depth, and lose nothing.

``iter_batches``/``iter_refs`` read a table in ``rowid`` windows: ``rowid > a ORDER BY rowid
LIMIT n`` alone ranks every remaining row on each query, so streaming a table of N rows in
batches of n cost N²/n (the release path's span table, 4.7M rows at 200,000 notes).
"""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tide_core.io.duckdb_warehouse import DuckDBWarehouse


def _scan_rows(profile: dict) -> int:
    """Rows the table scans of one profiled query produced (after pushed-down filters)."""
    total = 0
    stack = [profile]
    while stack:
        node = stack.pop()
        if "SCAN" in str(node.get("operator_type", "")) or "SCAN" in str(node.get("operator_name", "")):
            total += int(node.get("operator_cardinality", 0))
        stack.extend(node.get("children", []))
    return total


def test_each_batch_scans_a_bounded_window_not_the_rest_of_the_table(tmp_path):
    n, batch = 400_000, 5_000
    profile = tmp_path / "profile.json"
    with DuckDBWarehouse(tmp_path / "w.duckdb") as wh:
        wh.sql(f"CREATE TABLE spans AS SELECT 's' AS study, 'k' AS key, i AS v FROM range({n}) r(i)")
        wh.sql("PRAGMA enable_profiling = 'json'")
        wh.sql(f"PRAGMA profiling_output = '{profile}'")
        scanned: list[int] = []
        seen = 0
        for b in wh.iter_batches("spans", ["v"], {"study": "s", "key": "k"}, batch_rows=batch):
            seen += b.num_rows
            scanned.append(_scan_rows(json.loads(profile.read_text())))  # the query that made this batch
        assert seen == n
        # the first query alone used to rank all 400,000 rows; a window holds one batch's rows
        assert max(scanned) <= batch, max(scanned)


@pytest.mark.parametrize("batch_rows", [1, 7, 1000])
def test_sparse_rows_of_one_study_among_others_come_back_once_in_order(tmp_path, batch_rows):
    with DuckDBWarehouse(tmp_path / "w.duckdb") as wh:
        studies = ["a" if i % 97 == 0 else "b" for i in range(20_000)]
        wh.replace_table("t", pa.table({"study": studies, "v": list(range(20_000))}))
        wh.delete("t", {"v": list(range(0, 20_000, 5))})  # gaps in rowid
        want = [i for i in range(20_000) if i % 97 == 0 and i % 5 != 0]
        got = [
            v for b in wh.iter_batches("t", ["v"], {"study": "a"}, batch_rows=batch_rows) for v in b["v"].to_pylist()
        ]
        assert got == want
        refs = [
            r for b in wh.iter_refs("t", ["v"], {"study": "a"}, batch_rows=batch_rows) for r in b["ref"].to_pylist()
        ]
        assert refs == sorted(refs) and len(set(refs)) == len(want)


def test_rows_appended_while_streaming_are_still_read(tmp_path):
    with DuckDBWarehouse(tmp_path / "w.duckdb") as wh:
        wh.replace_table("t", pa.table({"study": ["s"] * 3000, "v": list(range(3000))}))
        stream = wh.iter_batches("t", ["v"], {"study": "s"}, batch_rows=1000)
        got = next(stream)["v"].to_pylist()
        wh.append("t", pa.table({"study": ["s"] * 10, "v": list(range(3000, 3010))}))
        got += [v for b in stream for v in b["v"].to_pylist()]
        assert got == list(range(3010))


@settings(max_examples=40, deadline=None)
@given(
    flags=st.lists(st.sampled_from(["a", "b", "gone"]), min_size=0, max_size=300),
    batch_rows=st.integers(min_value=1, max_value=40),
)
def test_any_layout_streams_exactly_the_matching_rows(tmp_path_factory, flags, batch_rows):
    path = tmp_path_factory.mktemp("w") / "w.duckdb"
    with DuckDBWarehouse(path) as wh:
        study = [("a" if f == "gone" else f) for f in flags]
        wh.replace_table("t", pa.table({"study": pa.array(study, pa.string()), "v": list(range(len(flags)))}))
        gone = [i for i, f in enumerate(flags) if f == "gone"]
        if gone:
            wh.delete("t", {"v": gone})
        want = [i for i, f in enumerate(flags) if f == "a"]
        got = [
            v for b in wh.iter_batches("t", ["v"], {"study": "a"}, batch_rows=batch_rows) for v in b["v"].to_pylist()
        ]
        assert got == want
        assert all(b.num_rows <= batch_rows for b in wh.iter_batches("t", ["v"], None, batch_rows=batch_rows))
