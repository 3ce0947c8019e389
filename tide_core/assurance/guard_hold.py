"""The PHI Guard in the release: flagged documents are held out of the published release.

Before a release is verified and published, a :class:`GuardPass` scores every released document
of (study, key) with the configured guard (masked score, richness) at its pinned version and the
frozen threshold of the document's released ``source``.  A flagged document is **held**: in one
atomic commit its row leaves ``tide_deid_notes`` (and its spans ``tide_released_spans``) and it
is quarantined with code ``E773`` and a reason that names the guard version (never a score or
text), so the researchers' views, which read only ``tide_deid_notes``, never show it and every
input row stays accounted for.  The scores go to ``tide_guard_scores`` (ids and numbers only):
held rows are the review pile, ``rank`` 1 the riskiest; ``richness`` stratifies the audit sample.

The release feeds the pass one source chunk at a time
(:func:`tide_core.release.guard_stream.stream_guard`): each document is decided on its own, so the
result is the whole-study pass's (:func:`apply_guard`), and a process holds one chunk's texts,
the review pile and counts; the other score rows wait in a temporary Parquet file (ids and
numbers) and are streamed into the commit.

Holds survive a re-run of the release step (the held rows are kept while their quarantine row
stands); a re-anonymization of the partition brings the document back, and it is scored again.
A configuration without ``guard_dir`` changes nothing and the release records that no guard ran.
"""

from __future__ import annotations

import datetime as dt
import json
import tempfile
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from tide_core.assurance.guard_model import GuardModel
from tide_core.assurance.guard_release import decide
from tide_core.config import TideConfig
from tide_core.errors import ConfigError
from tide_core.io.warehouse import PartitionWrite, StreamedWriteWarehouse, Warehouse
from tide_core.store.release_store import ReleaseStore
from tide_core.store.tables import GUARD_SCORES, to_table

#: Quarantine code and stage of a document held by the PHI Guard for review.
HELD_CODE = "E773"
HELD_STAGE = "guard"
#: What the release row and the run say when no guard is configured.
NO_GUARD = "none configured: the release is not screened by the PHI Guard"
#: Score rows of released (not held) documents streamed into the commit at a time.
SCORE_BATCH_ROWS = 50_000
#: The released columns a guard pass scores and records.
DEID_COLUMNS = ["note_id", "text", "source", "note_ref", "patient_ref"]


@dataclass(frozen=True)
class HoldReport:
    """Counts of one guard pass over a release (no text, no scores, no ids)."""

    study: str
    key: str
    version: str
    thresholds: dict[str, float]
    n_scored: int
    n_newly_held: int
    held_by_source: dict[str, int] = field(default_factory=dict)
    scored_by_source: dict[str, int] = field(default_factory=dict)

    @property
    def n_held(self) -> int:
        return sum(self.held_by_source.values())

    def flag_rates(self) -> dict[str, float]:
        """Share of each source's documents held (held / (held + released))."""
        return {
            src: round(self.held_by_source.get(src, 0) / n, 4) for src, n in sorted(self.scored_by_source.items()) if n
        }

    def metadata(self) -> dict[str, Any]:
        return {
            "guard_version": self.version,
            "guard_thresholds": dict(sorted(self.thresholds.items())),
            "n_guard_scored": self.n_scored,
            "n_held": self.n_held,
            "n_newly_held": self.n_newly_held,
            "held_by_source": dict(sorted(self.held_by_source.items())),
            "flag_rate_by_source": self.flag_rates(),
        }


def load_pinned_guard(config: TideConfig) -> GuardModel | None:
    """The configured guard at its frozen threshold, or None when the site configured none.

    A ``guard_version`` pin that the model on disk does not match fails closed (E774): a new
    guard version means re-baselining the thresholds and the flag rates, never a silent swap.
    """
    if not config.guard_dir:
        return None
    guard = GuardModel.load(config.guard_dir)
    if config.guard_version and guard.version != config.guard_version:
        raise ConfigError(
            "E774",
            f"the PHI Guard in {config.guard_dir} is {guard.version}, the configuration pins {config.guard_version}",
            hint="a new guard version means re-baseline: review its dial, then set guard_version (and "
            "guard_thresholds) in the config file to the new version",
        )
    return guard


