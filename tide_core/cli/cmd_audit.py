"""``tide audit plan|bound|sentence|record|gate``: size, draw, record and judge a patient-level PHI audit.

``record`` and ``gate`` work on audit frames, exactly as ``tide release audit record`` and the
release gate do (tide_core.release.evidence): a round names the frame it reviewed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

from tide_core.assurance.audit import buckets_from_notes, plan_audit, release_sentence, sample_patients
from tide_core.assurance.audit_strata import parse_leaks, stratified_plan, stratified_records
from tide_core.assurance.audit_table import AuditRecord
from tide_core.assurance.bounds import audit_bound
from tide_core.assurance.gate import ReleaseGatePolicy
from tide_core.cli.common import add_warehouse
from tide_core.errors import ConfigError
from tide_core.evaluation.jsonl_reader import read_jsonl_docs
from tide_core.io.open import open_warehouse
from tide_core.release import evidence
from tide_core.store.tables import TableNames


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("audit", help="plan a patient-level PHI audit and compute its exact bound")
    sub = p.add_subparsers(dest="audit_command", required=True)
    pl = sub.add_parser("plan", help="patients to review per bucket (site x source x note type) and a seeded draw")
    pl.add_argument("--notes", help="JSONL of the notes to be released (patient_id + metadata)")
    pl.add_argument(
        "--warehouse",
        help="stratify the sample of a release by PHI Guard richness instead (needs --study, --key and the "
        "guard scores the release step wrote); with --n patients per bucket",
    )
    pl.add_argument("--study")
    pl.add_argument("--key")
    pl.add_argument("--n", type=int, default=None, help="warehouse mode: patients to review per bucket")
    pl.add_argument("--strata", type=int, default=3, help="warehouse mode: richness strata per bucket")
    pl.add_argument("--target", type=float, default=0.01, help="leak rate to bound (default 0.01 = 1%%)")
    pl.add_argument("--confidence", type=float, default=0.95)
    pl.add_argument("--max-leaks", type=int, default=0, help="leaks the audit rule allows (0: 299 patients; 1: 473)")
    pl.add_argument("--seed", type=int, default=42)
    pl.add_argument("--out", help="write the plan and the sampled patient ids (JSON) here; ids never go to stdout")
    b = sub.add_parser("bound", help="exact (Clopper-Pearson) upper bound for k leaks in n patients")
    s = sub.add_parser("sentence", help="the release sentence for an audit result")
    for q in (b, s):
        q.add_argument("--n", type=int, required=True, help="patients reviewed")
        q.add_argument("--leaks", type=int, required=True, help="patients with a leaked identifier")
        q.add_argument("--confidence", type=float, default=0.95)
    b.add_argument("--target", type=float, help="also say whether the bound supports this rate")
    s.add_argument("--population", default="this release", help='what was sampled, e.g. "the site A progress notes"')

    r = sub.add_parser("record", help="append one audit round of a frame to tide_audits (see tide release audit)")
    add_warehouse(r)
    for name in ("--study", "--key"):
        r.add_argument(name, required=True)
    r.add_argument("--frame", help="the audit frame reviewed (`tide release audit plan` prints its id)")
    r.add_argument("--bucket", help="with --plan: the plan's bucket whose strata were reviewed")
    r.add_argument("--n", type=int, help="patients reviewed")
    r.add_argument("--leaks", type=int, help="patients with a leaked identifier")
    r.add_argument("--plan", help="a stratified plan (`tide audit plan --warehouse --out`): record its strata")
    r.add_argument("--leaks-by-stratum", help="with --plan: leaks per stratum, e.g. richness-1=0,richness-2=1")
    r.add_argument("--confidence", type=float, default=0.95)
    r.add_argument("--reviewer", default="", help="reviewer name or role (no patient information)")
    g = sub.add_parser("gate", help="the release gate on the release's content: audit evidence + optional drift")
    add_warehouse(g)
    g.add_argument("--study", required=True)
    g.add_argument("--key", required=True)
    g.add_argument("--drift", help="JSON written by `tide drift check --out` for this batch")
    g.add_argument("--target", type=float, default=0.01)
    g.add_argument("--confidence", type=float, default=0.95)
    g.add_argument("--population", help="what the release is, for the sentence")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:

    if args.audit_command == "bound":
        bound = audit_bound(args.n, args.leaks, args.confidence)
        out = bound.to_dict()
        if args.target is not None:
            out["target_rate"] = args.target
            out["supports_target"] = bound.supports(args.target)
        print(json.dumps(out, indent=2))
        return 0
    if args.audit_command == "sentence":
        print(release_sentence(audit_bound(args.n, args.leaks, args.confidence), args.population))
        return 0
    if args.audit_command in ("record", "gate"):
        return _warehouse_command(args)
    if args.warehouse:
        return _stratified_plan(args)
    if not args.notes:
        raise ConfigError(
            "E778", "tide audit plan needs --notes FILE or --warehouse URL", hint="see tide audit plan -h"
        )

    notes = read_jsonl_docs(args.notes).docs
    buckets = buckets_from_notes(notes)
    plan = plan_audit(buckets, args.target, args.confidence, args.max_leaks)
    print(
        f"{len(notes)} notes, {len(buckets)} buckets; rule: at most {plan.max_leaks} leaks in "
        f"{plan.required_per_bucket} patients per bucket supports < {plan.target_rate:g} at {plan.confidence:g}",
        file=sys.stderr,
    )
    print(f"{'bucket':40s} {'patients':>9s} {'sample':>7s}  census")
    for bp in plan.buckets:
        print(f"{bp.bucket:40s} {bp.n_patients:9d} {bp.n_sample:7d}  {'yes' if bp.census else 'no'}")
    print(f"total patients to review: {plan.total_sample}")
    if args.out:
        doc = plan.to_dict()
        doc["seed"] = args.seed
        doc["sample"] = sample_patients(buckets, plan, args.seed)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(doc, indent=2), encoding="utf-8")
        print(f"wrote the plan and sampled patient ids to {args.out}", file=sys.stderr)
    return 0


def _stratified_plan(args: argparse.Namespace) -> int:
    """The audit sample of a release, stratified by PHI Guard richness (refs to --out only)."""
    if not (args.study and args.key and args.n):
        raise ConfigError("E778", "tide audit plan --warehouse needs --study, --key and --n", hint="add them")
    with contextlib.closing(open_warehouse(args.warehouse)) as wh:
        plan = stratified_plan(wh, TableNames(), args.study, args.key, args.n, args.strata, args.seed)
    print(f"release {args.study}/{args.key}, guard {plan['guard']}: sample stratified by richness", file=sys.stderr)
    print(f"{'bucket':40s} {'stratum':12s} {'patients':>9s} {'sample':>7s}  p(incl)")
    for bucket, b in plan["buckets"].items():
        for s in b["strata"]:
            print(
                f"{bucket:40s} {s['name']:12s} {s['population']:9d} {s['sample']:7d}  {s['inclusion_probability']:.3f}"
            )
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(plan, indent=2), encoding="utf-8")
        print(f"wrote the plan and sampled patient refs to {args.out}", file=sys.stderr)
    return 0


def _records(args: argparse.Namespace) -> list[AuditRecord]:
    """The rounds to record: one per stratum of a stratified plan, else one simple round."""
    if args.plan:
        if not (args.leaks_by_stratum and args.bucket):
            raise ConfigError(
                "E778", "--plan needs --bucket and --leaks-by-stratum", hint="e.g. richness-1=0,richness-2=0"
            )
        plan = json.loads(Path(args.plan).read_text(encoding="utf-8"))
        if (plan.get("study"), plan.get("key")) != (args.study, args.key):
            raise ConfigError("E778", "the plan is for another release", hint="check --study/--key and --plan")
        leaks = parse_leaks(args.leaks_by_stratum)
        return stratified_records(plan, args.bucket, leaks, args.confidence, args.reviewer)
    if args.n is None or args.leaks is None:
        raise ConfigError("E778", "tide audit record needs --n and --leaks (or --plan)", hint="see -h")
    return [AuditRecord.create(args.study, args.key, "", args.n, args.leaks, args.confidence, args.reviewer)]


def _warehouse_command(args: argparse.Namespace) -> int:
    names = TableNames()
    with contextlib.closing(open_warehouse(args.warehouse)) as wh:
        if args.audit_command == "record":
            if not args.frame:
                raise ConfigError(
                    "E938",
                    "an audit round must name the frame (the exact content) it reviewed",
                    hint=f"plan it with `tide release audit plan --study {args.study} --key {args.key}` and pass "
                    "--frame with one of the frame ids it prints",
                )
            for rec in _records(args):
                out = evidence.record_round(
                    wh, names, args.study, args.key, args.frame, rec.n_patients_sampled, rec.n_leaks,
                    reviewer=rec.reviewer, confidence=rec.confidence, stratum=rec.stratum,
                    stratum_population=rec.stratum_population,
                )  # fmt: skip
                print(
                    f"recorded {out.n_leaks} leaks in {out.n_patients_sampled} patients of frame {out.frame_id}"
                    + (f" stratum {out.stratum} of {out.stratum_population}" if out.stratum else "")
                )
            return 0
        drift = json.loads(Path(args.drift).read_text(encoding="utf-8")) if args.drift else None
        policy = ReleaseGatePolicy(target_rate=args.target, confidence=args.confidence)
        decision = evidence.evaluate_evidence(
            evidence.candidate_rows(wh, names, args.study, args.key),
            evidence.frames(wh, names, args.study, args.key),
            evidence.audit_records(wh, names, args.study, args.key),
            policy,
            (drift or {}).get("band"),
            population=args.population or f"release {args.study}/{args.key}",
        )
    print("PASSED" if decision.passed else ("AWAITING AUDIT" if decision.awaiting_audit else "BLOCKED"))
    for reason in decision.reasons:
        print(f"  - {reason}")
    if decision.statement:
        print(decision.statement)
    return 0 if decision.passed else 1
