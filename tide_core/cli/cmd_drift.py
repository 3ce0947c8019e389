"""``tide drift freeze|check``: freeze a validated reference, then compare batches with it.

Two input modes: files (``--notes`` JSONL, optional ``--spans``/``--residual``) or the
warehouse (``--warehouse URL --study S``: source notes, the span cache and, with ``--key``,
the residual screen of the released text).  ``check --record`` (warehouse mode) appends the
verdict to ``tide_drift``, which the release gate reads.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tide_core.assurance.drift import (
    SET_FORMAT,
    SEVERITY,
    check_drift,
    check_drift_set,
    freeze_reference,
    freeze_reference_set,
    load_reference,
    save_reference,
)
from tide_core.assurance.drift_table import TABLE_NAME, record_drift, warehouse_drift_inputs
from tide_core.errors import ConfigError
from tide_core.evaluation.jsonl_reader import read_jsonl_docs
from tide_core.io.open import open_warehouse


def _inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--notes", help="JSONL of notes (gold/notes shape: note_id, text, metadata)")
    p.add_argument(
        "--warehouse",
        help="read notes, cached spans and released text from this warehouse "
        "(duckdb:PATH or bigquery:PROJECT.DATASET) instead of --notes",
    )
    p.add_argument("--study", help="study to read in warehouse mode")
    p.add_argument("--key", help="release key in warehouse mode: screen its released text for residual PHI")
    p.add_argument("--spans", help="recognizer output on those notes (predictions JSONL)")
    p.add_argument("--residual", help="residual screen hits on the released text (predictions JSONL, same note ids)")
    p.add_argument("--recognizer-fingerprint", help="fingerprint of the recognition config that made --spans")
    p.add_argument("--screen-fingerprint", help="fingerprint of the screen recognizers that made --residual")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("drift", help="drift monitor: freeze a reference, check a batch against it")
    sub = p.add_subparsers(dest="drift_command", required=True)
    f = sub.add_parser("freeze", help="profile and calibrate a reference (aggregate statistics only)")
    _inputs(f)
    f.add_argument("--out", required=True, help="reference JSON to write")
    f.add_argument("--splits", type=int, default=40, help="calibration self-splits")
    f.add_argument("--seed", type=int, default=42)
    f.add_argument("--batch-size", type=int, help="expected batch size for calibration (default: half the reference)")
    f.add_argument("--name", default="reference")
    f.add_argument(
        "--by",
        choices=("source", "site", "note_type"),
        help="one reference per source/site/note type (groups under 30 notes get none)",
    )
    c = sub.add_parser("check", help="compare a batch with a frozen reference")
    _inputs(c)
    c.add_argument("--reference", required=True, help="reference JSON written by `tide drift freeze`")
    c.add_argument("--out", help="write the full result as JSON here")
    c.add_argument(
        "--record",
        action="store_true",
        help="warehouse mode: append the verdict to tide_drift for the release gate (needs --key)",
    )
    c.add_argument(
        "--fail-on",
        choices=("drift", "watch", "unknown", "never"),
        default="drift",
        help="exit 1 when the overall band is at least this severe",
    )
    p.set_defaults(func=run)


def _load_warehouse(args: argparse.Namespace) -> tuple[Any, Any, Any, Any]:

    wh = open_warehouse(args.warehouse)
    try:
        inputs = warehouse_drift_inputs(wh, args.study, args.key)
    finally:
        wh.close()
    for k in ("recognizer_fingerprint", "screen_fingerprint"):
        if getattr(args, k) is None:
            setattr(args, k, inputs[k])
    return inputs["notes"], inputs["spans"], inputs["residual"], inputs["forbidden"]


def _check_mode(args: argparse.Namespace) -> None:

    if args.warehouse and args.notes:
        raise ConfigError(
            "E757",
            "give either --notes (file mode) or --warehouse (warehouse mode), not both",
            hint="drop one of the two",
        )
    if not args.warehouse and not args.notes:
        raise ConfigError(
            "E757",
            "no input: give --notes FILE.jsonl or --warehouse URL --study S",
            hint="e.g. tide drift check --warehouse duckdb:tide.duckdb --study demo --key k1 --reference ref.json",
        )
    if args.warehouse and not args.study:
        raise ConfigError("E757", "--warehouse needs --study", hint="add --study S")
    if getattr(args, "record", False) and not (args.warehouse and args.key):
        raise ConfigError(
            "E757", "--record needs warehouse mode with --key", hint="add --warehouse URL --study S --key K"
        )


def _load(args: argparse.Namespace) -> tuple[Any, Any, Any, Any]:

    if args.warehouse:
        return _load_warehouse(args)
    notes = read_jsonl_docs(args.notes, require_text=True).docs
    spans = {d.note_id: list(d.spans) for d in read_jsonl_docs(args.spans).docs} if args.spans else None
    residual = {d.note_id: list(d.spans) for d in read_jsonl_docs(args.residual).docs} if args.residual else None
    return notes, spans, residual, []


def run(args: argparse.Namespace) -> int:

    _check_mode(args)
    notes, spans, residual, forbidden = _load(args)
    fps = {"recognizer_fingerprint": args.recognizer_fingerprint, "screen_fingerprint": args.screen_fingerprint}
    if args.drift_command == "freeze":
        print(f"calibrating on {len(notes)} reference notes ({args.splits} self-splits) ...", file=sys.stderr)
        opts = dict(n_splits=args.splits, seed=args.seed, pseudo_batch_size=args.batch_size, **fps)
        if args.by:
            ref = freeze_reference_set(notes, spans, residual, by=args.by, **opts)
            save_reference(ref, args.out)
            print(f"references per {args.by}: {', '.join(ref['references'])}")
            if ref["too_small"]:
                print(f"too small for a baseline (unvalidated): {ref['too_small']}")
        else:
            ref = freeze_reference(notes, spans, residual, name=args.name, **opts)
            save_reference(ref, args.out)
            for name, c in ref["components"].items():
                print(f"{name:22s} watch {c['watch']:.4f}  drift {c['drift']:.4f}")
        print(f"wrote {args.out}", file=sys.stderr)
        return 0
    ref = load_reference(args.reference)
    if ref["format"] == SET_FORMAT:
        if args.record:
            raise ConfigError(
                "E757",
                "--record takes a single reference, not a per-group reference set",
                hint="freeze a single reference (no --by) for the release gate",
            )
        res_set = check_drift_set(ref, notes, spans, residual, **fps)
        print(f"overall: {res_set.band}  (per {res_set.by})")
        for value, r in res_set.results.items():
            print(
                f"  {res_set.by}={value}: {r.band}  "
                + ", ".join(f"{k}={v}" for k, v in r.lenses.items())
                + ("  (low confidence)" if r.low_confidence else "")
            )
        for value, n in res_set.unvalidated.items():
            print(f"  {res_set.by}={value}: unvalidated ({n} notes, no reference of its own)")
        if args.out:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(json.dumps(res_set.to_dict(), indent=2), encoding="utf-8")
        return 1 if args.fail_on != "never" and SEVERITY[res_set.band] >= SEVERITY[args.fail_on] else 0
    result = check_drift(ref, notes, spans, residual, **fps)
    print(f"overall: {result.band}" + ("  (low confidence: fewer than 30 documents)" if result.low_confidence else ""))
    print("lenses: " + ", ".join(f"{k}={v}" for k, v in result.lenses.items()))
    print(f"measured {result.n_measured} of {len(result.components)} components")
    for c in result.components:
        val = "n/a" if c.value is None else f"{c.value:.4f}"
        extra = f"  ({c.reason})" if c.reason else ""
        print(f"  {c.lens:9s} {c.name:22s} {c.band:8s} {val:>9s}  watch {c.watch:.3f} drift {c.drift:.3f}{extra}")
    if result.new_categories:
        print(
            "unvalidated categories (not in the reference): "
            + "; ".join(f"{k}: {', '.join(v)}" for k, v in result.new_categories.items())
        )
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result.to_dict(), indent=2), encoding="utf-8")
    if args.record:
        wh = open_warehouse(args.warehouse)
        try:
            record_drift(wh, args.study, args.key, result, ref.get("name") or "reference", forbidden=forbidden)
        finally:
            wh.close()
        print(f"recorded band {result.band!r} for {args.study}/{args.key} in {TABLE_NAME}", file=sys.stderr)
    if args.fail_on != "never" and SEVERITY[result.band] >= SEVERITY[args.fail_on]:
        return 1
    return 0
