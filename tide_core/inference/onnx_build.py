"""Build the ONNX files of :mod:`tide_core.inference.onnx_export`: export, optimize, quantize.

Only a cache miss reaches this module (``onnx_model`` loads :func:`build` by its dotted path), so
recognizing with an already-exported model never imports torch's exporter, ``onnx`` or ONNX
Runtime's optimizer and quantizer.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import onnx
import torch
from onnxruntime.quantization import QuantType, quantize_dynamic
from onnxruntime.transformers.optimizer import optimize_model
from transformers import AutoModelForTokenClassification

from tide_core.inference.onnx_export import OPSET

_RAW = "model.export.onnx"


def build(d: Path, runtime: str, out: Path, fp32: Path, final: Path) -> None:
    """Export (and optimize) the fp32 file if missing, then quantize it for ``onnx-int8`` (quietly)."""
    with _quiet():
        _build(d, runtime, out, fp32, final)


def _build(d: Path, runtime: str, out: Path, fp32: Path, final: Path) -> None:
    if not fp32.is_file():
        raw = _atomic_target(out / _RAW)
        tmp = _atomic_target(fp32)
        try:
            _export_fp32(d, raw)
            _optimize(d, raw, tmp)
            _publish(tmp, fp32)
        finally:
            for p in (raw, tmp):
                p.unlink(missing_ok=True)
    if runtime == "onnx-int8":
        tmp = _atomic_target(final)
        try:
            _quantize(fp32, tmp)
            _publish(tmp, final)
        finally:
            tmp.unlink(missing_ok=True)


def _atomic_target(final: Path) -> Path:
    fd, tmp = tempfile.mkstemp(prefix=final.name + ".", suffix=".tmp", dir=str(final.parent))
    os.close(fd)
    return Path(tmp)


def _model_shape(model_dir: Path) -> tuple[int, int]:
    cfg = json.loads((model_dir / "config.json").read_text())
    return int(cfg.get("num_attention_heads") or 0), int(cfg.get("hidden_size") or 0)


def _export_fp32(model_dir: Path, target: Path) -> None:
    """torch.onnx.export of the logits, dynamic batch and sequence axes."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    model = AutoModelForTokenClassification.from_pretrained(
        str(model_dir), local_files_only=True, attn_implementation="eager"
    ).eval()

    class _Logits(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask).logits  # type: ignore[no-any-return]

    ids = torch.ones((2, 16), dtype=torch.long)
    mask = torch.ones((2, 16), dtype=torch.long)
    mask[1, 8:] = 0  # trace with padding present
    axes = {0: "batch", 1: "tokens"}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Logits(model),
            (ids, mask),
            str(target),
            dynamo=False,
            input_names=["input_ids", "attention_mask"],
            output_names=["logits"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "logits": axes},
            opset_version=OPSET,
        )


def _optimize(model_dir: Path, source: Path, target: Path) -> None:
    """ONNX Runtime's transformer fusions (attention, GELU, layer norm); a plain copy when not BERT-like."""
    heads, hidden = _model_shape(model_dir)
    opt = optimize_model(str(source), model_type="bert", num_heads=heads, hidden_size=hidden)
    opt.save_model_to_file(str(target))


def _quantize(source: Path, target: Path) -> None:
    quantize_dynamic(
        str(source),
        str(target),
        weight_type=QuantType.QInt8,
        per_channel=True,
        reduce_range=True,
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )


@contextmanager
def _quiet() -> Iterator[None]:
    """The exporter, optimizer and quantizer log progress and advice at INFO/WARNING: keep them quiet."""
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(previous)


def _publish(tmp: Path, final: Path) -> None:
    os.chmod(tmp, 0o644)  # model weights, no PHI: readable like the model directory's own files
    os.replace(tmp, final)
