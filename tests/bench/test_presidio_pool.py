"""Presidio on the bench's CPUs: the worker pool finds what one analyzer finds, and a pinned
competing load narrows its workers with the bench (benchmarks/presidio_pool.py, benchmarks/speed.py)."""

from __future__ import annotations

import os

import pytest

from benchmarks import speed
from benchmarks.presidio_pool import PresidioPool, presidio_regex_analyzer


def test_the_pool_counts_what_one_analyzer_counts_and_is_pinned_with_the_bench():
    notes, _ = speed.build_corpora(6, 0, 11)
    single = speed.presidio_runner(presidio_regex_analyzer())
    one = single(notes.notes)
    assert one > 0
    with PresidioPool(2, kind="regex") as pool:  # the pattern analyzer: the default one loads spaCy in each worker
        assert len(set(pool.pids)) == 2 and os.getpid() not in pool.pids
        assert pool(notes.notes) == one  # every note analyzed once, whatever the slicing
        assert pool(notes.notes[:1]) == single(notes.notes[:1])
        mine = set(os.sched_getaffinity(0))
        if len(mine) < 2:
            pytest.skip("pinning needs 2 CPUs")
        with speed.competing_load(True, pinned=True, others=pool.pids) as proc:
            assert proc is not None
            theirs = os.sched_getaffinity(proc.pid)
            assert len(theirs) == 1
            for pid in pool.pids:  # the workers run where the bench runs, not on the busy CPU
                assert os.sched_getaffinity(pid) == mine - theirs
        for pid in pool.pids:
            assert os.sched_getaffinity(pid) == mine
