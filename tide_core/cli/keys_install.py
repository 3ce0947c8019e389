"""``tide keys install``: copy keys from a mounted Kubernetes Secret into a private directory.

Run as an init container: it reads ``--from`` (the Secret volume, ``..data`` links and all, with every
check of :class:`tide_core.anonymize.keys.FileKeyProvider`) and writes ``--to`` with 0700 directories
and 0400 files owned by the pod's user; the main container then reads ``TIDE_KEY_DIR=<to>``.  Only
study and key names are printed, never a secret.
"""

from __future__ import annotations

import argparse

from tide_core.anonymize.keys import install_keys


def register_install(ks: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = ks.add_parser(
        "install",
        help="copy <study>/<key>.key|.wrapped from a mounted Secret into a private directory (0700/0400)",
    )
    p.add_argument("--from", dest="source", required=True, help="the mounted key Secret (e.g. /secret/tide-keys)")
    p.add_argument("--to", dest="target", required=True, help="the private key directory (e.g. /var/run/tide/keys)")
    p.set_defaults(func=run_install)


def run_install(args: argparse.Namespace) -> int:
    pairs = install_keys(args.source, args.target)
    print(f"installed {len(pairs)} key(s) into {args.target} (directories 0700, files 0400):")
    for study, key in pairs:
        print(f"{study}\t{key}")
    return 0
