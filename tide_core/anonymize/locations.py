"""Keyed LOCATION surrogates, sub-typed by the span's shape.

* ZIP (``94304``, ``94304-1234``, 9 digits): format-preserving bijection of the digit domain
  (5 digits: exact small-domain derangement; 9 digits: FF3-1);
* state (``CA``, ``California``): keyed derangement of the 50 states, abbreviation stays an
  abbreviation, capitalisation kept;
* country: keyed derangement of the country list (abbreviations such as ``USA`` among abbreviations);
* street line (a digit, a street suffix or a unit word: ``1234 Oak Street``, ``Apt 4B``): numbers
  keep their shape (FPE), street-name words become a keyed street surrogate, suffix style
  (``St`` / ``St.`` / ``Street``), directions and unit words are kept;
* city (letters only, or nothing but unit words and directions such as ``Rm``, ``NW``, a model's
  piece of a longer place): keyed city surrogate;
* several comma-separated parts (``Palo Alto, CA 94304``): each part by its own rule.
Every rule is a pure function of the key and the value.
"""

from __future__ import annotations

import re
from functools import lru_cache

from tide_core.anonymize.identifiers import encrypt_identifier
from tide_core.anonymize.keys import KeyRing
from tide_core.anonymize.small_domain import cached_subkey, permutation
from tide_core.anonymize.surrogates import DATA_DIR, case_like, load_list, norm
from tide_core.errors import AnonymizationError
from tide_core.text.street_words import DIRECTIONS, STREET_SUFFIXES, UNIT_WORDS, names_no_place

DOMAIN = "location"
COUNTRY_ABBR = ("USA", "UK", "UAE", "PRC", "DRC", "ROK")
_ZIP = re.compile(r"\d{5}(?:-\d{4})?|\d{9}")
_TOKEN = re.compile(r"\d+(?:st|nd|rd|th)\b|\d+[A-Za-z]?\b|[A-Za-z0-9]+|[^\W\d_]+(?:['\u2019][^\W\d_]+)*", re.I)
_ORDINAL_NUMBER = re.compile(r"(\d+)(st|nd|rd|th)", re.I)  # fullmatch: "21st", "3RD"
_ASCII_WORD = re.compile(r"[A-Za-z]+")
_ASCII_DIGIT = re.compile(r"[0-9]")
_DECIMAL = re.compile(r"\d")
_PLACE_AND_TAIL = re.compile(r"(.*?)\s+(\d{5}(?:-\d{4})?|[A-Z]{2})")  # "Boston MA 02115", "Boston MA"
_ZIP_TAIL = re.compile(r"(.*?)(\s+)(\d{5}(?:-\d{4})?)")  # "... CA 94304"
_STATE_TAIL = re.compile(r"(.*?)(\s+)([A-Z]{2})")  # "Palo Alto CA"
_FIRST_WORD = re.compile(r"[^\W\d_]+")  # a word as names_no_place reads them
_NO_PLACE_WORDS = UNIT_WORDS | DIRECTIONS | STREET_SUFFIXES
_CITY_WORDS = re.compile(r"[^\W\d_]+(?:[ .'\u2019-]+[^\W\d_]+)*\.?")


@lru_cache(maxsize=1)
def _states() -> tuple[tuple[str, str], ...]:
    rows = []
    for line in (DATA_DIR / "states.txt").read_text(encoding="utf-8").splitlines():
        if "\t" in line:
            name, abbr = line.split("\t")
            rows.append((name.strip(), abbr.strip()))
    return tuple(rows)


@lru_cache(maxsize=1)
def _state_lookup() -> tuple[dict[str, int], dict[str, int]]:
    """First index of each normalised state name and of each lower-case abbreviation."""
    names: dict[str, int] = {}
    abbrs: dict[str, int] = {}
    for i, (name, abbr) in enumerate(_states()):
        names.setdefault(norm(name), i)
        abbrs.setdefault(abbr.lower(), i)
    return names, abbrs


def _state_index(value: str) -> tuple[int, bool] | None:
    """The first state (in list order) whose name, or whose abbreviation for an upper-case value, is ``value``."""
    return _state_in(value, norm(value))


def _state_in(value: str, key: str) -> tuple[int, bool] | None:
    """:func:`_state_index` given ``key == norm(value)``."""
    v = key.replace(".", "")
    names, abbrs = _state_lookup()
    i = names.get(v)
    j = abbrs.get(v) if value.replace(".", "").isupper() else None
    if i is None and j is None:
        return None
    if i is not None and (j is None or i <= j):
        return i, False
    assert j is not None  # i and j are not both None (returned above)
    return j, True


