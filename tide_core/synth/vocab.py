"""Vocabulary for the synthetic corpus, loaded from ``tide_core/data/synth/``.

Every list can be split into two disjoint halves by a stable hash of the entry (``crc32``, not
Python's salted ``hash``), so the training corpus and the held-out corpus draw names, streets,
cities, employers and outside facilities from different halves: the held-out benchmark then
measures recognition of values the model never saw.  ``part="all"`` (the demo) uses everything.
"""

from __future__ import annotations

import csv
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

Part = Literal["all", "train", "heldout"]

DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "synth"

#: Words that must never be a synthetic surname or first name: they are the roots of the
#: eponyms used as hard negatives, so a patient called "Foley" would blur the benchmark.
EPONYM_ROOTS = frozenset(
    "Parkinson Foley Glasgow Babinski Apgar Whipple Bell Hodgkin Crohn Cushing Addison Graves "
    "Hashimoto Alzheimer Murphy McBurney Kernig Brudzinski Homans Romberg Trendelenburg Swan Ganz "
    "Hickman Jackson Pratt Wilms Kaposi Barrett Guillain Barre Meniere Raynaud Sjogren Tourette "
    "Wernicke Korsakoff Epley Heimlich Lachman McMurray Phalen Tinel Allen Kussmaul Cheyne Stokes "
    "Mallory Weiss Roux Nissen Colles Hartmann Ludwig Paget Reed Sternberg Gleason Mallampati Wells "
    "Child Pugh Ranson Virchow Wolff White Brugada Stevens Johnson Charcot Bence Jones Lyme "
    "Huntington Down Turner Marfan Ehlers Danlos Hirschsprung Kawasaki Fallot Baker Dupuytren "
    "Quervain Osgood Schlatter Legg Calve Perthes Bankart Hill Sachs Schatzki Zenker Meckel Cobb "
    "Salter Harris Breslow Clark Bishop Braden Morse Richmond Ramsay Epworth Beck Karnofsky Killip "
    "Fontaine Duke Rockall Blatchford Centor Lown Ganong Levine Mobitz Austin Flint Foley".split()
)


def _stable_half(value: str) -> str:
    return "train" if zlib.crc32(value.encode("utf-8")) % 2 == 0 else "heldout"


def split(items: list[Any], part: Part, key: Callable[[Any], Any] = lambda x: x) -> tuple[Any, ...]:
    """The entries of ``items`` that belong to ``part`` (order preserved)."""
    if part == "all":
        return tuple(items)
    return tuple(x for x in items if _stable_half(key(x)) == part)


def _data_text(name: str) -> str:
    return (DATA_DIR / name).read_text(encoding="utf-8")


def _lines(name: str) -> list[str]:
    return [line.strip() for line in _data_text(name).splitlines() if line.strip()]


def _rows(name: str) -> list[dict[str, str]]:
    return list(csv.DictReader(_data_text(name).splitlines()))


@dataclass(frozen=True)
class FirstName:
    name: str
    sex: str  # "F" or "M"
    origin: str


@dataclass(frozen=True)
class City:
    city: str
    state: str  # two-letter abbreviation
    state_name: str
    zip_low: int  # ZIP3 range of the state
    zip_high: int


@dataclass(frozen=True)
class FacilityName:
    name: str
    pool: str  # "site" (the demo site's own facilities, in the gazetteer) or "external"
    kind: str  # "hospital" or "clinic"


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """One part (all / train / heldout) of every list the generator draws from."""

    part: str
    first_f: tuple[str, ...]
    first_m: tuple[str, ...]
    last: tuple[str, ...]
    streets: tuple[str, ...]
    suffixes: tuple[tuple[str, str], ...]
    cities: tuple[City, ...]
    site_facilities: tuple[FacilityName, ...]
    external_facilities: tuple[FacilityName, ...]
    employers: tuple[str, ...]
    schools: tuple[str, ...]
    email_domains: tuple[str, ...]
    countries: tuple[str, ...]
    eponyms: tuple[str, ...]
    eponyms_by_category: dict[str, Any]  # category (disease, sign, score, device, position, procedure) -> phrases
    medications: tuple[tuple[str, str], ...]
    states: tuple[tuple[str, str], ...]  # (abbr, full name)


def _clean_name(name: str) -> bool:
    return name.replace("'", "").split("-")[0] not in EPONYM_ROOTS and name not in EPONYM_ROOTS


@lru_cache(maxsize=4)
def load_vocabulary(part: Part = "all") -> Vocabulary:
    """Load (and cache) the vocabulary part; ``train`` and ``heldout`` are disjoint."""
    if part not in ("all", "train", "heldout"):
        raise ValueError(f"unknown vocabulary part {part!r}")
    firsts = [FirstName(r["name"], r["sex"], r["origin"]) for r in _rows("first_names.csv")]
    firsts = [f for f in firsts if _clean_name(f.name)]
    lasts = [r["name"] for r in _rows("last_names.csv") if _clean_name(r["name"])]
    states = {r["abbr"]: r for r in _rows("states.csv")}
    cities = [
        City(
            r["city"],
            r["state"],
            states[r["state"]]["name"],
            int(states[r["state"]]["zip3_low"]),
            int(states[r["state"]]["zip3_high"]),
        )
        for r in _rows("cities.csv")
    ]
    facilities = [FacilityName(r["name"], r["pool"], r["kind"]) for r in _rows("hospitals.csv")]
    site = [f for f in facilities if f.pool == "site"]
    external = [f for f in facilities if f.pool == "external"]
    meds = [(r["drug"], r["dose"]) for r in _rows("medications.csv")]
    eponym_rows = _rows("eponyms.csv")
    return Vocabulary(
        part=part,
        first_f=split([f.name for f in firsts if f.sex == "F"], part),
        first_m=split([f.name for f in firsts if f.sex == "M"], part),
        last=split(lasts, part),
        streets=split(_lines("street_names.txt"), part),
        suffixes=tuple((r["full"], r["abbr"]) for r in _rows("street_suffixes.csv")),
        cities=split(cities, part, key=lambda c: f"{c.city}|{c.state}"),
        site_facilities=tuple(site),
        external_facilities=split(external, part, key=lambda f: f.name),
        employers=split(_lines("employers.txt"), part),
        schools=split(_lines("schools.txt"), part),
        email_domains=tuple(_lines("email_domains.txt")),
        countries=split(_lines("countries.txt"), part),
        eponyms=tuple(r["phrase"] for r in eponym_rows),
        eponyms_by_category={
            c: tuple(r["phrase"] for r in eponym_rows if r["category"] == c)
            for c in dict.fromkeys(r["category"] for r in eponym_rows)
        },
        medications=tuple(meds),
        states=tuple((a, r["name"]) for a, r in states.items()),
    )


def site_facility_names() -> list[str]:
    """The demo site's own facility names (what ``gazetteer_demo.csv`` lists)."""
    return [f.name for f in load_vocabulary("all").site_facilities]
