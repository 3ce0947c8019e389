"""Quality benchmark of the default configuration: in-house and out-of-generator corpora side by side.

``python -m benchmarks.quality [--corpora inhouse,oog-clinical,oog-messages[,oog-world]] [--seed 2]
[--n-notes 300] [--n-messages 1500] [--no-model] [--model-dir DIR] [--json FILE]``

For each corpus (``benchmarks.corpora``): every recognizer of the default configuration
runs once over all notes; any subset is then scored without re-running anything (the subset's
spans are resolved and propagated per note exactly as the engine's ``finish_note`` does).
Reported per corpus:

- span level at tau = 0.8 union overlap: micro/macro recall and precision with 95% bootstrap
  intervals (2,000 document resamples, seed 42), and split-match recall (a gold span covered
  by several predicted pieces of its label counts as found);
- the privacy view: the share of gold PHI characters that no predicted span covers (per
  category and overall), and the share of gold surfaces that survive verbatim in the text the
  anonymizer releases (run on the predictions with a fresh random key, a surface found away from
  where it stood confirmed under a second independent key; ages <= 89 exempt);
- character precision (share of marked characters that are PHI) and the number of clinical
  terms (drugs, doses, eponyms, lab names the generator recorded) that a predicted span touches;
- an ablation: the full set minus each recognizer, on every corpus.

The in-house corpus shares its generator with the training data: it is a regression test.
The out-of-generator corpora measure generalisation (see ``benchmarks/oog/README.md``). ``oog-world``
(long real-world-like prose with European formats and scripts) is opt-in: name it in ``--corpora``.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.corpora import CORPORA, DEFAULT_SIZES, BenchCorpus, load_corpus
from tide_core.anonymize.engine import Anonymizer
from tide_core.anonymize.keys import KeyRing
from tide_core.config import rules_specs
from tide_core.engine.recognition import finish_note
from tide_core.errors import TideError
from tide_core.evaluation.characters import character_metrics, clinical_terms_removed
from tide_core.evaluation.evaluate import evaluate
from tide_core.evaluation.verbatim import surviving_surfaces
from tide_core.inference.runtime_choice import RUNTIME_NAMES, runtime_options
from tide_core.model_location import default_model_spec
from tide_core.recognizers.registry import create
from tide_core.spans import Span
from tide_core.training.trainer import read_model_card

#: Release targets (issue 11), checked on every corpus.
TARGETS = {
    "uncovered_share<=0.02": 0.02,
    "verbatim_share<=0.01": 0.01,
    "char_precision>=0.95": 0.95,
    "micro_recall>=0.92": 0.92,
    "every_category_uncovered<=0.05": 0.05,
}


def default_specs(
    patients: Sequence[Mapping[str, Any]],
    model_dir: str | None,
    include_model: bool = True,
    model_options: Mapping[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """The default configuration's recognizers, keyed by short name; known-PHI gets the rows."""
    specs: dict[str, dict[str, Any]] = {}
    if include_model:
        specs["model"] = {**default_model_spec(model_dir), **dict(model_options or {})}
    for spec in rules_specs():
        spec = dict(spec)
        if spec["name"] == "tide.known_phi":
            spec.pop("patients_table", None)
            spec["rows"] = list(patients)
        specs[spec["name"].split(".")[-1]] = spec
    return specs


def run_recognizers(
    notes: Sequence[Any], specs: Mapping[str, Mapping[str, Any]], batch: int = 32, progress: bool = True
) -> tuple[dict[str, dict[str, list[Span]]], dict[str, float]]:
    """spans[recognizer][note_id] and seconds per recognizer (load included)."""
    out: dict[str, dict[str, list[Span]]] = {}
    seconds: dict[str, float] = {}
    for key, spec in specs.items():
        rec = create(dict(spec))
        t0 = time.perf_counter()
        rec.load()
        per: dict[str, list[Span]] = {}
        for i in range(0, len(notes), batch):
            chunk = list(notes[i : i + batch])
            for n, spans in zip(chunk, rec.recognize_many(chunk), strict=False):
                per[n.note_id] = list(spans)
        seconds[key] = time.perf_counter() - t0
        out[key] = per
        if progress:
            print(f"  {key:<10} {sum(len(v) for v in per.values()):>6} spans  {seconds[key]:6.1f} s", file=sys.stderr)
    return out, seconds


