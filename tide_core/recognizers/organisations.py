"""Employers, schools and other organisations (label OTHER).

Organisation names are open-ended, so this recognizer looks for two general signals rather than a
list: (1) a run of capitalised words ending in an organisation-type word ("... High School",
"... Steel Works", "... Bank and Trust", "... Inc."), and (2) a capitalised run right after an
employment or schooling cue ("works at", "employed by", "Occupation: welder,", "enrolled at",
"retired ... employee").  Medical facilities are HOSPITAL, not OTHER, and are left to the
gazetteer and the model.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from tide_core.recognizers.base import TideRecognizer
from tide_core.recognizers.facilities import LEGAL_FORMS
from tide_core.recognizers.person_names import _EPONYM_AFTER, _GR_CY_WORD, _LO, _UP, matches_before
from tide_core.recognizers.places import _fold, load_place_names
from tide_core.spans import RecognizerResult
from tide_core.steps.propagate import name_lexicon
from tide_core.text.anchored import PatternSet, finditer_at, run_starts
from tide_core.text.word_frequency import english_frequencies

_SUFFIXES = sorted(
    """
School|High School|Middle School|Elementary School|Academy|College|Community College|University|Institute|Seminary
Company|Co|Co-op|Cooperative|Corp|Corporation|Inc|Incorporated|LLC|Ltd|Limited|Group|Holdings|Partners|Associates
Bank|Bank and Trust|Credit Union|Trust|Insurance|Services|Solutions|Systems|Technologies|Industries
Logistics|Staffing|Mining|Freight|Freight Lines|Lines|Works|Steel Works|Manufacturing|Construction|Contractors
Motel|Hotel|Inn|Diner|Restaurant|Cafe|Bakery|Marina|Daycare|Church|Mall|Market|Grocery|Foods|Farms|Dairy
Electric|Energy|Power|Furniture|Jewelers|Poultry|Parts|Auto Parts|Motors|Airlines|Railroad|Transit|Trucking
Shipyard|Plant|Factory|Brewery|Winery|Salon|Studio|Agency|Department Store|Warehouse|Foundry
LLP|PLLC|Realty|Realtors|Properties|Telecom|Telecommunications|Communications|Consulting|Law Firm|Law Group
""".replace("\n", "|").split("|"),
    key=lambda w: (-len(w), w),
)
_SUFFIXES = [s for s in _SUFFIXES if s]
_ABBREV = frozenset({"Co", "Corp", "Inc", "Ltd"})

_FUNCTION = (
    r"(?:AND|OR|WAS|IS|ARE|WERE|HE|SHE|THEY|THE|FOR|TO|AT|OF|IN|ON|WITH|BY|AS|HIS|HER|THEIR|"
    r"PROVIDED|GIVEN|WORKS|WORKED|ENROLLED|ATTENDS|FROM|SHIFT|RETIRED|EMPLOYEE|JOB|LETTER|EXCUSE|"
    r"MY|YOUR|OUR|ITS|NEW|NO|ANY|TRAVEL|UNIT)"
)
_WORD = (
    r"(?:[A-Z][a-z'\u2019]+(?:[A-Z][a-z]+)?(?:-[A-Z]?[a-z]+)?|"
    rf"(?!{_FUNCTION}\b)[A-Z]{{2,}}(?:-[A-Z]{{2,}})?|St\.|&)"
)
_SP = r"[ \t]+"
_LINK = rf"(?:{_SP}(?:of|and|the|&){_SP}|{_SP}|-)"
_SUFFIX_ALT = "|".join(re.escape(s).replace(r"\ ", _SP) + (r"\.?" if s in _ABBREV else "") for s in _SUFFIXES)
_SUFFIX_ALT_UPPER = "|".join(re.escape(s.upper()).replace(r"\ ", _SP) for s in _SUFFIXES)
_SUFFIX_RE = re.compile(rf"(?<![\w.])(?P<org>{_WORD}(?:{_LINK}{_WORD}){{0,4}}{_SP}(?:{_SUFFIX_ALT}))(?![\w-])")
_SUFFIX_UPPER = re.compile(
    rf"(?<![\w.])(?P<org>(?!{_FUNCTION}\b)[A-Z]{{2,}}(?:(?:{_SP}|-)(?!{_FUNCTION}\b)[A-Z]{{2,}}){{0,3}}{_SP}(?:{_SUFFIX_ALT_UPPER}))(?![\w-])"
)

_CUES = (
    r"(?:a\s+)?shift\s+at|works\s+(?:at|for)|working\s+(?:at|for)|employed\s+(?:at|by)|employee\s+of|employer:?|"
    r"job\s+at|(?:starts|started|starting)\s+at|retired\s+from|enrolled\s+at|attends|student\s+at|studies\s+at|graduated\s+from|"
    r"volunteers?\s+(?:at|with)|work\s+excuse\s+for|letter\s+for|"
    r"(?:occupation|job|works\s+as)\s*:?\s*(?:an?\s+)?[a-z]+(?:\s+[a-z]+)?\s*(?:,|at|for)|"
    r"worked\s+(?:at|for)|worked\s+as\s+an?\s+[a-z]+(?:\s+[a-z]+)?\s+(?:at|for|with)|"
    r"(?:took|takes|taking|found|got)\s+a\s+job\s+(?:at|with)|insured\s+(?:with|by)"
)
_CUE_RE = re.compile(rf"(?i:\b(?:{_CUES})){_SP}(?P<org>(?:the{_SP})?{_WORD}(?:{_LINK}{_WORD}){{0,5}})(?![A-Za-z])")
_RETIRED_RE = re.compile(
    rf"(?i:\b(?:retired|former))[ \t]+(?P<org>{_WORD}(?:{_LINK}{_WORD}){{0,5}})[ \t]+(?i:employee|worker)\b"
)
#: The cue patterns, tried only where their cue words occur (the same matches as ``finditer``).
_PATTERNS = PatternSet([_CUE_RE, _RETIRED_RE])
#: The suffix patterns, tried only in front of a suffix (:func:`_suffix_starts`).
_SUFFIX_PATTERNS = (_SUFFIX_RE, _SUFFIX_UPPER)
#: The first word of each suffix as either suffix pattern writes it ("High", "HIGH", "Co-op").
_SUFFIX_HEAD_WORDS = {w for s in _SUFFIXES for w in (s.split()[0], s.split()[0].upper())}
_SUFFIX_HEAD = re.compile("|".join(re.escape(w) for w in sorted(_SUFFIX_HEAD_WORDS, key=lambda w: (-len(w), w))))
#: What a suffix pattern's words and links are made of (letters, ' ’ - . & and blanks).
_ORG_RUN = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'\u2019-.& \t"
_ORG_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ&")
#: A capital or "&" after a character of a run that the patterns' lookbehind accepts before a word.
_ORG_WORD_START = re.compile(r"(?<=['\u2019\-& \t])[A-Z&]")


def _suffix_starts(text: str) -> list[int]:
    """Where a suffix pattern may start, in order.

    A match is words and links (characters of ``_ORG_RUN``), blanks and a suffix, so it starts in
    the run of ``_ORG_RUN`` characters that reaches a suffix's first word (``_SUFFIX_HEAD``, right
    after a blank), at a capital or "&" that begins the run or follows a character the patterns'
    lookbehind (``(?<![\\w.])``) lets through.
    """
    heads = (m.start() for m in _SUFFIX_HEAD.finditer(text))
    return run_starts(text, (h for h in heads if h and text[h - 1] in " \t"), _ORG_RUN, _ORG_WORD_START, _ORG_FIRST)


_LEADING = re.compile(
    r"^(?:(?:Retired|Former|Retd\.?|From|At|To|For|With|By|In|On|Shift|Admitted|Works?|"
    r"Employed|Job|Occupation|Attends|Enrolled|Letter|Excuse)[ \t]+)+",
    re.IGNORECASE,
)

_NOT_ORG = frozenset(
    """
