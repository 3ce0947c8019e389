"""Free-text metadata columns of released rows (``note_type``, ``source``, ``site``).

These columns come from the source table and are released beside the de-identified text, so
they are screened too, against values the study configured: a value (read as text, surrounding
whitespace stripped) is released only when it is, exactly, in its column's vocabulary
(``TideConfig.metadata_vocabulary``) or in ``TideConfig.metadata_allowlist`` (values allowed in
every column); ``TideConfig.released_metadata`` holds the union per column. Anything else is
released as :data:`WITHHELD` (never the value, never an error message containing it), and with
neither configured every value is withheld: nothing is judged by its shape, so a name, an e-mail
address, a date or a note id typed into a category column never leaves. ``None`` stays ``None``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from tide_core.config import METADATA_COLUMNS

WITHHELD = "[withheld]"
COLUMNS = METADATA_COLUMNS


def release_value(value: object, column: str, released: Mapping[str, Collection[str]]) -> str | None:
    """The value to release for one cell of ``column`` (``None`` stays ``None``).

    ``released``: column -> the values released as they are (``TideConfig.released_metadata``);
    a column it does not name releases nothing.
    """
    if value is None:
        return None
    text = str(value).strip()
    return text if text in released.get(column, ()) else WITHHELD
