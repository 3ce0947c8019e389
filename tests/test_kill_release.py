"""Release runs killed in the write and publish phases never leave a half or unchecked release in
researchers' view, and a rerun completes (issue 16: write-audit-publish).

CI runs a few kills (``TIDE_RELEASE_KILLS``, default 2: one clean re-release, one leaking); the
full run is ``scripts/kill_release.py --kills 50`` (its result is in docs/dagster.md).  The
oracle (``judge``) is tested on its own so that it can be seen to fail.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kill_release", ROOT / "scripts" / "kill_release.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["kill_release"] = mod
    spec.loader.exec_module(mod)
    return mod


T1 = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
T2 = dt.datetime(2026, 12, 2, tzinfo=dt.UTC)
WHOLE = [{"note_ref": f"r{i}", "text": f"note {i}", "released_at": T1} for i in range(3)]
PUBLISHED = {"status": "published", "gate_passed": True, "released_at": T1, "n_released": 3}


def test_the_oracle_sees_half_unchecked_and_leaking_releases():
    kr = _script()
    verified = [kr._content(WHOLE)]
    assert kr.judge([], PUBLISHED, verified) == ("none", [])
    assert kr.judge(WHOLE, PUBLISHED, verified) == ("whole", [])
    _, problems = kr.judge(WHOLE[:2], dict(PUBLISHED, n_released=3), verified)
    assert any(p.startswith("half") for p in problems)
    _, problems = kr.judge(WHOLE, dict(PUBLISHED, status="pending"), verified)
    assert any(p.startswith("unchecked") for p in problems)
    mixed = WHOLE[:2] + [dict(WHOLE[2], released_at=T2)]
    assert any(p.startswith("half") for p in kr.judge(mixed, PUBLISHED, verified)[1])
    leaked = [dict(r, text=f"{r['text']} {kr.NAME}") for r in WHOLE]
    _, problems = kr.judge(leaked, PUBLISHED, verified)
    assert "leak" in problems and any(p.startswith("unchecked") for p in problems)


def test_killed_release_runs_leave_no_half_or_unchecked_release(tmp_path):
    kr = _script()
    kills = int(os.environ.get("TIDE_RELEASE_KILLS", "2"))
    report = kr.run_kills(kills, seed=16, workdir=tmp_path, rerun_every=1, log=lambda line: print(line))
    print("\n" + report.summary())
    assert report.kills == kills and report.reruns >= min(kills, 2)
    assert report.ok, report.problems
    assert report.by_scenario["leak"] >= 1 or kills < 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q", "-s"]))
