"""Nightly anonymization does work proportional to what changed: one study released three times.

``python -m benchmarks.incremental_release`` builds a study of demo-like notes
(:func:`benchmarks.scale.build_study`), recognizes it once (``tide run --stage recognize``, not
timed), then times ``tide run --stage anonymize`` in a child process three times:

1. ``first``: every chunk anonymized;
2. ``unchanged``: nothing changed since (every chunk kept);
3. ``one_chunk``: after ``--changed`` notes of one chunk got new text and were recognized again
   (recognition not timed).

For each: wall seconds, CPU seconds of the child (user + system, ``wait4``), peak RSS, and the
chunks kept and anonymized (the run's ``tide_runs`` row).  Results are printed and written as
JSON (``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from benchmarks.scale import KEY, STUDY, _cli, build_study
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.io.duckdb_warehouse import DuckDBWarehouse


def _tide_run(db: Path, key_dir: Path, chunk_rows: int, stage: str) -> dict[str, Any]:
    """``tide run --stage STAGE`` in a child: wall and CPU seconds, peak RSS."""
    cmd = _cli(db, key_dir, chunk_rows, ["--stage", stage])
    log_path = db.with_suffix(f".{stage}.{time.time_ns()}.log")
    t0 = time.perf_counter()
    with open(log_path, "w") as log_file:
        proc = subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.stderr.write(log_path.read_text()[-3000:])
        raise SystemExit(f"tide run --stage {stage} failed")
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mib": round(usage.ru_maxrss / 1024.0, 1),
    }


def _last_run(db: Path) -> dict[str, Any]:
    with DuckDBWarehouse(db) as wh:
        rows = wh.read_table("tide_runs", where={"study": STUDY, "key": KEY, "stage": "anonymization"}).to_pylist()
    last = max(rows, key=lambda r: r["finished_at"])
    return {"n_chunks": last["n_chunks"], "n_chunks_kept": last["n_cached"], "n_released": last["n_released"]}


def change_notes(db: Path, chunk: int, chunk_rows: int, n: int) -> list[str]:
    """Give ``n`` notes of chunk ``chunk`` new text (the table rewritten in the same order)."""
    with DuckDBWarehouse(db) as wh:
        table = wh.read_table("notes")
        rows = table.to_pylist()
        changed = []
        for i in range(chunk * chunk_rows, chunk * chunk_rows + n):
            rows[i] = dict(rows[i], text=rows[i]["text"] + " Follow-up arranged.")
            changed.append(rows[i]["note_id"])
        wh.replace_table("notes", pa.Table.from_pylist(rows, schema=table.schema))
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="time three anonymization runs: first, unchanged, one chunk changed")
    ap.add_argument("--notes", type=int, default=20_000)
    ap.add_argument("--chunk-rows", type=int, default=2000)
    ap.add_argument("--changed", type=int, default=20, help="notes changed in one chunk before the third run")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--reuse", action="store_true", help="keep the recognized study already in --workdir")
    args = ap.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="tide_incremental_"))
    workdir.mkdir(parents=True, exist_ok=True)
    db, key_dir = workdir / "study.duckdb", workdir / "keys"
    result: dict[str, Any] = {"notes": args.notes, "chunk_rows": args.chunk_rows, "cpu_count": os.cpu_count()}
    if not (args.reuse and db.exists()):
        for p in (db, db.with_suffix(".duckdb.wal")):
            p.unlink(missing_ok=True)
        build_study(db, args.notes)
        result["recognition"] = _tide_run(db, key_dir, args.chunk_rows, "recognize")
    else:  # the recognized study kept; its candidate and anonymization ledger removed (a first release)
        with DuckDBWarehouse(db) as wh:
            for name in ("tide_deid_notes", "tide_released_spans", "tide_quarantine", "tide_runs"):
                wh.delete(name, {"study": STUDY, "key": KEY})
    keys = FileKeyProvider(key_dir)
    if not keys.has(STUDY, KEY):
        keys.create(STUDY, KEY)
    result["first"] = {**_tide_run(db, key_dir, args.chunk_rows, "anonymize"), **_last_run(db)}
    result["unchanged"] = {**_tide_run(db, key_dir, args.chunk_rows, "anonymize"), **_last_run(db)}
    chunk = min(4, max(0, args.notes // args.chunk_rows - 1))
    change_notes(db, chunk, args.chunk_rows, args.changed)
    result["rerecognition"] = _tide_run(db, key_dir, args.chunk_rows, "recognize")
    result["one_chunk"] = {**_tide_run(db, key_dir, args.chunk_rows, "anonymize"), **_last_run(db)}
    result["load_avg"] = os.getloadavg()[0]
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
