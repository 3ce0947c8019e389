"""Words of an address that name no place: street types, compass directions and unit words.

The location anonymizer keeps them ("Suite", "Ave", "NW") and replaces the words around them; a
LOCATION span made of nothing else ("Rm", "South" cut from "South Hadley") gets a place-name
surrogate, so no LOCATION span is ever released unchanged.
"""

from __future__ import annotations

import re

STREET_SUFFIXES = frozenset(
    """street st avenue ave av road rd boulevard blvd lane ln drive dr court ct place pl
way terrace ter circle cir parkway pkwy highway hwy route rte square sq trail trl loop alley aly crossing xing
pike plaza plz row run path walk expressway expy freeway fwy turnpike tpke""".split()
)
DIRECTIONS = frozenset("n s e w ne nw se sw north south east west northeast northwest southeast southwest".split())
UNIT_WORDS = frozenset(
    "apt apartment suite ste unit fl floor bldg building room rm po p o box lot trlr no number dept".split()
)

_WORD = re.compile(r"[^\W\d_]+")


def names_no_place(value: str) -> bool:
    """True when ``value`` has no digit and every word is a unit word or a direction ("Rm", "NW"),
    or it is a single street-type word ("Ave").  "Suite 4" and "Court Street" name a place."""
    if any(c.isdigit() for c in value):
        return False
    words = [w.lower().rstrip(".") for w in _WORD.findall(value)]
    if not words:
        return False
    if all(w in UNIT_WORDS or w in DIRECTIONS for w in words):
        return True
    return len(words) == 1 and words[0] in STREET_SUFFIXES
