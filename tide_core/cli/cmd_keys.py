"""``tide keys``: create, list and install key versions (the secrets themselves are never printed)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tide_core.anonymize.keys import FileKeyProvider, provider_from_env
from tide_core.cli.common import add_keys
from tide_core.cli.keys_install import register_install

if TYPE_CHECKING:
    from tide_core.anonymize.keys import FileKeyProvider


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("keys", help="create or list anonymization keys (secrets are never printed)")
    ks = p.add_subparsers(dest="keys_command", metavar="ACTION", required=True)
    new = ks.add_parser("new", help="create a new key version for a study (file with 0600 permissions)")
    new.add_argument("--study", required=True)
    new.add_argument("--key", required=True)
    add_keys(new)
    new.set_defaults(func=run_new)
    ls = ks.add_parser("list", help="list (study, key) pairs the key directory holds")
    add_keys(ls)
    ls.set_defaults(func=run_list)
    register_install(ks)


def _file_provider(args: argparse.Namespace) -> FileKeyProvider:

    provider = provider_from_env(args.key_dir).providers[0]
    assert isinstance(provider, FileKeyProvider)  # provider_from_env puts the key directory first
    return provider


def run_new(args: argparse.Namespace) -> int:
    path = _file_provider(args).create(args.study, args.key)
    print(f"created key {args.key!r} for study {args.study!r} at {path} (mode 0600)")
    return 0


def run_list(args: argparse.Namespace) -> int:
    provider = _file_provider(args)
    pairs = provider.available()
    if not pairs:
        print(f"no keys under {provider.root}")
    for study, key in pairs:
        print(f"{study}\t{key}")
    return 0
