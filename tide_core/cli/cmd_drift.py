"""``tide drift freeze|check``: freeze a validated reference, then compare batches with it."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _inputs(p) -> None:
    p.add_argument("--notes", required=True, help="JSONL of notes (gold/notes shape: note_id, text, metadata)")
    p.add_argument("--spans", help="recognizer output on those notes (predictions JSONL)")
    p.add_argument("--residual", help="residual screen hits on the released text (predictions JSONL, same note ids)")
    p.add_argument("--recognizer-fingerprint", help="fingerprint of the recognition config that made --spans")
    p.add_argument("--screen-fingerprint", help="fingerprint of the screen recognizers that made --residual")


def register(subparsers) -> None:
    p = subparsers.add_parser("drift", help="drift monitor: freeze a reference, check a batch against it")
    sub = p.add_subparsers(dest="drift_command", required=True)
    f = sub.add_parser("freeze", help="profile and calibrate a reference (aggregate statistics only)")
    _inputs(f)
    f.add_argument("--out", required=True, help="reference JSON to write")
    f.add_argument("--splits", type=int, default=40, help="calibration self-splits")
    f.add_argument("--seed", type=int, default=42)
    f.add_argument("--batch-size", type=int, help="expected batch size for calibration (default: half the reference)")
    f.add_argument("--name", default="reference")
    f.add_argument("--by", choices=("source", "site", "note_type"),
                   help="one reference per source/site/note type (groups under 30 notes get none)")
    c = sub.add_parser("check", help="compare a batch with a frozen reference")
    _inputs(c)
    c.add_argument("--reference", required=True, help="reference JSON written by `tide drift freeze`")
    c.add_argument("--out", help="write the full result as JSON here")
    c.add_argument("--fail-on", choices=("drift", "watch", "unknown", "never"), default="drift",
                   help="exit 1 when the overall band is at least this severe")
    p.set_defaults(func=run)


def _load(args):
    from tide_core.evaluation.jsonl_reader import read_jsonl_docs

    notes = read_jsonl_docs(args.notes, require_text=True).docs
    spans = ({d.note_id: list(d.spans) for d in read_jsonl_docs(args.spans).docs} if args.spans else None)
    residual = ({d.note_id: list(d.spans) for d in read_jsonl_docs(args.residual).docs}
                if args.residual else None)
    return notes, spans, residual


def run(args: argparse.Namespace) -> int:
    from tide_core.assurance.drift import (SET_FORMAT, SEVERITY, check_drift, check_drift_set, freeze_reference,
                                           freeze_reference_set, load_reference, save_reference)

    notes, spans, residual = _load(args)
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
        res_set = check_drift_set(ref, notes, spans, residual, **fps)
        print(f"overall: {res_set.band}  (per {res_set.by})")
        for value, r in res_set.results.items():
            print(f"  {res_set.by}={value}: {r.band}  " + ", ".join(f"{k}={v}" for k, v in r.lenses.items())
                  + ("  (low confidence)" if r.low_confidence else ""))
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
        print("unvalidated categories (not in the reference): "
              + "; ".join(f"{k}: {', '.join(v)}" for k, v in result.new_categories.items()))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result.to_dict(), indent=2), encoding="utf-8")
    if args.fail_on != "never" and SEVERITY[result.band] >= SEVERITY[args.fail_on]:
        return 1
    return 0
