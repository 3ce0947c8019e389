"""Identifiers after the name of a document or a file cue (``tide.cued_ids``), in several languages.

Court, police and administrative prose names its numbers: "National Insurance number AB 12 34 56
C", "Steuer-ID 12 345 678 901", "PESEL 12345678901", "ΑΔΤ ΑΒ 123456", "паспорт 12 34 567890",
"Az. 12 O 345/07", "sygn. akt II K 123/07", "ügyszám: 12.P.45.123/2015/3", "RG n° 07/12345",
"case no. 27/159587", "quoting incident number 12/345678". The value after such a cue is a run of
letter-or-digit groups (any script) joined by single spaces, ``-``, ``/`` or ``.``; letter-only
groups are taken only where identifiers put them (a register letter or Roman numeral between digit
groups: "12 O 345/07", "II K 123/07"; a check letter at the end: "AB 12 34 56 C", "12345678-Z";
the letters of a number plate after a plate cue: "AB12 CDE").

Three kinds of cue, from the most to the least specific:

- **document names**: national identifiers, insurance, tax, passport, identity-card, licence and
  number-plate words of the UK, Ireland, Germany, France, Spain, Italy, the Netherlands, Hungary,
  Greece, Poland, Ukraine, Russia and Bulgaria, and their English names;
- **file words**: case, file, claim, application, record, incident, reference, docket, policy,
  and their German, French, Spanish, Italian, Dutch, Hungarian, Greek and Polish forms;
- **number signs** alone: ``no.``, ``nr.``, ``n°``, ``nº``, ``№``.

The value must hold at least 5 digits after a document name (1 and 5 letters or digits after a plate
word) and 4 after a file word or a bare number sign, and never be only a year, a date, a money amount or a
count with a unit after it. A number sign or file word right after a statute, page or room word
("Law no. 123/2005", "Article 8", "Protocol No. 1", "page no. 12345") is not a cue.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tide_core.recognizers.base import TideRecognizer
from tide_core.spans import RecognizerResult

#: Names of national identifiers and identity documents (matched case-insensitively, whole words).
_DOCUMENT_WORDS = (
    # English
    r"national\s+insurance(?:\s+(?:number|no\.?))?|NI\s+(?:number|no\.?)|NINO|NHS\s+(?:number|no\.?)|"
    r"PPS\s*(?:number|no\.?)|PPSN|social\s+security(?:\s+(?:number|no\.?))?|social\s+insurance(?:\s+number)?|"
    r"tax\s+(?:identification\s+)?(?:number|no\.?|id|code|reference)|personal\s+(?:identity\s+|id(?:entification)?\s+)?"
    r"(?:number|code)|identity\s+(?:card|number|document)(?:\s+(?:number|no\.?))?|"
    r"id(?:entity)?\s+card(?:\s+(?:number|no\.?))?|"
    r"passport(?:\s+(?:number|no\.?))?|driv(?:ing|er'?s)\s+licen[cs]e(?:\s+(?:number|no\.?))?|"
    r"residence\s+permit(?:\s+(?:number|no\.?))?|"
    # German
    r"Steuer-?ID|Steuer-?Identifikationsnummer|Steuernummer|Steuer-Nr\.?|Personalausweis(?:-?Nr\.?|nummer)?|"
    r"Reisepass(?:-?Nr\.?|nummer)?|Sozialversicherungs-?nummer|Versicherungsnummer|Rentenversicherungsnummer|"
    r"Führerschein(?:-?Nr\.?|nummer)?|Krankenversichertennummer|"
    # French
    r"num[ée]ro\s+de\s+s[ée]curit[ée]\s+sociale|n°\s+de\s+s[ée]curit[ée]\s+sociale|num[ée]ro\s+fiscal|"
    r"carte\s+(?:d'|d’)identit[ée](?:\s+n°)?|passeport|permis\s+de\s+conduire|"
    # Spanish, Italian
    r"pasaporte|n[úu]mero\s+de\s+la\s+seguridad\s+social|codice\s+fiscale|carta\s+(?:d'|d’)identit[àa]|"
    r"passaporto|tessera\s+sanitaria|"
    # Dutch, Hungarian
    r"burgerservicenummer|paspoort(?:nummer)?|rijbewijs(?:nummer)?|TAJ[\s-]sz[áa]m|TAJ|szem[ée]lyi\s+sz[áa]m|"
    r"szem[ée]lyi\s+igazolv[áa]ny(?:\s+sz[áa]ma)?|ad[óo]azonos[íi]t[óo]\s+jel|ad[óo]sz[áa]m|[úu]tlev[ée]l|"
    # Polish
    r"dow[óo]d\s+osobisty(?:\s+nr\.?)?|paszport|"
    # Greek, Cyrillic
    r"διαβατήριο|ταυτότητα|паспорт|свидетельство|"
    # number plates and vehicles
    r"(?:vehicle\s+)?registration(?:\s+(?:number|no\.?|mark|plate))?|(?:number|licen[cs]e)\s+plate|vehicle|"
    r"Kennzeichen|immatriculation|matr[íi]cula|targa|kenteken|rendsz[áa]m"
)
#: Upper-case acronyms of national identifiers: matched as written ("nip", "taj" are words).
_DOCUMENT_ACRONYMS = (
    r"SSN|TIN|NIR|NIE|NIF|NSS|DNI|BSN|AMKA|ΑΜΚΑ|ΑΦΜ|AFM|ΑΔΤ|PESEL|NIP|REGON|РНОКПП|ИНН|СНИЛС|ЕГН|ОГРН|"
    r"CNP|EGN|OIB|JMBG|PIN|ID"
)
#: Words naming a file, a case or another reference.
_FILE_WORDS = (
    r"case(?:\s+(?:number|no\.?|ref(?:erence)?\.?))?|file(?:\s+(?:number|no\.?|ref(?:erence)?\.?))?|"
    r"claim|application|record|incident(?:\s+number)?|crime\s+(?:reference|ref\.?|number)|docket|"
    r"(?:our|your|my)\s+ref(?:erence)?\.?|ref(?:erence)?\.?|policy|certificate|permit|licen[cs]e|"
    r"invoice|customer\s+(?:number|no\.?)|account|"
    r"Aktenzeichen|Gesch[äa]ftszeichen|Kundennummer|Vorgangsnummer|"
    r"dossier|r[ée]f[ée]rence|r[ée]f\.|affaire|"
    r"procedimiento|autos|expediente|recurso|sentencia|"
    r"sentenza|ricorso|pratica|"
    r"zaaknummer|parketnummer|dossiernummer|rolnummer|kenmerk|"
    r"[üu]gysz[áa]m|iktat[óo]sz[áa]m|"
    r"sygn\.?\s+akt|sygnatura(?:\s+akt)?|"
    r"αριθ\.|αριθμός|υπόθεση|дело"
)
#: Abbreviated file cues matched as written.
_FILE_ACRONYMS = r"Az\.|RG|R\.G\.|Aff\.|Ref\.|REF"
#: Number signs on their own.
_NUMBER_SIGNS = r"(?:no|nos|nr|num|n|nro)\.|n°|nº|n\.º|№"
#: Number signs without a period, matched as written: "No 017023/22", never the word "no" ("BP no 140/90").
_BARE_SIGNS = r"(?:No|NO|Nr|NR)(?=\s*\d)"

#: What may stand between a cue and its value: a number word or sign, a colon, an opening
#: parenthesis, "is"/"was".
_CONNECTOR = (
    r"(?:[ \t]*(?:-|–)?[ \t]*(?:(?i:number|num[ée]ro|nummer|n[úu]mero|szám|nr|no)(?=[\s:#(])|(?i:nr|no|num|n)\."
    r"|n°|nº|n\.º|№|\#))?"
    r"[ \t]*\n?[ \t]*(?:[:#=][ \t]*\n?[ \t]*)?(?:\([ \t]*)?(?:(?i:is|was|est|ist)[ \t]+)?"
)
_CUE = re.compile(
    r"(?<![\w.\-/])(?:"
    rf"(?P<doc>(?i:{_DOCUMENT_WORDS})|(?:{_DOCUMENT_ACRONYMS}))"
    rf"|(?P<file>(?i:{_FILE_WORDS})|(?:{_FILE_ACRONYMS}))"
    rf"|(?P<sign>(?i:{_NUMBER_SIGNS})|{_BARE_SIGNS})"
    r")(?:(?<=[.°º№])|(?![\w]))" + _CONNECTOR
)
#: A group of letters or digits (any script) and the single separator that may follow it.
_GROUP = re.compile(r"[^\W_]+")
_SEPARATOR = re.compile(r"(?:[ ]?/[ ]?|[-.–]|[ ])(?=[^\W_])")
#: Words before a number sign or file word that make the number a reference to a text, a place in a
#: building or a page, not to a person ("Law no. 123/2005", "Protocol No. 1", "Room no. 12345").
NOT_PERSONAL_BEFORE = re.compile(
    r"(?<![\w.])(?i:law|act|acts|regulation|directive|decree|protocol|article|art|section|sec|s|rule|rules|"
    r"paragraph|para|convention|treaty|code|statute|bill|ordinance|resolution|amendment|schedule|"
    r"loi|d[ée]cret|arr[êe]t[ée]|gesetz|verordnung|richtlinie|ley|real\s+decreto|decreto|legge|wet|"
    r"t[öo]rv[ée]ny|rendelet|ustawa|rozporz[ąa]dzenie|νόμος|ν\.|закон|"
    r"page|pages|p|pp|room|flat|apartment|apt|house|building|floor|bed|ward|bus|route|line|platform|gate|seat|"
    r"item|table|figure|fig|question|volume|vol|issue|chapter|step|level|phase|stage|grade|type|size|"
    r"hospital|clinic|school|lot|plot|unit|box|exhibit|annex|appendix|note|footnote|version|edition)"
    r"\s*(?:\([^)]{1,8}\)\s*)?(?:(?i:no|nos|nr|num|n)\.?\s*|[n№][°º]?\s*)?$"
)
#: A unit or currency after a number: a measurement, a dose, a count or money, not an identifier.
UNIT_AFTER = re.compile(
    r"[ \t]?(?:/[ \t]?)?(?i:ul|µl|mcl|hpf|min|hr|h|d|wk|mg|mcg|µg|g|kg|lb|lbs|ml|l|dl|mmol|mm|cm|m|km|mi|miles|"
    r"ft|m²|m2|ha|hectares|%|per\s+cent|percent|"
    r"units?|iu|days?|weeks?|months?|years?|hours?|hrs?|minutes?|mins?|times|euros?|eur|€|£|\$|usd|gbp|chf|"
    r"pln|zł|huf|ft|dollars|pounds|km/h|mph|people|persons|pages|words)(?![\w])"
)
_YEAR = re.compile(r"^(?:1[89]|20)\d\d$")
#: Two short digit groups over a slash: a ratio, a fraction or a blood pressure ("120/80"), not a number.
_RATIO = re.compile(r"^\d{1,3} ?/ ?\d{1,3}$")
#: A North American phone number's shape: the phone recognizers name it ("Ref 555 123 4567").
_PHONE_SHAPE = re.compile(r"^\(?\d{3}\)?[ .\-]?\d{3}[ .\-]\d{4}$")
_DATE = re.compile(r"^\d{1,2}[./-]\d{1,2}[./-](?:\d{2}|\d{4})$|^\d{4}[./-]\d{1,2}[./-]\d{1,2}$|^\d{1,2}[./]\d{4}$")
_ROMAN = re.compile(r"^[IVXLC]{1,5}$")
#: Minimum digits in a value after each kind of cue (a plate's own minimum is checked separately).
MIN_DIGITS = {"doc": 5, "plate": 1, "file": 4, "sign": 4}
_PLATE_CUE = re.compile(
    r"(?i:registration|plate|vehicle|kennzeichen|immatriculation|matr[íi]cula|targa|kenteken|rendsz[áa]m)", re.UNICODE
)


def _short_letters(group: str, three: bool) -> bool:
    """A letter-only group an identifier may hold: a register letter or two ("O", "Js", "ΑΚ"), a
    Roman numeral ("II", "VIII"), or, where ``three``, three capitals (a plate's letters, the
    series of an identity card: "CPT 272385")."""
    if not group.isalpha() or not group[0].isupper():
        return False
    if len(group) <= 2 or _ROMAN.match(group):
        return True
    return three and len(group) == 3 and group.isupper()


def _has_digit(group: str) -> bool:
    return any(c.isdigit() for c in group)


def _value(text: str, pos: int, kind: str) -> tuple[int, int] | None:
    """The identifier that starts at ``pos`` after a cue of ``kind``, as ``(start, end)``."""
    plate = kind == "plate"
    groups: list[tuple[int, int, str]] = []  # (start, end, separator before)
    i, sep = pos, ""
    while len(groups) < 9:
        m = _GROUP.match(text, i)
        if m is None:
            break
        groups.append((m.start(), m.end(), sep))
        s = _SEPARATOR.match(text, m.end())
        if s is None:
            break
        sep, i = s.group().strip() or " ", s.end()
    kept: list[tuple[int, int]] = []
    seen_digit = False
    for k, (a, b, sep) in enumerate(groups):
        g = text[a:b]
        if _has_digit(g):
            if kept and sep == " " and sum(c.isdigit() for c in g) < 2 and not plate:
                break  # "ref 12345 2 days": a lone digit after a space starts something else
            kept.append((a, b))
            seen_digit = True
            continue
        if not _short_letters(g, plate or (kind == "doc" and not kept)):
            break
        if any(_has_digit(text[x:y]) for x, y, _ in groups[k + 1 : k + 3]) and (seen_digit or len(kept) < 2):
            if not kept and not g.isupper():
                return None  # a leading title-case word ("On 12345", "Js") is prose
            kept.append((a, b))
            continue
        if not seen_digit:
            return None
        # a trailing letter group: a check letter ("AB 12 34 56 C", "12345678-Z") or a plate's letters
        word_after = text[b : b + 1] == " " and text[b + 1 : b + 2].isalpha()
        if sep in ("-", "/") or (g.isupper() and (plate or (len(g) == 1 and not (word_after and g in "AI")))):
            kept.append((a, b))
        break
    if not kept or (len(kept) == 1 and _ROMAN.match(text[kept[0][0] : kept[0][1]])):
        return None
    return kept[0][0], kept[-1][1]


def _acceptable(value: str, kind: str, text: str, end: int) -> bool:
    digits = sum(c.isdigit() for c in value)
    if digits < MIN_DIGITS[kind]:
        return False
    if kind == "plate" and sum(c.isalnum() for c in value) < 5:
        return False
    compact = value.replace(" ", "")
    if _YEAR.match(compact) or _DATE.match(compact) or _RATIO.match(value):
        return False
    if kind in ("file", "sign") and _PHONE_SHAPE.match(value):
        return False
    if value.isdigit() and kind == "sign" and len(value) <= 4 and _YEAR.match(value):
        return False
    return not UNIT_AFTER.match(text, end)


class CuedIdentifierRecognizer(TideRecognizer):
    """Identifiers after a document name, a file word or a number sign (label ID)."""

    name = "tide.cued_ids"
    version = "2"
    supported_entities = ("ID",)

    def __init__(self, score: float = 0.85, sign_score: float = 0.7):
        self.score = float(score)
        self.sign_score = float(sign_score)

    def config(self) -> dict[str, Any]:
        """Output-affecting settings: the scores of the two cue strengths."""
        return {"score": self.score, "sign_score": self.sign_score}

    def analyze(
        self, text: str, entities: Sequence[str] | None = None, nlp_artifacts: Any = None
    ) -> list[RecognizerResult]:
        """ID spans for every acceptable value after a cue."""
        if entities and "ID" not in entities:
            return []
        out: list[RecognizerResult] = []
        taken_until = -1
        for m in _CUE.finditer(text):
            if m.end() <= taken_until:
                continue
            kind = "doc" if m.group("doc") else "file" if m.group("file") else "sign"
            cue = m.group(kind)
            if kind == "doc" and _PLATE_CUE.search(cue):
                kind = "plate"
            if kind in ("sign", "file") and NOT_PERSONAL_BEFORE.search(text, max(0, m.start() - 40), m.start()):
                continue
            found = _value(text, m.end(), kind)
            if found is None:
                continue
            start, end = found
            if not _acceptable(text[start:end], kind, text, end):
                continue
            taken_until = end
            score = self.sign_score if kind == "sign" else self.score
            out.append(RecognizerResult("ID", start, end, score, {"recognizer_name": self.qualified_name}))
        return out
