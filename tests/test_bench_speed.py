"""The side-by-side speed benchmark runs end to end at tiny size and prints every row.

No timing thresholds: the machine may be loaded; only the table's shape and that every ratio is
a positive finite number are checked.
"""

from __future__ import annotations

import math
import re

import pytest

from tide_core.bench import speed

pytestmark = pytest.mark.timeout(900)


def test_speed_bench_rules_tiny(capsys):
    assert (
        speed.main(["--n-notes", "4", "--n-long", "1", "--long-bytes", "4000", "--repeats", "1", "--skip-model"]) == 0
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
