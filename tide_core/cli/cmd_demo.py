"""``tide demo``: load the synthetic demo corpus into a warehouse and run the main job.

The default is an embedded DuckDB file; ``--warehouse bigquery:PROJECT.DATASET`` creates the dataset if missing.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

import pyarrow as pa

from tide_core.anonymize.keys import FileKeyProvider, provider_from_env
from tide_core.assurance.gate import ReleaseGatePolicy
from tide_core.cli.cmd_run import print_anonymization, print_recognition
from tide_core.cli.common import add_config, add_keys, config_from_args
from tide_core.evaluation.evaluate import evaluate
from tide_core.evaluation.gold_io import write_gold
from tide_core.io.open import open_warehouse
from tide_core.release.gold_audit import audit_from_gold, summary
from tide_core.release.lifecycle import PENDING, decide, set_status
from tide_core.release.publish import researcher_rows, store_url
from tide_core.runner import anonymize_study, recognize_study
from tide_core.store.span_cache import SpanCache
from tide_core.synth import demo_metadata_vocabulary, generate_demo_corpus

if TYPE_CHECKING:
    from tide_core.config import TideConfig
    from tide_core.io.warehouse import Warehouse
    from tide_core.synth.corpus import DemoCorpus


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("demo", help="create the synthetic demo corpus (DuckDB by default) and de-identify it")
    p.add_argument("--warehouse", default="duckdb:tide_demo.duckdb", help="default duckdb:tide_demo.duckdb")
    p.add_argument("--study", default="demo")
    p.add_argument("--key", default="k1")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--n-notes", type=_note_count, default=150, help="synthetic notes to load (default 150)")
    p.add_argument("--gold-out", default=None, help="also write the gold annotations (JSONL) here")
    p.add_argument("--no-progress", action="store_true")
    add_config(p)
    add_keys(p)
    p.set_defaults(func=run)


def _note_count(text: str) -> int:
    """``--n-notes``: a whole number of at least 1."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of notes, at least 1 (got {text!r})")
    return n


def load_demo(wh: Warehouse, seed: int = 7, gold_out: str | None = None, n_notes: int = 150) -> DemoCorpus:
    """Write the demo ``notes`` and ``patients`` tables (``n_notes`` notes); return the corpus."""
    corpus = generate_demo_corpus(seed=seed, n_notes=n_notes)
    rows = [
        {
            "note_id": n.note_id,
            "patient_id": n.patient_id,
            "text": n.text,
            "note_date": n.metadata.get("note_date"),
            "note_type": n.metadata.get("note_type"),
            "source": n.metadata.get("source"),
            "site": n.metadata.get("site"),
        }
        for n in corpus.notes
    ]
    wh.replace_table("notes", pa.Table.from_pylist(rows))
    wh.replace_table(
        "patients",
        pa.Table.from_pylist([{k: (None if v is None else str(v)) for k, v in p.items()} for p in corpus.patients]),
    )
    if gold_out:
        write_gold(gold_out, corpus.gold)
    return corpus


def run(args: argparse.Namespace) -> int:

    config = config_from_args(args)
    if not config.metadata_vocabulary:  # the demo's note types, sources and sites are released as they are
        config = config.with_metadata_vocabulary(demo_metadata_vocabulary())
    provider = provider_from_env(args.key_dir)
    if not provider.has(args.study, args.key):
        file_provider = provider.providers[0]
        assert isinstance(file_provider, FileKeyProvider)  # provider_from_env puts the key directory first
        path = file_provider.create(args.study, args.key)
        print(f"created demo key {args.key!r} for study {args.study!r} at {path} (mode 0600)")
    wh = open_warehouse(args.warehouse)
    try:
        ensure_dataset = getattr(wh, "ensure_dataset", None)  # BigQuery: the demo dataset may not exist yet
        if ensure_dataset is not None:
            ensure_dataset()
        corpus = load_demo(wh, args.seed, args.gold_out, args.n_notes)
        print(f"loaded {len(corpus.notes)} synthetic notes of {len(corpus.patients)} patients into {wh.url}")
        rec = recognize_study(wh, args.study, config, progress=not args.no_progress)
        print_recognition(rec)
        set_status(wh, args.study, args.key, PENDING, "anonymization in progress", config.tables.releases)
        anon = anonymize_study(wh, args.study, args.key, provider, config, progress=not args.no_progress)
        print_anonymization(anon)
        _print_quality(wh, args.study, config, corpus)
        _audit_and_publish(wh, args.study, args.key, config, corpus)
        seen = researcher_rows(wh, args.study, args.key, "note_ref, text")
        if seen:
            row = seen[0]
            print(f"\nfirst released note ({row['note_ref']}), first 400 characters:\n{row['text'][:400]}")
        print(_researcher_hint(wh, args.study, args.key))
    finally:
        wh.close()
    return 0


def _audit_and_publish(wh: Warehouse, study: str, key: str, config: TideConfig, corpus: DemoCorpus) -> None:
    """The demo's audit (answered from the synthetic gold, and said so) and the publish."""
    policy = ReleaseGatePolicy()
    records = audit_from_gold(
        wh, config.tables, study, key, corpus.gold, target_rate=policy.target_rate, confidence=policy.confidence
    )
    if records:
        print(f"\naudit: {summary(records)} (synthetic corpus: the review is computed from gold, not by a person)")
    else:
        print("\naudit: the content is unchanged and its earlier audit rounds still cover it")
    row = decide(wh, config, study, key, policy, config.tables.releases, actor="tide demo")
    print(f"release {study}/{key}: {row['status']}; researchers see {row['published_version'] or 'nothing yet'}")
    for reason in filter(None, (row["gate_reasons"] or "").split("; ")):
        print(f"  - {reason}")
    if row["gate_statement"]:
        print(f"  {row['gate_statement']}")


def _researcher_hint(wh: Warehouse, study: str, key: str) -> str:
    """Point researchers at the published ``released_notes`` view, never at the ``tide_*`` tables."""
    url = store_url(wh) or wh.url
    scheme, _, rest = url.partition(":")
    view = f"`{rest}.released_notes`" if scheme == "bigquery" else "released_notes"
    where = f"the dataset {rest}" if scheme == "bigquery" else f"the researchers' file {rest} (nothing else is in it)"
    return (
        f"\nresearchers query the published version (no source ids, no offsets) in {where}:\n"
        f"  SELECT note_ref, patient_ref, note_date, text FROM {view} WHERE study = '{study}' AND key = '{key}'"
    )


def _print_quality(wh: Warehouse, study: str, config: TideConfig, corpus: DemoCorpus) -> None:
    """Recall/precision of the cached spans against the demo's gold annotations (tau = 0.8)."""

    spans = SpanCache(wh, config.tables).spans(study)
    report = evaluate(corpus.gold, {d.note_id: spans.get(d.note_id, []) for d in corpus.gold}, n_resamples=0)
    overall = report.primary.point["overall"]
    print(
        f"demo quality vs gold (tau=0.8): micro recall {overall['micro_recall']:.3f}, "
        f"precision {overall['micro_precision']:.3f}"
    )
    cats = report.primary.point["category"]
    print(
        "  recall by label: " + ", ".join(f"{k}={v['recall']:.2f}" for k, v in cats.items() if v["recall"] is not None)
    )
