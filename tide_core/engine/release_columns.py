"""Free-text metadata columns of released rows (``note_type``, ``source``, ``site``).

These columns come from the source table and are released beside the de-identified text, so
they are screened too: a value is released only when it is on the study's allowlist
(``TideConfig.metadata_allowlist``) or, with no allowlist, when it has the shape of a category
label: at most 48 characters of letters, digits, spaces and ``/ & ( ) _ . : @ -``, no run of three
or more digits (dates, MRNs, phone numbers and accession numbers all have one), and no word that
is a known given name or surname. Anything else is released as :data:`WITHHELD` (never the value, never an error
message containing it), so a note id or free text typed into a category column never leaves.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from tide_core.propagate import name_lexicon

WITHHELD = "[withheld]"
COLUMNS = ("note_type", "source", "site")
_LABEL = re.compile(r"[A-Za-z][A-Za-z0-9 /&()_.:@\-]{0,47}")
_DIGIT_RUN = re.compile(r"\d{3}")
_WORD = re.compile(r"[A-Za-z]{3,}")


def release_value(value: object, allowlist: Collection[str] = ()) -> str | None:
    """The value to release for one metadata cell (``None`` stays ``None``)."""
    if value is None:
        return None
    text = str(value).strip()
    if allowlist:
        return text if text in allowlist else WITHHELD
    if not _LABEL.fullmatch(text) or _DIGIT_RUN.search(text):
        return WITHHELD
    _, _, names = name_lexicon()
    if any(w.casefold() in names for w in _WORD.findall(text)):
        return WITHHELD
    return text