The A An This That He She They Patient Pt Mr Mrs Ms Dr His Her Their Our We I It Discharge Follow Return
Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July
August September October November December Hospital Clinic Medical Center Emergency
""".split()
)
_MEDICAL = re.compile(
    r"\b(?:Hospital|Clinic|Medical|Health|Surgery|Surgical|Cardiology|Oncology|Pediatrics|"
    r"Rehab|Rehabilitation|Hospice|Nursing|Urgent|Care|Physicians|Radiology|Imaging|Lab|"
    r"Laboratory|Pharmacy|Dental|Dialysis|Orthopedic|Orthopaedic|Eye|Heart|Cancer|Spine|Vision|Wellness|"
    r"Behavioral|Kidney|Neurology|Women's|Children's|Maternity|Psychiatric|Infirmary|"
    r"Sanatorium|Hospitalist|Pulmonary|Pediatric\w*|Neuro\w*|Cardi\w*|Derm\w*|Gastro\w*|Ortho\w*|"
    r"Urolog\w*|Oncolog\w*|Radiolog\w*|Obstetric\w*|Gyn\w*|OB|ENT|Allergy|Rheumatolog\w*|"
    r"Endocrin\w*|Psych\w*|Podiatry|Chiropractic|Therapy|Trauma|Family\s+Practice|"
    r"Internal\s+Medicine|Primary|Anesthesi\w*|Nephrolog\w*|Pulmonolog\w*|Vascular|Hearing)\b",
    re.IGNORECASE,
)


_FACILITY = re.compile(
    r"\b(?:Hospital|Clinic|Medical\s+Center|Health\s+Center|Infirmary|Hospice|Surgery\s+Center|"
    r"Nursing\s+Home|Rehabilitation\s+Center|Care\s+Center)\b",
    re.IGNORECASE,
)


#: A firm named with its legal form (version 4): "Acme Widgets, Inc.", "Siemens GmbH", "Richter Gedeon
#: Kft.", "Telefónica S.A.", "Baker & McKenzie LLP"; name words in any Latin letters or in capitals.
_UWORD = rf"(?:[{_UP}][{_LO}'\u2019]+(?:-[{_UP}]?[{_LO}'\u2019]+)*|[{_UP}][{_UP}&]+|[{_UP}][{_LO}]*[{_UP}][{_LO}]+)"
_PARTICLE = r"(?:van|von|de|der|den|ter|te|'t|la|le|di|da|du|del|della|dos|das|do|lo|Mac|Mc|Ní|Ó)"
_ULINK = (
    rf"(?:[ \t]+(?:&|and|und|y|et|e|of|de|du|des|der|la|le|del|di)[ \t]+(?:{_PARTICLE}[ \t]+){{0,2}}|"
    rf"[ \t]*&[ \t]*(?:{_PARTICLE}[ \t]+){{0,2}}|[ \t]+(?:{_PARTICLE}[ \t]+){{0,2}}|-)"
)
_LEGAL_RE = re.compile(
    rf"(?<![\w.'\u2019-])(?P<org>(?:{_PARTICLE}[ \t]+){{0,2}}{_UWORD}(?:{_ULINK}{_UWORD}){{0,4}}(?:,[ \t]*|[ \t]+)"
    rf"(?P<form>{LEGAL_FORMS}))(?![\w/])"
)
_LEGAL_ANCHOR = re.compile(rf"(?<=[ \t,])(?:{LEGAL_FORMS})(?![\w/])")
#: Legal forms that are also clinical or everyday abbreviations ("severe AS", "SA node", "AB positive",
#: "NV" for Nevada): the name before them must hold a word rare in English.
_AMBIGUOUS_FORMS = frozenset("SA AS ASA AB PC AG NV BV KG Oy SAS plc PLC Co. Corp Corp. Limited Incorporated".split())
#: A one-word firm after a firm noun: "The employer, Osmark, with ...", "The firm, Quorvia, was fined".
_FIRM_APPOSITIVE = re.compile(
    rf"\b(?i:the[ \t]+)?(?i:employer|firm|company|insurer|landlord|contractor|manufacturer)[ \t]*,[ \t]*"
    rf"(?P<org>[{_UP}][{_LO}]+(?:[ \t]+[{_UP}][{_LO}]+)?)(?=[ \t]*,)"
)
#: A firm named by its partners: "Smith, Jones and Patel", "Okafor, Lindqvist & Ruiz LLP".
_PARTNER = (
    rf"(?:(?:{_PARTICLE}[ \t]+){{0,2}}[{_UP}]['\u2019]?[{_LO}'\u2019]*[{_UP}]?[{_LO}'\u2019]+"
    rf"(?:-[{_UP}][{_LO}'\u2019]+)?"
    rf"(?:[ \t]+[{_UP}][{_LO}'\u2019]+)?"  # "Mac Giolla Phádraig", "Sáez Ortega", "von der Heydt"
    rf"|{_GR_CY_WORD})"  # "Georgiou, Νικολαΐδης and Antoniou"
)
_PARTNERS_RE = re.compile(
    rf"(?<![\w.'\u2019-])(?P<org>{_PARTNER}(?:,[ \t]*{_PARTNER}){{1,3}},?[ \t]+(?:and|&)[ \t]+{_PARTNER}"
    rf"(?:,?[ \t]+(?:{LEGAL_FORMS}))?)(?![\w/'\u2019-])"
)
_PARTNERS_ANCHOR = re.compile(rf"[ \t](?:and|&)[ \t]+(?:{_PARTICLE}[ \t]+){{0,2}}[{_UP}\u0391-\u03ab\u0400-\u042f]")
_MONTHS_DAYS = frozenset(
    """january february march april may june july august september october november december monday tuesday
