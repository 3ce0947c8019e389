"""Named facilities in any casing and several languages (``tide.facilities``, label HOSPITAL).

A facility name is a proper name plus a head word that says what kind of place it is.  The head
comes last in English ("Millstone Valley Hospital", "Quigley Eye Institute", "Fern Assisted
Living", "zimmerman's pharmacy") and first in many other languages ("Ospedale Santa Chiara",
"Klinikum Schwabing", "Hospital General de Zona 8", "Clinique Saint-Jean").  Notes write these
names in title case, in capitals (headers, legacy systems) and in lower case (portal messages),
so the name words are read in the casing of the head word:

- title case: capitalised words (and "St.", "of", "the", "&", "de" ... between them);
- capitals: words in capitals, header words (DISCHARGE, SUMMARY, REPORT ...) excluded;
- lower case: lower-case words after a boundary (a preposition such as "at", "to", "from", a
  line start or punctuation), function words and verbs excluded.

A name made only of generic words ("the regional medical center", "outpatient pharmacy") is a
service, not an identifying facility, and is not labelled.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from typing import Any

from tide_core.recognizers.base import TideRecognizer
from tide_core.recognizers.places import _fold, load_place_names
from tide_core.spans import RecognizerResult
from tide_core.text.anchored import PatternSet
from tide_core.text.word_frequency import english_frequencies

#: Head words that end an English facility name (longest first when matched).
_TAIL_HEADS = """hospital|hospitals|medical center|medical centre|medical centers|health center|health centre|
health system|healthcare|health care|health clinic|clinic|clinics|infirmary|hospice|sanatorium|pediatrics|
paediatrics|orthopedics|orthopaedics|eye institute|heart institute|cancer institute|institute|medical group|
surgery center|surgical center|surgicenter|birth center|infusion center|dialysis center|imaging center|
cancer center|cancer pavilion|pavilion|rehabilitation center|rehabilitation hospital|rehab center|nursing home|
nursing facility|nursing center|skilled nursing facility|care center|urgent care|family practice|
family medicine|medical associates|heart center|eye center|behavioral health|mental health center|
medical plaza|primary care|physical therapy|family health center|medical clinic|assisted living|
assisted living facility|senior living|retirement home|rest home|care home|memorial hospital|
veterans affairs medical center|va medical center|polyclinic|pharmacy|apothecary|drugstore|drug store|
medical office|health services|wellness center|treatment center|recovery center|detox center|dialysis unit|
behavioral health unit|psychiatric unit|home for the aged|home for the elderly|women's health|womens health|
children's center|childrens center|ziekenhuis|kórház|hastanesi|sairaala|больница|поликлиника|госпиталь|
care centre|primary care centre|medical centre|medisch centrum|krankenhaus|rendelőintézet|városi rendelőintézet|
kreiskrankenhaus|klinik""".replace("\n", "")
#: Head words only trusted in title case or capitals ("the drug", "a wing" are everyday words).
_TAIL_HEADS_CASED = (
    "drug|drugs|wing|campus|ctr|hosp|med ctr|med center|medical ctr|hlth ctr|health ctr|gen hosp|mem hosp|univ hosp|"
    "rehab ctr|surg ctr|cancer ctr|nursing ctr|univ. hosp|univ hosp"
)
#: Head words that start a facility name (other languages, and a few English forms).
_LEAD_HEADS = """hospital general|hospital universitario|hospital regional|hospital civil|hospital de|hospital da|
hospital das|hospital do|hospital dos|
hôpital|hopital|hôpital général|centre hospitalier|clinique|clínica|clinica|ospedale|policlinico|presidio ospedaliero|
klinikum|krankenhaus|universitätsklinikum|medisch centrum|ziekenhuis|centro médico|centro medico|centro de salud|
sanatorio|szpital|spital|sjukhus|sykehus|hospice of|clinic of|hospital clínico|hospital clinico|νοσοκομείο|
γενικό νοσοκομείο|κλινική|unidad de medicina familiar|nemocnice|fakultní nemocnice|centrum medyczne|
kreiskrankenhaus""".replace("\n", "")

_LINKS = frozenset(
    "of the and & de del la le les du des di da do dos das der den von van y e et st st. saint bei am im an".split()
)
_STOP = frozenset(
    """a an at to from in on with by for via into onto was is were are be been being has had have
