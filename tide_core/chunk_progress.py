"""Chunk progress of a study run, reported to a callback (the CLI's bar, Dagster's log).

A report names the stage, the study (and key), the chunk and how far the run is; it never holds
note text or identifiers beyond the chunk number.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger("tide.progress")


@dataclass(frozen=True)
class ChunkProgress:
    stage: str  # "recognition" or "anonymization"
    study: str
    key: str  # "" for recognition
    chunk: int  # 0-based
    n_chunks: int
    n_notes: int  # valid notes in this chunk
    n_worked: int  # notes recognized / anonymized in this chunk (0 when it was resumed)
    resumed: bool  # already committed (an interrupted run, or unchanged since the last run): kept
    n_done_rows: int  # input rows decided so far in this run
    n_rows_total: int  # input rows of the study (counted before the run)
    seconds: float  # since the run started

    @property
    def fraction(self) -> float:
        return self.n_done_rows / self.n_rows_total if self.n_rows_total else 1.0

    def describe(self) -> str:
        what = "kept (already committed, unchanged)" if self.resumed else f"{self.n_worked} notes worked"
        part = self.study if not self.key else f"{self.study}/{self.key}"
        return (
            f"{self.stage} {part}: chunk {self.chunk + 1}/{self.n_chunks} committed, {what}; "
            f"{self.n_done_rows}/{self.n_rows_total} rows ({100 * self.fraction:.0f}%) in {self.seconds:.1f}s"
        )


#: A progress callback: called once per committed (or skipped) chunk, after its commit.
ProgressHook = Callable[[ChunkProgress], None]


def log_progress(p: ChunkProgress) -> None:
    """The default hook: one INFO line per chunk on the ``tide.progress`` logger."""
    log.info("%s", p.describe())
