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


def _type_of(value: str, types: tuple[str, ...]) -> str | None:
    v = norm(value).rstrip(".")
    for t in types:
        nt = norm(t).rstrip(".")
        if v == nt or v.endswith(" " + nt):
            return t
    return None


def _facility(keyring: KeyRing, domain: str, list_name: str, types: tuple[str, ...], value: str) -> str:
    if not any(c.isalnum() for c in value):
        raise AnonymizationError(
            "E440",
            f"{list_name} span has no letters or digits",
            hint="the span must contain the facility or organisation name",
        )
    if re.fullmatch(r"[A-Z&]{2,6}", value.strip()):  # an acronym ("SHC", "UCSF") stays an acronym
        p = permutation(keyring.subkey(domain), b"acronym", 26)
        return "".join(chr(65 + p.derange(ord(c) - 65)) if c.isalpha() else c for c in value)
    t = _type_of(value, types)
    lst = (with_suffix(list_name, t) if t else None) or load_list(list_name)
    return case_like(value, lst.choose(keyring, domain, value))


def surrogate_hospital(keyring: KeyRing, value: str) -> str:
    return _facility(keyring, "hospital", "hospitals", HOSPITAL_TYPES, value)


def surrogate_organisation(keyring: KeyRing, value: str) -> str:
    return _facility(keyring, "other", "organisations", ORG_TYPES, value)
