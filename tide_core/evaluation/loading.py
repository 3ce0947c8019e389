"""Pick the right reader for a gold corpus and read predictions, applying one crosswalk to both.

Predictions come from a JSONL file (:func:`load_predictions`) or straight from a study's span
cache in the warehouse (:func:`load_cached_predictions`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tide_core.errors import ConfigError, InputError
from tide_core.evaluation.brat import read_brat
from tide_core.evaluation.crosswalk import Crosswalk
from tide_core.evaluation.documents import LoadedDocs
from tide_core.evaluation.gold_io import GoldDoc, read_gold
from tide_core.evaluation.i2b2 import read_i2b2
from tide_core.evaluation.jsonl_reader import read_jsonl_docs
from tide_core.io.open import open_warehouse
from tide_core.spans import Span
from tide_core.store.span_cache import SpanCache, text_sha256

if TYPE_CHECKING:
    from tide_core.io.warehouse import Warehouse
    from tide_core.store.tables import TableNames

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


@dataclass
class CachedPredictions:
    """Spans read from a study's span cache, keyed by note id (see :func:`load_cached_predictions`)."""

    spans: dict[str, list[Span]]
    study: str
    warehouse: str
    n_recognized: int  # notes whose last recognition succeeded (they are the predicted notes)
    n_failed: int  # notes whose last recognition failed (not predicted: their gold spans are misses)
    n_text_checked: int = 0  # gold notes whose text hash was compared with the cache's

    def to_dict(self) -> dict[str, Any]:
        return {
            "study": self.study,
            "warehouse": self.warehouse,
            "n_recognized": self.n_recognized,
            "n_failed": self.n_failed,
            "n_text_checked": self.n_text_checked,
        }


def load_cached_predictions(
    warehouse: Warehouse | str,
    study: str,
    *,
    gold: Sequence[GoldDoc] | None = None,
    tables: TableNames | None = None,
    crosswalk: Crosswalk | None = None,
    apply_review: bool = True,
) -> CachedPredictions:
    """Predictions straight from the span cache (``tide_spans``) of ``study`` -- no export step.

    ``warehouse`` is an open :class:`~tide_core.io.warehouse.Warehouse` or a URL
    (``duckdb:PATH[#SCHEMA]``, ``bigquery:PROJECT.DATASET``).  The predicted notes are those
    whose last recognition succeeded (``tide_recognized_notes.status = 'ok'``), with an empty list
    when nothing was found; reviewer decisions are applied (rejected spans dropped, added spans
    kept), i.e. the spans anonymization would replace.  With ``gold``, each gold note's text hash
    must equal the cached ``text_sha256`` (E716 otherwise: the offsets would point into
    different text).  ``crosswalk`` is applied to the cached labels as to JSONL predictions.
    ``tables``: a :class:`~tide_core.store.tables.TableNames` (default table names otherwise).
    """

    own = isinstance(warehouse, str)
    if isinstance(warehouse, str):
        url = warehouse
        scheme, _, rest = url.partition(":")
        path = rest.partition("#")[0]
        if scheme == "duckdb" and path not in ("", ":memory:") and not Path(path).expanduser().exists():
            raise ConfigError(
                "E721",
                f"warehouse file {path} does not exist",
                hint="pass the duckdb:PATH that `tide run`/`tide demo` wrote",
            )
        wh = open_warehouse(url)
    else:
        wh = warehouse
        url = str(getattr(wh, "url", type(wh).__name__))
    try:
        cache = SpanCache(wh, tables)
        entries = cache.entries(study)
        ok = {nid for nid, e in entries.items() if e.status == "ok"}
        if not ok:
            raise InputError(
                "E722",
                f"no successfully recognized notes for study {study!r} in {url}",
                hint=f"run `tide run --warehouse {url} --study {study} --stage recognize` first, "
                "or check the --study name",
            )
        n_checked = 0
        if gold is not None:
            bad = []
            for d in gold:
                e = entries.get(d.note_id)
                if e is not None and d.note_id in ok:
                    n_checked += 1
                    if e.text_sha256 != text_sha256(d.text):
                        bad.append(d.note_id)
            if bad:
                raise InputError(
                    "E716",
                    f"{len(bad)} gold documents have a different text than the note "
                    f"recognized in study {study!r} (first: note {sorted(bad)[0]!r})",
                    hint="the gold must annotate the notes as they were recognized; "
                    "re-run recognition or use the matching gold file",
                )
        cached = cache.spans(study, note_ids=ok, apply_review=apply_review)
    finally:
        if own:
            wh.close()
    spans: dict[str, list[Span]] = {}
    for nid in sorted(ok):
        out = []
        for s in cached.get(nid, []):
            if crosswalk is not None:
                target = crosswalk.lookup(s.label)
                if target is None:
                    continue
                if target != s.label:
                    s = Span(s.note_id, s.start, s.end, target, s.score, s.recognizer)
            out.append(s)
        spans[nid] = out
    return CachedPredictions(
        spans, study, url, len(ok), sum(1 for e in entries.values() if e.status != "ok"), n_checked
    )
