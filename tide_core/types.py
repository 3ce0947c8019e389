"""Shared type aliases: PHI labels, key domains and option literals."""

from __future__ import annotations

from typing import Final, Literal, get_args

from tide_core.errors import ConfigError

Label = Literal[
    "PATIENT",  # patients and their relatives
    "DOCTOR",  # clinicians and staff
    "DATE",  # any date element more specific than a year range, incl. times attached to dates
    "AGE",  # ages (all ages are labelled; > 89 are aggregated on release)
    "ID",  # MRNs, account numbers, SSNs, licence and device numbers
    "PHONE",  # phone and fax numbers
    "EMAIL",  # e-mail addresses
    "URL",  # web addresses and IPs
    "LOCATION",  # street, city, state, ZIP, country
    "HOSPITAL",  # facilities, clinics, departments with proper names
    "OTHER",  # employers, schools and other identifying organisations
]
LABELS: Final[tuple[str, ...]] = tuple(get_args(Label))

#: Labels reported in evaluation tables (every label is scored).
SCORED_LABELS: Final[tuple[str, ...]] = LABELS

KeyDomain = Literal["date", "id", "name", "location", "hospital", "contact", "age", "other"]
KEY_DOMAINS: Final[tuple[str, ...]] = tuple(get_args(KeyDomain))

Executor = Literal["local", "ray"]
EXECUTORS: Final[tuple[str, ...]] = tuple(get_args(Executor))


def check_label(label: str) -> str:
    """Return ``label`` if it is a known PHI label, else raise a ConfigError listing the choices."""
    if label not in LABELS:
        raise ConfigError(
            "E001",
            f"unknown PHI label {label!r}",
            hint=f"use one of: {', '.join(LABELS)} (or map it with a label crosswalk)",
        )
    return label
