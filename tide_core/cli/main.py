"""``tide`` command line: one table of commands, each a ``tide_core/cli/cmd_*.py`` module (see docs/architecture.md).

Only the module of the command being run is imported (through the one dotted-path loader,
:func:`tide_core.plugins.load_dotted`): the others appear in ``tide --help`` from the table, so the
help and a light command (``tide keys list``) never import torch, Ray or scikit-learn.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from tide_core import __version__
from tide_core.errors import TideError
from tide_core.plugins import load_dotted

#: command -> (module exposing ``register(subparsers)``, the help line ``tide --help`` shows).
#: ``tests/cli/test_cli_commands.py`` checks this table against every ``cmd_*`` module.
COMMANDS: dict[str, tuple[str, str]] = {
    "audit": ("tide_core.cli.cmd_audit", "plan a patient-level PHI audit and compute its exact bound"),
    "demo": ("tide_core.cli.cmd_demo", "create the synthetic demo corpus (DuckDB by default) and de-identify it"),
    "distill": ("tide_core.cli.cmd_distill", "train a student token classifier on a teacher's labels"),
    "drift": ("tide_core.cli.cmd_drift", "drift monitor: freeze a reference, check a batch against it"),
    "eval": ("tide_core.cli.cmd_eval", "score predictions against gold spans (recall, precision, CIs)"),
    "guard": ("tide_core.cli.cmd_guard", "PHI Guard: document-level residual-PHI scores and stratified audits"),
    "keys": ("tide_core.cli.cmd_keys", "create or list anonymization keys (secrets are never printed)"),
    "release": (
        "tide_core.cli.cmd_release",
        "release lifecycle: status, audit plan/record, publish, rollback",
    ),
    "review": ("tide_core.cli.cmd_review", "review recognized spans of a study in a local web page (shows PHI)"),
    "run": ("tide_core.cli.cmd_run", "recognize + anonymize a study's notes into the released tables"),
    "synth": ("tide_core.cli.cmd_synth", "generate a synthetic clinical-note corpus with gold PHI spans"),
    "train-recognizer": (
        "tide_core.cli.cmd_train_recognizer",
        "fine-tune a PHI token classifier (--default: the default model)",
    ),
}


def command_in(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names: its first word that is not an option (``tide -v run ...`` -> ``run``)."""
    return next((a for a in argv if not a.startswith("-")), None)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``tide`` parser; with ``argv``, only the command it names is loaded, else every command."""
    parser = argparse.ArgumentParser(prog="tide", description="TIDE ETL: de-identify clinical notes in your warehouse.")
    parser.add_argument("--version", action="version", version=f"tide {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging (never logs note text)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = None if argv is None else command_in(argv)
    for name, (module, help_line) in COMMANDS.items():
        if argv is None or name == wanted:
            load_dotted(f"{module}:register")(sub)
        else:
            sub.add_parser(name, help=help_line)
    return parser


#: Third-party loggers that are noisy at DEBUG/INFO (``ff3`` alone writes thousands of lines per
#: release under ``-v``); they stay at WARNING whatever the verbosity, so ``-v`` shows TIDE's own
#: debug lines.
QUIET_LOGGERS = (
    "ff3",
    "urllib3",
    "filelock",
    "fsspec",
    "asyncio",
    "httpx",
    "httpcore",
    "matplotlib",
    "PIL",
    "numba",
    "h5py",
    "transformers",
    "huggingface_hub",
    "datasets",
    "torch",
    "google",
    "grpc",
    "hpack",
    "botocore",
)


def configure_logging(verbose: bool = False) -> None:
    """Root logging to stderr (DEBUG with ``-v``, else INFO); :data:`QUIET_LOGGERS` at WARNING."""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    configure_logging(args.verbose)
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    try:
        return int(args.func(args) or 0)
    except TideError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
