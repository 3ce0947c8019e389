"""Incremental release checks: CPU seconds of the blocking checks' pass when chunks keep their digests.

``python -m benchmarks.incremental_checks`` builds a synthetic study (the demo corpus's notes
copied under new ids, :func:`benchmarks.scale.build_study`), fills its span cache from the first
copy (:func:`benchmarks.release_scale._replicated_cache`) and anonymizes it (rules preset, DuckDB),
none of which is measured.  Then it measures the process CPU seconds of the blocking checks'
one streamed pass (:func:`tide_core.release.lifecycle.verify_release`: ``scan_release`` with the
known-PHI rider) four ways:

1. ``full, nothing recorded``: the pass as it ran before chunk verdicts (no table read or written);
2. ``first, recording``: the first pass with chunk verdicts (every chunk scanned and recorded);
3. ``second, nothing changed``: every chunk's digest matches (reused);
4. ``one chunk changed``: the released text of every note of one chunk is edited, then the pass.

Results are printed as a table and written as JSON (``--out``).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks.release_scale import _replicated_cache
from benchmarks.scale import KEY, STUDY, build_study
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.config import TideConfig
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.release import lifecycle, scan
from tide_core.release.known_phi_check import KnownPhiScan
from tide_core.runner import anonymize_study


@dataclass
class Pass:
    name: str
    cpu_s: float
    wall_s: float
    n_chunks_reused: int | None
    n_chunks_scanned: int | None
    all_passed: bool


def _timed(name: str, fn: Callable[[], dict[str, Any]]) -> Pass:
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    md = out["rows_accounted"].metadata
    return Pass(
        name,
        round(cpu, 2),
        round(wall, 2),
        md.get("scan/n_chunks_reused"),
        md.get("scan/n_chunks_scanned"),
        all(o.passed for o in out.values()),
    )


def _plain(wh: DuckDBWarehouse, config: TideConfig) -> dict[str, Any]:
    """The pass without chunk verdicts: every chunk scanned, nothing recorded."""
    known = KnownPhiScan(wh, config, STUDY, KEY)
    out = scan.scan_release(wh, config, STUDY, KEY, scan.SCANNED, extra=[known.add])
    out["known_phi_survives"] = known.outcome()
    return out


def bench(n_notes: int, workdir: Path) -> list[Pass]:
    db = workdir / "incremental.duckdb"
    build_study(db, n_notes)
    key_dir = workdir / "keys"
    keys = FileKeyProvider(key_dir)
    keys.create(STUDY, KEY)
    _replicated_cache(db, key_dir)
    config = TideConfig.preset("rules")
    with DuckDBWarehouse(db) as wh:
        anonymize_study(wh, STUDY, KEY, keys, config, progress=False)
        verify: Callable[[], dict[str, Any]] = lambda: lifecycle.verify_release(wh, config, STUDY, KEY)  # noqa: E731
        runs = [
            _timed("full, nothing recorded", lambda: _plain(wh, config)),
            _timed("first, recording", verify),
            _timed("second, nothing changed", verify),
        ]
        # every note of one chunk (the study's third) gets a word more in its released text
        ids = wh.sql("SELECT note_id FROM notes ORDER BY rowid LIMIT 2000 OFFSET 4000").column(0).to_pylist()
        wh.sql("UPDATE tide_deid_notes SET text = text || ' ok' WHERE list_contains(?, note_id)", [ids])
        runs.append(_timed(f"one chunk changed ({len(ids)} notes)", verify))
    return runs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=20_000)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tide-incremental-") as tmp:
        runs = bench(args.notes, Path(tmp))
    print(f"{'pass':34} {'CPU s':>7} {'wall s':>7} {'reused':>7} {'scanned':>8} passed")
    for r in runs:
        print(
            f"{r.name:34} {r.cpu_s:7.2f} {r.wall_s:7.2f} {r.n_chunks_reused!s:>7} {r.n_chunks_scanned!s:>8}"
            f" {r.all_passed}"
        )
    if args.out:
        args.out.write_text(json.dumps({"notes": args.notes, "passes": [asdict(r) for r in runs]}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
