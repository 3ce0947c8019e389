"""AGE spans: HIPAA Safe Harbor aggregation.

Ages up to 89 are not identifying on their own and are kept (clinical utility); ages over 89
become ``90+``.  The span is normally the digits only (``67`` in ``67-year-old``); a trailing
unit inside the span (``95 y/o``, ``92yo``) is kept after the aggregated number.  Spelled-out
ages (``ninety-two``) are understood too.  Anything that is not an age raises a coded
``AnonymizationError`` so the note is quarantined instead of leaking a mislabelled value.
"""

from __future__ import annotations

import re

from tide_core.errors import AnonymizationError

MAX_KEPT = 89
AGGREGATE = "90+"
_NUMERIC = re.compile(
    r"(?P<num>\d{1,3}(?:\.\d+)?)"
    r"(?P<unit>\s*-?\s*(?:\+|years?(?:[- ]old)?|yrs?|y/?o|y\.o\.|yo|y"
    r"|months?|mos?|m/?o|weeks?|wks?|days?|d)?\.?)",
    re.I,
)
_UNITS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}


def _words_value(text: str) -> int | None:
    words = [w for w in re.split(r"[\s-]+", text.lower().strip()) if w and w != "and"]
    total, current = 0, 0
    if not words:
        return None
    for w in words:
        if w in _UNITS:
            current += _UNITS[w]
        elif w in _TENS:
            current += _TENS[w]
        elif w == "hundred":
            current = max(current, 1) * 100
        else:
            return None
    return total + current


def anonymize_age(value: str) -> tuple[str, str]:
    """(released text, operator): ``("67", "age.keep")`` or ``("90+", "age.aggregate")``."""
    core = value.strip()
    lead, trail = value[: len(value) - len(value.lstrip())], value[len(value.rstrip()) :]
    m = _NUMERIC.fullmatch(core)
    if m:
        age = float(m.group("num"))
        if age <= MAX_KEPT or re.match(r"\s*-?\s*(?:mo|m/|week|wk|day|d\b|d$)", m.group("unit"), re.I):
            return value, "age.keep"  # 95 months or 92 days is not an age over 89
        unit = m.group("unit")
        unit = unit[1:] if unit.startswith("+") else unit
        return lead + AGGREGATE + unit + trail, "age.aggregate"
    n = _words_value(core)
    if n is not None:
        return (value, "age.keep") if n <= MAX_KEPT else (lead + AGGREGATE + trail, "age.aggregate")
    raise AnonymizationError(
        "E420",
        "AGE span is not a number of years",
        hint="an AGE span holds the digits of the age (docs/architecture.md); relabel or fix the recognizer",
    )
