"""``tide release status|audit plan|audit record|publish|rollback``: the release lifecycle on the
command line, running the same code as Dagster's ``release_summary`` (tide_core.release)."""

from __future__ import annotations

import argparse
import contextlib
import getpass
import json
import os
import sys
from pathlib import Path
from typing import Any

from tide_core.assurance.gate import ReleaseGatePolicy
from tide_core.assurance.gate_policy import apply_override, load_gate_policy
from tide_core.cli.common import add_config, add_warehouse, config_from_args
from tide_core.config import TideConfig
from tide_core.io.open import open_warehouse
from tide_core.release import evidence, lifecycle, publish
from tide_core.store.tables import TableNames

#: exit status of ``tide release publish``: published, blocked, awaiting audit
EXIT_PUBLISHED, EXIT_BLOCKED, EXIT_AWAITING = 0, 1, 3


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("release", help="release lifecycle: status, audit plan/record, publish, rollback")
    sub = p.add_subparsers(dest="release_command", required=True)

    def common(q: argparse.ArgumentParser, tables: bool = True) -> None:
        add_warehouse(q)
        q.add_argument("--study", required=True)
        q.add_argument("--key", required=True)
        if tables:
            q.add_argument("--config", default=None, help="run configuration (for its table names)")

    st = sub.add_parser("status", help="the candidate's status, the version researchers see, and the history")
    common(st)
    au = sub.add_parser("audit", help="plan an audit of the content no round covers, or record a round")
    asub = au.add_subparsers(dest="audit_command", required=True)
    pl = asub.add_parser("plan", help="write audit frames (exactly which rows are audited) and draw the sample")
    common(pl)
    pl.add_argument("--target", type=float, default=0.01, help="leak rate to bound (default 0.01)")
    pl.add_argument("--confidence", type=float, default=0.95)
    pl.add_argument("--max-leaks", type=int, default=0, help="leaks the audit rule allows per frame")
    pl.add_argument("--seed", type=int, default=42)
    pl.add_argument("--all", action="store_true", help="audit all content again, not only what no round covers")
    pl.add_argument("--out", help="write the plan with the sampled patient refs (JSON) here")
    rec = asub.add_parser("record", help="record one reviewed round of a frame in tide_audits")
    common(rec)
    rec.add_argument("--frame", required=True, help="a frame id printed by `tide release audit plan`")
    rec.add_argument("--n", type=int, required=True, help="patients reviewed")
    rec.add_argument("--leaks", type=int, required=True, help="patients with a leaked identifier")
    rec.add_argument("--reviewer", required=True, help="reviewer name or role (no patient information)")
    rec.add_argument("--confidence", type=float, default=0.95)
    pu = sub.add_parser("publish", help="verify, gate and publish the candidate as a new version")
    common(pu, tables=False)
    add_config(pu)
    add_policy(pu)
    pu.add_argument("--allow-withdrawn", action="store_true", help="publish content that was rolled back before")
    rb = sub.add_parser("rollback", help="point researchers back at an earlier published version")
    common(rb)
    rb.add_argument("--to", default=None, help="the version to show (default: the one before the current)")
    rb.add_argument("--allow-withdrawn", action="store_true", help="roll back to a version that was withdrawn")
    p.set_defaults(func=run)


def add_policy(p: argparse.ArgumentParser) -> None:
    """The gate policy options: the deployment's file, and overrides (a weakening needs --approval)."""
    p.add_argument("--policy-file", default=None, help="gate policy TOML (default $TIDE_GATE_POLICY, else built in)")
    p.add_argument("--target", type=float, default=None, help="override the policy's target rate")
    p.add_argument("--confidence", type=float, default=None, help="override the policy's confidence")
    p.add_argument("--approval", default=None, help="named approval of an override that weakens the policy")


def policy_from_args(args: argparse.Namespace) -> ReleaseGatePolicy:
    base = load_gate_policy(args.policy_file or os.environ.get("TIDE_GATE_POLICY") or None)
    return apply_override(base, target_rate=args.target, confidence=args.confidence, approval=args.approval)


def _tables(args: argparse.Namespace) -> TableNames:
    """The configured table names (``--config``), else the defaults."""
    return TideConfig.from_file(args.config).tables if args.config else TableNames()


def _actor() -> str:
    with contextlib.suppress(Exception):
        return f"cli:{getpass.getuser()}"
    return "cli"


