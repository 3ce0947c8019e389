"""A recognizer backed by any local Hugging Face token-classification model.

Three stages (the contract with the Ray pipeline, see docs/architecture.md):

``make_windows(note)``   CPU: tokenize once, cut 512-token windows with 40-token overlap.
``predict(windows)``     the forward pass, batched; sorted by length so padding is minimal;
                         GPU when ``device="cuda"``; a batch that runs out of memory is halved.
                         ``runtime="onnx"`` / ``"onnx-int8"`` run it with ONNX Runtime instead
                         (fp32 or int8 dynamic quantization; tide_core.inference), in batches of
                         up to ``batch_size * window`` tokens of length-sorted windows.
                         ``dtype="float16"`` / ``"bfloat16"`` run the PyTorch model in half
                         precision (for GPUs; softmax and scores stay float32).
``assemble(note, ...)``  CPU: stitch the windows' cores, decode BIO/IO tags into character
                         spans of the original note.

``recognize_many`` is exactly these three in sequence.  torch and transformers are imported
only when the model is loaded, so importing this module is cheap; the ONNX runtimes import torch
only to export the model the first time (the export is cached beside the model directory).

PyTorch is the reference runtime.  The ONNX runtimes are part of ``config()`` (and so of the
recognition fingerprint): their spans may differ slightly from the reference.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from transformers import AutoModelForTokenClassification, AutoTokenizer

from tide_core.errors import ConfigError, RecognitionError
from tide_core.inference.onnx_export import ONNX_RUNTIMES, RECIPES, check_runtime, onnx_model
from tide_core.inference.onnx_session import OnnxTokenClassifier
from tide_core.inference.runtime_choice import DTYPES
from tide_core.model_location import default_model_dir
from tide_core.recognizers.base import TideRecognizer
from tide_core.spans import Note, RecognizerResult, Span
from tide_core.text.model_hash import model_dir_hash
from tide_core.text.tag_decoding import TagInfo, decode, detect_scheme, parse_tag
from tide_core.text.windowing import (
    SpecialTokens,
    Window,
    make_windows,
    special_tokens_of,
    stitch,
    stitched_word_ids,
)
from tide_core.threads import configure_torch
from tide_core.types import LABELS


@dataclass
class WindowPrediction:
    """Per-token output of one window: the argmax tag id and its probability (aligned with input_ids)."""

    note_id: str
    index: int
    tag_ids: np.ndarray  # int16, len == len(window.input_ids)
    probs: np.ndarray  # float32, probability of the argmax tag


def _default_label_map(raw_entities: Sequence[str]) -> dict[str, str | None]:
    """Identity for our own labels (case-insensitive); everything else must be mapped explicitly."""
    out: dict[str, str | None] = {}
    for e in raw_entities:
        if e.upper() in LABELS:
            out[e] = e.upper()
    return out


class HFTokenClassifierRecognizer(TideRecognizer):
    name = "tide.hf"
    version = "1"
    supported_entities = LABELS

    def __init__(
        self,
        model_dir: str | os.PathLike[str] | None = None,
        window: int = 512,
        overlap: int = 40,
        label_map: Mapping[str, str | None] | None = None,
        device: str = "cpu",
        batch_size: int = 16,
        scheme: str = "auto",
        min_score: float = 0.0,
        labels: Sequence[str] | None = None,
        runtime: str = "torch",
        threads: int | None = None,
        dtype: str = "float32",
    ) -> None:
        if model_dir is None:
            model_dir = default_model_dir()
        self.model_dir = Path(model_dir)
        self.window = int(window)
        self.overlap = int(overlap)
        self.user_label_map = dict(label_map) if label_map else {}
        self.device = str(device)
        self.batch_size = max(1, int(batch_size))
        self.scheme_option = scheme.upper() if scheme else "AUTO"
        self.min_score = float(min_score)
        # restrict the labels this recognizer emits (e.g. leave structured PHI to the regex layer)
        self.labels = tuple(sorted(labels)) if labels else None
        self.runtime = check_runtime(str(runtime))
        if self.runtime in ONNX_RUNTIMES and not self.device.startswith("cpu"):
            raise ConfigError(
                "E368",
                f"runtime={self.runtime!r} runs on the CPU only (device={self.device!r})",
                hint="use runtime='torch' with device='cuda', or device='cpu'",
            )
        self.threads = int(threads) if threads else None  # intra-op threads (default: tide_core.threads)
        self.dtype = str(dtype)
        if self.dtype not in DTYPES:
            raise ConfigError("E369", f"unknown dtype {self.dtype!r}", hint=f"use one of {', '.join(DTYPES)}")
        if self.dtype != "float32" and self.runtime in ONNX_RUNTIMES:
            raise ConfigError(
                "E369",
                f"dtype={self.dtype!r} applies to the PyTorch runtime, not runtime={self.runtime!r}",
                hint="use runtime='torch' (a GPU) for half precision; onnx-int8 is the CPU's fast path",
            )
        for lab in self.labels or ():
            if lab not in LABELS:
                raise ConfigError("E309", f"unknown label {lab!r} in labels=", hint=f"use {', '.join(LABELS)}")
        if self.scheme_option not in ("AUTO", "BIO", "IO"):
            raise ConfigError("E310", f"unknown tag scheme {scheme!r}", hint="use 'auto', 'BIO' or 'IO'")
        self._model: Any = None
        self._tokenizer: Any = None
        self._session: Any = None  # OnnxTokenClassifier when runtime is an ONNX one
        self._special: SpecialTokens | None = None
        self._tags: list[TagInfo] = []
        self._scheme: str | None = None
        self._hash: str | None = None
        self._check_dir()

    # ------------------------------------------------------------------ set-up
    def _check_dir(self) -> None:
        d = self.model_dir
        if not d.is_dir() or not (d / "config.json").is_file():
            raise ConfigError(
                "E311",
                f"model directory {str(d)!r} does not exist or has no config.json",
                hint="train one with `tide train-recognizer --default` or pass model_dir= "
                "pointing at a saved token-classification model",
            )

        cfg = json.loads((d / "config.json").read_text())
        archs = cfg.get("architectures") or []
        id2label = cfg.get("id2label") or {}
        if not any(a.endswith("ForTokenClassification") for a in archs) or len(id2label) < 2:
            raise ConfigError(
                "E312",
                f"model in {str(d)!r} is not a token classifier (architectures={archs}, {len(id2label)} labels)",
                hint="fine-tune it for token classification first (`tide train-recognizer --base PATH`)",
            )
        self._raw_labels = [str(id2label[k]) for k in sorted(id2label, key=lambda x: int(x))]
        self._build_tags()

    def _build_tags(self) -> None:
        parsed = [parse_tag(r) for r in self._raw_labels]
        entities = sorted({e for _, e in parsed if e is not None})
        lmap = _default_label_map(entities)
        lmap.update(self.user_label_map)
        unmapped = [e for e in entities if e not in lmap]
        if unmapped:
            raise ConfigError(
                "E313",
                f"model labels {unmapped} have no TIDE label",
                hint=f"pass label_map={{model_label: one of {list(LABELS)} or None to ignore}}",
            )
        for e, lab in lmap.items():
            if lab is not None and lab not in LABELS:
                raise ConfigError(
                    "E314",
                    f"label_map maps {e!r} to unknown label {lab!r}",
                    hint=f"use one of {', '.join(LABELS)} or None",
                )
        self._label_map = {e: lmap[e] for e in entities}
        self._tags = [TagInfo(p, None if e is None else lmap.get(e)) for p, e in parsed]
        self._scheme = detect_scheme(self._raw_labels) if self.scheme_option == "AUTO" else self.scheme_option

    def load_tokenizer(self) -> None:
        """Only the tokenizer: enough for ``make_windows`` (the CPU windowing stage)."""
        if self._tokenizer is not None:
            return
        os.environ.setdefault("HF_HUB_OFFLINE", "1")

        try:
            tok = AutoTokenizer.from_pretrained(str(self.model_dir), local_files_only=True)
        except (OSError, ValueError) as exc:
            raise ConfigError(
                "E316",
                f"cannot load the tokenizer in {str(self.model_dir)!r}: {type(exc).__name__}",
                hint="the directory needs a fast tokenizer (tokenizer.json)",
            ) from None
        self._special = special_tokens_of(tok)
        self._tokenizer = tok

    def load(self) -> None:
        if self.runtime in ONNX_RUNTIMES:
            self._load_onnx()
            return
        if self._model is not None:
            return
        os.environ.setdefault("HF_HUB_OFFLINE", "1")

        if self.device.startswith("cuda") and not torch.cuda.is_available():
            raise ConfigError(
                "E315",
                "device='cuda' requested but no CUDA device is available",
                hint="use device='cpu' or run on a GPU machine",
            )
        configure_torch(self.threads, torch)  # in process as in a Ray actor: what this worker owns
        self.load_tokenizer()
        try:
            model = AutoModelForTokenClassification.from_pretrained(str(self.model_dir), local_files_only=True)
        except (OSError, ValueError) as exc:
            raise ConfigError(
                "E316",
                f"cannot load the model in {str(self.model_dir)!r}: {type(exc).__name__}",
                hint="the directory needs config.json, weights and a fast tokenizer",
            ) from None
        limit = int(getattr(model.config, "max_position_embeddings", 0) or 0)
        if limit and self.window > limit:
            raise ConfigError(
                "E317", f"window={self.window} exceeds the model's {limit} positions", hint=f"use window <= {limit}"
            )
        model.eval().to(self.device, dtype=getattr(torch, self.dtype))
        self._model = model

    def _load_onnx(self) -> None:
        if self._session is not None:
            return

        self.load_tokenizer()
        cfg_limit = self._max_positions()
        if cfg_limit and self.window > cfg_limit:
            raise ConfigError(
                "E317",
                f"window={self.window} exceeds the model's {cfg_limit} positions",
                hint=f"use window <= {cfg_limit}",
            )
        if self._hash is None:
            self._hash = model_dir_hash(self.model_dir)
        exported = onnx_model(self.model_dir, self.runtime, self._hash)
        self._session = OnnxTokenClassifier(exported.path, self.threads)

    def _max_positions(self) -> int:
        cfg = json.loads((self.model_dir / "config.json").read_text())
        return int(cfg.get("max_position_embeddings") or 0)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_model"] = None
        state["_session"] = None
        state["_tokenizer"] = None  # reloaded lazily in the worker
        return state

    def config(self) -> dict[str, Any]:
        if self._hash is None:
            self._hash = model_dir_hash(self.model_dir)
        return {
            "model_hash": self._hash,
            "window": self.window,
            "overlap": self.overlap,
            "label_map": {k: v for k, v in sorted(self._label_map.items())},
            "scheme": self._scheme,
            "min_score": self.min_score,
            "labels": list(self.labels) if self.labels else None,
            # the reference runtime adds nothing, so its fingerprints (and span caches) are unchanged
            **({"runtime": self.runtime, "onnx_recipe": RECIPES[self.runtime]} if self.runtime != "torch" else {}),
            **({"dtype": self.dtype} if self.dtype != "float32" else {}),
        }

    # ------------------------------------------------------------------ stages
    def make_windows(self, note: Note) -> list[Window]:
        self.load_tokenizer()
        return make_windows(self._tokenizer, note.note_id, note.text, self.window, self.overlap, self._special)

    def predict(self, windows: Sequence[Window]) -> list[WindowPrediction]:
        """Forward pass over windows (any notes, any order); returns predictions in input order."""
        if not windows:
            return []
        self.load()
        if self._session is not None:
            return self._predict_onnx(windows)

        order = sorted(range(len(windows)), key=lambda i: len(windows[i].input_ids), reverse=True)
        out: list[WindowPrediction | None] = [None] * len(windows)
        pos = 0
        bs = self.batch_size
        pad = int(self._tokenizer.pad_token_id or 0) if self._tokenizer.pad_token_id is not None else 0
        while pos < len(order):
            idx = order[pos : pos + bs]
            try:
                tag_ids, probs = self._forward([windows[i] for i in idx], pad, torch)
            except RuntimeError as exc:
                if "out of memory" not in str(exc).lower():
                    raise
                if self.device.startswith("cuda"):
                    torch.cuda.empty_cache()
                if len(idx) == 1:
                    w = windows[idx[0]]
                    raise RecognitionError(
                        "E318",
                        f"one window of note {w.note_id!r} does not fit in memory",
                        hint="use a smaller window or a larger device",
                    ) from None
                bs = max(1, len(idx) // 2)
                continue
            for j, i in enumerate(idx):
                n = len(windows[i].input_ids)
                out[i] = WindowPrediction(
                    windows[i].note_id,
                    windows[i].index,
                    tag_ids[j, :n].astype(np.int16),
                    probs[j, :n].astype(np.float32),
                )
            pos += len(idx)
        return out  # type: ignore[return-value]

    def _predict_onnx(self, windows: Sequence[Window]) -> list[WindowPrediction]:
        """Length-sorted windows in batches of at most ``batch_size * window`` padded tokens."""
        order = sorted(range(len(windows)), key=lambda i: len(windows[i].input_ids), reverse=True)
        budget = self.batch_size * self.window
        pad = int(self._tokenizer.pad_token_id) if self._tokenizer.pad_token_id is not None else 0
        out: list[WindowPrediction | None] = [None] * len(windows)
        pos = 0
        while pos < len(order):
            width = len(windows[order[pos]].input_ids)  # the longest of this batch (sorted)
            size = max(1, budget // max(1, width))
            idx = order[pos : pos + size]
            tag_ids, probs = self._session.forward([windows[i].input_ids for i in idx], pad)
            for j, i in enumerate(idx):
                n = len(windows[i].input_ids)
                out[i] = WindowPrediction(
                    windows[i].note_id, windows[i].index, tag_ids[j, :n].astype(np.int16), probs[j, :n]
                )
            pos += len(idx)
        return out  # type: ignore[return-value]

    def _forward(self, batch: Sequence[Window], pad: int, torch: Any) -> tuple[np.ndarray, np.ndarray]:
        longest = max(len(w.input_ids) for w in batch)
        ids = torch.full((len(batch), longest), pad, dtype=torch.long)
        mask = torch.zeros((len(batch), longest), dtype=torch.long)
        for j, w in enumerate(batch):
            ids[j, : len(w.input_ids)] = torch.tensor(w.input_ids, dtype=torch.long)
            mask[j, : len(w.input_ids)] = 1
        with torch.inference_mode():
            logits = self._model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device)).logits
            p = torch.softmax(logits.float(), dim=-1)
            best, arg = p.max(dim=-1)
        return arg.cpu().numpy(), best.cpu().numpy()

    def assemble(self, note: Note, windows: Sequence[Window], predictions: Sequence[WindowPrediction]) -> list[Span]:
        if not windows:
            return []
        by_key = {(p.note_id, p.index): p for p in predictions}
        preds = []
        for w in windows:
            p = by_key.get((w.note_id, w.index))
            if p is None or len(p.tag_ids) != len(w.input_ids):
                raise RecognitionError(
                    "E319",
                    f"prediction missing or misaligned for window {w.index} of note {w.note_id!r}",
                    hint="rerun the note",
                )
            preds.append(p)
        tags = stitch(windows, [[self._tags[int(t)] for t in p.tag_ids] for p in preds])
        probs = stitch(windows, [p.probs.tolist() for p in preds])
        offsets = stitch(windows, [w.offsets for w in windows])
        words = stitched_word_ids(windows)  # each window's word ids (positional ones if it has none)
        decoded = decode(tags, probs, offsets, words, note.text, self._scheme or "BIO")
        return [
            Span(note.note_id, d.start, d.end, d.label, min(1.0, max(0.0, d.score)), self.qualified_name)
            for d in decoded
            if d.score >= self.min_score and (self.labels is None or d.label in self.labels)
        ]

    # ------------------------------------------------------------------ entry points
    def recognize_many(self, notes: Sequence[Note]) -> list[list[Span]]:
        per_note = [self.make_windows(n) for n in notes]
        flat = [w for ws in per_note for w in ws]
        preds = self.predict(flat)
        out: list[list[Span]] = []
        pos = 0
        for note, ws in zip(notes, per_note, strict=False):
            out.append(self.assemble(note, ws, preds[pos : pos + len(ws)]))
            pos += len(ws)
        return out

    def recognize(self, note: Note) -> list[Span]:
        return self.recognize_many([note])[0]

    def analyze(
        self, text: str, entities: Sequence[str] | None = None, nlp_artifacts: Any = None
    ) -> list[RecognizerResult]:
        spans = self.recognize(Note("analyze", "", text))
        return [s.to_result() for s in spans if entities is None or s.label in entities]
