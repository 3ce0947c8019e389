"""The known-PHI check as a recordable rider of the release's chunk pass.

:class:`KnownPhiRider` wraps a :class:`~tide_core.release.known_phi_check.KnownPhiScan` as a
:class:`~tide_core.release.scan.ChunkRider`: for each chunk it reads the rows of the patients
whose released notes the chunk holds (once: the same rows are digested and scanned), gives them
to the chunk's digest (with the patients table's name, searched columns and id type), and records
the chunk's tally (counts only).  A chunk whose digest matches takes its recorded tally; the
patients with known values are then found from the rows already read (no note text is scanned),
so ``n_patients_with_known_values`` stays a count of distinct patients.  Anything unreadable sets
the scan's failure: the check fails and nothing is recorded for the chunk.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tide_core.release.known_phi_check import (
    KINDS,
    KnownPhiScan,
    chunk_note_patients,
    known_values,
    released_patients,
)
from tide_core.release.scan import ReleaseChunk

#: The integer counts of the scan's tally that one chunk adds to.
_COUNTS = (
    "n_notes",
    "n_notes_checked",
    "n_notes_without_source",
    "n_notes_without_patient_row",
    "n_values_checked",
    "n_surviving",
    "n_notes_with_survivors",
)
_BY_KIND = (("checked", "checked_by_kind"), ("surviving", "surviving_by_kind"))


@dataclass(frozen=True)
class _ChunkPatients:
    """The patients of one chunk's released notes and their patients rows, read once."""

    pids: frozenset[str]
    rows: dict[str, list[dict[str, Any]]]


def _canon(row: Mapping[str, Any]) -> str:
    return json.dumps(row, sort_keys=True, default=str, separators=(",", ":"))


class KnownPhiRider:
    """:class:`~tide_core.release.known_phi_check.KnownPhiScan` as a recordable chunk rider."""

    name = "known_phi_survives"
    #: The scan's counts, and ``patients_without_values``: the chunk's patients with a patients row
    #: but no searchable value (0 almost always: then a reused chunk's patients with known values
    #: are exactly its patients with a row, and no value has to be worked out again).
    tally_names: tuple[str, ...] = (
        *_COUNTS,
        *(f"{p}/{k}" for p, _ in _BY_KIND for k in KINDS),
        "patients_without_values",
    )

    def __init__(self, scan: KnownPhiScan) -> None:
        """Ride ``scan`` (its tally is the check's)."""
        self.scan = scan

    def _counts(self) -> dict[str, int]:
        t = self.scan.tally
        out = {c: int(getattr(t, c)) for c in _COUNTS}
        for prefix, attr in _BY_KIND:
            out.update({f"{prefix}/{k}": int(n) for k, n in getattr(t, attr).items()})
        return out

    def chunk_inputs(self, rc: ReleaseChunk) -> tuple[list[object], _ChunkPatients | None] | None:
        """The patients table's layout and the rows of the chunk's patients (digest parts), read once."""
        s = self.scan
        if s.failure is not None:
            return None
        if s.patients is None:
            return [["no patients table", s.config.tables.patients]], None
        try:
            pids = released_patients(chunk_note_patients(rc), rc.released)
            rows = s.patients.rows(s.wh, pids)
        except Exception as exc:  # reported by the check's outcome: fail closed
            s.failure = exc
            return None
        p = s.patients
        parts: list[object] = [["patients", p.table, list(p.columns), str(p.id_type)]]
        parts += [[pid, sorted(_canon(r) for r in rows.get(pid, []))] for pid in sorted(pids)]
        return parts, _ChunkPatients(frozenset(pids), rows)

    def scan_chunk(self, rc: ReleaseChunk, state: _ChunkPatients | None) -> dict[str, int] | None:
        """Scan the chunk's released notes with the rows read; the counts it added (None: failed)."""
        before = self._counts()
        self.scan.add(rc, state.rows if state is not None else None)
        if self.scan.failure is not None:
            return None
        after = self._counts()
        out = {n: after[n] - before[n] for n in _COUNTS + tuple(f"{p}/{k}" for p, _ in _BY_KIND for k in KINDS)}
        # a patient's rows are the same in every chunk of the pass: "has known values" is the patient's
        with_rows = {p for p in state.pids if state.rows.get(p)} if state is not None else set()
        out["patients_without_values"] = len(with_rows - self.scan.tally.patients)
        return out

    def reuse_chunk(self, rc: ReleaseChunk, state: _ChunkPatients | None, tally: Mapping[str, int]) -> None:
        """Add a recorded tally; count the chunk's patients with known values from the rows read."""
        t = self.scan.tally
        for c in _COUNTS:
            setattr(t, c, getattr(t, c) + tally[c])
        for prefix, attr in _BY_KIND:
            by_kind = getattr(t, attr)
            for k in KINDS:
                by_kind[k] += tally[f"{prefix}/{k}"]
        patients = self.scan.patients
        if state is None or patients is None:
            return
        with_rows = {p for p in state.pids if state.rows.get(p)}
        if tally["patients_without_values"] == 0:  # (bound by the digest, as the rows are)
            t.patients |= with_rows
            return
        try:
            for pid in sorted(with_rows - t.patients):
                if any(known_values(row, patients.columns) for row in state.rows[pid]):
                    t.patients.add(pid)
        except Exception as exc:  # fail closed, as a scanned chunk would
            self.scan.failure = exc
