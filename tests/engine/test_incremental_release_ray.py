"""Nightly anonymization on Ray workers that read their own shards keeps unchanged chunks too.

The study and helpers of ``test_incremental_release`` (4 chunks of ``CHUNK`` notes), released on a
local Ray session (2 CPUs): a changed note and an edited released row are released again by the
workers, the two other chunks are kept (their workers anonymize nothing), and the candidate equals
a from-scratch release in process.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import test_incremental_release as inc

pytest.importorskip("ray")


@pytest.fixture(scope="module")
def ray_session(local_ray):  # type: ignore[no-untyped-def]
    return local_ray


def test_ray_workers_keep_unchanged_chunks_and_release_the_rest(ray_session, tmp_path: Path):  # type: ignore[no-untyped-def]
    root = inc.make_site(tmp_path, executor="ray")
    before = inc.candidate(root)
    inc.change_note(root, inc.CHUNK + 5)  # chunk 1
    inc.tamper_text(root, 3 * inc.CHUNK + 5)  # chunk 3
    again = inc.run(root, executor="ray")
    assert again.worked == [1, 3] and again.kept == [0, 2]
    want, full = inc.scratch(root)
    assert inc.candidate(root) == want != before and inc.totals(again.report) == inc.totals(full.report)
    assert len(inc.stamps(root)) == 1
    third = inc.run(root, executor="ray")
    assert third.worked == [] and third.kept == inc.ALL
    assert inc.candidate(root) == want and len(inc.stamps(root)) == 1
    assert not (root / "wh.duckdb.staging").exists()  # nothing staged outlives the runs