def combine(
    spans: Mapping[str, Mapping[str, list[Span]]],
    members: Sequence[str],
    note_ids: Sequence[str],
    texts: Mapping[str, str] | None = None,
) -> dict[str, list[Span]]:
    """Resolve the members' spans per note exactly as the engine does (``finish_note``)."""
    texts = texts or {}
    return {
        nid: finish_note(nid, [s for m in members for s in spans[m].get(nid, ())], None, None, texts.get(nid))[0]
        for nid in note_ids
    }


def _bench_anonymizer() -> Anonymizer:
    # a fresh random key per run: the benchmark's surrogates are never reproducible outside it
    return Anonymizer(KeyRing("bench", "quality", secrets.token_bytes(32)))


def score(
    corpus: BenchCorpus, pred: Mapping[str, list[Span]], n_resamples: int = 0, anonymizer: Anonymizer | None = None
) -> dict[str, Any]:
    """Every figure of one system on one corpus (span, split-match, character, release views)."""
    span = evaluate(corpus.gold, pred, n_resamples=n_resamples, seed=42, sensitivity_taus=()).primary.to_dict()
    split = evaluate(corpus.gold, pred, n_resamples=0, sensitivity_taus=(), split=True).primary.to_dict()
    chars = character_metrics(corpus.gold, pred).to_dict()
    out = {
        "span": span,
        "split_micro_recall": split["overall"]["micro_recall"],
        "chars": chars,
        "clinical_terms": clinical_terms_removed(corpus.gold, pred).to_dict(),
    }
    if anonymizer is not None:
        out["verbatim"] = surviving_surfaces(corpus.gold, pred, anonymizer, _bench_anonymizer()).to_dict()
    return out


def _summary(name: str, s: Mapping[str, Any]) -> dict[str, Any]:
    o, c = s["span"]["overall"], s["chars"]["overall"]
    cats = {k: v["uncovered_share"] for k, v in s["chars"]["category"].items() if v["gold_chars"]}
    worst = max(cats.items(), key=lambda kv: kv[1] or 0.0) if cats else ("-", None)
    cats_al = {k: v.get("alnum_uncovered_share") for k, v in s["chars"]["category"].items() if v.get("gold_alnum")}
    worst_al = max(cats_al.items(), key=lambda kv: kv[1] or 0.0) if cats_al else ("-", None)
    return {
        "system": name,
        "micro_recall": o["micro_recall"],
        "micro_precision": o["micro_precision"],
        "split_recall": s.get("split_micro_recall"),
        "uncovered_share": c["uncovered_share"],
        "char_precision": c["char_precision"],
        "worst_category": worst[0],
        "worst_uncovered": worst[1],
        "alnum_uncovered_share": c.get("alnum_uncovered_share"),
        "worst_alnum_category": worst_al[0],
        "worst_alnum_uncovered": worst_al[1],
        "verbatim_share": (s.get("verbatim") or {}).get("overall"),
        "clinical_terms_removed": s["clinical_terms"]["n_removed"],
        "clinical_terms": s["clinical_terms"]["n_terms"],
    }


def _targets(summary: Mapping[str, Any]) -> dict[str, bool]:
    def le(x: float | None, bound: float) -> bool:
        return x is not None and x <= bound

    def ge(x: float | None, bound: float) -> bool:
        return x is not None and x >= bound

    return {
        "uncovered_share<=0.02": le(summary["uncovered_share"], 0.02),
        "verbatim_share<=0.01": le(summary["verbatim_share"], 0.01),
        "char_precision>=0.95": ge(summary["char_precision"], 0.95),
        "micro_recall>=0.92": ge(summary["micro_recall"], 0.92),
        "every_category_uncovered<=0.05": le(summary["worst_uncovered"], 0.05),
    }


