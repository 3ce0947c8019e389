"""JSONL documents with optional label crosswalk -- the prediction file format.

Predictions use the gold JSONL shape (``docs/architecture.md``); their spans may also carry
``score`` and ``recognizer``.  Gold files in TIDE labels are read with
:func:`tide_core.evaluation.gold_io.read_gold`; this reader is used for predictions and for
JSONL whose labels still need a crosswalk (``Span`` only accepts TIDE labels, so mapping must
happen before a Span is built).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tide_core.errors import InputError
from tide_core.evaluation.crosswalk import Crosswalk
from tide_core.evaluation.documents import LoadedDocs, ReaderIssue
from tide_core.evaluation.gold_io import GoldDoc
from tide_core.spans import Span
from tide_core.types import LABELS


def _metadata(obj: dict[str, Any]) -> dict[str, Any]:
    """``metadata`` object, or notes-table rows with note_date/note_type/source/site at top level."""
    if isinstance(obj.get("metadata"), dict):
        return dict(obj["metadata"])
    return {k: obj[k] for k in ("note_date", "note_type", "source", "site") if k in obj}


def read_jsonl_docs(
    path: str | Path,
    crosswalk: Crosswalk | None = None,
    *,
    require_text: bool = False,
    default_recognizer: str = "pred@0",
) -> LoadedDocs:
    """Read a JSONL file of documents.  Offsets outside the text are reported, not scored."""
    path = Path(path)
    if not path.exists():
        raise InputError("E704", f"file {path} does not exist", hint="check the --gold/--pred path")
    docs: list[GoldDoc] = []
    issues: list[ReaderIssue] = []
    seen: set[str] = set()
    with path.open(encoding="utf-8") as fh:
        for line_no, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InputError(
                    "E705",
                    f"{path.name} line {line_no}: invalid JSON at column {exc.colno}",
                    hint="one JSON object per line",
                ) from None
            if not isinstance(obj, dict) or not isinstance(obj.get("note_id"), str):
                raise InputError(
                    "E705",
                    f"{path.name} line {line_no}: no string note_id",
                    hint='each line needs {"note_id": str, "spans": [...]}',
                )
            note_id = obj["note_id"]
            if note_id in seen:
                raise InputError(
                    "E706",
                    f"{path.name} line {line_no}: note {note_id!r} appears twice",
                    hint="write each document once (merge its spans into one line)",
                )
            seen.add(note_id)
            text = obj.get("text")
            if text is None and require_text:
                raise InputError(
                    "E705",
                    f"{path.name} line {line_no}: note {note_id!r} has no text",
                    hint="gold documents need their text",
                )
            spans: list[Span] = []
            for i, rs in enumerate(obj.get("spans") or []):
                try:
                    start, end, label = int(rs["start"]), int(rs["end"]), str(rs["label"])
                except (KeyError, TypeError, ValueError):
                    raise InputError(
                        "E705",
                        f"{path.name} line {line_no}: note {note_id!r} span #{i} lacks integer start/end and a label",
                        hint='spans look like {"start": 0, "end": 4, "label": "DATE"}',
                    ) from None
                if crosswalk is not None:
                    target = crosswalk.lookup(label, rs.get("type"))
                    if target is None:
                        continue
                    label = target
                elif label not in LABELS:
                    raise InputError(
                        "E701",
                        f"{path.name} line {line_no}: note {note_id!r} span #{i} has label {label!r}, not a TIDE label",
                        hint="pass --crosswalk FILE to map external labels",
                    )
                if start < 0 or end <= start or (text is not None and end > len(text)):
                    issues.append(
                        ReaderIssue(
                            note_id,
                            "out_of_range",
                            start,
                            end,
                            f"span #{i} outside the text (length {len(text) if text is not None else '?'})",
                        )
                    )
                    continue
                score = float(rs.get("score", 1.0))
                spans.append(
                    Span(
                        note_id,
                        start,
                        end,
                        label,
                        min(1.0, max(0.0, score)),
                        str(rs.get("recognizer") or default_recognizer),
                    )
                )
            spans.sort(key=lambda s: (s.start, s.end, s.label))
            docs.append(
                GoldDoc(
                    note_id,
                    str(obj.get("patient_id") or ""),
                    text if text is not None else "",
                    tuple(spans),
                    _metadata(obj),
                )
            )
    loaded = LoadedDocs(docs, issues, "jsonl")
    if crosswalk is not None:
        loaded.excluded_labels = crosswalk.excluded.copy()
    return loaded
