"""Pick the right reader for a gold corpus and read predictions, applying one crosswalk to both."""
from __future__ import annotations

from pathlib import Path

from tide_core.errors import ConfigError
from tide_core.evaluation.brat import read_brat
from tide_core.evaluation.crosswalk import Crosswalk
from tide_core.evaluation.documents import LoadedDocs
from tide_core.evaluation.gold_io import read_gold
from tide_core.evaluation.i2b2 import read_i2b2
from tide_core.evaluation.jsonl_reader import read_jsonl_docs

FORMATS = ("jsonl", "brat", "i2b2")


def load_gold(path: str | Path, fmt: str = "jsonl", crosswalk: Crosswalk | None = None) -> LoadedDocs:
    if fmt == "jsonl":
        if crosswalk is None:
            return LoadedDocs(read_gold(path), [], "jsonl")
        return read_jsonl_docs(path, crosswalk, require_text=True, default_recognizer="gold@1")
    if fmt == "brat":
        return read_brat(path, crosswalk)
    if fmt == "i2b2":
        return read_i2b2(path, crosswalk)
    raise ConfigError("E717", f"unknown gold format {fmt!r}", hint=f"use one of {', '.join(FORMATS)}")


def load_predictions(path: str | Path, crosswalk: Crosswalk | None = None) -> LoadedDocs:
    """Predictions are JSONL (gold shape; spans may carry score and recognizer)."""
    return read_jsonl_docs(path, crosswalk)
