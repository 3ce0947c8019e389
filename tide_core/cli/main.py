"""``tide`` command line: discovers ``tide_core/cli/cmd_*.py`` modules (see docs/architecture.md)."""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys

import tide_core.cli as pkg
from tide_core import __version__
from tide_core.errors import TideError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tide", description="TIDE ETL: de-identify clinical notes in your warehouse.")
    parser.add_argument("--version", action="version", version=f"tide {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging (never logs note text)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    for mod in sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if m.name.startswith("cmd_")):
        module = importlib.import_module(f"tide_core.cli.{mod}")
        module.register(sub)
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
    parser = build_parser()
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
