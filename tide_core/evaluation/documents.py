"""What every evaluation reader returns: documents plus the problems found while reading.

Readers never print or raise with span text (gold corpora hold real PHI); a problem is a
:class:`ReaderIssue` naming the note id, offsets and a code, collected so a report can say
"12 offset mismatches in 3 notes" instead of failing on the first or hiding them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tide_core.evaluation.gold_io import GoldDoc


@dataclass(frozen=True)
class ReaderIssue:
    note_id: str
    code: str  # offset_mismatch, offset_relocated, discontinuous, out_of_range, excluded_label ...
    start: int | None
    end: int | None
    detail: str  # offsets/lengths/labels only -- never surface text

    def to_dict(self) -> dict[str, Any]:
        return {"note_id": self.note_id, "code": self.code, "start": self.start, "end": self.end, "detail": self.detail}


@dataclass
class LoadedDocs:
    docs: list[GoldDoc]
    issues: list[ReaderIssue] = field(default_factory=list)
    format: str = "jsonl"
    excluded_labels: Counter[str] = field(default_factory=Counter)

    def issue_counts(self) -> dict[str, int]:
        return dict(Counter(i.code for i in self.issues))

    def by_id(self) -> dict[str, GoldDoc]:
        return {d.note_id: d for d in self.docs}