def _has_digit(value: str) -> bool:
    """Any character ``str.isdigit`` accepts (a regex scan for ASCII text, the same answer)."""
    if value.isascii():
        return _ASCII_DIGIT.search(value) is not None
    return any(c.isdigit() for c in value)


def _derange(keyring: KeyRing, context: str, n: int, i: int) -> int:
    return permutation(cached_subkey(keyring, DOMAIN), f"loc|{context}".encode(), n).derange(i)


def surrogate_zip(keyring: KeyRing, value: str) -> str:
    """Format-preserving surrogate of a ZIP code (5 digits: small-domain bijection; 9: FF3-1)."""
    return encrypt_identifier(keyring, value, DOMAIN, "zip")


def surrogate_state(keyring: KeyRing, value: str) -> str:
    """Keyed derangement of the 50 states: an abbreviation stays one, a name keeps its case.

    E441 when the span is not a US state.
    """
    hit = _state_index(value)
    if hit is None:
        raise AnonymizationError(
            "E441", "LOCATION span is not a US state", hint="label states as LOCATION with the state name or USPS code"
        )
    i, is_abbr = hit
    name, abbr = _states()[_derange(keyring, "state", len(_states()), i)]
    return abbr if is_abbr else case_like(value, name)


def _country_hit(value: str) -> tuple[str, int] | None:
    return _country_in(norm(value))


def _country_in(key: str) -> tuple[str, int] | None:
    """:func:`_country_hit` given ``key == norm(value)``."""
    v = key.replace(".", "")
    if v.upper() in COUNTRY_ABBR or v == "us":
        return "abbr", COUNTRY_ABBR.index("USA" if v == "us" else v.upper())
    lst = load_list("countries")
    if v in lst.index:
        return "name", lst.index[v]
    if v in ("united states of america", "america"):
        return "name", lst.index["united states of america"] if "united states of america" in lst.index else 0
    return None


def surrogate_country(keyring: KeyRing, value: str) -> str:
    """Keyed derangement of the country list; abbreviations (``USA``) among abbreviations.

    E442 when the span is not a listed country.
    """
    hit = _country_hit(value)
    if hit is None:
        raise AnonymizationError(
            "E442", "LOCATION span is not a known country", hint="extend tide_core/data/surrogates/countries.txt"
        )
    kind, i = hit
    if kind == "abbr":
        return COUNTRY_ABBR[_derange(keyring, "country-abbr", len(COUNTRY_ABBR), i)]
    lst = load_list("countries")
    return case_like(value, lst.entries[_derange(keyring, "country", len(lst), i)])


def _ordinal(n: int) -> str:
    return "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _is_street(value: str) -> bool:
    words = [w.lower() for w in _ASCII_WORD.findall(value)]  # ASCII letters: norm() is lower()
    return (
        _has_digit(value)
        or "#" in value
        or not UNIT_WORDS.isdisjoint(words)
        or not STREET_SUFFIXES.isdisjoint(words[1:])
    )  # "St. Louis" is a city


def _may_name_no_place(value: str) -> bool:
    """False when :func:`names_no_place` is certainly False (a cheap first test).

    That needs every word to be a unit word or a direction, or one street-type word, so the first
    word must be one.
    """
    m = _FIRST_WORD.search(value)
    return m is not None and m.group().lower() in _NO_PLACE_WORDS


