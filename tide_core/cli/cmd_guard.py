"""``tide guard train|score|plan``: the PHI Guard on a release, and an audit stratified by richness."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

from tide_core.assurance.guard_model import GuardModel
from tide_core.assurance.guard_release_scores import score_release
from tide_core.assurance.guard_train import main as train_main
from tide_core.assurance.stratified import allocate, draw
from tide_core.cli.common import add_warehouse
from tide_core.config import TideConfig
from tide_core.engine.study_input import read_study_input
from tide_core.errors import ConfigError
from tide_core.io.open import open_warehouse
from tide_core.model_location import guard_location


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("guard", help="PHI Guard: document-level residual-PHI scores and stratified audits")
    sub = p.add_subparsers(dest="guard_command", required=True)
    t = sub.add_parser("train", help="train the guard on the synthetic training generators (about a minute)")
    t.add_argument("--out", default=None, help=f"guard directory (default {guard_location()})")
    t.add_argument("--n-docs", type=int, default=1200)
    s = sub.add_parser("score", help="score a release: held documents (review pile) and richness per patient")
    add_warehouse(s)
    s.add_argument("--study", required=True)
    s.add_argument("--key", required=True)
    s.add_argument("--guard-dir", default=None, help=f"trained guard (default {guard_location()})")
    s.add_argument("--notes-table", default=None, help="source notes table (default: notes)")
    s.add_argument("--out", required=True, help="JSON file for the decision and richness (pseudonymous refs only)")
    pl = sub.add_parser("plan", help="audit sample stratified by richness, with inclusion probabilities")
    pl.add_argument("--scores", required=True, help="JSON written by `tide guard score --out`")
    pl.add_argument("--n", type=int, required=True, help="patients to review in all")
    pl.add_argument("--strata", type=int, default=3)
    pl.add_argument("--seed", type=int, default=42)
    pl.add_argument("--out", required=True, help="JSON file for the plan and the sampled patient refs")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.guard_command == "train":
        return train_main(["--out", str(args.out or guard_location()), "--n-docs", str(args.n_docs)])
    if args.guard_command == "score":
        guard = GuardModel.load(args.guard_dir or guard_location())
        config = TideConfig.preset("rules")
        with contextlib.closing(open_warehouse(args.warehouse)) as wh:
            notes = read_study_input(wh, args.study, config, args.notes_table).notes
            result = score_release(wh, args.study, args.key, guard, {n.note_id: n.text for n in notes})
        Path(args.out).write_text(json.dumps(result.to_dict(), indent=2))
        d = result.decision
        print(
            f"guard {d.version}: {len(d.release_set)} released, {len(d.review_pile)} held for review "
            f"({d.hold_rate:.1%}); refs written to {args.out}"
        )
        return 0
    data = json.loads(Path(args.scores).read_text())
    richness = data.get("patient_richness")
    if not isinstance(richness, dict):
        raise ConfigError("E772", f"{args.scores} has no patient_richness", hint="use `tide guard score --out`")
    plan = allocate({str(k): float(v) for k, v in richness.items()}, args.n, args.strata)
    out = {**plan.to_dict(), "seed": args.seed, "guard": data.get("version"), "sample": draw(plan, args.seed)}
    Path(args.out).write_text(json.dumps(out, indent=2))
    for s in plan.strata:
        print(f"{s.name:12s} {s.population:7d} patients  sample {s.sample:5d}  p(incl) {s.inclusion_probability:.3f}")
    print(f"sampled patient refs written to {args.out}", file=sys.stderr)
    return 0
