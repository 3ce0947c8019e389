"""``tide synth``: write a synthetic gold corpus (notes.jsonl) and its patients table (patients.csv)."""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path
from typing import Any

from tide_core.errors import ConfigError
from tide_core.evaluation.gold_io import write_gold
from tide_core.synth import PATIENT_COLUMNS, generate

DEFAULT_N = {"demo": 150, "train": 5000, "heldout": 1000}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("synth", help="generate a synthetic clinical-note corpus with gold PHI spans")
    p.add_argument("--out", required=True, help="output directory (notes.jsonl + patients.csv)")
    p.add_argument(
        "--kind",
        choices=("demo", "train", "heldout"),
        default="demo",
        help="demo (both template families), train, or heldout (disjoint templates and vocabulary)",
    )
    p.add_argument(
        "--n",
        type=int,
        default=None,
        help=f"number of notes (default: {', '.join(f'{k} {v}' for k, v in DEFAULT_N.items())})",
    )
    p.add_argument("--seed", type=int, default=None, help="random seed (default 7 for demo, 0 otherwise)")
    p.set_defaults(func=run)


def write_patients_csv(path: Path, patients: list[dict[str, Any]]) -> None:

    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(PATIENT_COLUMNS))
        w.writeheader()
        for row in patients:
            w.writerow({k: row.get(k, "") for k in PATIENT_COLUMNS})


def run(args: argparse.Namespace) -> int:

    n = DEFAULT_N[args.kind] if args.n is None else args.n
    if n < 1:
        raise ConfigError("E612", f"--n must be a positive number of notes, got {n}", hint="e.g. --n 500")
    seed = (7 if args.kind == "demo" else 0) if args.seed is None else args.seed
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    corpus = generate(args.kind, n, seed)
    write_gold(out / "notes.jsonl", corpus.gold)
    write_patients_csv(out / "patients.csv", corpus.patients)
    n_spans = sum(len(d.spans) for d in corpus.gold)
    print(
        f"synth {args.kind} seed={seed}: {len(corpus.gold)} notes, {len(corpus.patients)} patients, "
        f"{n_spans} gold spans -> {out}",
        file=sys.stderr,
    )
    print(str(out / "notes.jsonl"))
    return 0
