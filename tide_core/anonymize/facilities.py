"""Keyed surrogates for HOSPITAL and OTHER (organisation) spans.

The facility *type* is utility, not identity: ``Stanford Children's Hospital`` becomes another
children's hospital, ``Acme Logistics Inc.`` another ``... Inc.``.  The surrogate is drawn from the
list entries with the same type suffix (a keyed derangement when the value is itself listed, else
a keyed index: collisions follow the birthday bound for the group size), written in the
original's capitalisation pattern (UPPER / lower / as listed).  An all-caps acronym (``SHC``)
becomes another acronym of the same length (letters by a keyed derangement of A-Z).
"""

from __future__ import annotations

import re

from tide_core.anonymize.keys import KeyRing
from tide_core.anonymize.small_domain import permutation
from tide_core.anonymize.surrogates import case_like, load_list, norm, with_suffix
from tide_core.errors import AnonymizationError

HOSPITAL_TYPES = (
    "Behavioral Health Center",
    "Regional Medical Center",
    "Rehabilitation Hospital",
    "Children's Hospital",
    "Community Hospital",
    "Memorial Hospital",
    "General Hospital",
    "Surgery Center",
    "Medical Center",
    "Cancer Center",
    "Health Center",
    "Health System",
    "Family Practice",
    "Nursing Home",
    "Urgent Care",
    "Hospital",
    "Clinic",
    "Hospice",
)
ORG_TYPES = (
    "Community College",
    "Elementary School",
    "Police Department",
    "Fire Department",
    "School District",
    "Middle School",
    "High School",
    "Credit Union",
    "Manufacturing",
    "Technologies",
    "Construction",
    "Corporation",
    "Consulting",
    "Industries",
    "Foundation",
    "Logistics",
    "Insurance",
    "University",
    "Partners",
    "Company",
    "College",
    "Academy",
    "Church",
    "Motors",
    "Group",
    "Foods",
    "Farms",
    "Bank",
    "Inc.",
    "LLC",
)


def _normed_types(types: tuple[str, ...]) -> tuple[tuple[str, str, str], ...]:
    """(type, its lookup form, " " + its lookup form), in the order of ``types``."""
    return tuple((t, nt, " " + nt) for t in types for nt in (norm(t).rstrip("."),))


_HOSPITAL_NORMED = _normed_types(HOSPITAL_TYPES)
_ORG_NORMED = _normed_types(ORG_TYPES)
_ACRONYM = re.compile(r"[A-Z&]{2,6}")


def _type_of(value: str, types: tuple[str, ...]) -> str | None:
    return _type_in(norm(value), _normed_types(types))


def _type_in(key: str, normed: tuple[tuple[str, str, str], ...]) -> str | None:
    """The first type whose lookup form is ``key`` (``norm`` of the value) or ends it, as a word."""
    v = key.rstrip(".")
    for t, nt, tail in normed:
        if v == nt or v.endswith(tail):
            return t
    return None


def _facility(
    keyring: KeyRing, domain: str, list_name: str, normed: tuple[tuple[str, str, str], ...], value: str
) -> str:
    if not any(c.isalnum() for c in value):
        raise AnonymizationError(
            "E440",
            f"{list_name} span has no letters or digits",
            hint="the span must contain the facility or organisation name",
        )
    if _ACRONYM.fullmatch(value.strip()):  # an acronym ("SHC", "UCSF") stays an acronym
        p = permutation(keyring.subkey(domain), b"acronym", 26)
        return "".join(chr(65 + p.derange(ord(c) - 65)) if c.isalpha() else c for c in value)
    key = norm(value)
    t = _type_in(key, normed)
    lst = (with_suffix(list_name, t) if t else None) or load_list(list_name)
    return case_like(value, lst.choose_normed(keyring, domain, key))


def surrogate_hospital(keyring: KeyRing, value: str) -> str:
    """Keyed surrogate of a hospital name from the hospital list.

    A name of a kind (``... Clinic``) draws from hospitals of that kind; an acronym stays an acronym.
    """
    return _facility(keyring, "hospital", "hospitals", _HOSPITAL_NORMED, value)


def surrogate_organisation(keyring: KeyRing, value: str) -> str:
    """Keyed surrogate of an organisation name other than a hospital, from the organisation list.

    As for hospitals, a name of a kind draws from entries of that kind and an acronym stays one.
    """
    return _facility(keyring, "other", "organisations", _ORG_NORMED, value)
