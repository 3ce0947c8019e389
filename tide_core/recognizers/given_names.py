"""The given names ``tide.names`` knows: the surrogate list's plus a recognition-only list.

``data/surrogates/first_names.txt`` (16 Faker locales) is also what name surrogates are drawn
from, so it cannot grow without changing every key's surrogates. ``data/names/given_names_more.txt``
adds the given names of all of Faker's person locales (Latin script, everyday English words left
out; see its NOTICE.txt) for recognition only: "Philippa Falkenrath", "Tadeo Brennan".
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import resources

from tide_core.steps.propagate import name_lexicon

MORE_GIVEN = "given_names_more.txt"


def _more_path() -> resources.abc.Traversable:
    return resources.files("tide_core") / "data" / "names" / MORE_GIVEN


@lru_cache(maxsize=1)
def recognition_given_names() -> frozenset[str]:
    """Case-folded given names of three letters or more: the surrogate list's and the extra list's."""
    words = _more_path().read_text(encoding="utf-8").split("\n")
    return name_lexicon()[0] | frozenset(w.strip().casefold() for w in words if len(w.strip()) >= 3)


@lru_cache(maxsize=1)
def more_given_sha256() -> str:
    """Content hash of the extra list (it changes what ``tide.names`` finds: in its fingerprint)."""
    return hashlib.sha256(_more_path().read_bytes()).hexdigest()