def bench_corpus(
    corpus: BenchCorpus,
    specs: Mapping[str, Mapping[str, Any]],
    n_resamples: int = 2000,
    ablation: bool = True,
    progress: bool = True,
) -> dict[str, Any]:
    """Run the recognizers once on ``corpus``; score the full set and the ablation."""
    notes = [d.to_note() for d in corpus.gold]
    if progress:
        print(f"{corpus.name} (seed {corpus.seed}): {len(notes)} notes, {corpus.n_spans} gold spans", file=sys.stderr)
    spans, seconds = run_recognizers(notes, specs, progress=progress)
    ids = [n.note_id for n in notes]
    texts = {n.note_id: n.text for n in notes}
    members = list(specs)
    full = score(corpus, combine(spans, members, ids, texts), n_resamples, _bench_anonymizer())
    rows = [_summary("full: " + " + ".join(members), full)]
    if ablation and len(members) > 1:
        for m in members:
            rest = [x for x in members if x != m]
            rows.append(_summary(f"full - {m}", score(corpus, combine(spans, rest, ids, texts))))
    summary = rows[0]
    return {
        "corpus": corpus.name,
        "seed": corpus.seed,
        "n_notes": len(notes),
        "n_gold_spans": corpus.n_spans,
        "n_chars": sum(len(t) for t in texts.values()),
        "seconds": {k: round(v, 2) for k, v in seconds.items()},
        "full": full,
        "summary": summary,
        "ablation": rows,
        "targets": _targets(summary),
    }


def benchmark(
    corpora: Sequence[str] = CORPORA,
    seed: int = 2,
    sizes: Mapping[str, int] | None = None,
    model_dir: str | None = None,
    include_model: bool = True,
    n_resamples: int = 2000,
    ablation: bool = True,
    progress: bool = True,
    model_options: Mapping[str, Any] | None = None,
    oog_patients: bool = False,
) -> dict[str, Any]:
    """The whole benchmark: one entry per corpus, plus the model card of the model used.

    The out-of-generator corpora are scored as a new site would run them, without a patients
    table (the known-PHI recognizer then knows nothing), unless ``oog_patients``.
    """
    sizes = {**DEFAULT_SIZES, **dict(sizes or {})}
    results = []
    model_card: dict[str, Any] = {}
    for name in corpora:
        corpus = load_corpus(name, sizes.get(name), seed)
        if name.startswith("oog-") and not oog_patients:
            corpus.patients = []
        specs = default_specs(corpus.patients, model_dir, include_model, model_options)
        if include_model and not model_card:
            card = read_model_card(specs["model"]["model_dir"])
            model_card = {k: card.get(k) for k in ("base", "corpus", "training", "recipe")}
            # the runtime that ran, also when chosen by CPU (tide_core.inference.runtime_choice)
            model_card["runtime"] = {k: specs["model"].get(k) for k in ("runtime", "dtype")}
        results.append(bench_corpus(corpus, specs, n_resamples, ablation, progress))
    return {
        "seed": seed,
        "tau": 0.8,
        "include_model": include_model,
        "model": model_card,
        "model_options": dict(model_options or {}),
        "oog_patients": oog_patients,
        "corpora": results,
    }


def _f(x: float | None, pct: bool = False) -> str:
    if x is None:
        return "  -  "
    return f"{100 * x:.2f}%" if pct else f"{x:.3f}"


