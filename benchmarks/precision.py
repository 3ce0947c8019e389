"""Model precision and batch size on one device: ``python -m benchmarks.precision``.

The device script for a GPU machine (it runs on a CPU too, which is how the test suite checks
it).  For each ``dtype`` (float32, float16, bfloat16) and batch size it runs the PyTorch token
classifier over the same windows and prints:

* tokens/s of the forward passes alone (windows are built once, untimed; a warm-up batch first);
* span agreement (F1 of exact note/start/end/label sets) with float32 on the same device, and
  with float32 on the CPU (the reference runtime);
* peak device memory (CUDA only).

Model: ``--model PATH`` (a saved token classifier, e.g. the default model copied to the machine),
or, without it, a tiny BERT trained here (on the CPU, under a minute) for ``--train-steps`` steps on
the synthetic training corpus, so the spans compared are learnt ones.

Example on a GPU machine::

    python -m benchmarks.precision --device cuda --batch-sizes 16,64,256 --json $OUT/precision.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from benchmarks.corpora import load_corpus
from tide_core.errors import ConfigError
from tide_core.inference.runtime_choice import DTYPES
from tide_core.recognizers.hf_token_classifier import HFTokenClassifierRecognizer
from tide_core.spans import Note, Span
from tide_core.synth import generate_training_corpus
from tide_core.training.trainer import TrainConfig, train_token_classifier


@dataclass(frozen=True)
class PrecisionRow:
    device: str
    dtype: str
    batch_size: int
    windows: int
    tokens: int
    seconds: float
    tokens_per_s: float
    spans: int
    agreement_same_device_fp32: float
    agreement_cpu_fp32: float
    peak_mem_mib: float | None


def agreement(a: Sequence[Span], b: Sequence[Span]) -> float:
    """F1 of the two span sets (exact note, start, end and label); 1.0 when both are empty."""
    ka = {(s.note_id, s.start, s.end, s.label) for s in a}
    kb = {(s.note_id, s.start, s.end, s.label) for s in b}
    if not ka and not kb:
        return 1.0
    return 2 * len(ka & kb) / (len(ka) + len(kb))


def bench_notes(n: int, seed: int = 7) -> list[Note]:
    """``n`` in-house and ``n`` out-of-generator notes plus one long note of many windows."""
    out: list[Note] = []
    for name in ("inhouse", "oog-messages"):
        out.extend(Note(f"{name}-{i}", "p", g.text) for i, g in enumerate(load_corpus(name, n, seed=seed).gold))
    out.append(Note("long", "p", "\n\n".join(note.text for note in out[:n])))
    return out


def train_small_model(out_dir: Path, steps: int, threads: int | None = None) -> Path:
    """A tiny BERT trained briefly (on the CPU) on synthetic notes: its predictions are learnt, not ties."""
    cfg = TrainConfig(
        from_config="tiny",
        window=128,
        overlap=16,
        batch_size=16,
        lr=3e-3,
        max_steps=steps,
        warmup_ratio=0.05,
        seed=3,
        num_threads=threads,
        progress=False,
    )
    train_token_classifier(generate_training_corpus(80, seed=3), out_dir, cfg, corpus={"source": "bench", "seed": 3})
    return out_dir


def _spans(rec: HFTokenClassifierRecognizer, notes: Sequence[Note]) -> list[Span]:
    return [s for per in rec.recognize_many(notes) for s in per]


def measure(
    model_dir: Path, notes: Sequence[Note], device: str, dtype: str, batch_size: int, window: int, overlap: int
) -> tuple[list[Span], dict[str, float]]:
    """Spans of ``notes`` and the timing of the forward passes alone."""
    rec = HFTokenClassifierRecognizer(
        model_dir, window=window, overlap=overlap, batch_size=batch_size, device=device, dtype=dtype
    )
    rec.load()
    windows = [w for n in notes for w in rec.make_windows(n)]
    rec.predict(windows[:batch_size])  # warm-up (kernels, allocator)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    rec.predict(windows)  # returns numpy arrays: the device work is finished
    dt = time.perf_counter() - t0
    peak = torch.cuda.max_memory_allocated() / 2**20 if device.startswith("cuda") else float("nan")
    stats = {"windows": len(windows), "tokens": sum(len(w.input_ids) for w in windows), "seconds": dt, "peak": peak}
    return _spans(rec, notes), stats


def run(
    model_dir: Path,
    notes: Sequence[Note],
    device: str,
    dtypes: Sequence[str],
    batch_sizes: Sequence[int],
    window: int = 512,
    overlap: int = 40,
) -> list[PrecisionRow]:
    cpu_ref, _ = measure(model_dir, notes, "cpu", "float32", max(batch_sizes), window, overlap)
    rows: list[PrecisionRow] = []
    for bs in batch_sizes:
        same_ref: list[Span] | None = None
        for dt in dtypes:
            spans, st = measure(model_dir, notes, device, dt, bs, window, overlap)
            if dt == "float32":
                same_ref = spans
            rows.append(
                PrecisionRow(
                    device,
                    dt,
                    bs,
                    int(st["windows"]),
                    int(st["tokens"]),
                    st["seconds"],
                    st["tokens"] / st["seconds"] if st["seconds"] > 0 else float("inf"),
                    len(spans),
                    agreement(spans, same_ref if same_ref is not None else cpu_ref),
                    agreement(spans, cpu_ref),
                    None if math.isnan(st["peak"]) else st["peak"],  # NaN off CUDA
                )
            )
    return rows


def render(rows: Sequence[PrecisionRow], model: str) -> str:
    lines = [
        f"model: {model}",
        "",
        "| device | dtype | batch | windows | tokens/s | spans | agreement vs fp32 (same device) "
        "| vs fp32 CPU | peak MiB |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        peak = "" if r.peak_mem_mib is None else f"{r.peak_mem_mib:,.0f}"
        lines.append(
            f"| {r.device} | {r.dtype} | {r.batch_size} | {r.windows} | {r.tokens_per_s:,.0f} | {r.spans} | "
            f"{r.agreement_same_device_fp32:.4f} | {r.agreement_cpu_fp32:.4f} | {peak} |"
        )
    return "\n".join(lines)


def _csv_ints(raw: str) -> list[int]:
    return [int(x) for x in raw.split(",") if x.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.precision", description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--dtypes", default=",".join(DTYPES), help=f"comma-separated, from {', '.join(DTYPES)}")
    ap.add_argument("--batch-sizes", default="16,64,256")
    ap.add_argument("--model", default=None, help="a saved token classifier (default: train a tiny one here)")
    ap.add_argument("--train-steps", type=int, default=200)
    ap.add_argument("--notes", type=int, default=100, help="notes per corpus (in-house, out-of-generator)")
    ap.add_argument("--window", type=int, default=512)
    ap.add_argument("--overlap", type=int, default=40)
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    args = ap.parse_args(argv)

    dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    bad = [d for d in dtypes if d not in DTYPES]
    if bad or "float32" not in dtypes:
        raise ConfigError("E369", f"--dtypes {args.dtypes!r}", hint=f"list float32 and any of {', '.join(DTYPES)}")
    dtypes = ["float32", *[d for d in dtypes if d != "float32"]]  # the same-device reference first
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError("E315", "--device cuda but no CUDA device is available", hint="run on a GPU machine")
    notes = bench_notes(args.notes)
    with tempfile.TemporaryDirectory(prefix="tide-precision-") as tmp:
        if args.model:
            model_dir, desc = Path(args.model), args.model
        else:
            print(f"training a tiny model for {args.train_steps} steps ...", file=sys.stderr)
            model_dir = train_small_model(Path(tmp) / "tiny", args.train_steps)
            desc = f"tiny BERT trained {args.train_steps} steps on synthetic notes"
        rows = run(model_dir, notes, args.device, dtypes, _csv_ints(args.batch_sizes), args.window, args.overlap)
    print(render(rows, desc))
    if args.json:
        Path(args.json).write_text(json.dumps({"model": desc, "rows": [asdict(r) for r in rows]}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