he she they we i you it his her their our my your its this that these those who which where when while then than
seen sent sending transferred transfer admitted admit discharged discharge called call calls spoke speak work works
worked working job employed patient pt pts dr doctor mr mrs ms miss nurse rn md per please thanks thank see saw visit
visited visiting went go going gets get got off back home attends attended referred refer referral followed follow
lives lived living stay stayed staying moved moving returned return will would could should may might can also
and or but not no yes today yesterday tomorrow now currently previously prior recent recently last next new old
records record report reports note notes faxed fax emailed email obtained review reviewed
""".split()
)
_GENERIC = frozenset(
    """regional community general university memorial county city state medical health children's
childrens women's womens veterans affairs va north south east west central main outpatient inpatient primary urgent
family specialty specialist local nearby hospital outside area district public private teaching academic psychiatric
rehabilitation rehab surgical surgery cancer heart eye pediatric pediatrics senior home care nursing skilled retail
mail-order mail order hospital's clinic's our their your his her the a an this that same other another different
closest nearest affiliated partner sister satellite cardiology oncology neurology dermatology orthopedic
orthopaedic gi pulmonary pulmonology renal nephrology endocrine endocrinology diabetes wound pain sleep allergy ent
ob gyn obgyn urology infectious disease diseases anticoagulation coumadin walk-in student employee travel fertility
hematology rheumatology gastroenterology psychiatry psychology behavioral mental vascular transplant spine sports
breast imaging radiology dialysis infusion lab laboratory vaccine vaccination immunization prenatal pediatric
podiatry optometry dental hearing audiology speech physical occupational therapy wellness weight bariatric
geriatric geriatrics palliative hospice methadone addiction substance suboxone hiv std sti free charity
emergency trauma burn stroke memory headache epilepsy movement""".split()
)
_HEADER_WORDS = frozenset(
    """DISCHARGE SUMMARY REPORT NOTE PROGRESS ADMISSION HISTORY PHYSICAL CONSULT CONSULTATION
