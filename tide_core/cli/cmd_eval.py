"""``tide eval``: span-level evaluation of predictions against a gold corpus."""

from __future__ import annotations

import argparse
import json
import sys

from tide_core.config import TideConfig
from tide_core.errors import ConfigError
from tide_core.evaluation.crosswalk import identity_crosswalk, load_crosswalk
from tide_core.evaluation.decomposition import decompose_recall_drop
from tide_core.evaluation.evaluate import Predictions, corpus_counts, evaluate
from tide_core.evaluation.loading import load_cached_predictions, load_gold, load_predictions
from tide_core.evaluation.report import to_markdown, write_report


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("eval", help="score predictions against gold spans (recall, precision, CIs)")
    p.add_argument("--gold", required=True, help="gold corpus: JSONL file, BRAT folder or i2b2 XML folder")
    p.add_argument("--pred", help="predictions JSONL (system A); or use --warehouse/--study")
    p.add_argument(
        "--warehouse",
        help="score the span cache directly: duckdb:PATH[#SCHEMA] or "
        "bigquery:PROJECT.DATASET (system A; needs --study, replaces --pred)",
    )
    p.add_argument("--study", help="study whose cached spans are system A (with --warehouse)")
    p.add_argument("--config", help="TOML/JSON run configuration, for custom table names (with --warehouse)")
    p.add_argument("--pred-b", help="predictions JSONL of a second system: adds the paired bootstrap test")
    p.add_argument("--format", choices=("jsonl", "brat", "i2b2"), default="jsonl", help="gold format")
    p.add_argument("--tau", type=float, default=0.8, help="overlap threshold (fraction of the union)")
    p.add_argument("--crosswalk", help="label crosswalk (.json/.csv, or 'i2b2'); i2b2 format defaults to 'i2b2'")
    p.add_argument(
        "--label-set",
        choices=("fine", "coarse"),
        default="fine",
        help="score on TIDE labels (fine) or the coarse set NAME/DATE/AGE/ID/CONTACT/LOCATION, "
        "applied to gold and predictions; a crosswalk may then target coarse labels",
    )
    p.add_argument(
        "--split-match",
        action="store_true",
        help="a gold span also counts as found when >= 2 same-label predictions, each mostly inside "
        "it, together cover >= tau of it",
    )
    p.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (0 = no intervals)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--external-gold", help="second corpus (e.g. external site) for the recall-drop decomposition")
    p.add_argument("--external-pred", help="system A's predictions on --external-gold")
    p.add_argument("--external-format", choices=("jsonl", "brat", "i2b2"), default="jsonl")
    p.add_argument("--out", help="write eval_report.json/.md and recall_by_category.png here")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:

    if (args.pred is None) == (args.warehouse is None):
        raise ConfigError(
            "E720",
            "give exactly one of --pred and --warehouse",
            hint="--pred FILE scores a predictions JSONL; --warehouse URL --study S scores the span cache",
        )
    if (args.warehouse is None) != (args.study is None):
        raise ConfigError(
            "E720",
            "--warehouse and --study go together",
            hint="--warehouse duckdb:PATH --study S scores study S's cached spans",
        )
    label_set = args.label_set
    if args.crosswalk:
        xw = load_crosswalk(args.crosswalk, label_set)
    elif args.format == "i2b2":
        xw = load_crosswalk("i2b2", label_set)
    elif label_set != "fine":
        xw = identity_crosswalk(label_set)  # lets gold/pred files use the coarse labels themselves
    else:
        xw = None
    print(f"reading gold ({args.format}) ...", file=sys.stderr)
    gold = load_gold(args.gold, args.format, xw)
    cached = None
    if args.warehouse:
        tables = None
        if args.config:
            tables = TideConfig.from_file(args.config).tables
        cached = load_cached_predictions(args.warehouse, args.study, gold=gold.docs, tables=tables, crosswalk=xw)
        print(
            f"read the span cache of study {args.study!r}: {cached.n_recognized} recognized notes"
            + (f", {cached.n_failed} failed (their gold spans count as misses)" if cached.n_failed else ""),
            file=sys.stderr,
        )
        pred_a: Predictions = cached.spans
    else:
        pred_a = load_predictions(args.pred, xw).docs
    pred_b = load_predictions(args.pred_b, xw) if args.pred_b else None
    if gold.issues:
        print(f"gold reader issues: {gold.issue_counts()} (see the JSON report)", file=sys.stderr)
    print(f"scoring {len(gold.docs)} documents ...", file=sys.stderr)
    report = evaluate(
        gold.docs,
        pred_a,
        pred_b=pred_b.docs if pred_b else None,
        tau=args.tau,
        n_resamples=args.resamples,
        seed=args.seed,
        split=args.split_match,
        label_set=label_set,
    )
    report.reader_issues = gold.issue_counts()
    report.excluded_labels = dict(gold.excluded_labels)
    report.crosswalk = xw.name if xw else None
    out = report.to_dict()
    if cached is not None:
        out["span_cache"] = cached.to_dict()
    if args.external_gold:
        if not args.external_pred:
            raise ConfigError(
                "E718",
                "--external-gold needs --external-pred",
                hint="pass system A's predictions on the external corpus",
            )
        ext_xw = xw or (load_crosswalk("i2b2", label_set) if args.external_format == "i2b2" else None)
        ext_gold = load_gold(args.external_gold, args.external_format, ext_xw)
        ext_pred = load_predictions(args.external_pred, ext_xw)
        dec = decompose_recall_drop(
            report.primary.table,
            corpus_counts(
                ext_gold.docs, ext_pred.docs, args.tau, report.labels, split=args.split_match, label_set=label_set
            ),
        )
        out["recall_drop"] = dec.to_dict()
    if args.out:
        paths = write_report(report, args.out)
        if "recall_drop" in out or "span_cache" in out:
            paths["json"].write_text(json.dumps(out, indent=2), encoding="utf-8")
        print(f"wrote {', '.join(str(p) for p in paths.values())}", file=sys.stderr)
    md = to_markdown(report)
    if "recall_drop" in out:
        d = out["recall_drop"]
        md += (
            f"\nRecall drop (this corpus − external): {d['drop']:.3f} = within-category "
            f"{d['within_category_recall']:.3f} + category mix {d['category_mix']:.3f}\n"
        )
    sys.stdout.write(md)
    return 0