class GuardPass:
    """One guard pass over the release of (study, key): fed batch by batch, committed once.

    :meth:`add` scores one batch of released rows (a source chunk's, on the release path) and
    decides each document at the frozen threshold of its ``source``; :meth:`commit` writes the
    scores and the holds in one atomic commit and returns the :class:`HoldReport`.  In memory:
    one batch, the held documents' score rows (the review pile) and counts.  The score rows of
    the documents that stay released are spilled, ids and numbers only, to a Parquet file in a
    private temporary directory and streamed into the commit (removed by :meth:`close`).
    """

    def __init__(self, wh: Warehouse, config: TideConfig, study: str, key: str, guard: GuardModel) -> None:
        """Read the holds that stand (E773 quarantine rows and their held score rows)."""
        self.wh, self.config, self.study, self.key, self.guard = wh, config, study, key, guard
        self.now = dt.datetime.now(dt.UTC)
        names = config.tables
        part = {"study": study, "key": key}
        on_hold: list[str] = []
        if wh.table_exists(names.quarantine):
            where = dict(part, code=HELD_CODE)
            ids = wh.read_table(names.quarantine, ["note_id"], where)["note_id"].to_pylist()
            on_hold = sorted({str(v) for v in ids if v is not None})
        self.kept: list[dict[str, Any]] = []
        if on_hold and wh.table_exists(names.guard_scores):
            stored = wh.read_table(names.guard_scores, None, dict(part, note_id=on_hold)).to_pylist()
            self.kept = [dict(r, scored_at=r["scored_at"] or self.now) for r in stored if r["held"]]
        self.thresholds: dict[str, float] = {}
        self.pile: list[dict[str, Any]] = []  # score rows of the documents held by this pass
        self.new_q: list[dict[str, Any]] = []  # their quarantine rows
        self.n_scored = 0
        self.scored_by_source: Counter[str] = Counter()
        self._dir = tempfile.TemporaryDirectory(prefix="tide-guard-")
        self._spill_path = Path(self._dir.name) / "released_scores.parquet"
        self._spill: pq.ParquetWriter | None = None
        self._reason = (
            f"held by the PHI Guard ({guard.version}) for review: the released text still looks like it holds "
            "PHI; review the note (tide review), then re-run the release"
        )

    def add(
        self,
        rows: Sequence[Mapping[str, Any]],
        ranges: Mapping[str, Sequence[tuple[int, int]]],
        source_texts: Mapping[str, str],
        source_patients: Mapping[str, str | None],
    ) -> None:
        """Score released ``rows`` (``note_id``, ``text``, ``source``, ``note_ref``, ``patient_ref``).

        ``ranges``: note_id -> surrogate (out_start, out_end) ranges; ``source_texts`` /
        ``source_patients``: note_id -> original text / source patient id (the raw and richness
        scores and the quarantine row).  A note id is in one batch only.
        """
        if not rows:
            return
        scores = [
            self.guard.score(
                r["note_id"], source_texts.get(r["note_id"], ""), r["text"] or "", ranges.get(r["note_id"], ())
            )
            for r in rows
        ]
        sources = {r["note_id"]: r["source"] or "" for r in rows}
        decision = decide(scores, sources, self.config.guard_thresholds)
        self.thresholds.update(decision.thresholds)
        held = set(decision.review_pile)
        by_id = {r["note_id"]: r for r in rows}
        released: list[dict[str, Any]] = []
        for s in scores:
            r = by_id[s.note_id]
            row = {
                "study": self.study,
                "key": self.key,
                "note_id": s.note_id,
                "note_ref": r["note_ref"],
                "patient_ref": r["patient_ref"],
                "source": sources[s.note_id],
                "masked": s.masked,
                "richness": s.richness,
                "held": s.note_id in held,
                "rank": None,
                "guard_version": s.version,
                "threshold": decision.thresholds.get(sources[s.note_id], s.threshold),
                "scored_at": self.now,
            }
            (self.pile if row["held"] else released).append(row)
            self.scored_by_source[str(row["source"])] += 1
        self.n_scored += len(scores)
        self.new_q += [
            {
                "study": self.study,
                "key": self.key,
                "note_id": nid,
                "patient_id": source_patients.get(nid),
                "stage": HELD_STAGE,
                "code": HELD_CODE,
                "reason": self._reason,
                "row_number": None,
                "quarantined_at": self.now,
            }
            for nid in sorted(held)
        ]
        if released:
            if self._spill is None:
                self._spill = pq.ParquetWriter(self._spill_path, GUARD_SCORES)
            self._spill.write_table(to_table("guard_scores", released))

    def _released_scores(self) -> Iterator[pa.Table]:
        """The spilled score rows, :data:`SCORE_BATCH_ROWS` at a time."""
        if self._spill is None:
            return
        self._spill.close()
        self._spill = None
        spilled = pq.ParquetFile(self._spill_path)
        try:
            for batch in spilled.iter_batches(SCORE_BATCH_ROWS):
                yield pa.Table.from_batches([batch])
        finally:
            spilled.close()

    def commit(self) -> HoldReport:
        """Write the scores and hold the flagged documents in one atomic commit (see module doc).

        The held documents' rows leave ``tide_deid_notes`` and ``tide_released_spans``
        (``note_id IN`` the held ids) and their E773 rows join the quarantine; the score rows of
        the partition are replaced, streamed into the commit where the backend streams commits.
        """
        names = self.config.tables
        part = {"study": self.study, "key": self.key}
        ranked = sorted(self.kept + self.pile, key=lambda r: (-(r["masked"] or 0.0), r["note_id"]))
        for i, r in enumerate(ranked, start=1):
            r["rank"] = i

        def scores() -> Iterator[pa.Table]:
            yield from self._released_scores()
            yield to_table("guard_scores", ranked)

        writes: list[PartitionWrite] = []
        held = sorted({r["note_id"] for r in self.new_q})
        if held:
            chosen = dict(part, note_id=held)
            writes = [
                PartitionWrite(names.deid_notes, to_table("deid_notes", []), chosen),
                PartitionWrite(names.released_spans, to_table("released_spans", []), chosen),
                PartitionWrite(names.quarantine, to_table("quarantine", self.new_q), dict(chosen, code=HELD_CODE)),
            ]
        if isinstance(self.wh, StreamedWriteWarehouse):
            self.wh.replace_partitions_streamed([(names.guard_scores, part, scores)], writes)
        else:  # a backend without streamed commits: the score rows in memory, one commit all the same
            self.wh.replace_partitions(
                [PartitionWrite(names.guard_scores, pa.concat_tables(list(scores())), part), *writes]
            )
        held_by_source = Counter(str(r["source"] or "") for r in ranked)
        scored_by_source = self.scored_by_source + Counter(str(r["source"] or "") for r in self.kept)
        return HoldReport(
            self.study,
            self.key,
            self.guard.version,
            dict(self.thresholds),
            self.n_scored,
            len(held),
            dict(held_by_source),
            dict(scored_by_source),
        )

    def close(self) -> None:
        """Remove the spill file."""
        if self._spill is not None:
            self._spill.close()
            self._spill = None
        self._dir.cleanup()

    def __enter__(self) -> GuardPass:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def apply_guard(
    wh: Warehouse,
    config: TideConfig,
    study: str,
    key: str,
    guard: GuardModel,
    source_texts: Mapping[str, str],
    source_patients: Mapping[str, str | None],
) -> HoldReport:
    """Score every released document of (study, key) in one batch and hold the flagged ones.

    ``source_texts``/``source_patients``: note_id -> original text / source patient id, for the whole
    study (small studies and tests; the release streams the study chunk by chunk with
    :func:`tide_core.release.guard_stream.stream_guard`).  Idempotent: a second pass holds nothing new.
    """
    store = ReleaseStore(wh, config.tables)
    with GuardPass(wh, config, study, key, guard) as gp:
        gp.add(
            store.deid_notes(study, key, DEID_COLUMNS),
            store.surrogate_ranges(study, key),
            source_texts,
            source_patients,
        )
        return gp.commit()


def release_guard_columns(report: HoldReport | None) -> dict[str, Any]:
    """The guard columns of a ``tide_releases`` row (counts, version and thresholds only)."""
    if report is None:
        return {"n_held": None, "guard_version": "", "guard_thresholds": ""}
    return {
        "n_held": report.n_held,
        "guard_version": report.version,
        "guard_thresholds": json.dumps(
            {"thresholds": dict(sorted(report.thresholds.items())), "flag_rate_by_source": report.flag_rates()}
        ),
    }
