"""Quality benchmark of the default configuration on a held-out synthetic corpus.

``python -m tide_core.bench.quality [--n-notes 300] [--seed 11] [--model-dir DIR] [--json FILE]``

1. ``tide_core.synth.generate_heldout_dataset`` builds notes whose templates are disjoint from
   the training corpus, with their patients table and gold spans.
2. Each recognizer of the default configuration runs once over all notes: the PHI model
   (``tide.hf``), regex, the demo gazetteer and known-PHI built from the patients rows.
3. Any subset of recognizers is then scored without re-running anything: the subset's spans are
   combined with ``tide_core.resolve.resolve_spans`` and matched to gold at tau = 0.8 union
   overlap.  The full set gets 95% bootstrap intervals (2,000 document resamples, seed 42);
   the ablation table shows each recognizer alone and the full set minus each.

Targets (issue 6): micro recall >= 0.95 at precision >= 0.90, recall >= 0.90 in every category.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from tide_core.spans import Span

TARGET_MICRO_RECALL = 0.95
TARGET_MICRO_PRECISION = 0.90
TARGET_CATEGORY_RECALL = 0.90


def default_specs(patients: Sequence[Mapping[str, Any]], model_dir: str | None,
                  include_model: bool = True, model_options: Mapping[str, Any] | None = None
                  ) -> dict[str, dict[str, Any]]:
    from tide_core.config import demo_gazetteer_path
    from tide_core.models import default_model_spec

    specs: dict[str, dict[str, Any]] = {}
    if include_model:
        specs["model"] = {**default_model_spec(model_dir), **dict(model_options or {})}
    specs["regex"] = {"name": "tide.regex"}
    specs["org"] = {"name": "tide.org"}
    specs["gazetteer"] = {"name": "tide.gazetteer", "csv": demo_gazetteer_path()}
    specs["known_phi"] = {"name": "tide.known_phi", "rows": list(patients)}
    return specs


def run_recognizers(notes: Sequence[Any], specs: Mapping[str, Mapping[str, Any]], batch: int = 32,
                    progress: bool = True) -> tuple[dict[str, dict[str, list[Span]]], dict[str, float]]:
    """spans[recognizer][note_id] and seconds per recognizer."""
    from tide_core.recognizers.registry import create

    out: dict[str, dict[str, list[Span]]] = {}
    seconds: dict[str, float] = {}
    for key, spec in specs.items():
        rec = create(dict(spec))
        t0 = time.perf_counter()
        rec.load()
        per: dict[str, list[Span]] = {}
        for i in range(0, len(notes), batch):
            chunk = list(notes[i:i + batch])
            for n, spans in zip(chunk, rec.recognize_many(chunk)):
                per[n.note_id] = list(spans)
        seconds[key] = time.perf_counter() - t0
        out[key] = per
        if progress:
            print(f"  {key:<10} {sum(len(v) for v in per.values()):>6} spans  {seconds[key]:6.1f} s", file=sys.stderr)
    return out, seconds


def combine(spans: Mapping[str, Mapping[str, list[Span]]], members: Sequence[str],
            note_ids: Sequence[str], texts: Mapping[str, str] | None = None) -> dict[str, list[Span]]:
    """Resolve the members' spans per note exactly as the engine does (``finish_note``): overlap
    resolution, then within-note propagation when the texts are given."""
    from tide_core.engine.recognition import finish_note

    texts = texts or {}
    return {nid: finish_note(nid, [s for m in members for s in spans[m].get(nid, ())], None, None,
                             texts.get(nid))[0] for nid in note_ids}


def _row(name: str, point: Mapping[str, Any]) -> dict[str, Any]:
    o = point["overall"]
    return {"system": name, "micro_recall": o["micro_recall"], "micro_precision": o["micro_precision"],
            "macro_recall": o["macro_recall"], "macro_precision": o["macro_precision"]}


def benchmark(n_notes: int = 300, seed: int = 23, model_dir: str | None = None, include_model: bool = True,
              n_resamples: int = 2000, progress: bool = True,
              model_options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    from tide_core.evaluation.evaluate import evaluate
    from tide_core.synth import generate_heldout_dataset

    data = generate_heldout_dataset(n_notes, seed=seed)
    specs = default_specs(data.patients, model_dir, include_model, model_options)
    if progress:
        print(f"held-out corpus: {len(data.notes)} notes, {sum(len(g.spans) for g in data.gold)} gold spans",
              file=sys.stderr)
    spans, seconds = run_recognizers(data.notes, specs, progress=progress)
    ids = [n.note_id for n in data.notes]
    texts = {n.note_id: n.text for n in data.notes}
    members = list(specs)
    full = evaluate(data.gold, combine(spans, members, ids, texts), n_resamples=n_resamples, seed=42,
                    sensitivity_taus=(0.5,), names=("full", "-"))
    ablation = [_row("full: " + " + ".join(members), full.primary.point)]
    for m in members:
        ablation.append(_row(f"{m} alone", evaluate(data.gold, combine(spans, [m], ids, texts), n_resamples=0,
                                                     sensitivity_taus=()).primary.point))
    if len(members) > 1:
        for m in members:
            rest = [x for x in members if x != m]
            ablation.append(_row(f"full - {m}", evaluate(data.gold, combine(spans, rest, ids, texts), n_resamples=0,
                                                          sensitivity_taus=()).primary.point))
    res = full.primary.to_dict()
    o = res["overall"]
    cats = {k: v for k, v in res["category"].items() if v["n_gold"]}
    targets = {
        "micro_recall>=0.95": (o["micro_recall"] or 0) >= TARGET_MICRO_RECALL,
        "micro_precision>=0.90": (o["micro_precision"] or 0) >= TARGET_MICRO_PRECISION,
        "every_category_recall>=0.90": all((v["recall"] or 0) >= TARGET_CATEGORY_RECALL for v in cats.values()),
    }
    model_card = {}
    if include_model:
        from tide_core.training.trainer import read_model_card

        card = read_model_card(specs["model"]["model_dir"])
        model_card = {k: card.get(k) for k in ("base", "corpus", "training")}
    model_spec = {k: v for k, v in specs.get("model", {}).items() if k != "model_dir"}
    return {"n_notes": len(data.notes), "seed": seed, "tau": 0.8, "recognizers": members,
            "model_spec": model_spec,
            "seconds": {k: round(v, 2) for k, v in seconds.items()}, "model": model_card,
            "full": res, "ablation": ablation, "targets": targets}


def _f(x: float | None) -> str:
    return "  -  " if x is None else f"{x:.3f}"


def _ci(ci: Sequence[float | None] | None) -> str:
    if not ci:
        return ""
    return f"[{_f(ci[0])}, {_f(ci[1])}]"


def format_report(r: Mapping[str, Any]) -> str:
    full = r["full"]
    lines = [f"TIDE quality benchmark: {r['n_notes']} held-out synthetic notes (seed {r['seed']}), "
             f"tau={r['tau']} union overlap, 95% bootstrap CI (2,000 document resamples, seed 42)",
             f"recognizers: {' + '.join(r['recognizers'])}"
             + (f"  (model options: {json.dumps(r['model_spec'])})" if r.get("model_spec") else ""), "",
             f"{'category':<10} {'n_gold':>6}  {'recall':>6} {'95% CI':<16} {'precision':>9} {'95% CI':<16}"]
    for lab, m in full["category"].items():
        if not m["n_gold"] and not m["n_pred"]:
            continue
        ci = m.get("ci", {})
        lines.append(f"{lab:<10} {m['n_gold']:>6}  {_f(m['recall']):>6} {_ci(ci.get('recall')):<16} "
                     f"{_f(m['precision']):>9} {_ci(ci.get('precision')):<16}")
    o = full["overall"]
    ci = o.get("ci", {})
    for k in ("micro", "macro"):
        lines.append(f"{k:<10} {'':>6}  {_f(o[k + '_recall']):>6} {_ci(ci.get(k + '_recall')):<16} "
                     f"{_f(o[k + '_precision']):>9} {_ci(ci.get(k + '_precision')):<16}")
    sens = full.get("sensitivity", {}).get("tau=0.5")
    if sens:
        lines.append(f"(tau=0.5 sensitivity: micro recall {_f(sens['micro_recall'])}, "
                     f"precision {_f(sens['micro_precision'])})")
    lines += ["", "ablation (point estimates)",
              f"{'system':<44} {'micro R':>8} {'micro P':>8} {'macro R':>8} {'macro P':>8}"]
    for a in r["ablation"]:
        lines.append(f"{a['system']:<44} {_f(a['micro_recall']):>8} {_f(a['micro_precision']):>8} "
                     f"{_f(a['macro_recall']):>8} {_f(a['macro_precision']):>8}")
    lines += ["", "targets: " + ", ".join(f"{k} {'MET' if v else 'NOT MET'}" for k, v in r["targets"].items())]
    secs = ", ".join(f"{k} {v:.1f}s" for k, v in r["seconds"].items())
    lines.append(f"recognition time: {secs}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tide_core.bench.quality", description=__doc__.splitlines()[0])
    p.add_argument("--n-notes", type=int, default=300)
    p.add_argument("--seed", type=int, default=23)
    p.add_argument("--model-dir", default=None, help="PHI model (default: the trained default model)")
    p.add_argument("--no-model", action="store_true", help="rules only (regex + gazetteer + known-PHI)")
    p.add_argument("--resamples", type=int, default=2000)
    p.add_argument("--model-all-labels", action="store_true",
                   help="let the model emit every label at any score (not the default deployment)")
    p.add_argument("--json", default=None, help="also write the full report as JSON")
    args = p.parse_args(argv)
    from tide_core.errors import TideError

    try:
        opts = {"labels": None, "min_score": 0.0} if args.model_all_labels else None
        r = benchmark(args.n_notes, args.seed, args.model_dir, not args.no_model, args.resamples,
                      model_options=opts)
    except TideError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(format_report(r))
    if args.json:
        Path(args.json).write_text(json.dumps(r, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
