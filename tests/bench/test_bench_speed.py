"""The side-by-side speed benchmark runs end to end at tiny size and prints every row.

No timing thresholds: the machine may be loaded; only the table's shape and that every ratio is
a positive finite number are checked.
"""

from __future__ import annotations

import math
import os
import re
import time

import pytest

from benchmarks import speed
from tide_core.threads import allotted_threads

pytestmark = pytest.mark.timeout(900)


def test_speed_bench_rules_tiny(capsys):
    # two short notes and one 2 kB "long" note: every row of the table at a fraction of the work
    assert (
        speed.main(["--n-notes", "2", "--n-long", "1", "--long-bytes", "2000", "--repeats", "1", "--skip-model"]) == 0
    )
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and not line.startswith("| row")]
    keys = {tuple(c.strip() for c in line.strip("|").split("|")[:3]) for line in rows}
    expected = {
        ("rules", "notes", "TIDE --preset rules"),
        ("rules", "long", "TIDE --preset rules"),
        ("regex layer", "notes", "tide.regex fast path"),
        ("regex layer", "long", "tide.regex fast path"),
        ("regex layer", "notes", "tide.regex reference path"),
        ("regex layer", "long", "tide.regex reference path"),
        ("anonymizer", "notes", "TIDE anonymizer"),
        ("peak RSS", "rules", "process peak during stage"),
        ("peak RSS", "anonymizer", "process peak during stage"),
    }
    assert expected <= keys, expected - keys
    assert sum(1 for line in rows if "| Presidio encrypt |" in line) == 1
    assert sum(1 for line in rows if "| Presidio replace |" in line) == 1
    ratios = [float(m.group(1)) for line in rows if (m := re.search(r"\| ([0-9.]+|inf|nan)x \|$", line))]
    assert len(ratios) == 8
    assert all(math.isfinite(r) and r > 0 for r in ratios), ratios
    for line in rows:
        if line.startswith("| peak RSS"):
            mib = float(re.search(r"\| ([0-9,]+) MiB", line).group(1).replace(",", ""))
            assert mib > 0


needs_two_cpus = pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs"
)


def _cpu_ticks(pid: int) -> int:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


@needs_two_cpus
def test_pinned_competing_load_owns_one_cpu_and_torch_is_sized_to_the_rest():
    torch = pytest.importorskip("torch")
    mine = set(os.sched_getaffinity(0))
    theirs = max(mine)
    allotted = allotted_threads()
    with speed.competing_load(True, pinned=True) as proc:
        assert proc is not None and proc.poll() is None
        assert os.sched_getaffinity(proc.pid) == {theirs}
        assert os.sched_getaffinity(0) == mine - {theirs}
        assert torch.get_num_threads() == len(mine) - 1  # sized again from what the process owns
        t0 = _cpu_ticks(proc.pid)
        time.sleep(0.5)
        assert _cpu_ticks(proc.pid) > t0  # a real busy loop
    assert proc.poll() is not None  # killed on the way out
    assert os.sched_getaffinity(0) == mine
    assert torch.get_num_threads() == allotted


@needs_two_cpus
def test_shared_competing_load_leaves_cpus_and_threads_alone():
    torch = pytest.importorskip("torch")
    mine = set(os.sched_getaffinity(0))
    threads = torch.get_num_threads()
    with speed.competing_load(True, pinned=False) as proc:
        assert proc is not None and proc.poll() is None
        assert os.sched_getaffinity(proc.pid) == mine
        assert os.sched_getaffinity(0) == mine
        assert torch.get_num_threads() == threads
    assert proc.poll() is not None
    with speed.competing_load(False) as none:
        assert none is None


def test_contended_rows_pair_idle_and_contended_and_report_the_share_kept():
    notes, _ = speed.build_corpora(2, 0, 11)
    tide = speed.tide_regex_runner(True)
    presidio = speed.presidio_runner(speed.presidio_regex_analyzer())
    rows: list[speed.Row] = []
    held = speed._contended_rows(tide, presidio, notes, 1, "tide.regex fast path", rows, "shared")
    assert [r.section for r in rows] == ["idle", "contended (shared)"]
    assert all(r.tide_s > 0 and r.presidio_s > 0 and r.n_items == 2 for r in rows)
    assert held["held"] == pytest.approx(rows[1].ratio / rows[0].ratio)
    assert held["mode"] == "shared" and held["mean_note_bytes"] == notes.n_bytes / 2
    res = {
        "rows": [r.to_dict() for r in rows],
        "peak_rss_mib": {},
        "contended": [held],
        "corpora": {"notes": {"notes": 2, "bytes": notes.n_bytes, "spans": 0}, "long": {"notes": 0, "bytes": 0}},
        "repeats": 1,
        "cpus": os.cpu_count(),
        "torch_threads": None,
        "seed": 11,
        "seconds": 1.0,
    }
    md = speed.markdown(res)
    assert "| contended (shared) / idle | notes | tide.regex fast path | ratio " in md
    assert f"{held['held']:.0%} |" in md
