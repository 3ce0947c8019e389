"""The PHI Guard's hold on the release path, streamed: one source chunk at a time, never the study.

:func:`stream_guard` feeds a :class:`~tide_core.assurance.guard_hold.GuardPass` with the release
of (study, key) beside its source, chunk by chunk (:func:`tide_core.release.scan.iter_release_chunks`:
``chunk_rows`` source rows, the released rows and spans of the note ids that chunk owns), so a
process holds one chunk's texts, the review pile and counts, whatever the study's size.  The
result is the whole-study pass's (:func:`~tide_core.assurance.guard_hold.apply_guard` with every
source text): each document is decided on its own scores at its source's frozen threshold, and
the scores and holds are written in the same one atomic commit.

A released row whose note id no chunk owns (its source row is gone) is found by count (released
rows minus those the chunks saw) and then scored without a source text, as the whole-study pass
scores it: the ids of the source are streamed into a set for that case only, the released ids are
streamed against it and only the rows found are read with their text (fail closed: every
released document is screened).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from tide_core.assurance.guard_hold import DEID_COLUMNS, GuardPass, HoldReport
from tide_core.assurance.guard_model import GuardModel
from tide_core.config import TideConfig
from tide_core.engine.study_chunks import StudySource, open_source
from tide_core.engine.validation import _as_str_id
from tide_core.io.warehouse import Warehouse
from tide_core.release.scan import iter_release_chunks, stream_rows
from tide_core.store.release_store import ReleaseStore

#: Columns of the released rows read beside a chunk's texts (iter_release_chunks reads note_id, text).
_REFS = ["note_id", "source", "note_ref", "patient_ref"]


def _ranges(spans: list[dict[str, Any]]) -> dict[str, list[tuple[int, int]]]:
    """note_id -> (out_start, out_end) of every replaced span."""
    out: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for s in spans:
        out[s["note_id"]].append((s["out_start"], s["out_end"]))
    return out


def _source_ids(src: StudySource) -> set[str]:
    """Every note id of the study's source rows (only when released rows outnumber what chunks own)."""
    ids: set[str] = set()
    for batch in stream_rows(src.wh, src.table, ["note_id"], src.source_where):
        ids.update(i for i in (_as_str_id(r["note_id"]) for r in batch) if i is not None)
    return ids


def stream_guard(
    wh: Warehouse,
    config: TideConfig,
    study: str,
    key: str,
    guard: GuardModel,
    chunk_rows: int | None = None,
    source: StudySource | None = None,
) -> HoldReport:
    """Score every released document of (study, key) chunk by chunk and hold the flagged ones.

    ``chunk_rows``: source rows per chunk (the study's default otherwise); ``source``: the study's
    chunk plan when the caller has it.  Idempotent, as the whole-study pass.
    """
    store = ReleaseStore(wh, config.tables)
    src = source if source is not None else open_source(wh, study, config, chunk_rows=chunk_rows)
    n_seen = 0
    with GuardPass(wh, config, study, key, guard) as gp:
        for rc in iter_release_chunks(wh, config, study, key, source=src):
            if not rc.released:
                continue
            n_seen += len(rc.released)
            ids = sorted({r["note_id"] for r in rc.released})
            refs = {r["note_id"]: r for r in store.deid_notes(study, key, _REFS, note_ids=ids)}
            rows = [{**refs.get(r["note_id"], dict.fromkeys(_REFS)), **r} for r in rc.released]
            notes = rc.source
            gp.add(
                rows,
                _ranges(rc.spans),
                {nid: n.text for nid, n in notes.items()},
                {nid: n.patient_id for nid, n in notes.items()},
            )
        if store.count("deid_notes", study, key) > n_seen:  # released rows of notes no chunk owns
            owned = _source_ids(src)
            seen: set[str] = set()
            for batch in stream_rows(wh, config.tables.deid_notes, ["note_id"], {"study": study, "key": key}):
                ids = sorted({r["note_id"] for r in batch if r["note_id"] not in owned and r["note_id"]} - seen)
                if ids:  # read with their text, these rows alone
                    seen.update(ids)
                    spans = store.released_spans(study, key, ["note_id", "out_start", "out_end"], note_ids=ids)
                    gp.add(store.deid_notes(study, key, DEID_COLUMNS, note_ids=ids), _ranges(spans), {}, {})
        return gp.commit()
