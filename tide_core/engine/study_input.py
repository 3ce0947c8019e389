"""A study's input read whole and validated: for the readers that need every note at once.

Study runs stream their input chunk by chunk (:mod:`tide_core.engine.study_chunks`); release
checks, the drift monitor, the review server and the PHI Guard read the study's validated notes
with :func:`read_study_input` instead, under the same validation rules.
"""

from __future__ import annotations

from tide_core.config import TideConfig
from tide_core.engine.validation import ValidatedInput, validate_table
from tide_core.errors import ConfigError
from tide_core.io.warehouse import Warehouse


def read_study_input(wh: Warehouse, study: str, config: TideConfig, notes_table: str | None = None) -> ValidatedInput:
    """Read and validate the study's notes.  A ``study`` column, when present, selects the rows."""
    name = notes_table or config.tables.notes
    if not wh.table_exists(name):
        raise ConfigError(
            "E609",
            f"notes table {name!r} not found in {wh.url}",
            hint="create it (tide demo loads a synthetic one) or pass --notes-table",
        )
    cols = wh.columns(name)
    table = wh.read_table(name, where={"study": study}) if "study" in cols else wh.read_table(name)
    return validate_table(table, name, config.max_note_chars)
