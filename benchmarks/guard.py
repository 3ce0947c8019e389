"""PHI Guard versus the recognizer-based residual screen (``python -m benchmarks.guard``).

The release is made as a new site would make it: the rules preset recognizes each document of
the out-of-generator corpora (no patients table), the anonymizer replaces what it found, and the
gold spans that no prediction touched are the real residual PHI. A released document *leaks*
when at least one gold span was left untouched. Two monitors then look at the released text:

- the residual screen (``tide_core.assurance.screen``) re-runs the same recognizers, so it shares
  their blind spots by construction;
- the PHI Guard (``tide_core.assurance.guard_model``), a character-n-gram token model trained only
  on TIDE's own training generators, scores each released document outside its surrogates.

It prints, per corpus: leaking documents caught by each monitor and by their union, clean
documents each holds back (false alarms), and the guard's dial (catch vs hold per threshold).
"""

from __future__ import annotations

import argparse
import secrets
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field

from benchmarks.corpora import load_corpus
from benchmarks.quality import combine, default_specs, run_recognizers
from tide_core.anonymize.engine import Anonymizer
from tide_core.anonymize.keys import KeyRing
from tide_core.assurance.guard_model import GuardModel
from tide_core.assurance.guard_release import dial
from tide_core.assurance.guard_train import main as train_main
from tide_core.assurance.screen import screen_released
from tide_core.errors import AnonymizationError
from tide_core.recognizers.registry import create


@dataclass
class GuardBench:
    corpus: str
    n_docs: int
    leaking: set[str] = field(default_factory=set)
    clean: set[str] = field(default_factory=set)
    screen_flagged: set[str] = field(default_factory=set)
    guard_flagged: set[str] = field(default_factory=set)
    masked: dict[str, float] = field(default_factory=dict)

    def share(self, flagged: set[str], of: set[str]) -> float:
        return len(flagged & of) / len(of) if of else 0.0


def run_corpus(name: str, n_docs: int | None, seed: int, guard: GuardModel) -> GuardBench:
    corpus = load_corpus(name, n_docs, seed)
    notes = [d.to_note() for d in corpus.gold]
    specs = default_specs([], None, include_model=False)
    spans, _ = run_recognizers(notes, specs, progress=False)
    ids = [n.note_id for n in notes]
    pred = combine(spans, list(spans), ids, {n.note_id: n.text for n in notes})
    anonymizer = Anonymizer(KeyRing("bench", "guard", secrets.token_bytes(32)))
    out = GuardBench(name, len(notes))
    released = []
    for doc, note in zip(corpus.gold, notes, strict=True):
        try:
            rel = anonymizer.anonymize(note, pred[note.note_id])
        except AnonymizationError:
            continue  # quarantined: never released
        released.append(rel)
        p = pred[note.note_id]
        leaks = any(not any(q.start < g.end and g.start < q.end for q in p) for g in doc.spans)
        (out.leaking if leaks else out.clean).add(note.note_id)
        score = guard.masked_score(rel.text, [(r.out_start, r.out_end) for r in rel.spans])
        out.masked[note.note_id] = score
        if score >= guard.threshold:
            out.guard_flagged.add(note.note_id)
    screeners = [create(dict(s)) for s in specs.values()]
    out.screen_flagged = set(screen_released(released, screeners).flagged_note_ids)
    return out


def report(results: Sequence[GuardBench], guard: GuardModel) -> str:
    lines = [
        f"PHI Guard vs residual screen (guard {guard.version}, threshold {guard.threshold:.6f}; releases made by "
        "the rules preset, no patients table)",
        "",
        "| corpus | released docs | leaking docs | caught by screen | caught by guard | caught by either | "
        "clean held by screen | clean held by guard |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        union = r.screen_flagged | r.guard_flagged
        lines.append(
            f"| {r.corpus} | {len(r.leaking) + len(r.clean)} | {len(r.leaking)} | "
            f"{r.share(r.screen_flagged, r.leaking):.1%} | {r.share(r.guard_flagged, r.leaking):.1%} | "
            f"{r.share(union, r.leaking):.1%} | {r.share(r.screen_flagged, r.clean):.1%} | "
            f"{r.share(r.guard_flagged, r.clean):.1%} |"
        )
    lines += ["", "guard dial (threshold: leaking documents caught / clean documents held back)", ""]
    for r in results:
        labels = {nid: nid in r.leaking for nid in r.masked}
        rows = dial(r.masked, labels, thresholds=(0.5, 0.9, 0.99, guard.threshold, 0.999))
        lines.append(f"{r.corpus}: " + "; ".join(f"{t:.6g}: {c:.1%} / {h:.1%}" for t, c, h in rows))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.guard", description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default="oog-clinical,oog-messages")
    ap.add_argument("--n-docs", type=int, default=None, help="documents per corpus (default: the corpus default)")
    ap.add_argument("--seed", type=int, default=2, help="corpus seed (1 was used to choose the guard's settings)")
    ap.add_argument("--guard-dir", default=None, help="a trained guard (default: train one now)")
    ap.add_argument("--train-docs", type=int, default=600)
    args = ap.parse_args(argv)
    if args.guard_dir:
        guard = GuardModel.load(args.guard_dir)
    else:
        tmp = tempfile.mkdtemp(prefix="tide-guard-")
        train_main(["--out", tmp, "--n-docs", str(args.train_docs)])
        guard = GuardModel.load(tmp)
    results = []
    for name in args.corpora.split(","):
        print(f"{name} ...", file=sys.stderr)
        results.append(run_corpus(name.strip(), args.n_docs, args.seed, guard))
    print(report(results, guard))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