def surrogate_street(keyring: KeyRing, value: str) -> str:
    """Keyed surrogate of a street line: numbers FPE-permuted, each run of name words replaced.

    Suffixes (with their style), directions and unit words are kept, so the line still reads as an
    address; "Park Avenue" (every word a suffix word) has its first word treated as the name.
    """
    tokens = list(_TOKEN.finditer(value))
    kinds = []
    for m in tokens:
        t = m.group()
        w = t.lower()
        if t[0].isdigit():
            kinds.append("num")
        elif w in STREET_SUFFIXES or w in DIRECTIONS or w in UNIT_WORDS:
            kinds.append("keep")
        else:
            kinds.append("name")
    has_ordinal = any(_ORDINAL_NUMBER.fullmatch(m.group()) for m in tokens)
    if "name" not in kinds and not has_ordinal:  # "Park Avenue": every word is a suffix word
        words = [i for i, k in enumerate(kinds) if k == "keep" and tokens[i].group().lower() in STREET_SUFFIXES]
        if len(words) >= 2:
            kinds[words[0]] = "name"
    out, last, i = [], 0, 0
    while i < len(tokens):
        m, k = tokens[i], kinds[i]
        out.append(value[last : m.start()])
        if k == "num":
            t = m.group()
            od = _ORDINAL_NUMBER.fullmatch(t)
            if od:
                num = encrypt_identifier(keyring, od.group(1), DOMAIN, "street-ordinal")
                suf = _ordinal(int(num))
                out.append(num + (suf.upper() if od.group(2).isupper() else suf))
            else:
                out.append(encrypt_identifier(keyring, t, DOMAIN, "street-number"))
            last = m.end()
            i += 1
        elif k == "keep":
            out.append(m.group())
            last = m.end()
            i += 1
        else:  # a run of name words (with their inner separators) -> one surrogate
            j = i
            while (
                j + 1 < len(tokens)
                and kinds[j + 1] == "name"
                and value[tokens[j].end() : tokens[j + 1].start()] in (" ", "-", "'")
            ):
                j += 1
            run = value[m.start() : tokens[j].end()]
            out.append(case_like(run, load_list("streets").choose(keyring, DOMAIN, run, "street")))
            last = tokens[j].end()
            i = j + 1
    out.append(value[last:])
    return "".join(out)


def surrogate_city(keyring: KeyRing, value: str) -> str:
    """Keyed surrogate of a city name from the city list, in the value's capitalisation."""
    return case_like(value, load_list("cities").choose(keyring, DOMAIN, value, "city"))


def location_subtype(value: str) -> str:
    """The rule a LOCATION value is anonymized by: zip, state, country, address, city or street.

    Decided from the value's shape alone (never a model), so the same value always takes the same
    rule; parts of an address are dispatched again one by one.
    """
    v = value.strip()
    if _ZIP.fullmatch(v):
        return "zip"
    key = norm(v)
    if _state_in(v, key) is not None:
        return "state"
    if _country_in(key) is not None:
        return "country"
    if "," in v:
        return "address"
    m = _PLACE_AND_TAIL.fullmatch(v)
    if m and not _has_decimal(m.group(1)) and (m.group(2)[0].isdigit() or _state_index(m.group(2)) is not None):
        return "address"
    if key in load_list("cities").index and not _has_digit(v):
        return "city"
    if _may_name_no_place(v) and names_no_place(v):  # "Rm", "NW", "Ave": nothing a street surrogate
        return "city"  # would keep around, so a city
    if _is_street(v):
        return "street"
    if _CITY_WORDS.fullmatch(v):
        return "city"
    return "street"


def _has_decimal(value: str) -> bool:
    r"""What ``re.search(r"\d", value)`` says: any Unicode decimal digit."""
    return _DECIMAL.search(value) is not None


def _segment(keyring: KeyRing, seg: str, kind: str | None = None) -> str:
    """Surrogate of one comma-separated part; ``kind`` is ``location_subtype(seg)`` when the caller has it."""
    core = seg.strip()
    if not core:
        return seg
    lead, trail = seg[: len(seg) - len(seg.lstrip())], seg[len(seg.rstrip()) :]
    if _ZIP.fullmatch(core):
        return lead + surrogate_zip(keyring, core) + trail
    m = _ZIP_TAIL.fullmatch(core)
    if m and not _has_decimal(m.group(1)):
        return lead + _segment(keyring, m.group(1)) + m.group(2) + surrogate_zip(keyring, m.group(3)) + trail
    m = _STATE_TAIL.fullmatch(core)
    if m and _state_index(m.group(3)) is not None:
        return lead + _segment(keyring, m.group(1)) + m.group(2) + surrogate_state(keyring, m.group(3)) + trail
    if kind is None:
        kind = location_subtype(core)
    if kind not in _SUB:
        kind = "street"
    return lead + _SUB[kind](keyring, core) + trail


_SUB = {
    "zip": surrogate_zip,
    "state": surrogate_state,
    "country": surrogate_country,
    "street": surrogate_street,
    "city": surrogate_city,
}


def surrogate_location(keyring: KeyRing, value: str) -> tuple[str, str]:
    """(surrogate, subtype) for a LOCATION span."""
    if not any(c.isalnum() for c in value):
        raise AnonymizationError("E440", "LOCATION span has no letters or digits", hint="fix the span boundaries")
    kind = location_subtype(value)
    if kind == "address":
        return ",".join(_segment(keyring, seg) for seg in value.split(",")), "address"
    return _segment(keyring, value, kind), kind
