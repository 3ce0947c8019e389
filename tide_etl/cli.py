"""``tide-etl``: manage the Dagster partitions of TIDE (tide_core stays free of Dagster).

    tide-etl partitions list
    tide-etl partitions add-study STUDY [STUDY ...]
    tide-etl partitions add-key KEY [--study S ...]     # --study: require that secret to exist
    tide-etl partitions remove-study STUDY | remove-key KEY
    tide-etl partitions discover                        # what the sensor would add

Uses the Dagster instance of $DAGSTER_HOME (the same one `dagster dev` uses).  Also runnable as
``python -m tide_etl``.  Exit codes: 0 ok, 2 a TIDE error (printed as one line).
"""

from __future__ import annotations

import argparse
import sys

import dagster as dg

from tide_core.anonymize.keys import provider_from_env
from tide_core.errors import KeyProviderError, TideError
from tide_etl.partitions import KEY, STUDY, add_keys, add_studies
from tide_etl.resources import default_resources, resolved
from tide_etl.sensors import partition_requests


def _instance():
    """The $DAGSTER_HOME instance, as a context manager (disposed after the command)."""
    return dg.DagsterInstance.get()


def _cmd_list(args) -> int:

    with _instance() as inst:
        print("studies:", " ".join(inst.get_dynamic_partitions(STUDY)) or "-")
        print("keys:   ", " ".join(inst.get_dynamic_partitions(KEY)) or "-")
    return 0


def _cmd_add_study(args) -> int:

    with _instance() as inst:
        added = add_studies(inst, args.study)
    print(
        f"added studies: {' '.join(added) or '-'} (already present: "
        f"{' '.join(sorted(set(args.study) - set(added))) or '-'})"
    )
    return 0


def _cmd_add_key(args) -> int:

    provider = provider_from_env(args.key_dir)
    for study in args.study or ():
        if not provider.has(study, args.key):
            raise KeyProviderError(
                "E110",
                f"no key secret for study {study!r}, key {args.key!r}",
                hint=f"create it first: tide keys new --study {study} --key {args.key}",
            )
    with _instance() as inst:
        added = add_keys(inst, [args.key])
    print(f"added key: {' '.join(added) or '- (already present)'}")
    return 0


def _cmd_remove(dim: str):
    def run(args) -> int:
        name = getattr(args, dim)
        with _instance() as inst:
            if name not in inst.get_dynamic_partitions(dim):
                print(f"{dim} {name!r} is not a partition", file=sys.stderr)
                return 1
            inst.delete_dynamic_partition(dim, name)
        print(f"removed {dim} partition {name!r} (warehouse rows are kept)")
        return 0

    return run


def _cmd_discover(args) -> int:

    res = {name: resolved(r) for name, r in default_resources().items()}  # the settings the runs resolve
    with _instance() as inst:
        studies, keys = partition_requests(inst, res["warehouse"], res["tide_config"], res["key_provider"])
        print("new studies:", " ".join(studies) or "-")
        print("new keys:   ", " ".join(keys) or "-")
        if args.add:
            add_studies(inst, studies)
            add_keys(inst, keys)
            print("added")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tide-etl", description="TIDE Dagster partitions")
    sub = p.add_subparsers(dest="group", required=True)
    parts = sub.add_parser("partitions", help="study and key partitions").add_subparsers(dest="cmd", required=True)
    parts.add_parser("list", help="list study and key partitions").set_defaults(func=_cmd_list)
    a = parts.add_parser("add-study", help="add study partitions")
    a.add_argument("study", nargs="+")
    a.set_defaults(func=_cmd_add_study)
    k = parts.add_parser("add-key", help="add a key partition (key versions are shared by studies)")
    k.add_argument("key")
    k.add_argument("--study", action="append", help="require the secret of this (study, key) to exist")
    k.add_argument("--key-dir", default=None, help="key directory (default $TIDE_KEY_DIR or ./.tide/keys)")
    k.set_defaults(func=_cmd_add_key)
    r = parts.add_parser("remove-study")
    r.add_argument("study")
    r.set_defaults(func=_cmd_remove("study"))
    r = parts.add_parser("remove-key")
    r.add_argument("key")
    r.set_defaults(func=_cmd_remove("key"))
    d = parts.add_parser("discover", help="studies in the warehouse and keys with secrets not yet partitions")
    d.add_argument("--add", action="store_true", help="add them")
    d.set_defaults(func=_cmd_discover)
    return p


def main(argv: list[str] | None = None) -> int:

    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except TideError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
