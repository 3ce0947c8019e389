"""``tide run``: recognize, cache spans, anonymize and release one study under one key."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tide_core.anonymize.keys import env_var_name, provider_from_env
from tide_core.chunk_progress import log_progress
from tide_core.cli.common import add_config, add_keys, add_warehouse, config_from_args
from tide_core.errors import KeyProviderError
from tide_core.io.open import open_warehouse
from tide_core.release.lifecycle import PENDING, set_status
from tide_core.runner import anonymize_study, recognize_study

if TYPE_CHECKING:
    from tide_core.runner import AnonymizationReport, RecognitionReport


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("run", help="recognize + anonymize a study's notes into the released tables")
    add_warehouse(p)
    p.add_argument("--study", required=True, help="study name (partition of the span cache)")
    p.add_argument("--key", required=True, help="key name (partition of the released tables)")
    p.add_argument("--stage", choices=("all", "recognize", "anonymize"), default="all")
    p.add_argument("--force", action="store_true", help="re-run recognition even for cached notes")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument(
        "--chunk-rows",
        type=int,
        default=None,
        help="notes per chunk: memory holds one chunk; each chunk is committed as it finishes and a "
        "rerun after a crash resumes after the last committed chunk (default 2000)",
    )
    add_config(p)
    add_keys(p)
    p.set_defaults(func=run)


def print_recognition(r: RecognitionReport) -> None:
    print(
        f"recognition  study={r.study} rows={r.n_rows} valid={r.n_valid} input-quarantined={r.n_quarantined} "
        f"cached={r.n_cached} recognized={r.n_recognized} failed={r.n_failed} spans={r.n_spans} "
        f"({r.notes_per_s:.1f} notes/s) fingerprint={r.fingerprint}"
    )
    if r.spans_by_label:
        print("  spans by label: " + ", ".join(f"{k}={v}" for k, v in r.spans_by_label.items()))
    for w in r.warnings:
        print(f"  warning: {w}")


def print_anonymization(a: AnonymizationReport) -> None:
    print(
        f"anonymization study={a.study} key={a.key} rows={a.n_rows} released={a.n_released} "
        f"quarantined={a.n_quarantined} spans={a.n_spans} ({a.notes_per_s:.1f} notes/s) {a.anonymizer}"
    )
    if a.quarantined_by_code:
        print("  quarantined by code: " + ", ".join(f"{k}={v}" for k, v in a.quarantined_by_code.items()))


def run(args: argparse.Namespace) -> int:

    config = config_from_args(args)
    provider = provider_from_env(args.key_dir)
    if args.stage in ("all", "anonymize") and not provider.has(args.study, args.key):
        raise KeyProviderError(
            "E108",
            f"no key {args.key!r} for study {args.study!r}",
            hint=f"create one with `tide keys new --study {args.study} --key {args.key}` "
            f"or set {env_var_name(args.study, args.key)}",
        )
    wh = open_warehouse(args.warehouse)
    try:
        if args.stage in ("all", "recognize"):
            print_recognition(
                recognize_study(
                    wh,
                    args.study,
                    config,
                    notes_table=args.notes_table,
                    progress=not args.no_progress,
                    force=args.force,
                    chunk_rows=args.chunk_rows,
                    on_chunk=log_progress,
                )
            )
        if args.stage in ("all", "anonymize"):
            # the candidate changes: an earlier decision no longer covers it (researchers keep what
            # was published; `tide release publish` decides the new candidate)
            set_status(wh, args.study, args.key, PENDING, "anonymization in progress", config.tables.releases)
            print_anonymization(
                anonymize_study(
                    wh,
                    args.study,
                    args.key,
                    provider,
                    config,
                    notes_table=args.notes_table,
                    progress=not args.no_progress,
                    chunk_rows=args.chunk_rows,
                    on_chunk=log_progress,
                )
            )
    finally:
        wh.close()
    return 0
