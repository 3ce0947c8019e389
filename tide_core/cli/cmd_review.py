"""``tide review``: serve the local review page for one study (shows PHI: loopback only)."""

from __future__ import annotations

import argparse
import signal
import sys
from types import FrameType

from tide_core.cli.common import add_warehouse
from tide_core.config import TideConfig
from tide_core.errors import ConfigError
from tide_core.io.open import open_warehouse
from tide_core.review.api import ReviewAPI
from tide_core.review.server import is_loopback, make_server
from tide_core.review.store import ReviewStore


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("review", help="review recognized spans of a study in a local web page (shows PHI)")
    add_warehouse(p)
    p.add_argument("--study", required=True, help="study whose span cache is reviewed")
    p.add_argument("--key", default=None, help="key whose released output is shown beside the original (default: none)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; keep it loopback)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")
    p.add_argument(
        "--allow-non-loopback",
        action="store_true",
        help="permit binding a non-loopback address (the page shows PHI: never expose it)",
    )
    p.add_argument("--config", default=None, help="TOML/JSON run configuration (only its table names are used)")
    p.add_argument("--notes-table", default=None, help="source notes table (default: notes)")
    p.add_argument(
        "--reviewer",
        default=None,
        help="name recorded with every decision (default: the OS user name)",
    )
    p.set_defaults(func=run)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _stop_on_ctrl_c_and_term() -> None:
    """Ctrl-C (SIGINT) and SIGTERM stop the server, even when the parent started this process
    with SIGINT ignored (a disposition children inherit): without this, such a server could only
    be killed, and a page showing PHI would stay up."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)


def run(args: argparse.Namespace) -> int:

    if not is_loopback(args.host) and not args.allow_non_loopback:
        raise ConfigError(
            "E872",
            f"refusing to serve the review page on non-loopback address {args.host}",
            hint="the page shows PHI; use --host 127.0.0.1 and an SSH tunnel, or pass "
            "--allow-non-loopback if this network is trusted for PHI",
        )
    if not 0 <= args.port <= 65535:
        raise ConfigError("E873", f"port {args.port} outside 0..65535")
    config = TideConfig.from_file(args.config) if args.config else TideConfig.preset("rules")
    wh = open_warehouse(args.warehouse)
    try:
        store = ReviewStore(
            wh, args.study, args.key, config=config, notes_table=args.notes_table, reviewer=args.reviewer
        )
        try:
            server = make_server(ReviewAPI(store), args.host, args.port)
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise ConfigError(
                "E874",
                f"cannot listen on {args.host}:{args.port} ({reason})",
                hint="pick another --port (0 picks a free one)",
            ) from None
        if not is_loopback(args.host):
            print("warning: the review page shows PHI and is reachable from other machines", file=sys.stderr)
        # the token is printed once, here, to the reviewer's terminal (never logged)
        print(
            f"reviewing study {args.study} as {store.reviewer}: {store.n_notes} note(s)"
            + (f", key {args.key}" if args.key else "")
            + f" -- open {server.login_url}  (Ctrl-C stops)",
            flush=True,
        )
        _stop_on_ctrl_c_and_term()
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("stopped", file=sys.stderr)
        finally:
            server.server_close()
    finally:
        wh.close()
    return 0
