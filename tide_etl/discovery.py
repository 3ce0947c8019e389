"""What exists in the warehouse and the key provider: studies, keys, notes not yet processed.

Studies come from a ``tide_studies`` table (column ``study``) when the source schema has one,
else from the distinct ``study`` values of the notes table.  A notes table without a ``study``
column is one study, named by ``default_study`` (the ``tide_config`` resource's setting; else
``$TIDE_DEFAULT_STUDY``, default ``default``).
Keys come from the key provider: a key version becomes a partition once any study has its secret.

A study value that is NULL or empty, or not a study name (``check_name``: spaces, invisible
characters) is never discovered; its rows are counted (never shown) in a warning of the
``tide.discovery`` log (E620, E621), and every recognition run of the table reports them too.
"""

from __future__ import annotations

import logging
import os
from collections import Counter

from tide_core.engine.study_chunks import StudyValueCensus, is_study_name

STUDIES_TABLE = "tide_studies"

log = logging.getLogger("tide.discovery")


def _columns(wh, name: str) -> list[str]:
    cols = getattr(wh, "columns", None)
    if cols is not None:
        return list(cols(name))
    return wh.read_table(name).column_names


def discover_studies(
    wh, notes_table: str = "notes", studies_table: str = STUDIES_TABLE, default_study: str | None = None
) -> list[str]:
    """The studies to partition by; values that are no study name are left out and counted (:func:`census`)."""
    return study_discovery(wh, notes_table, studies_table, default_study)[0]


def study_discovery(
    wh, notes_table: str = "notes", studies_table: str = STUDIES_TABLE, default_study: str | None = None
) -> tuple[list[str], StudyValueCensus]:
    """:func:`discover_studies` and the census of the values it left out (logged as E620/E621 warnings)."""
    if wh.table_exists(studies_table):
        table = studies_table
    elif wh.table_exists(notes_table):
        if "study" not in _columns(wh, notes_table):
            return [default_study or os.environ.get("TIDE_DEFAULT_STUDY") or "default"], StudyValueCensus()
        table = notes_table
    else:
        return [], StudyValueCensus()
    values = Counter(_text(v) for v in wh.read_table(table, ["study"]).column("study").to_pylist())
    found = census(values)
    for line in found.warnings(table):
        log.warning("study discovery: %s", line)
    return sorted(v for v in values if v is not None and is_study_name(v)), found


def census(values: Counter[str | None]) -> StudyValueCensus:
    """Rows (``values``: study value -> rows) with no study, and with a value that is no study name."""
    bad = {v: n for v, n in values.items() if v is not None and v != "" and not is_study_name(v)}
    return StudyValueCensus(values.get(None, 0) + values.get("", 0), sum(bad.values()), len(bad))


def _text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "\ufffd" + bytes(value).hex()  # a BLOB study is never a study name (as in the runs' census)
    return str(value)


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
