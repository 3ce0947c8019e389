"""An audit answered from gold annotations: for synthetic corpora (the demo), never for real data.

A real audit is a person reading the sampled patients' released notes.  On a synthetic corpus
the gold spans say exactly where the PHI was, so the review can be computed: a sampled patient
*leaks* when any gold PHI surface of one of their notes (ages aside, which may be kept) appears,
as a whole word on the normalised and case-folded view, in that note's released text outside its
surrogates.  The
rounds are recorded against the frames :func:`~tide_core.release.evidence.plan_audit` wrote,
with a reviewer name that says they came from gold.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from tide_core.assurance.audit_table import AuditRecord
from tide_core.evaluation.gold_io import GoldDoc
from tide_core.io.warehouse import Warehouse
from tide_core.release import evidence
from tide_core.release.known_phi_check import mask_surrogates
from tide_core.store.release_store import ReleaseStore
from tide_core.store.tables import TableNames
from tide_core.text.normalize import normalize

REVIEWER = "synthetic gold annotations (demo; not a human review)"
#: Labels whose value may legitimately be kept (ages <= 89).
KEPT = frozenset({"AGE"})
#: Shorter surfaces are not searched (two-letter state codes, initials).
MIN_LEN = 3
#: Date fragments shorter than this (a year, a month and day) are not searched: a shifted full
#: date can hold the same digits without revealing the original mention.
MIN_DATE_LEN = 8


def _view(text: str) -> str:
    return normalize(text).text.casefold()


def leaked(gold: GoldDoc, released_text: str, surrogates: Iterable[tuple[int, int]] = ()) -> bool:
    """Whether a gold PHI surface of ``gold`` survives as a whole word in ``released_text``
    outside its ``surrogates`` (output ranges): a keyed surrogate that happens to equal another
    mention of the note (a surrogate state that is the original of another) reveals nothing."""
    out = _view(mask_surrogates(released_text, surrogates))
    for span in gold.spans:
        if span.label in KEPT:
            continue
        surface = _view(gold.text[span.start : span.end]).strip()
        if len(surface) < (MIN_DATE_LEN if span.label == "DATE" else MIN_LEN):
            continue
        if re.search(r"(?<!\w)" + re.escape(surface) + r"(?!\w)", out):
            return True
    return False


def audit_from_gold(
    wh: Warehouse,
    names: TableNames,
    study: str,
    key: str,
    gold: Iterable[GoldDoc],
    *,
    target_rate: float = 0.01,
    confidence: float = 0.95,
    seed: int = 42,
) -> list[AuditRecord]:
    """Plan the audit of the content no round covers and record each frame's sample, reviewed
    against the gold annotations (one round per frame)."""
    by_id = {g.note_id: g for g in gold}
    plans = evidence.plan_audit(wh, names, study, key, target_rate=target_rate, confidence=confidence, seed=seed)
    store = ReleaseStore(wh, names)
    rows = store.deid_notes(study, key, ["note_id", "patient_ref", "row_hash", "text"])
    surrogates: dict[str, list[tuple[int, int]]] = {}
    for s in store.released_spans(study, key, ["note_id", "out_start", "out_end"]):
        surrogates.setdefault(s["note_id"], []).append((int(s["out_start"]), int(s["out_end"])))
    known = evidence.frames(wh, names, study, key)
    records = []
    for plan in plans:
        sample = set(plan.sample)
        frame = known[plan.frame_id]
        leaky = {
            r["patient_ref"]
            for r in rows
            if r["row_hash"] in frame.hashes
            and r["patient_ref"] in sample
            and r["note_id"] in by_id
            and leaked(by_id[r["note_id"]], r["text"] or "", surrogates.get(r["note_id"], ()))
        }
        records.append(
            evidence.record_round(
                wh, names, study, key, plan.frame_id, len(sample), len(leaky), reviewer=REVIEWER, confidence=confidence
            )
        )
    return records


def summary(records: Sequence[AuditRecord]) -> str:
    """One line: patients reviewed and leaks found across the rounds."""
    n = sum(r.n_patients_sampled for r in records)
    k = sum(r.n_leaks for r in records)
    return f"{len(records)} audit rounds from gold: {k} leaking patients among {n} reviewed"