OPERATIVE PATHOLOGY RADIOLOGY SURGICAL CYTOLOGY FINAL DIAGNOSIS LABORATORY LAB TRANSFER REFERRAL LETTER FROM TO RE
DEPARTMENT OF PATIENT NAME DATE PLAN ASSESSMENT IMPRESSION FINDINGS ADDENDUM FOLLOW-UP FOLLOWUP HOME WITH SEEN AT
IN AND THE FOR VIA BRIEF COURSE""".split()
)

_CONNECTORS = _LINKS - {"st", "st.", "saint"}
_ABBREVIATIONS = frozenset("st. mt. ft. dr. jr. sr. co. corp. inc. ltd. bros. n. s. e. w.".split())
_TOKEN = r"[^\W\d_][\w'\u2019.\-]*|\d{1,3}[A-Za-z]?|&"
_TOKEN_RE = re.compile(_TOKEN)


def _heads_re(heads: str) -> str:
    alts = sorted({h.strip() for h in heads.split("|") if h.strip()}, key=lambda h: (-len(h), h))
    return "|".join(re.escape(h).replace(r"\ ", r"[ \t]+") for h in alts)


#: "Center for Sleep Medicine", "Institute for Women's Health": a head with its field after "for"
#: (up to three words before a field word), taken whole so the field is replaced with the name.
_FOR_FIELD_HEAD = (
    r"(?:center|centre|institute|clinic)[ \t]+for[ \t]+(?:[a-z'\u2019\-]+[ \t]+){0,3}?"
    r"(?:medicine|health|healthcare|care|surgery|rehabilitation|research|wellness|healing|disorders|diseases|"
    r"oncology|cardiology|neurology|imaging|therapy|therapies|recovery|pain|management|sciences)"
)
_TAIL_RE = re.compile(
    r"(?<![\w'])(?P<head>" + _FOR_FIELD_HEAD + "|" + _heads_re(_TAIL_HEADS) + r")(?![\w])", re.IGNORECASE
)
_TAIL_CASED_RE = re.compile(
    r"(?<![\w'])(?P<head>" + _heads_re(_TAIL_HEADS_CASED) + r")(?![\w])"
    r"(?![ \t]*(?i:course|stay|days?|admission|adm|d/c|discharge|follow|f/u)\b)",  # "Brief Hosp Course"
    re.IGNORECASE,
)
_LEAD_RE = re.compile(r"(?<![\w'])(?P<head>" + _heads_re(_LEAD_HEADS) + r")(?=[ \t])", re.IGNORECASE)


def _case_of(s: str) -> str:
    letters = [c for c in s if c.isalpha()]
    if letters and all(c.isupper() for c in letters):
        return "upper"
    if letters and all(c.islower() for c in letters):
        return "lower"
    return "title"


def _name_token_ok(tok: str, case: str) -> bool:
    low = tok.lower()
    if low in _LINKS or tok == "&":
        return True
    if low in _STOP:
        return False
    if tok[0].isdigit():
        return True
    if case == "title":
        return tok[0].isupper() and not tok.isupper() or (tok.isupper() and len(tok) <= 4)
    if case == "upper":
        return tok.isupper() and tok not in _HEADER_WORDS
    return tok.islower()


def _specific(tokens: Sequence[str]) -> bool:
    return any(
        t.lower() not in _GENERIC and t.lower() not in _LINKS and t != "&" and not t[0].isdigit() for t in tokens
    )


class HeadWordRecognizer(TideRecognizer):
    """Names ending (or starting) with a head word of one lexicon, in any casing; one label."""

    name = "tide.headwords"
    version = "1"
    label = "HOSPITAL"
    tail_re: re.Pattern[str] = _TAIL_RE
    tail_cased_re: re.Pattern[str] | None = _TAIL_CASED_RE
    lead_re: re.Pattern[str] | None = _LEAD_RE

    def __init__(self, score: float = 0.7, max_words: int = 5):
        self.score = float(score)
        self.max_words = int(max_words)
        self.supported_entities = (self.label,)

    def config(self) -> dict[str, Any]:
        return {"score": self.score, "max_words": self.max_words}

    def analyze(
        self, text: str, entities: Sequence[str] | None = None, nlp_artifacts: Any = None
    ) -> list[RecognizerResult]:
        if entities and self.label not in entities:
            return []
        scan = _head_patterns(self.tail_re, self.tail_cased_re, self.lead_re).scan(text)  # where head words are
        found: list[tuple[int, int]] = []
        for m in scan.finditer(self.tail_re):
            case = _case_of(m.group("head"))
            if case == "lower" and not m.group("head").isascii():
                case = "title"  # "Городская больница", "Szent János kórház": the head is written in lower case
            found.extend(self._before(text, m.start("head"), m.end("head"), case))
        if self.tail_cased_re is not None:
            for m in scan.finditer(self.tail_cased_re):
                case = _case_of(m.group("head"))
                if case != "lower":
                    found.extend(self._before(text, m.start("head"), m.end("head"), case))
        if self.lead_re is not None:
            for m in scan.finditer(self.lead_re):
                found.extend(self._after(text, m.start("head"), m.end("head"), _case_of(m.group("head"))))
        found = [(s, _extend(text, s, e)) for s, e in found]
        out: list[RecognizerResult] = []
        for s, e in _longest_disjoint(found):
            out.append(RecognizerResult(self.label, s, e, self.score, {"recognizer_name": self.qualified_name}))
        return out

    def _before(self, text: str, hs: int, he: int, case: str) -> list[tuple[int, int]]:
        """Name words before a tail head: walk left over tokens on the same line."""
        line_start = text.rfind("\n", 0, hs) + 1
        chunk = text[max(line_start, hs - 120) : hs]
        toks = list(_TOKEN_RE.finditer(chunk))
        base = hs - len(chunk)
        name: list[re.Match[str]] = []
        end_of_next = len(chunk)
        for t in reversed(toks):
            gap = chunk[t.end() : end_of_next]
            if gap.strip(" \t") not in ("",) or len(name) >= self.max_words:
                break
            tok = t.group(0)
            if tok.endswith(".") and tok.lower() not in _ABBREVIATIONS:
                break  # a sentence ended: "Iron County. Works nights at ..."
            if tok.lower() == "of" and (not name or sum(x.group(0).lower() not in _CONNECTORS for x in name) >= 2):
                break  # "Tariq Fontaine of St. Jude Parish", "Pastor Priya of Kingdom Hall": the name follows "of"
            if not _name_token_ok(tok, case):
                break
            name.insert(0, t)
            end_of_next = t.start()
        while name and name[0].group(0).lower() in _LINKS and name[0].group(0).lower() not in ("st", "st.", "saint"):
            name.pop(0)
        if not name or not _specific([t.group(0) for t in name]):
            return []
        if case == "lower" and not _lower_boundary(text, base + name[0].start()):
            return []
        return [(base + name[0].start(), he)]

    def _after(self, text: str, hs: int, he: int, case: str) -> list[tuple[int, int]]:
        """Name words after a lead head ("Ospedale Santa Chiara")."""
        line_end = text.find("\n", he)
        chunk = text[he : line_end if line_end >= 0 else len(text)][:120]
        end = None
        n = 0
        pos = 0
        for t in _TOKEN_RE.finditer(chunk):
            if chunk[pos : t.start()].strip(" \t") != "" or n >= self.max_words:
                break
            tok = t.group(0).rstrip(".")
            if not _name_token_ok(tok, case) and not (case == "title" and tok in ("The",)):
                break
            n += 1
            pos = t.end()
            if tok.lower() not in _LINKS:
                end = he + t.start() + len(tok)
        place_end = _place_words(text, he + len(chunk) - len(chunk.lstrip(" \t")), case) if chunk[:1] in " \t" else he
        if place_end > (end or he):
            end = place_end  # "University of New Mexico": a place after the head
        if end is None:
            return []
        name = _TOKEN_RE.findall(text[he:end])
        if not _specific(name):
            return []
        return [(hs, end)]


#: What follows a facility or firm name and belongs to it (tide.facilities@5, tide.org_heads@4):
#: a legal form after a comma or a blank (", Inc.", " GmbH", " Kft."), a campus, wing or site
#: after a dash, a comma or a bracket ("- North Campus", "(Main Campus)", ", West Wing"), a number
#: ("Szpital Miejski nr 1", "Больница № 3").
LEGAL_FORMS = (
    r"Inc\.?|Incorporated|LLC|L\.L\.C\.|Ltd\.?|Limited|LLP|L\.L\.P\.|PLLC|P\.C\.|P\.A\.|PC|GmbH|gGmbH|AG|KG|"
    r"GmbH[ \t]*&[ \t]*Co\.?[ \t]*KG|S\.A\.|SA|S\.A\.S\.|SAS|SARL|S\.à[ \t]?r\.l\.|S\.L\.|S\.p\.A\.|SpA|"
    r"S\.r\.l\.|Srl|B\.V\.|BV|N\.V\.|NV|Kft\.?|Zrt\.?|Nyrt\.?|Bt\.|Oy|Oyj|AB|A/S|ApS|ASA|Sp\.[ \t]?z[ \t]?o\.o\.|"
    r"s\.r\.o\.|a\.s\.|Pty\.?[ \t]+Ltd\.?|plc|PLC|Corp\.?|Co\.|e\.V\.|Ltda\.?|S\.A\.[ \t]+de[ \t]+C\.V\.|ООО|АО|"
    r"DAC|mbB|PartG|sp\.[ \t]?j\.|sp\.[ \t]?k\.|S\.C\.|SCP|SELARL|Α\.Ε\.|Ε\.Π\.Ε\.|ΕΠΕ"
)
_SITE_WORDS = r"(?i:campus|pavilion|tower|wing|annex|annexe|branch|site)"
_EXTENSION = re.compile(
    rf"(?:,?[ \t]+|,)(?P<legal>(?:{LEGAL_FORMS}))(?![\w/])"
    rf"|[ \t]*(?:[-\u2013\u2014,:/][ \t]*|\([ \t]*)(?P<site>(?:[^\W\d_][\w'.]*[ \t]+){{0,2}}{_SITE_WORDS})(?![\w])\)?"
    r"|[ \t]+(?P<num>(?i:nr\.?|no\.?|n\.?º|núm\.?|#|№)[ \t]*\d{1,4})(?![\w])"
)


_OF_PLACE = re.compile(r"[ \t]+(?:of|OF)[ \t]+(?P<w>[^\W\d_][\w'\u2019.\-]*(?:[ \t]+[^\W\d_][\w'\u2019.\-]*){0,2})")


def _place_words(text: str, start: int, case: str) -> int:
    """The end of the longest run of one to three words at ``start`` that is a known place written in
    ``case`` ("New Mexico", "SOUTH BEND", "orlando"), or -1 when there is none."""
    words = list(re.finditer(r"[^\W\d_][\w'\u2019.\-]*", text[start : start + 60]))[:3]
    tiers = load_place_names().tiers
    for n in range(len(words), 0, -1):
        run = text[start : start + words[n - 1].end()]
        if (
            "\n" in run
            or _case_of(run) != case
            or (case == "title" and not all(w.group(0)[0].isupper() for w in words[:n]))
        ):
            continue
        if _fold(run.rstrip(".")).casefold() in tiers:
            return start + len(run.rstrip("."))
    return -1


def _extend(text: str, start: int, end: int) -> int:
    """The end of a facility name with what follows it and belongs to it (see ``_EXTENSION``), and
    a town after "of" ("Mercy Hospital of Mason", "First Baptist Church of Duluth")."""
    of = _OF_PLACE.match(text, end)
    if of is not None:
        end = max(end, _place_words(text, of.start("w"), _case_of(text[start:end])))
    for _ in range(2):  # "Mercy Hospital, Inc. - North Campus"
        m = _EXTENSION.match(text, end)
        if m is None or "\n" in m.group(0):
            break
        end = m.end() if m.group("site") is None or text[m.end() - 1] == ")" else m.end("site")
        if m.group("site") is not None and text[start:end].count("(") < text[start:end].count(")"):
            end -= 1
    return end


@functools.lru_cache(maxsize=32)
def _head_patterns(*patterns: re.Pattern[str] | None) -> PatternSet:
    """A recognizer's head patterns, tried only where one of their head words occurs (the same
    matches as ``finditer``)."""
    return PatternSet(p for p in patterns if p is not None)


def _lower_boundary(text: str, start: int) -> bool:
    before = text[max(0, start - 12) : start]
    return (
        not before.strip()
        or before.rstrip()[-1:] in ".,;:()[]-\"'|\t\n"
        or re.search(r"(?i:\b(?:at|to|from|in|with|of|by|via|for|on|into)\s+)$", before) is not None
    )


def _longest_disjoint(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    taken: list[tuple[int, int]] = []
    for s, e in sorted(set(spans), key=lambda x: (-(x[1] - x[0]), x[0])):
        if all(e <= a or s >= b for a, b in taken):
            taken.append((s, e))
    return sorted(taken)


class FacilityRecognizer(HeadWordRecognizer):
    """Facility names (label HOSPITAL): "Millstone Valley Hospital", "Klinikum Schwabing"."""

    name = "tide.facilities"
    # 3: dialysis/behavioral/psychiatric units, homes for the aged, "Hospital das ..."; 4: "X Center for Y Medicine";
    # 5: abbreviated heads ("Med Ctr", "Hosp"), legal forms, campuses and numbers after the name, heads in
    # Dutch, Hungarian, Turkish, Finnish, Greek, Russian and Czech; 6: a care home named after a person
    # ("Ahlquist House", "Okonjo Manor")
    version = "6"
    label = "HOSPITAL"

    def analyze(
        self, text: str, entities: Sequence[str] | None = None, nlp_artifacts: Any = None
    ) -> list[RecognizerResult]:
        """Facility names by head word, and care homes named after a person (see ``_NAMED_HOUSE``)."""
        out = super().analyze(text, entities, nlp_artifacts)
        if (entities and self.label not in entities) or not _HOUSE_HINT.search(text):
            return out
        taken = [(r.start, r.end) for r in out]
        for m in _NAMED_HOUSE.finditer(text):
            s, e = m.span()
            if _rare_word(m.group("n")) and all(e <= a or s >= b for a, b in taken):
                out.append(RecognizerResult(self.label, s, e, self.score, {"recognizer_name": self.qualified_name}))
        return sorted(out, key=lambda r: r.start)


#: A care or hospice home named after a person: one capitalised surname rare in English, then
#: "House", "Manor" or "Lodge" ("Ahlquist House"; "White House", "Open House" are everyday words).
_NAMED_HOUSE = re.compile(
    r"(?<![\w'\u2019.-])(?P<n>[A-Z][a-z'\u2019]{2,}(?:-[A-Z][a-z]+)?)[ \t]+(?:House|Manor|Lodge)(?![\w-])"
)
_HOUSE_HINT = re.compile(r"\b(?:House|Manor|Lodge)\b")


def _rare_word(word: str) -> bool:
    """Rare in English (Zipf < 3) and not a place: "Ahlquist" yes, "White", "Guest", "Boston" no."""
    f = english_frequencies().get(word.casefold(), 0.0)
    if f > 0 and math.log10(f) + 9 >= 3.0:
        return False
    return _fold(word).casefold() not in load_place_names().tiers


#: Head words that end an employer, school, congregation or other organisation's name.
_ORG_TAIL_HEADS = """software|systems|technologies|solutions|industries|manufacturing|construction|contractors|
roofing|plumbing|electric|trucking|logistics|freight|staffing|paper mill|mill|mills|steel works|tool & die|
tool and die|foundry|shipyard|factory|brewery|winery|dairy|dairy farm|farm|farms|orchards|ranch|foods|
grocery|market|supermarket|bakery|diner|restaurant|cafe|café|motel|hotel|inn|casino|salon|studio|agency|
insurance|bank|credit union|bank and trust|company|co.|corp.|corporation|inc.|incorporated|llc|ltd|group|holdings|
partners|associates|school|high school|middle school|elementary school|elementary|academy|college|
community college|university|seminary|preschool|daycare|day care|church|parish|cathedral|chapel|mosque|
synagogue|fellowship|bible fellowship|ministries|ministry|congregation|islamic center|jewish center|
community center|fire department|police department|sheriff's office|department of corrections|library|
ymca|ywca|club|lodge|union|local|warehouse|distribution center|airlines|railroad|transit|motors|auto parts|
auto body|landscaping|cleaning services|home care agency|temp agency|llp|pllc|realty|realtors|telecom|law firm|
law group|montessori|school district|kingdom hall|gymnasium|gimnázium|lycée|liceo|colegio|escuela|solicitors|
fire brigade|volunteer fire brigade|co-operative|housing co-operative|housing association|analytics|holdings|
residents' association|residents association|association""".replace("\n", "")
_ORG_LEAD_HEADS = "temple|church of|university of|college of|bank of|kingdom hall of"


class OrganisationHeadRecognizer(HeadWordRecognizer):
    """Employers, schools, congregations (label OTHER) by head word, in any casing."""

    name = "tide.org_heads"
    # 3: firms, realtors and telecoms ("llp", "realty", "telecom", ...); 4: Montessori schools, school
    # districts, Kingdom Halls; legal forms, campuses and numbers after the name
    version = "4"
    label = "OTHER"
    tail_re = re.compile(r"(?<![\w'])(?P<head>" + _heads_re(_ORG_TAIL_HEADS) + r")(?![\w])", re.IGNORECASE)
    tail_cased_re = None
    lead_re = re.compile(r"(?<![\w'])(?P<head>" + _heads_re(_ORG_LEAD_HEADS) + r")(?=[ \t])", re.IGNORECASE)