wednesday thursday friday saturday sunday""".split()
)


def _zipf(word: str) -> float:
    f = english_frequencies().get(word.casefold(), 0.0)
    return math.log10(f) + 9 if f > 0 else 0.0


def _legal_name_ok(org: str, form: str) -> bool:
    """A firm with a legal form: an unambiguous form, or a name with a word rare in English."""
    words = re.findall(r"[^\W\d_]+", org[: len(org) - len(form)])
    if not words or _MEDICAL.search(org):
        return False
    if form.rstrip(".") in {f.rstrip(".") for f in _AMBIGUOUS_FORMS}:
        # a rare word in title case: "Novartis AG" yes, "no LOC, ASA class IV" no
        return any(_zipf(w) < 3.0 and not w.isupper() for w in words if w.casefold() not in ("and", "und", "of", "de"))
    return True


def _partners_ok(text: str, m: re.Match[str]) -> bool:
    """Every partner is a known surname or a word rare in English, not all of them are places or
    months, and no clinical noun follows ("Wolff, Parkinson and White syndrome")."""
    surnames = name_lexicon()[1]
    words = [w for w in re.findall(r"[^\W\d_][\w'\u2019-]*", m.group("org")) if w not in ("and",)]
    words = [w for w in words if not re.fullmatch(_PARTICLE, w)]
    words = [w for w in words if not re.fullmatch(LEGAL_FORMS, w)]
    folded = [w.casefold() for w in words]
    if any(f in _MONTHS_DAYS for f in folded) or _EPONYM_AFTER.match(text, m.end()):
        return False
    if not all(f in surnames or _zipf(f) < 3.0 for f in folded):
        return False
    return not all(_fold(f) in load_place_names().tiers for f in folded)


class OrganisationRecognizer(TideRecognizer):
    name = "tide.org"
    # 4: firms with a legal form in any Latin letters ("Richter Gedeon Kft.", "Acme, Inc."), firms named
    # by their partners ("Smith, Jones and Patel"); 5: past-tense employment and insurer cues ("worked for",
    # "took a job with", "insured with")
    version = "5"
    supported_entities = ("OTHER",)

    def __init__(self, score_suffix: float = 0.7, score_cue: float = 0.75):
        self.score_suffix = score_suffix
        self.score_cue = score_cue

    def config(self) -> dict[str, Any]:
        return {"score_suffix": self.score_suffix, "score_cue": self.score_cue, "n_suffixes": len(_SUFFIXES)}

    @staticmethod
    def _clean(text: str, start: int, end: int, cue: bool = False) -> tuple[int, int] | None:
        lead = _LEADING.match(text[start:end])
        if lead:
            start += lead.end()
        surface = text[start:end]
        first = surface.split()[0] if surface.split() else ""
        if first.lower() == "the":
            pass  # "the Salvation Army": the article is part of the name as written
        elif first.rstrip(".") in _NOT_ORG:
            return None
        while end > start and text[end - 1] in " ,;:":
            end -= 1
        # After an employment cue only a facility-type word makes it a HOSPITAL ("Integra Medical
        # Billing" is an employer); without a cue any medical word does.
        if (_FACILITY if cue else _MEDICAL).search(text[start:end]) or end - start < 3:
            return None
        if _MEDICAL.match(text[end : end + 30].lstrip(" \t")):  # "... University Medical Center"
            return None
        return start, end

    def analyze(
        self, text: str, entities: Sequence[str] | None = None, nlp_artifacts: Any = None
    ) -> list[RecognizerResult]:
        if entities and "OTHER" not in entities:
            return []
        found: dict[tuple[int, int], float] = {}
        scan = _PATTERNS.scan(text)  # where the cue patterns' cue words are
        suffix_starts = _suffix_starts(text)
        for rx, score, cue in (
            (_SUFFIX_RE, self.score_suffix, False),
            (_SUFFIX_UPPER, self.score_suffix, False),
            (_CUE_RE, self.score_cue, True),
            (_RETIRED_RE, self.score_cue, True),
        ):
            matches = finditer_at(rx, text, suffix_starts) if rx in _SUFFIX_PATTERNS else scan.finditer(rx)
            for m in matches:
                span = self._clean(text, m.start("org"), m.end("org"), cue)
                if span:
                    found[span] = max(found.get(span, 0.0), score)
        if any(c.isupper() for c in text):
            for m in matches_before(_LEGAL_RE, text, _LEGAL_ANCHOR, 160):
                span = self._clean(text, m.start("org"), m.end("org"))
                if span and _legal_name_ok(text[span[0] : span[1]], m.group("form")):
                    found[span] = max(found.get(span, 0.0), self.score_suffix)
            for m in _FIRM_APPOSITIVE.finditer(text):
                if all(_zipf(w) < 3.0 for w in m.group("org").split()):
                    found[m.span("org")] = max(found.get(m.span("org"), 0.0), self.score_cue)
            for m in matches_before(_PARTNERS_RE, text, _PARTNERS_ANCHOR, 160):
                if _partners_ok(text, m):
                    found[m.span("org")] = max(found.get(m.span("org"), 0.0), self.score_suffix)
        return [
            RecognizerResult("OTHER", a, b, s, {"recognizer_name": self.qualified_name})
            for (a, b), s in sorted(found.items())
        ]
