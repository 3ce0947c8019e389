"""What exists in the warehouse and the key provider: studies, keys, notes not yet processed.

Studies come from a ``tide_studies`` table (column ``study``) when the source schema has one,
else from the distinct ``study`` values of the notes table.  A notes table without a ``study``
column is one study, named by ``default_study`` (the ``tide_config`` resource's setting; else
``$TIDE_DEFAULT_STUDY``, default ``default``).
Keys come from the key provider: a key version becomes a partition once any study has its secret.
"""

from __future__ import annotations

import os

STUDIES_TABLE = "tide_studies"


def _columns(wh, name: str) -> list[str]:
    cols = getattr(wh, "columns", None)
    if cols is not None:
        return list(cols(name))
    return wh.read_table(name).column_names


def discover_studies(
    wh, notes_table: str = "notes", studies_table: str = STUDIES_TABLE, default_study: str | None = None
) -> list[str]:
    if wh.table_exists(studies_table):
        values = wh.read_table(studies_table, ["study"]).column("study").to_pylist()
    elif wh.table_exists(notes_table):
        if "study" not in _columns(wh, notes_table):
            return [default_study or os.environ.get("TIDE_DEFAULT_STUDY") or "default"]
        values = wh.read_table(notes_table, ["study"]).column("study").to_pylist()
    else:
        return []
    return sorted({str(v) for v in values if v not in (None, "")})


def discover_keys(provider) -> list[str]:
    """Key versions that have a secret for at least one study (directory providers list them)."""
    return sorted({key for _study, key in provider.available()})


def keys_for_study(provider, study: str, keys) -> list[str]:
    """The key partitions whose secret exists for ``study`` (only these cells may run)."""
    return [k for k in keys if provider.has(study, k)]


def unprocessed_note_ids(wh, study: str, tables) -> set[str]:
    """Notes of ``study`` that recognition has not seen (neither cached nor quarantined).

    Changed texts are not caught here (recognition checks text hashes on every run); this is the
    cheap signal the nightly schedule uses to decide which studies to run.
    """
    if not wh.table_exists(tables.notes):
        return set()
    where = {"study": study} if "study" in _columns(wh, tables.notes) else None
    source = {str(v) for v in wh.read_table(tables.notes, ["note_id"], where=where).column("note_id").to_pylist()}
    seen: set[str] = set()
    if wh.table_exists(tables.recognized_notes):
        seen |= {
            str(v)
            for v in wh.read_table(tables.recognized_notes, ["note_id"], where={"study": study})
            .column("note_id")
            .to_pylist()
        }
    if wh.table_exists(tables.quarantine):
        seen |= {
            str(v)
            for v in wh.read_table(tables.quarantine, ["note_id"], where={"study": study, "key": ""})
            .column("note_id")
            .to_pylist()
        }
    return source - seen
