"""Score one released (study, key) with the PHI Guard, straight from the warehouse.

Reads the released notes (``tide_deid_notes``), their surrogate ranges (``tide_released_spans``)
and the source notes (for the raw and richness scores), and returns the guard decision plus
richness per pseudonymous patient reference. Only pseudonymous references leave this function:
``note_ref`` for the review pile, ``patient_ref`` for the audit strata.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tide_core.assurance.guard_model import DocumentScores, GuardModel
from tide_core.assurance.guard_release import GuardDecision, decide
from tide_core.errors import ConfigError
from tide_core.io.warehouse import Warehouse
from tide_core.store.release_store import ReleaseStore
from tide_core.store.tables import TableNames


@dataclass(frozen=True)
class ReleaseGuardScores:
    """The guard's view of one release: decision (by note_ref) and richness by patient_ref."""

    study: str
    key: str
    decision: GuardDecision
    patient_richness: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {
            "study": self.study,
            "key": self.key,
            **self.decision.to_dict(),
            "patient_richness": {p: round(r, 4) for p, r in sorted(self.patient_richness.items())},
        }


def score_release(
    wh: Warehouse,
    study: str,
    key: str,
    guard: GuardModel,
    source_texts: dict[str, str],
    deid_table: str = "tide_deid_notes",
) -> ReleaseGuardScores:
    """Guard scores of every released note of (study, key); ``source_texts``: note_id -> original text."""
    store = ReleaseStore(wh, TableNames(deid_notes=deid_table))
    if not wh.table_exists(deid_table):
        raise ConfigError("E771", f"nothing released: no {deid_table} table", hint="run `tide run` first")
    released = store.deid_notes(study, key, ["note_id", "note_ref", "patient_ref", "text"])
    if not released:
        raise ConfigError("E771", f"nothing released for {study}/{key}", hint="check --study/--key or run `tide run`")
    ranges = store.surrogate_ranges(study, key)
    scores: list[DocumentScores] = []
    by_patient: dict[str, list[float]] = {}
    for row in released:
        raw_text = source_texts.get(row["note_id"], "")
        s = guard.score(row["note_ref"], raw_text, row["text"] or "", ranges.get(row["note_id"], ()))
        scores.append(s)
        by_patient.setdefault(row["patient_ref"], []).append(s.richness)
    richness = {p: max(v) for p, v in by_patient.items()}
    return ReleaseGuardScores(study, key, decide(scores), richness)
