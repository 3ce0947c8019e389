"""Run an exported token classifier with ONNX Runtime: padded batches in, argmax tags and probabilities out.

One ``InferenceSession`` per process, sequential execution, full graph optimizations, and
intra-op threads = ``threads`` if given, else the threads this process or Ray worker is allotted
(:func:`tide_core.threads.allotted_threads`: ``TIDE_THREADS``, the actor's ``num_cpus``, the cgroup
CPU quota, the affinity mask; never the machine's core count), inter-op threads 1.  ``forward`` takes windows of
token ids already grouped by the caller (length-sorted, so each batch is padded only to its own
longest window) and returns, per token, the argmax tag id and its softmax probability, computed
in float32 exactly like the PyTorch path does.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

from tide_core.threads import allotted_threads


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
    """The intra-op threads of a session built without ``threads``: what this process or Ray worker owns."""
    return allotted_threads()


def argmax_probs(logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Softmax over the last axis, then its argmax and maximum (float32)."""
    top = logits.max(axis=-1, keepdims=True)
    e = np.exp(logits - top)
    probs = e / e.sum(axis=-1, keepdims=True)
    arg = probs.argmax(axis=-1)
    best = np.take_along_axis(probs, arg[..., None], axis=-1)[..., 0]
    return arg, best.astype(np.float32)
