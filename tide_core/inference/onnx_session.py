"""Run an exported token classifier with ONNX Runtime: padded batches in, argmax tags and probabilities out.

One ``InferenceSession`` per process, sequential execution, full graph optimizations, and
intra-op threads = ``threads`` if given, else torch's intra-op thread count when torch is loaded
(so an executor that sized torch's threads per actor, as the Ray pipeline does, sizes these too;
by default torch counts the physical cores), else every core this process may use.  ``forward`` takes windows of
token ids already grouped by the caller (length-sorted, so each batch is padded only to its own
longest window) and returns, per token, the argmax tag id and its softmax probability, computed
in float32 exactly like the PyTorch path does.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

from tide_core.inference.onnx_export import available_cores


class OnnxTokenClassifier:
    """A loaded ONNX token classifier (CPU execution provider)."""

    def __init__(self, path: str | Path, threads: int | None = None) -> None:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = int(threads) if threads else default_threads()
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3  # errors only
        self.path = Path(path)
        self.threads = opts.intra_op_num_threads
        self._session: Any = ort.InferenceSession(str(self.path), opts, providers=["CPUExecutionProvider"])

    def forward(self, rows: Sequence[Sequence[int]], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
        """Argmax tag ids ``[batch, tokens]`` and their probabilities for ``rows`` padded to the longest."""
        width = max(len(r) for r in rows)
        ids = np.full((len(rows), width), pad_id, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for j, r in enumerate(rows):
            ids[j, : len(r)] = r
            mask[j, : len(r)] = 1
        logits = self._session.run(["logits"], {"input_ids": ids, "attention_mask": mask})[0]
        return argmax_probs(np.asarray(logits, dtype=np.float32))


def default_threads() -> int:
    """torch's intra-op threads when torch is loaded (set per actor by executors), else all cores."""
    torch = sys.modules.get("torch")
    if torch is not None:
        return max(1, int(torch.get_num_threads()))
    return available_cores()


def argmax_probs(logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Softmax over the last axis, then its argmax and maximum (float32)."""
    top = logits.max(axis=-1, keepdims=True)
    e = np.exp(logits - top)
    probs = e / e.sum(axis=-1, keepdims=True)
    arg = probs.argmax(axis=-1)
    best = np.take_along_axis(probs, arg[..., None], axis=-1)[..., 0]
    return arg, best.astype(np.float32)
