"""A content hash of a local model directory, used in recognizer fingerprints.

Two model directories with the same weights, config and tokenizer give the same hash wherever
they live; retraining, swapping the tokenizer or editing the label map gives a new one, so the
span cache never serves spans produced by another model.  Files that cannot change outputs
(README, training reports) are left out.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

_OUTPUT_FILES = (
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
    "special_tokens_map.json",
    "merges.txt",
    "spm.model",
    "sentencepiece.bpe.model",
)
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt")
_cache: dict[tuple[object, ...], str] = {}


def _files(model_dir: Path) -> list[Path]:
    out = [model_dir / n for n in _OUTPUT_FILES if (model_dir / n).is_file()]
    out += sorted(p for p in model_dir.iterdir() if p.is_file() and p.suffix in _WEIGHT_SUFFIXES)
    return out


def model_dir_hash(model_dir: str | os.PathLike[str]) -> str:
    """sha256 (first 16 hex digits) over the output-affecting files of ``model_dir``."""
    d = Path(model_dir)
    files = _files(d)
    key = tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files) + (str(d.resolve()),)
    if key in _cache:
        return _cache[key]
    h = hashlib.sha256()
    for p in files:
        h.update(p.name.encode() + b"\0")
        with open(p, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        h.update(b"\1")
    digest = h.hexdigest()[:16]
    _cache[key] = digest
    return digest