def format_report(r: Mapping[str, Any]) -> str:
    res = r["corpora"]
    lines = [
        f"TIDE quality benchmark (seed {r['seed']}; tau=0.8 union overlap; "
        f"{'default configuration' if r['include_model'] else 'rules preset (no model)'})",
        "",
        "| corpus | notes | gold spans | micro R [95% CI] | micro P | split R | char precision | "
        "PHI chars uncovered | worst category | PHI letters/digits uncovered | worst category (letters/digits) | "
        "surfaces verbatim | clinical terms removed |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in res:
        s, ci = c["summary"], c["full"]["span"]["overall"].get("ci", {}).get("micro_recall")
        cis = f" [{_f(ci[0])}, {_f(ci[1])}]" if ci else ""
        lines.append(
            f"| {c['corpus']} | {c['n_notes']} | {c['n_gold_spans']} | {_f(s['micro_recall'])}{cis} | "
            f"{_f(s['micro_precision'])} | {_f(s['split_recall'])} | {_f(s['char_precision'])} | "
            f"{_f(s['uncovered_share'], True)} | {s['worst_category']} {_f(s['worst_uncovered'], True)} | "
            f"{_f(s.get('alnum_uncovered_share'), True)} | "
            f"{s.get('worst_alnum_category', '-')} {_f(s.get('worst_alnum_uncovered'), True)} | "
            f"{_f(s['verbatim_share'], True)} | {s['clinical_terms_removed']} / {s['clinical_terms']} |"
        )
    lines += [
        "",
        "per category: span recall / PHI characters uncovered / PHI letters and digits uncovered / surfaces verbatim",
        "",
        "| category | " + " | ".join(c["corpus"] for c in res) + " |",
        "|---|" + "---|" * len(res),
    ]
    labels = sorted({lab for c in res for lab, v in c["full"]["chars"]["category"].items() if v["gold_chars"]})
    for lab in labels:
        cells = []
        for c in res:
            sc = c["full"]["span"]["category"].get(lab, {})
            ch = c["full"]["chars"]["category"].get(lab, {})
            vb = (c["full"].get("verbatim") or {}).get("category", {}).get(lab, {})
            if not ch.get("gold_chars"):
                cells.append("-")
                continue
            cells.append(
                f"{_f(sc.get('recall'))} / {_f(ch.get('uncovered_share'), True)} / "
                f"{_f(ch.get('alnum_uncovered_share'), True)} / {_f(vb.get('share'), True)}"
            )
        lines.append(f"| {lab} | " + " | ".join(cells) + " |")
    for c in res:
        if len(c["ablation"]) > 1:
            lines += [
                "",
                f"ablation on {c['corpus']} (point estimates)",
                "",
                "| system | micro R | micro P | PHI chars uncovered | PHI letters/digits uncovered | char precision |",
                "|---|---|---|---|---|---|",
            ]
            for a in c["ablation"]:
                lines.append(
                    f"| {a['system']} | {_f(a['micro_recall'])} | {_f(a['micro_precision'])} | "
                    f"{_f(a['uncovered_share'], True)} | {_f(a.get('alnum_uncovered_share'), True)} | "
                    f"{_f(a['char_precision'])} |"
                )
    lines.append("")
    for c in res:
        met = ", ".join(f"{k} {'MET' if v else 'NOT MET'}" for k, v in c["targets"].items())
        secs = ", ".join(f"{k} {v:.1f}s" for k, v in c["seconds"].items())
        lines.append(f"targets on {c['corpus']}: {met}")
        lines.append(f"  recognition time ({c['n_chars'] / 1e6:.2f} MB): {secs}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.quality", description=__doc__.splitlines()[0])
    p.add_argument(
        "--corpora",
        default=",".join(CORPORA),
        help=f"comma-separated subset of {', '.join(CORPORA)}, or the opt-in oog-world",
    )
    p.add_argument("--seed", type=int, default=2, help="corpus seed (2 is the reporting seed; 1 was used for tuning)")
    p.add_argument("--n-notes", type=int, default=None, help="notes per clinical corpus and oog-world (default 300)")
    p.add_argument("--n-messages", type=int, default=None, help="texts in oog-messages (default 1500)")
    p.add_argument("--model-dir", default=None, help="PHI model (default: the trained default model)")
    p.add_argument(
        "--model-runtime",
        default=None,
        help=f"run the model on this runtime ({', '.join(RUNTIME_NAMES)}; default: the default runtime)",
    )
    p.add_argument("--no-model", action="store_true", help="rules preset only")
    p.add_argument("--no-ablation", action="store_true")
    p.add_argument("--resamples", type=int, default=2000)
    p.add_argument(
        "--oog-patients",
        action="store_true",
        help="give the out-of-generator corpora their patients table (default: none, as a new site)",
    )
    p.add_argument("--json", default=None, help="also write the full report as JSON")
    args = p.parse_args(argv)
    sizes = {}
    if args.n_notes:
        sizes.update({"inhouse": args.n_notes, "oog-clinical": args.n_notes, "oog-world": args.n_notes})
    if args.n_messages:
        sizes["oog-messages"] = args.n_messages
    corpora = [c.strip() for c in args.corpora.split(",") if c.strip()]
    try:
        options = runtime_options(args.model_runtime) if args.model_runtime else None
        r = benchmark(
            corpora,
            args.seed,
            sizes,
            args.model_dir,
            not args.no_model,
            args.resamples,
            not args.no_ablation,
            model_options=options,
            oog_patients=args.oog_patients,
        )
    except TideError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(format_report(r))
    if args.json:
        Path(args.json).write_text(json.dumps(r, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
