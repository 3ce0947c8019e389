"""Case folding with ``re.IGNORECASE``'s own equivalences (same length as the text).

``re.IGNORECASE`` on ``str`` compares characters by their simple lower case, plus a few
equivalence classes (i/ı, s/ſ, µ/μ, ...: ``re._casefix``).  Mapping every character to the
smallest member of its class ("fold") makes case-insensitive equality plain string equality, so
an Aho-Corasick pass over the folded text finds what a case-insensitive pattern can match.
"""

from __future__ import annotations

import _sre
import re
from functools import lru_cache
from re._casefix import _EXTRA_CASES  # the classes re itself uses (closed under membership)

_NON_ASCII_RUN = re.compile(r"([^\x00-\x7f]+)")


@lru_cache(maxsize=1)
def _case_classes() -> dict[int, int]:
    return {k: min((k, *v)) for k, v in _EXTRA_CASES.items()}


@lru_cache(maxsize=65536)
def fold_char(ch: str) -> str:
    """The ``re.IGNORECASE`` class representative of one character."""
    low = _sre.unicode_tolower(ord(ch))
    return chr(_case_classes().get(low, low))


def re_fold(text: str) -> str:
    """``text`` with each character replaced by its ``re.IGNORECASE`` class representative.

    Same length as ``text``; two strings match each other under ``re.IGNORECASE`` exactly when
    their folds are equal.  ASCII is folded by ``str.lower`` (the smallest member of an ASCII
    letter's class is its lower-case letter), the other characters one by one.
    """
    if text.isascii():
        return text.lower()
    pieces = _NON_ASCII_RUN.split(text)  # ASCII, non-ASCII, ASCII, ... (the split keeps the runs)
    return "".join(p.lower() if i % 2 == 0 else "".join(map(fold_char, p)) for i, p in enumerate(pieces))