def run(args: argparse.Namespace) -> int:
    handlers = {"status": _status, "audit": _audit, "publish": _publish, "rollback": _rollback}
    with contextlib.closing(open_warehouse(args.warehouse)) as wh:
        return int(handlers[args.release_command](wh, args))


def _status(wh: Any, args: argparse.Namespace) -> int:
    names = _tables(args)
    row = lifecycle.read_release(wh, args.study, args.key, names.releases)
    seen = publish.published_version(wh, names, args.study, args.key)
    print(f"release {args.study}/{args.key}")
    if row is None:
        print("  candidate: no release decided yet (tide release publish)")
    else:
        print(f"  candidate: {row['status']} (content {row.get('content_fingerprint') or '-'})")
        print(f"  released {row.get('n_released')} of {row.get('n_in')} rows, quarantined {row.get('n_quarantined')}")
        print(
            f"  gate policy: {row.get('gate_policy') or '-'}"
            + (f", approval: {row['gate_approval']}" if row.get("gate_approval") else "")
        )
        for reason in filter(None, (row.get("gate_reasons") or "").split("; ")):
            print(f"  - {reason}")
    if seen is None:
        print("  researchers see: nothing published")
    else:
        print(f"  researchers see: {seen['version']} ({seen['n_notes']} notes, published {seen['published_at']})")
    for h in publish.history(wh, names, args.study, args.key):
        print(f"  {h['decided_at']:%Y-%m-%d %H:%M:%S} {h['action']:8s} {h['version']:6s} {h['n_notes']} notes")
    return 0


def _audit(wh: Any, args: argparse.Namespace) -> int:
    names = _tables(args)
    if args.audit_command == "record":
        rec = evidence.record_round(
            wh,
            names,
            args.study,
            args.key,
            args.frame,
            args.n,
            args.leaks,
            reviewer=args.reviewer,
            confidence=args.confidence,
        )
        print(
            f"recorded {rec.n_leaks} leaks in {rec.n_patients_sampled} of {rec.frame_patients} patients of frame "
            f"{rec.frame_id}; then run `tide release publish --study {args.study} --key {args.key}`"
        )
        return 0
    plans = evidence.plan_audit(
        wh,
        names,
        args.study,
        args.key,
        target_rate=args.target,
        confidence=args.confidence,
        max_leaks=args.max_leaks,
        seed=args.seed,
        everything=args.all,
    )
    if not plans:
        print(f"every row of {args.study}/{args.key} is covered by audit rounds already; nothing to plan")
        return 0
    print(f"{'frame':17s} {'bucket':40s} {'notes':>6s} {'patients':>9s} {'review':>7s}  census")
    for p in plans:
        print(
            f"{p.frame_id:17s} {p.bucket[:40]:40s} {p.n_notes:6d} {p.n_patients:9d} {p.sample_size:7d}  "
            f"{'yes' if p.census else 'no'}"
        )
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        doc = {
            "study": args.study,
            "key": args.key,
            "target": args.target,
            "confidence": args.confidence,
            "seed": args.seed,
            "frames": [p.to_dict() for p in plans],
        }
        Path(args.out).write_text(json.dumps(doc, indent=2), encoding="utf-8")
        print(f"wrote the plan and the sampled patient refs to {args.out}", file=sys.stderr)
    return 0


def _publish(wh: Any, args: argparse.Namespace) -> int:
    config = config_from_args(args)
    row = lifecycle.decide(
        wh,
        config,
        args.study,
        args.key,
        policy_from_args(args),
        config.tables.releases,
        actor=_actor(),
        allow_withdrawn=args.allow_withdrawn,
    )
    print(f"release {args.study}/{args.key}: {row['status']}; researchers see {row['published_version'] or 'nothing'}")
    for reason in filter(None, (row["gate_reasons"] or "").split("; ")):
        print(f"  - {reason}")
    if row["gate_statement"]:
        print(f"  {row['gate_statement']}")
    if row["status"] == lifecycle.PUBLISHED:
        return EXIT_PUBLISHED
    return EXIT_AWAITING if row["status"] == lifecycle.AWAITING_AUDIT else EXIT_BLOCKED


def _rollback(wh: Any, args: argparse.Namespace) -> int:
    row = lifecycle.rollback(wh, _tables(args), args.study, args.key, args.to, _actor(), args.allow_withdrawn)
    print(f"release {args.study}/{args.key}: researchers now see {row['published_version']}")
    return 0
