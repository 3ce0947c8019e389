"""The regex layer's pattern table: what each pattern matches, its label, score and context words.

Patterns are data, not code, so a site can list, drop or extend them (``RegexRecognizer(patterns=
DEFAULT_PATTERNS + my_patterns)``) and so the recognition fingerprint can hash them.

Conventions followed (docs/architecture.md): spans cover the PHI characters only, never the
prefix word ("MRN: 12345678" -> "12345678", "age 67" -> "67", "Dr. Smith" -> "Smith").  A
pattern says which regex groups are spans through ``groups`` (group name, label); the default is
the single group ``phi``.

Precision first: patterns that would also match doses, vitals, scores, ratios or lab values
(``3/4`` tablet, BP ``120/80``, pain ``7/10``, a bare year-like number) only fire with context
(``requires_context``), and the ``exclude_after`` / ``exclude_before`` guards reject the usual
clinical look-alikes.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tide_core.recognizers.iban import IBAN_ANCHOR, IBAN_ANCHOR_WINDOW, IBAN_REGEX


# --------------------------------------------------------------------------- building blocks
def word_alternation(words: Iterable[str]) -> str:
    """A deterministic regex matching any of ``words``, built as a trie.

    Python's ``re`` tries alternation branches one by one; a trie branches on one character at a
    time, which keeps 200-word stop lists cheap at every text position.  Longer words win.
    """
    trie: dict[str, Any] = {}
    for w in sorted(set(words)):
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict[str, Any]) -> str:
        ends = "" in node
        branches = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch != ""]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 and not ends else "(?:" + "|".join(branches) + ")"
        if len(branches) == 1 and not ends:
            return body
        return body + "?" if ends else body

    return "(?:" + build(trie) + ")"


_MONTH_WORDS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)
_MONTH_ABBR = ("Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec")


def _month_alternation() -> str:
    """Capitalised and upper-case month names and abbreviations (case-sensitive on purpose:
    "may" and "mar" are ordinary words)."""
    return _month_forms(set(_MONTH_WORDS + _MONTH_ABBR), (str, str.upper))


def _month_forms(words: Iterable[str], casings: Sequence[Callable[[str], str]]) -> str:
    """Abbreviations may take a period ("Mar.", "may. 6"); a full name only when a number follows
    ("March. 3" is a typo, "in March." ends the sentence)."""
    def alt(ws: Iterable[str]) -> str:
        return "|".join(sorted({c(w) for w in ws for c in casings}, key=lambda w: (-len(w), w)))
    abbr = {w for w in words if w in _MONTH_ABBR or w.lower() in ("may",)}
    full = set(words) - abbr
    out = "(?:" + alt(abbr) + r")(?![a-z])\.?"
    if full:
        out = "(?:(?:" + alt(full) + r")(?![a-z])(?:\.(?=\s*\d))?|" + out + ")"
    return out


MONTH = _month_alternation()
#: "may", "mar" and "march" are ordinary lower-case words; the other month names are not.
_AMBIGUOUS_LOWER_MONTHS = ("may", "mar", "march")


def _lower_month_alternation(ambiguous: bool) -> str:
    """Lower-case month names ("august 12th", "dec 24"), as typed in messages and lower-cased
    notes; ``ambiguous`` selects the ordinary-word months ("may", "march") or all the others."""
    words = {w for w in _MONTH_WORDS + _MONTH_ABBR if (w.lower() in _AMBIGUOUS_LOWER_MONTHS) == ambiguous}
    return _month_forms(words, (str.lower,))


MONTH_LOWER = _lower_month_alternation(False)
MONTH_LOWER_AMBIGUOUS = _lower_month_alternation(True)
#: Any month name: capitalised, upper-case or lower-case ("may"/"march" included).
MONTH_ANY = "(?:" + MONTH + "|" + MONTH_LOWER + "|" + MONTH_LOWER_AMBIGUOUS + ")"
#: Month names that are never ordinary words (lower-case "may"/"march"/"mar" left out).
MONTH_SAFE = "(?:" + MONTH + "|" + MONTH_LOWER + ")"
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
             "Mon", "Tue", "Tues", "Wed", "Thu", "Thur", "Thurs", "Fri", "Sat", "Sun")
#: A weekday in front of a date belongs to the date ("Wed 6/22", "friday, april 7, 2017").
WEEKDAY = ("(?:" + "|".join(f for w in sorted(_WEEKDAYS, key=lambda w: (-len(w), w)) for f in (w, w.upper(), w.lower()))
           + r")(?![A-Za-z])\.?,?\s{1,2}")
DAY = r"(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th|ST|ND|RD|TH)?"
NUM_DAY = r"(?:3[01]|[12]\d|0?[1-9])"
NUM_MONTH = r"(?:1[0-2]|0?[1-9])"
YEAR4 = r"(?:19|20)\d{2}"
# An attached time in the same token run: "03/04/2021 14:30", "2021-03-04T14:30:00".
_CLOCK = (r"(?:(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?:\.\d+)?(?:\s?[AaPp]\.?[Mm]\.?(?!\w))?Z?"
          r"|(?:[01]\d|2[0-3])[0-5]\d(?![\d:]|[./-]\d|\s*(?:hours|hrs|h\b|mg|mcg|mL|ml|cc|units|kg|g\b|L\b|%))"
          r"|(?:1[0-2]|0?[1-9])\s?[AaPp]\.?[Mm]\.?(?!\w))")
TIME = r"(?:[ Tt]" + _CLOCK + ")?"
#: A time that must follow ("5/21 1650", "2/18 4:15 PM", "dec 24 1350").
TIME_REQUIRED = r"[ \t]{1,2}" + _CLOCK
# Numeric boundaries: not inside a longer number, path, version or decimal.
# A colon is a boundary after a label ("DOB:09/30/1958") but not after a digit (a ratio "1:2/3", a time).
NL = r"(?<![\w/.\-])(?<!\d:)"
NR = r"(?![\w/]|[.\-:]\d)"

STATE_ABBR = (
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN", "IA",
    "KS", "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM",
    "NY", "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA",
    "WV", "WI", "WY", "PR",
)
#: Abbreviations that are also clinical credentials or common tokens ("Smith, MD", "Jones, PA").
_AMBIGUOUS_STATE_ABBR = ("MD", "PA", "MS", "ME", "IN", "OR", "OK", "HI")
STATE_NAMES = (
    "Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut", "Delaware",
    "Florida", "Georgia", "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa", "Kansas", "Kentucky",
    "Louisiana", "Maine", "Maryland", "Massachusetts", "Michigan", "Minnesota", "Mississippi",
    "Missouri", "Montana", "Nebraska", "Nevada", "New Hampshire", "New Jersey", "New Mexico",
    "New York", "North Carolina", "North Dakota", "Ohio", "Oklahoma", "Oregon", "Pennsylvania",
    "Rhode Island", "South Carolina", "South Dakota", "Tennessee", "Texas", "Utah", "Vermont",
    "Virginia", "Washington", "West Virginia", "Wisconsin", "Wyoming", "Puerto Rico",
)
#: State names that are also common first names: lower score on their own.
_NAME_LIKE_STATES = ("Georgia", "Virginia", "Washington", "Carolina", "Indiana", "Montana", "Nevada")

_STATE_ABBR_ALT = word_alternation(STATE_ABBR) + r"\b"
_STATE_SAFE_ALT = word_alternation(a for a in STATE_ABBR if a not in _AMBIGUOUS_STATE_ABBR) + r"\b"
_STATE_NAME_ALT = r"(?=[A-Z])" + word_alternation(STATE_NAMES) + r"\b"
ZIP = r"\d{5}(?:-\d{4})?(?![\w-])"

STREET_SUFFIX = (
    r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Drive|Dr|Lane|Ln|Court|Ct|Way|Place|Pl|"
    r"Terrace|Ter|Circle|Cir|Parkway|Pkwy|Highway|Hwy|Trail|Trl|Square|Sq|Loop|Row|Pike|Alley|"
    r"Crescent|Plaza|Run|Pass|Ridge)\b"
)

_STREET_SUFFIX_UPPER = (
    r"(?:STREET|ST|AVENUE|AVE|ROAD|RD|BOULEVARD|BLVD|DRIVE|DR|LANE|LN|COURT|CT|WAY|PLACE|PL|TERRACE|TER|CIRCLE|"
    r"CIR|PARKWAY|PKWY|HIGHWAY|HWY|TRAIL|TRL|SQUARE|SQ|LOOP|PIKE|ALLEY|CRESCENT|PLAZA)\b"
)

#: Words that sit between a number and a street word in running text but never in a street name
#: ("3 blocks down the street", "walked 2 laps around the unit").
_NOT_STREET_WORD = (
    r"(?:the|a|an|of|to|down|up|on|in|at|and|or|from|for|with|by|across|around|along|near|past|over|off|into|"
    r"block|blocks|mile|miles|times|minutes|hours|days|weeks|laps|steps|feet|yards|houses|doors|floors|cars|lanes)"
)

#: Capitalised words that follow or precede names but are not names.
_NOT_NAME = (
    "The", "A", "An", "And", "Or", "On", "At", "In", "Of", "For", "To", "By", "With", "From", "Per",
    "Is", "Was", "Has", "Had", "Will", "Who", "This", "That", "Today", "Yesterday", "Tomorrow",
    "Patient", "Pt", "Seen", "Saw", "Called", "Discussed", "Spoke", "Contact", "Attending", "Resident",
    "Signed", "Electronically", "Dictated", "Clinic", "Hospital", "Center", "Centre", "Medical",
    "Department", "Dept", "Service", "Team", "Office", "Unit", "Cardiology", "Oncology", "Neurology",
    "Surgery", "Radiology", "Pathology", "Medicine", "Pediatrics", "Psychiatry", "Nursing", "Note",
    "Notes", "Plan", "Assessment", "History", "Dr", "Mr", "Mrs", "Ms", "Miss", "MD", "DO", "RN",
    "NP", "PA", "PhD", "Street", "Avenue", "Road", "Monday", "Tuesday", "Wednesday", "Thursday",
    "Friday", "Saturday", "Sunday", "He", "She", "They", "His", "Her", "Their", "We", "I", "It",
    "Follow", "Followup", "Recommend", "Recommended", "Agrees", "Noted", "Reports", "Denies", "Also",
    "Room", "Rm", "Bed", "Bay", "Ward", "Floor", "Rehab", "Home", "Emergency", "Triage", "Telemetry", "Stepdown",
    "Observation", "Age", "Sex", "Dob", "Mrn", "Pharmacy", "Lab", "Labs", "Imaging", "Dear", "License", "Shift", "Night", "Day", "Last", "Came", "Re", "Ref", "Referral", "Consult", "Progress",
    "Hematology", "Pulmonology", "Gastroenterology", "Dermatology", "Nephrology", "Endocrinology", "Rheumatology",
    "Urology", "Palliative", "Care", "Gynecology", "Obstetrics", "Orthopedics", "Hepatology", "Infectious", "Geriatrics",
    "Anesthesia", "Anesthesiology", "Hospitalist", "Internal", "Family", "General", "Critical", "Vascular", "Transplant",
    "Podiatry", "Ophthalmology", "Otolaryngology", "Allergy", "Immunology", "Genetics", "Rehabilitation", "Sleep",
    "Interventional", "Thoracic", "Cardiothoracic", "Neurosurgery", "Orthopaedics", "Hematology/Oncology",
    "Practitioner", "Assistant", "Manager", "Worker", "Physician", "Provider", "Nurse", "Resident", "Fellow",
) + _MONTH_WORDS
_NOT_NAME_ALT = word_alternation(_NOT_NAME) + r"\b"
_NOT_NAME_UPPER_ALT = word_alternation({w.upper() for w in _NOT_NAME} | {
    "SEE", "SAW", "PCP", "ENT", "GI", "DOB", "MRN", "SEX", "PLAN", "NOTE", "HPI", "CT", "MRI", "ED", "ICU", "OR", "PT", "HX", "FHX", "PMH", "ROS",
    "STAT", "PRN", "BID", "TID", "QID", "PO", "IV", "IM", "NPO", "WITH", "FOR", "AND", "THE", "TO", "AT",
    "ON", "IN", "OF", "IS", "WAS", "HAS", "DR", "FROM", "BY", "PER", "VIA", "HOME", "MEDS", "PAGER",
    "PAGE", "CALL", "RETURN", "FOLLOW", "UP", "CONSULT", "CONSULTATION", "REPORT", "RESULTS", "LAB"}) + r"\b"
_PARTICLE = r"(?:van|von|de|der|den|du|da|di|del|della|la|le|al|el|bin|ben|dos|das|ter|ten|St\.)"
# Letters: ASCII plus Latin-1 and Latin Extended-A, so "Inés", "Zoë", "Łukasz" are names too.
UP = "A-ZÀ-ÖØ-ÞĀ-Ž"
LO = "a-zß-öø-ÿā-ž"
NAME_TOKEN = (r"(?=[" + UP + r"])(?!" + _NOT_NAME_ALT + r")(?:[" + UP + r"]'|Mc|Mac|De|Di|La|Le)?[" + UP + r"][" + LO
              + r"]+(?:-[" + UP + LO + r"][" + LO + r"]+)*(?![" + UP + LO + r"])")
UPPER_TOKEN = (r"(?=[" + UP + r"][" + UP + r"'])(?!" + _NOT_NAME_UPPER_ALT + r")(?:[" + UP + r"]')?[" + UP + r"]{2,}(?:-["
               + UP + r"]{2,})*(?![\w'])")
INITIAL = r"[A-Z]\.(?!\w)"
_BARE_INITIAL = r"[A-Z](?![\w'.-])"
_TOKEN = r"(?:(?:" + _PARTICLE + r" ){0,2}" + NAME_TOKEN + ")"
_UTOKEN = r"(?:(?:" + _PARTICLE.upper() + r" ){0,2}" + UPPER_TOKEN + ")"
# "John Smith", "J. Smith", "John A. Smith", "Mary O'Neil", "Arthur van Dijk" (spaces only: never across lines)
_NAME_CAP = (r"(?:(?:" + INITIAL + r" ?){1,2} ?)?" + _TOKEN + r"(?: (?:" + INITIAL + "|" + _BARE_INITIAL + "|" + _TOKEN + r")){0,2}"
             r"(?! " + NAME_TOKEN + r")")
# "RAFAEL DUNN", "VAN DIJK"
_NAME_UP = r"(?:(?:" + INITIAL + r" ?){1,2} ?)?" + _UTOKEN + r"(?: (?:" + INITIAL + "|" + _BARE_INITIAL + "|" + _UTOKEN + r")){0,2}(?! " + UPPER_TOKEN + ")"
# "Dunn, Rafael", "JOVANOVIC, FREJA A", "Green, Kathleen G."
_LAST_FIRST = (r"(?:" + _TOKEN + "|" + _UTOKEN + r"), (?:" + NAME_TOKEN + "|" + UPPER_TOKEN + r")(?: (?:"
               + INITIAL + "|" + _BARE_INITIAL + r"))?")
NAME = r"(?=[A-Za-z])(?:" + _LAST_FIRST + "|" + _NAME_CAP + "|" + _NAME_UP + ")"
# After a title ("MR. KOZLOV AMBULATED"): one upper-case token only, an initial allowed.
NAME_TITLED = r"(?=[A-Za-z])(?:" + _LAST_FIRST + "|" + _NAME_CAP + r"|(?:" + INITIAL + r" ?)?" + _UTOKEN + r"(?! " + UPPER_TOKEN + "))"
# Names in running text (no list form), for role-word patterns: "resident Kwabena Mulligan".
NAME_PLAIN = r"(?=[A-Za-z])(?:" + _NAME_CAP + ")"

CREDENTIAL = (r"(?:M\.D\.|D\.O\.|MD|DO|RN|NP|PA-C|PA|CNP|APRN|CRNA|DNP|PharmD|PhD|MSW|LCSW|DPT|"
              r"CNM|FNP|FNP-BC|FACS|FACP|MBBS|RT|LPN|CNA|CRNP|ANP|NP-C|RD|RPh|CRT|RRT)(?![\w-])")

# Context vocabularies (matched case-insensitively on word boundaries before the span).
DATE_CONTEXT = ("date", "dated", "on", "since", "dob", "born", "admitted", "admission", "discharged",
                "discharge", "seen", "visit", "dos", "surgery", "until", "from", "through", "starting",
                "started", "last", "next", "scheduled", "returned", "follow-up", "followup", "f/u",
                "appointment", "appt", "effective", "as of", "before", "after", "by", "due", "procedure", "collected",
                "see", "between", "drawn", "received", "performed", "taken", "obtained", "done", "week of",
                "expires", "expired", "expected", "pending", "follow up", "f/u", "return", "returns", "onset", "reported", "resulted", "signed", "day",
                # header labels and phrases that introduce a date in forms and messages
                "admit", "adm", "sent", "rec'd", "recd", "sign-out", "signout", "d/c", "reply", "set for", "planned for",
                "birthday", "turns", "dx", "booster", "vaccine", "vaccinated", "immunized", "attempt")
PHONE_CONTEXT = ("phone", "tel", "telephone", "cell", "mobile", "call", "called", "pager", "page",
                 "fax", "contact", "reach", "reached", "reachable", "ph", "number", "home", "work", "office", "#",
                 "questions", "at", "via", "tel.", "phone:", "callback", "voicemail", "line", "kin", "text", "sms", "whatsapp", "sent to",
                 "dial")
#: Words that are phone context for a full "(555) 123-4567" but too loose for a bare "02 7623 0792".
_NATIONAL_PHONE_CONTEXT = tuple(w for w in PHONE_CONTEXT if w not in ("#", "number", "at", "via", "questions"))
#: Words that say the number after them is a bank account (IBAN without valid check digits).
_BANK_CONTEXT = ("iban", "bank", "account", "acct", "wire", "transfer", "deposit", "payment", "pay", "swift", "bic",
                 "sepa", "remit", "remittance", "beneficiary", "konto", "rib")
_HEX4 = r"[0-9A-Fa-f]{1,4}"
ID_CONTEXT = ("mrn", "record", "account", "acct", "id", "identifier", "number", "no", "#", "ssn",
              "social", "member", "policy", "insurance", "claim", "encounter", "accession", "fin",
              "csn", "specimen", "license", "serial", "npi", "dea")
AGE_CONTEXT = ("age", "aged", "old", "yo")
ZIP_CONTEXT = ("zip", "zipcode", "postal", "address", "lives", "resides")


@dataclass(frozen=True)
class PhiPattern:
    """One regular expression in the regex layer.

    ``score`` is the confidence without context, ``context_score`` with a context word within
    ``window`` characters before the span.  ``requires_context`` patterns emit nothing without
    context (or a directly preceding date for the DATE fragments, see ``chain``).
    """

    name: str
    regex: str
    label: str
    score: float
    groups: tuple[tuple[str, str], ...] = ()
    context: tuple[str, ...] = ()
    context_score: float | None = None
    requires_context: bool = False
    chain: bool = False
    case_insensitive: bool = False
    validator: str | None = None
    exclude_after: str | None = None
    exclude_before: str | None = None
    window: int = 40
    trim: str = ""
    #: Speed-up for patterns whose start is expensive to try at every position: the full regex
    #: runs only in windows of (before, after) characters around matches of this cheap regex.
    anchor: str | None = None
    anchor_window: tuple[int, int] = (90, 30)

    def span_groups(self) -> tuple[tuple[str, str], ...]:
        return self.groups or (("phi", self.label),)

    def labels(self) -> frozenset[str]:
        return frozenset(label for _, label in self.span_groups())


_CITY_TOKEN = (r"(?=[" + UP + "][" + LO + r"])(?!(?:" + _NOT_NAME_ALT + "|" + STREET_SUFFIX + r"))[" + UP + "][" + LO
               + r"]+(?:-[" + UP + "][" + LO + r"]+)*(?![" + UP + LO + "])")
_CITY_UTOKEN = r"(?=[A-Z][A-Z])(?!(?:" + _NOT_NAME_UPPER_ALT + "|" + STREET_SUFFIX.upper().replace(r")\B", r")\b") + r"))[A-Z]{2,}(?![\w'])"
_CITY_PREFIX = r"(?:(?:St|Ft|Mt|ST|FT|MT)\.? |(?:Saint|Fort|Mount|Port|Lake|Glen|New|North|South|East|West|El|La|Los|Las|San|Santa) )?"
CITY_CAP = r"(?=[A-Z])" + _CITY_PREFIX + _CITY_TOKEN + r"(?: " + _CITY_TOKEN + r"){0,2}"
CITY = r"(?=[A-Z])(?:" + CITY_CAP + "|" + _CITY_PREFIX.upper() + _CITY_UTOKEN + r"(?: " + _CITY_UTOKEN + r"){0,2})"
COUNTRIES = (
    "Afghanistan", "Albania", "Algeria", "Argentina", "Australia", "Austria", "Bangladesh", "Belgium", "Bolivia",
    "Bosnia", "Brazil", "Bulgaria", "Cambodia", "Cameroon", "Canada", "Chile", "China", "Colombia", "Costa Rica",
    "Croatia", "Cuba", "Denmark", "Dominican Republic", "Ecuador", "Egypt", "El Salvador", "England", "Eritrea",
    "Ethiopia", "Finland", "France", "Germany", "Ghana", "Greece", "Guatemala", "Haiti", "Honduras", "Hungary",
    "Iceland", "India", "Indonesia", "Iran", "Iraq", "Ireland", "Israel", "Italy", "Jamaica", "Japan", "Kenya",
    "Korea", "Laos", "Lebanon", "Liberia", "Libya", "Malaysia", "Mexico", "Morocco", "Myanmar", "Nepal",
    "Netherlands", "New Zealand", "Nicaragua", "Nigeria", "Norway", "Pakistan", "Panama", "Peru", "Philippines",
    "Poland", "Portugal", "Romania", "Russia", "Rwanda", "Saudi Arabia", "Scotland", "Senegal", "Serbia",
    "Sierra Leone", "Singapore", "Somalia", "South Africa", "Spain", "Sri Lanka", "Sudan", "Sweden", "Switzerland",
    "Syria", "Taiwan", "Tanzania", "Thailand", "Trinidad", "Tunisia", "Uganda", "Ukraine", "United Kingdom",
    "Uruguay", "Venezuela", "Vietnam", "Wales", "Yemen", "Zambia", "Zimbabwe",
)
_COUNTRY_ALT = r"(?=[A-Z])" + word_alternation(COUNTRIES)
_COUNTRY_UPPER_ALT = r"(?=[A-Z])" + word_alternation(tuple(c.upper() for c in COUNTRIES))

_HOSP_TOKEN = (r"(?=[A-Z])(?!(?:The|A|An|At|In|From|To|Of|And|With|Per|Via|Seen|Transferred|Admitted|Discharged|Referred|"
               r"Presented|Followed|Sent|Returned|Patient|Pt|Called|Contacted|Location|Facility|Outside|Previously|"
               r"Follow|Seen|Today|This|Our|His|Her|Their)\b)(?:[A-Z][a-z]+|[A-Z]{2,}|[A-Z][a-z]*'s)(?:-[A-Z][a-z]+)?(?![\w'])")
_HOSP_SUFFIX = (r"(?:Hospital|Medical Center|Medical Centre|Health Center|Health System|Healthcare|Health Care|Infirmary|"
                r"Memorial|Clinic|Clinics|Hospice|Associates|Pediatrics|Orthopaedics|Orthopedics|Institute|Medical Group|"
                r"Surgery Center|Surgical Center|Birth Center|Infusion Center|Dialysis Center|Imaging Center|Cancer Center|"
                r"Rehabilitation Center|Rehab Center|Nursing Home|Nursing Facility|Skilled Nursing Facility|Care Center|"
                r"Sports Medicine|Endoscopy Suite|Endoscopy Center|Urgent Care|Family Practice|Family Medicine|"
                r"Health Partners|Physicians|Specialists|Children's Hospital|Medical Associates|Heart Center|Eye Center|"
                r"Behavioral Health|Mental Health Center|Sanatorium|Medical Plaza|Health Clinic|Primary Care|Group|Partners|"
                r"Physical Therapy|Family Health|Medical Clinic|Radiology Partners)")

_UNIT_AFTER = (r"\s*(?:mg|mcg|g|kg|ml|mL|cc|L|units?|u|iu|IU|mmHg|mm|cm|%|kcal|calories|cells|"
               r"patients|tabs?|tablets?|caps?|capsules?|doses?|puffs?|times|x)\b")
_RATIO_AFTER = (r"\s*(?:tabs?|tablets?|caps?|strength|dose|of|pain|units?|mg|ml|cc|inch|"
                # "3/4 in", "1/2 in diameter" are inches; "on 5/11 in two containers" is a date
                r"in\b(?![ \t]+(?!diameter|length|width|depth|size|height|thick|long|wide|deep)[a-z])|"
                r"cup|NS|normal|saline|\+|x\b)")
_SCORE_BEFORE = (r"(?i:pain|score|scale|rated|strength|murmur|grade|power|motor|reflexes|bp|blood pressure|gcs|"
                 r"ratio|dose|take|takes|tablet|tab)\W*(?:(?:is|was|of|at|rated|level|now|about|approx)\W+)?$")

#: An identifier label right before a number ("account # is 052 3176 262", "Ref: 0479-2785-73").
_ID_BEFORE = (r"(?i:account|acct|a/c|member|policy|mrn|id|claim|ref|reference|card|iban|order|case|invoice|confirmation|"
              r"booking|passport|licen[cs]e|serial)\W*(?:#|no\.?|num(?:ber)?\.?)?\W*(?:(?:is|was|=)\W*)?$")
#: What may follow an age in "he is 66 ...": the end of the clause, "yrs", "and", "with", ...
_AGE_CLAUSE_END = (r"\s*(?:[.,](?!\d)|[;!?)]|$)|\s*\n|\s+(?i:and|with|but|who|now)\b"
                   r"|\s*(?i:yrs?|years?|y/?o)(?:\s+(?i:old))?(?=\s*(?:[.,;!?)]|$|\n)|\s+(?i:and|with|but|who|old)\b)")
#: Two or more capitalised name tokens ("Anders Shackleford").
_TWO_NAME_TOKENS = r"(?<![\w])" + _TOKEN + r"(?: " + _TOKEN + r"){1,2}"

DEFAULT_PATTERNS: tuple[PhiPattern, ...] = (
    # ------------------------------------------------------------------ DATE
    # Numeric dates: month-first or day-first ("09/30/1958", "23/06/1967"); the validator accepts
    # either reading that is a calendar date.  A weekday in front belongs to the date.
    PhiPattern("date_mdy", NL + r"(?P<phi>(?:" + WEEKDAY + ")?" + NUM_DAY + r"(?P<sep>[/-])" + NUM_DAY + r"(?P=sep)(?:"
               + YEAR4 + r"|\d{2})" + TIME + ")" + NR, "DATE", 0.95, validator="date_mdy"),
    PhiPattern("date_mdy_dot", NL + r"(?P<phi>" + NUM_DAY + r"\." + NUM_DAY + r"\." + YEAR4 + TIME + ")" + NR,
               "DATE", 0.85, validator="date_mdy"),
    PhiPattern("date_iso", NL + r"(?P<phi>" + YEAR4 + r"(?P<sep>[-/.])" + NUM_MONTH + r"(?P=sep)" + NUM_DAY
               + TIME + ")" + NR, "DATE", 0.95, validator="date_ymd"),
    PhiPattern("date_month_day_year", r"(?<![\w])(?P<phi>(?:" + WEEKDAY + ")?" + MONTH_ANY + r"\s{1,2}" + DAY + r",?\s{1,2}"
               + YEAR4 + r"\b(?![-/]\d)" + TIME + ")", "DATE", 0.95),
    PhiPattern("date_day_month_year", r"(?<![\w])(?P<phi>(?:" + WEEKDAY + ")?" + DAY + r"(?:\s+(?i:of))?[\s-]" + MONTH_ANY
               + r",?[\s-]" + YEAR4 + r"\b(?![-/]\d)" + TIME + ")", "DATE", 0.95),
    PhiPattern("date_month_day", r"(?<![\w])(?P<phi>(?:" + WEEKDAY + ")?" + MONTH_SAFE + r"\s{1,2}" + DAY + r"(?:" + TIME_REQUIRED
               + r")?)(?![\w]|,?[ ]{0,2}\d|:\d)", "DATE", 0.85, exclude_after=_UNIT_AFTER),
    # Lower-case "may 16", "march 8": only with an ordinal ("may 15th") or a date word before it.
    PhiPattern("date_month_day_lower_ordinal", r"(?<![\w])(?P<phi>" + MONTH_LOWER_AMBIGUOUS + r"\s{1,2}" + NUM_DAY
               + r"(?:(?:st|nd|rd|th)(?:" + TIME_REQUIRED + ")?|" + TIME_REQUIRED + r"))(?![\w])", "DATE", 0.8),
    PhiPattern("date_month_day_lower", r"(?<![\w])(?P<phi>" + MONTH_LOWER_AMBIGUOUS + r"\s{1,2}" + NUM_DAY + r")(?![\w]|,?[ ]{0,2}\d|:\d)",
               "DATE", 0.5, context=DATE_CONTEXT, context_score=0.8, requires_context=True, window=12,
               exclude_after=_UNIT_AFTER),
    PhiPattern("date_day_month", r"(?<![\w.\d/])(?P<phi>" + DAY + r"(?:\s+(?i:of))?\s" + MONTH_SAFE + r")(?![\w])", "DATE", 0.8),
    PhiPattern("date_day_month_lower_ordinal", r"(?<![\w.\d/])(?P<phi>" + NUM_DAY + r"(?:st|nd|rd|th)(?:\s+of)?\s"
               + MONTH_LOWER_AMBIGUOUS + r")(?![\w])", "DATE", 0.8),
    PhiPattern("date_month_year", r"(?<![\w])(?P<phi>" + MONTH_ANY + r"(?:,?\s{1,2}(?:of\s)?|-)" + YEAR4 + r")\b", "DATE", 0.9,
               exclude_after=_UNIT_AFTER),
    PhiPattern("date_compact", r"(?<![\w])(?P<phi>" + NUM_DAY + r"(?:JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC|Jan|Feb|Mar|"
               r"Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)(?:" + YEAR4 + r"|\d{2})" + TIME + r")(?![\w])", "DATE", 0.9),
    PhiPattern("date_compact_lower", r"(?<![\w])(?P<phi>" + NUM_DAY + r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
               + YEAR4 + TIME + r")(?![\w])", "DATE", 0.85),
    PhiPattern("date_year_parenthesized", r"\((?P<phi>" + YEAR4 + r")\)", "DATE", 0.7),
    PhiPattern("date_month_day_parenthesized", r"\((?P<phi>" + NUM_MONTH + r"/" + NUM_DAY + r")\)", "DATE", 0.55,
               validator="month_day", exclude_before=_SCORE_BEFORE),
    PhiPattern("date_month_slash_year", NL + r"(?P<phi>" + NUM_MONTH + r"/" + YEAR4 + ")" + NR, "DATE", 0.75),
    # "Wed 6/22", "5/21 1650", "2/18 4:15 PM": a weekday before or a time after makes m/d a date.
    PhiPattern("date_month_day_weekday", NL + r"(?P<phi>" + WEEKDAY + NUM_MONTH + r"/" + NUM_DAY + r"(?:" + TIME_REQUIRED + ")?)" + NR,
               "DATE", 0.85, validator="month_day"),
    PhiPattern("date_month_day_time", NL + r"(?P<phi>" + NUM_MONTH + r"/" + NUM_DAY + TIME_REQUIRED + r")(?![\w/]|[.\-:]\d)",
               "DATE", 0.8, validator="month_day", exclude_before=_SCORE_BEFORE),
    PhiPattern("date_month_day_numeric", NL + r"(?P<phi>" + NUM_MONTH + r"/" + NUM_DAY + ")" + NR, "DATE", 0.5,
               context=DATE_CONTEXT, context_score=0.8, requires_context=True, chain=True, window=20, validator="month_day",
               exclude_after=_RATIO_AFTER, exclude_before=_SCORE_BEFORE),
    # m/d with no context word when the day cannot be a score's denominator ("COVID booster 09/18")
    PhiPattern("date_month_late_day", NL + r"(?P<phi>" + NUM_MONTH + r"/" + NUM_DAY + ")" + NR, "DATE", 0.55,
               validator="month_late_day", exclude_after=_RATIO_AFTER, exclude_before=_SCORE_BEFORE),
    # m/d right after a return from somewhere ("only came back 3/4", "got home 5/5"); a day of 10 is
    # left alone ("came back 6/10" reads as a score)
    PhiPattern("date_month_day_return", r"\b(?i:(?:came|come|comes|got|get|went|go|be|flew|moved)\s+(?:back|home))"
               r"(?:[ \t]+(?i:on))?[ \t]+(?P<phi>" + NUM_MONTH + r"/(?!10(?!\d))" + NUM_DAY + ")" + NR, "DATE", 0.6,
               validator="month_day", exclude_after=_RATIO_AFTER, exclude_before=_SCORE_BEFORE),
    # m/d as a column heading of a results table ("Test\t3/12\tUnits", "Labs: Test | 1/7 | 1/9 | Units"):
    # a whole cell between tabs or pipes, on a line that starts with a test-column heading
    PhiPattern("date_month_day_table_heading",
               r"(?m)^(?:[A-Za-z]+:[ \t]*)?(?i:tests?|labs?|component|analyte|parameter|result|results)"
               r"(?:[ ]*(?:\t|\|)[ ]*(?:[A-Za-z]+|" + NUM_MONTH + r"/" + NUM_DAY + r"(?:/\d{2,4})?))*?"
               r"[ ]*(?:\t|\|)[ ]*(?P<phi>" + NUM_MONTH + r"/" + NUM_DAY + r")(?=[ ]*(?:\t|\||$))",
               "DATE", 0.6, validator="month_day"),
    # the first date of a range written with a hyphen (NR refuses a digit after "-")
    PhiPattern("date_range_first", NL + r"(?P<phi>" + NUM_MONTH + r"/" + NUM_DAY + r"/(?:" + YEAR4 + r"|\d{2}))"
               r"(?=-\d{1,2}/\d)", "DATE", 0.8, validator="date_mdy"),
    PhiPattern("date_range_first_short", NL + r"(?P<phi>" + NUM_MONTH + r"/" + NUM_DAY + r")(?=-" + NUM_MONTH + r"/"
               + NUM_DAY + r"/(?:" + YEAR4 + r"|\d{2})(?![\w/]))", "DATE", 0.8, validator="month_day"),
    # the second date of a range written with a hyphen ("4/14/2027-4/21/27")
    PhiPattern("date_range_second", r"(?<=\d-)(?P<phi>" + NUM_MONTH + r"/" + NUM_DAY + r"/(?:" + YEAR4 + r"|\d{2}))" + NR,
               "DATE", 0.8, validator="date_mdy"),
    PhiPattern("date_year_in_context",
               r"\b(?i:in|since|during|until|till|circa|ca\.|year|early|late|mid-?|summer|winter|spring|fall|given|dx|"
               r"tdap|influenza|flu|tetanus|pneumococcal|booster|vaccine|vaccinated|shingrix|zoster|covid|"
               r"autumn|born|dob:?|diagnosed|married|widowed|retired|moved)\s+(?:(?i:of|the|in)\s+){0,2}(?:(?i:early|late|mid)\s+)?"
               r"(?P<phi>" + YEAR4 + r")(?![\w.,]\d|\w)", "DATE", 0.8, exclude_after=_UNIT_AFTER, anchor=r"(?:19|20)\d\d", anchor_window=(40, 10)),
    PhiPattern("date_year_range", r"(?<![\w/.\-])(?P<phi>" + YEAR4 + r")\s*(?:-|–|to|through|and)\s*(?P<phi2>" + YEAR4
               + r")(?![\w/]|[.\-]\d)", "DATE", 0.8,
               groups=(("phi", "DATE"), ("phi2", "DATE")), validator="year_range", exclude_after=_UNIT_AFTER),
    PhiPattern("date_year_chained", r"(?<![\w/.\-])(?P<phi>" + YEAR4 + r")(?![\w/]|[.\-,]\d)", "DATE", 0.5,
               requires_context=True, chain=True, context=(), exclude_after=_UNIT_AFTER),
    # ------------------------------------------------------------------ PHONE
    PhiPattern("phone_us", r"(?<![\w+])(?P<phi>(?:\+?1[\s.-]?)?(?:\(\d{3}\)\s?|\d{3}[\s.-]|\d{3}/(?=\d{3}-))\d{3}[\s.-]\d{4}"
               r"(?:,?\s?(?i:x|ext|extension)\.?\s?\d{1,6})?)(?![\w]|-\d)", "PHONE", 0.75,
               context=PHONE_CONTEXT, context_score=0.95, validator="phone"),
    PhiPattern("phone_digits_ext", r"(?<![\w+])(?P<phi>(?:\+?1)?\d{10},?\s?(?i:x|ext|extension)\.?\s?\d{1,6})(?!\w)",
               "PHONE", 0.8, context=PHONE_CONTEXT, context_score=0.95),
    PhiPattern("phone_pager", r"\b(?i:pager|beeper|bleep|page|pgr)\s*(?:#|(?i:no\.?|number))?\s*:?\s*(?P<phi>\d-\d{4}|\d{4,7})(?![\w-])",
               "PHONE", 0.8),
    PhiPattern("phone_extension_call", r"\b(?i:page|call|paging|pager|reach(?:ed)?|dial|via|ext|extension|x)(?: (?i:me|us|with|at|on|questions|the|team|back)){0,3}"
               r" \(?(?P<phi>\d-\d{4}|\d{5})(?![\w-])", "PHONE", 0.65),
    PhiPattern("phone_plain_digits", r"(?<![\w+])(?P<phi>(?:\+?1)?\d{10})(?!\w)", "PHONE", 0.4,
               context=PHONE_CONTEXT, context_score=0.85, requires_context=True, window=25),
    # International: "+39 06 7905 7889", "+44-7078-780257", "+39 (0)06 1415 0737"; "00" instead of
    # "+" ("0033 6 80 48 47 89", "0049 151 15871333") is also an account-number shape, so it wants a
    # short first group.
    # (a line may wrap right after the country code: "+44\n20 7946 0958")
    PhiPattern("phone_international", r"(?<![\w+])(?P<phi>\+[1-9]\d{0,2}(?:[ .-]?\(0\)\d{0,4})?"
               r"(?:(?:[ .-]|[ \t]?\n[ \t]*)\d{1,8})(?:[ .-]\d{1,8}){0,5})"
               r"(?![\w]|[.-]\d)", "PHONE", 0.85, context=PHONE_CONTEXT, context_score=0.95, validator="phone_international"),
    PhiPattern("phone_international_00", r"(?<![\w+])(?P<phi>00[1-9]\d{0,2}[ .-]\d{1,3}(?:[ .-]\d{2,8}){1,4})(?![\w]|[.-]\d)",
               "PHONE", 0.6, context=PHONE_CONTEXT, context_score=0.9, validator="phone_international"),
    # National numbers with a trunk "0" ("02 7623 0792", "06 77 25 84 90"): shape shared with IDs, so context.
    PhiPattern("phone_national", r"(?<![\w+\-/.])(?P<phi>0[1-9]\d{0,3}(?:[ .-]\d{2,8}){1,4})(?![\w]|[.\-/]\d)", "PHONE", 0.5,
               context=_NATIONAL_PHONE_CONTEXT, context_score=0.85, requires_context=True, window=40, validator="phone_national",
               exclude_before=_ID_BEFORE),
    PhiPattern("phone_local_ext", r"(?<![\w\-/.])(?P<phi>\d{3}-\d{4},?\s?(?i:x|ext|extension)\.?\s?\d{1,6})(?![\w]|-\d)",
               "PHONE", 0.75, context=PHONE_CONTEXT, context_score=0.9),
    # a bare ten-digit North American number (area code and exchange start with 2-9): a phone even
    # with no context word ("... or 3646756317."); a cue word before it ("Acct") makes the ID pattern win
    PhiPattern("phone_nanp_bare", r"(?<![\w+.\-/])(?P<phi>[2-9]\d{2}[2-9]\d{6})(?![\w]|[.\-/]\d)", "PHONE", 0.5),
    # a bare seven-digit local number ("Vasquez Realty | 738-7912"): exchange starts with 2-9; dose
    # ranges ("500-1000 mg") are refused by the units after them and by the round-number validator
    PhiPattern("phone_local_bare", r"(?<![\w\-/.$])(?P<phi>[2-9]\d{2}-\d{4})(?![\w]|[-/]\d|\.\d)", "PHONE", 0.5,
               validator="local_phone", exclude_after=_UNIT_AFTER, exclude_before=_SCORE_BEFORE),
    PhiPattern("phone_local", r"(?<![\w\-/.])(?P<phi>\d{3}-\d{4}(?:\s?(?i:x|ext)\.?\s?\d{1,6})?)(?![\w]|-\d)", "PHONE", 0.4,
               context=PHONE_CONTEXT, context_score=0.8, requires_context=True, window=25),
    # ------------------------------------------------------------------ EMAIL / URL / IP
    PhiPattern("email", r"(?<![\w.+-])(?P<phi>[^\W_][\w.%+-]*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
               r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,})(?![\w@])", "EMAIL", 0.95),
    PhiPattern("url_scheme", r"(?P<phi>(?i:https?|ftp)://[^\s<>\"'()\[\]]+|(?<![\w.@])(?i:www)\.[^\s<>\"'()\[\]]+)",
               "URL", 0.9, trim=".,;:!?"),
    PhiPattern("url_domain", r"(?<![\w.@/-])(?P<phi>[A-Za-z0-9][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)*\.(?i:com|org|net|edu|gov|io|us|info|health|care|"
               r"co\.uk|org\.uk|nhs\.uk|ac\.uk|com\.au|org\.au|co\.nz|co\.in|com\.br|com\.mx|co\.jp|co\.za|"
               r"uk|ca|au|de|fr|nl|ie|nz|ch|se|dk|fi|pl|mx|br|jp|za|eu|biz|app|online|site|clinic)"
               r"(?:/[^\s<>\"'()]*)?)(?![\w@])", "URL", 0.7, trim=".,;:!?"),
    PhiPattern("ipv4", r"(?<![\d.])(?P<phi>(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})"
               r"(?![\d]|\.\d)", "URL", 0.85),
    # IPv6, full ("b7c7:7a53:b811:a020:5851:f2d9:b24d:a195") or with "::" ("2001:db8:9d88::e2eb");
    # the validator asks Python's ipaddress and at least three groups ("::1", "a::b" are not hosts)
    PhiPattern("ipv6", r"(?<![\w:.])(?P<phi>(?:" + _HEX4 + r":){7}" + _HEX4 + r"|(?:" + _HEX4 + r":){1,6}(?::" + _HEX4
               + r"){1,6}|(?:" + _HEX4 + r":){1,7}:|::(?:" + _HEX4 + r":){0,6}" + _HEX4 + r")(?![\w:]|\.\d)", "URL", 0.9,
               validator="ipv6", anchor=r"::|(?:" + _HEX4 + r":){3}[0-9A-Fa-f]", anchor_window=(40, 40)),
    # ------------------------------------------------------------------ ID
    PhiPattern("ssn", NL + r"(?P<phi>\d{3}-\d{2}-\d{4})" + NR, "ID", 0.85,
               context=("ssn", "social", "security"), context_score=1.0, validator="ssn"),
    PhiPattern("ssn_spaced", NL + r"(?P<phi>\d{3} \d{2} \d{4})" + NR, "ID", 0.5,
               context=("ssn", "social", "security"), context_score=0.9, requires_context=True, window=25),
    # the last four digits of an SSN: "SSN (last 4): 4166", "last four of SSN 0947"
    PhiPattern("ssn_last_four", r"\b(?i:ssn|social\s+security(?:\s+(?:number|no\.?|#))?)\s*\(?\s*(?i:last\s*(?:4|four)"
               r"(?:\s+digits)?)\s*\)?\s*(?:[:=#\t\-\u2013\u2014]+\s*|\s+)(?P<phi>\d{4})(?![\w-])|\b(?i:last\s*(?:4|four)"
               r"(?:\s+digits)?\s+(?:of\s+(?:the\s+)?)?(?:ssn|social))[\w ]{0,16}?[:=#\s\-]*(?P<phi2>\d{4})(?![\w-])",
               "ID", 0.9, groups=(("phi", "ID"), ("phi2", "ID"))),
    # shipment numbers, often in digit groups: "tracking 329 43 7585", "Waybill: 1Z 999 AA1 01"
    PhiPattern("id_tracking", r"\b(?i:tracking|waybill|consignment|shipment)(?:\s+(?i:number|no\.?|num|#|id|code))?"
               r"\s*[:#=\-]?\s*(?P<phi>(?=[A-Z0-9 ]{6})[A-Z0-9]*\d[A-Z0-9]*(?:[ -][A-Z0-9]*\d[A-Z0-9]*){0,5})(?![\w-])",
               "ID", 0.85),
    # IBAN: anywhere when its mod-97 check digits hold, after a bank word when they do not (a
    # mistyped or made-up number is still an account number where the text says it is one)
    # (tried only around their check digits and first group: a scan from every letter costs more)
    PhiPattern("iban", IBAN_REGEX, "ID", 0.9, validator="iban", anchor=IBAN_ANCHOR, anchor_window=IBAN_ANCHOR_WINDOW),
    PhiPattern("iban_context", IBAN_REGEX, "ID", 0.6, context=_BANK_CONTEXT, context_score=0.85, requires_context=True,
               window=40, validator="iban_shape", anchor=IBAN_ANCHOR, anchor_window=IBAN_ANCHOR_WINDOW),
    PhiPattern("id_prefixed",
               r"\b(?i:MRN|MR|Med(?:ical)?\s+Rec(?:ord)?(?:\s+(?:Number|No))?|Record\s+(?:Number|No)|Acct|Account(?:\s+(?:Number|No))?"
               r"|Patient\s+ID|Pt\.?\s+ID|Member\s+ID|Subscriber\s+ID|Policy(?:\s+(?:Number|No))?|Insurance\s+ID|Claim(?:\s+(?:Number|No))?"
               r"|Encounter(?:\s+(?:Number|No|ID))?|Enc|Order(?:\s+(?:Number|No|ID))?|Armband|Wristband|FIN|CSN|HAR|Accession(?:\s+(?:Number|No))?|Specimen(?:\s+(?:Number|No|ID))?"
               r"|License(?:\s+(?:Number|No))?|Lic|DEA|NPI|Serial(?:\s+(?:Number|No))?|Device\s+ID|ID|SSN"
               r"|Social\s+Security(?:\s+(?:Number|No))?|Unit\s+(?:Number|No)|Health\s+Plan(?:\s+(?:Number|No|ID))?"
               r"|Beneficiary(?:\s+(?:Number|No|ID))?|Case\s+(?:Number|No)|Ref(?:erence)?\s+(?:Number|No))"
               r"\.?\s*(?:\#|(?i:No\.?|Number|Num\.?)\s*)?[:#=(]?\s*"
               # letters of any script ("Ж12345678", "ΩΨ-123456"): [^\W_] is [A-Za-z0-9] on ASCII text
               r"(?P<phi>(?=(?:[^\W_]|-)*\d(?:[^\W_]|-)*\d)[^\W_](?:[^\W_]|-(?=[^\W_])){3,24})(?![\w-])",
               "ID", 0.9, validator="id_token"),
    # Numbers with one slash after a file, case or application cue ("Application no. 30326/03", "case
    # file 27/159587", "No 017023/22"): one group of five digits or more, so dates ("no 3/12",
    # "number 12/2021", "2021/03") and ratios ("no 1/10 pain", "ref 120/80") never match.
    PhiPattern("id_slash_cued",
               r"\b(?i:no|nos|number|num|file|case|application|appl|ref(?:erence)?|docket|claim|registration|reg)\.?"
               r"\s*(?:[:#]{1,2}\s*)?(?P<phi>(?=\d{5}|\d{1,7}/\d{5})\d{1,7}/\d{1,7})(?![\w/]|[.,:-]\d)",
               "ID", 0.9),
    # An SSN-shaped number in spaced groups right after an identifier cue ("Employee ID 601 86 9020",
    # "Reference 541 01 3173", "SSN: 123 45 6789"); ssn_spaced needs an SSN word nearby instead.
    PhiPattern("id_spaced_cued",
               r"\b(?i:ID|ref(?:erence)?|no|number|num|ssn|account|acct|file|case|member|policy)\.?"
               r"\s*(?:[:#]{1,2}\s*)?(?P<phi>\d{3} \d{2} \d{4})(?![\w]|[ .,/:-]\d)",
               "ID", 0.9),
    # Health-card and insurance numbers written in three digit groups with one separator, no cue
    # ("DOB 05/02/1950, 381 920 47", "the card says 207-14-553"): 3-3-2 or 3-2-3 digits, the same
    # separator twice, no digit group before or after (phones and table rows are longer runs), no unit.
    PhiPattern("id_digit_groups",
               r"(?<![\w+./:-])(?<!\d[ -])(?P<phi>\d{3}(?P<sep>[ -])(?:\d{3}(?P=sep)\d{2}|\d{2}(?P=sep)\d{3}))"
               r"(?![\w]|[ .,/:-]\d)",
               "ID", 0.55, exclude_after=_UNIT_AFTER),
    # Short record numbers right after a record-number label ("MRN 7", "ID: 42", "Acct # 315"): an
    # ID, never an age (a model reading "42" as AGE loses: same span, ID comes first in resolution).
    # A bare "ID" needs ":", "#" or "No." before the number ("ID 2 days ago" is the ID service).
    PhiPattern("id_prefixed_short",
               r"\b(?:(?i:MRN|MR\s*\#|Med(?:ical)?\s+Rec(?:ord)?(?:\s+(?:Number|No))?|Record\s+(?:Number|No)"
               r"|Acct|Account(?:\s+(?:Number|No))?|Patient\s+ID|Pt\.?\s+ID|Member\s+ID|Encounter(?:\s+(?:Number|No|ID))?"
               r"|FIN|CSN)\.?\s*(?:\#|(?i:No\.?|Number|Num\.?)\s*)?[:#=]?|(?i:ID)\s*(?:[:#=]|(?i:No\.))"
               r")\s*(?P<phi>\d{1,3})(?![\w-]|[.,/:]\d)",
               "ID", 0.9,
               exclude_after=r"\s*(?:%|(?i:y/?o|yrs?|years?|yo|-year|days?|d|weeks?|wks?|months?|mos?|hours?|hrs?|h|"
               r"minutes?|mins?|times|x|mg|mcg|ml|kg|cm|mm|units?)\b)"),
    PhiPattern("id_structured", r"(?<![\w-])(?P<phi>[A-Z]{1,3}-\d{2,}-\d{3,}|[A-Z]{1,3}\d{2}-\d{4,})(?![\w-])", "ID", 0.6,
               context=ID_CONTEXT, context_score=0.85),
    PhiPattern("id_letter_prefixed", r"(?<![\w-])(?P<phi>[A-Z]{1,4}-?\d{6,12})(?![\w-])", "ID", 0.55,
               context=ID_CONTEXT, context_score=0.85),
    PhiPattern("id_digits_context", r"(?<![\w.,/-])(?P<phi>\d{6,12})(?![\w]|[.,/-]\d)", "ID", 0.3,
               context=ID_CONTEXT, context_score=0.75, requires_context=True, window=20),
    # ------------------------------------------------------------------ AGE (digits only)
    PhiPattern("age_year_old", r"(?<![\w.])(?P<phi>\d{1,3})(?:\s*-\s*|\s+)(?i:years?|yrs?|y)\.?(?:\s*-\s*|\s+)(?i:old)\b",
               "AGE", 0.95, validator="age"),
    PhiPattern("age_yo", r"(?<![\w.])(?P<phi>\d{1,3})\s?(?i:y/o|y\.o\.|yo(?=[MF]?\b))", "AGE", 0.9, validator="age"),
    PhiPattern("age_of_age", r"(?<![\w.])(?P<phi>\d{1,3})\s*(?i:years?|yrs?)\s+(?i:of)\s+(?i:age)\b", "AGE", 0.95, validator="age"),
    PhiPattern("age_prefixed", r"\b(?i:age|aged|ages|age\s+of)(?:\s*[:=|]|\s+-{1,2}|\s+–)?\s*(?P<phi>\d{1,3})(?!\w|\.\d)", "AGE", 0.9,
               validator="age", exclude_after=r"\s*(?:%|percent|mg|kg|points)"),
    PhiPattern("age_sex_parenthesized", r"\((?:M|F|male|female|Male|Female)\s*[,/]\s*(?P<phi>\d{1,3})\)", "AGE", 0.85,
               validator="age"),
    PhiPattern("age_sex_parenthesized_after", r"\((?P<phi>\d{1,3}) ?(?:M|F|m|f|male|female|yo ?[MFmf]?|y/o ?[MFmf]?)\)", "AGE", 0.85,
               validator="age"),
    # "He is now 66 and", "who is 85.", "she turns 72": a person as subject, and the clause ends
    # after the number (so "she is 2 weeks postpartum", "he is 5 cm dilated" stay unlabelled).
    PhiPattern("age_person_is", r"\b(?i:he|she|who|i|patient|pt)(?:\s+(?i:is|was|am)|(?i:'s|'m))\s+(?:(?i:now|only|just)\s+)?"
               r"(?P<phi>\d{1,3})(?=" + _AGE_CLAUSE_END + ")", "AGE", 0.8, validator="age"),
    PhiPattern("age_turns", r"\b(?i:turns|turned|turning|will\s+be)\s+(?P<phi>\d{1,3})(?=" + _AGE_CLAUSE_END
               + r"|\s+(?i:on|in|today|tomorrow|next|this)\b)", "AGE", 0.8, validator="age"),
    PhiPattern("age_birthday", r"(?<![\w.])(?P<phi>\d{1,3})(?i:st|nd|rd|th)\s+(?i:birthday|bday|b-day)\b", "AGE", 0.9,
               validator="age"),
    # "Mr. Sokolov, 51 yrs,", "Anders Shackleford, 46 yrs, who", "Clement Young (38 yrs)", "I'm Noor, 77,":
    # a number right after a person's name, with an age unit or a sex letter.
    PhiPattern("age_after_name", r"(?:\b(?:Mr|Mrs|Ms|MR|MRS|MS)\.?\s+" + NAME_TITLED + "|" + _TWO_NAME_TOKENS
               + r"|\b(?:[Dd]aughter|[Ss]on|[Gg]randson|[Gg]randdaughter|[Cc]hild|[Bb]rother|[Ss]ister)\s+" + NAME_TOKEN
               + r")(?:[,:]\s{1,2}(?P<phi>\d{1,3})\s?(?i:yrs?|y/?o|years?)\.?(?=\s*[,;)]|\s+(?i:with|who|and)\b)"
               r"|,\s{1,2}(?P<phi2>\d{1,3})\s?[MF](?=,)|\s\((?P<phi3>\d{1,3})\s?(?i:yrs?|years?|y/?o)\))",
               "AGE", 0.8, groups=(("phi", "AGE"), ("phi2", "AGE"), ("phi3", "AGE")), validator="age",
               anchor=r"\d{1,3}\s?(?i:yrs?|y/?o|years?|[MF],|\))", anchor_window=(80, 12)),
    PhiPattern("age_self_intro", r"\b(?:I'm|I am|i'm|i am|I'M|I AM)\s+(?:" + NAME_TOKEN + "|" + UPPER_TOKEN + r"|[a-z]{2,})"
               r",\s{1,2}(?:(?i:now|aged?)\s+)?"
               r"(?P<phi>\d{1,3})(?:\s?(?i:yrs?|years?(?:\s+old)?))?(?=\s*[,.;])", "AGE", 0.8, validator="age"),
    PhiPattern("age_at_death", r"\b(?i:deceased|died|passed\s+away|death|diagnosed|dx)\s+(?i:at\s+(?:age\s+)?|aged?\s+)(?P<phi>\d{1,3})"
               r"(?![\w:/]|\.\d)", "AGE", 0.8, validator="age", anchor=r"(?i:deceased|died|passed|death|diagnosed|dx)", anchor_window=(5, 30)),
    PhiPattern("age_before_sex", r"(?<![\w.])(?P<phi>\d{1,3}) ?(?i:yrs?|years?|y)\b(?=\s*[*|,/;]?\s*(?i:male|female|man|woman|m\b|f\b))",
               "AGE", 0.85, validator="age"),
    PhiPattern("age_sex_compact", r"(?:(?<=, )|(?<=^)|(?<=\n)|(?<=\b[Aa] ))(?P<phi>\d{1,3})(?:M|F)(?=,|;| (?:with|presents|presenting|admitted|who|here|s/p|w/|male|female|pt|patient)\b)",
               "AGE", 0.75, validator="age"),
    PhiPattern("age_months_old", r"(?<![\w.])(?P<phi>\d{1,2})(?:\s*-\s*|\s+)(?i:months?|weeks?|days?)(?:\s*-\s*|\s+)(?i:old)\b",
               "AGE", 0.85),
    # ------------------------------------------------------------------ LOCATION
    PhiPattern("city_state_zip",
               r"(?<![\w])(?P<city>" + CITY + r"),?\s{1,3}(?P<state>" + _STATE_ABBR_ALT + "|" + _STATE_NAME_ALT
               + r")\.?,?\s{1,3}(?P<zip>" + ZIP + ")", "LOCATION", 0.9,
               groups=(("city", "LOCATION"), ("state", "LOCATION"), ("zip", "LOCATION")), anchor=r"\d{5}", anchor_window=(60, 12)),
    PhiPattern("state_zip", r"(?<![\w])(?P<state>" + _STATE_ABBR_ALT + "|" + _STATE_NAME_ALT + r"),?\s{1,3}(?P<zip>" + ZIP + ")",
               "LOCATION", 0.85, groups=(("state", "LOCATION"), ("zip", "LOCATION")), anchor=r"\d{5}", anchor_window=(40, 12)),
    PhiPattern("city_state", r"(?<![\w])(?P<city>" + CITY + r"), (?P<state>"
               + _STATE_SAFE_ALT + "|" + _STATE_NAME_ALT + r")(?!\.?,?\s*\d)", "LOCATION", 0.7,
               validator="city_not_after_name", groups=(("city", "LOCATION"), ("state", "LOCATION")), anchor=r", (?:" + "|".join(STATE_ABBR) + r")\b|, " + _STATE_NAME_ALT, anchor_window=(60, 20)),
    PhiPattern("city_after_lives", r"\b(?:[Ll]ives|[Ll]iving|[Rr]esides|[Rr]esiding|[Mm]oved|[Rr]elocated|[Bb]orn|[Gg]rew up|near|[Vv]isiting from|"
               r"vacation in|travel(?:l?ed)? to|trip to|home in|house in) (?:(?:in|to|near|from|at) )?"
               r"(?P<phi>" + CITY_CAP + r")(?![\w]| [A-Z])", "LOCATION", 0.6, validator="not_state_word", anchor=r"\b(?:[Ll]ives|[Ll]iving|[Rr]esid|[Mm]oved|[Rr]elocated|[Bb]orn|[Gg]rew|near|[Vv]isiting|vacation|travel|trip|home|house)", anchor_window=(2, 60)),
    PhiPattern("zip_context", r"\b(?i:zip(?:\s*code)?|zipcode|postal\s+code)\s*[:#]?\s*(?P<phi>" + ZIP + ")", "LOCATION", 0.85),
    PhiPattern("state_name", r"(?<![\w])(?P<phi>" + _STATE_NAME_ALT + ")", "LOCATION", 0.6, validator="state_name", anchor=_STATE_NAME_ALT, anchor_window=(2, 25)),
    PhiPattern("country_name", r"(?<![\w])(?P<phi>" + _COUNTRY_ALT + r")(?![\w]| [A-Z][a-z])", "LOCATION", 0.6, anchor=_COUNTRY_ALT, anchor_window=(2, 25)),
    PhiPattern("country_upper", r"(?<![\w])(?P<phi>" + _COUNTRY_UPPER_ALT + r")(?![\w])", "LOCATION", 0.6,
               anchor=_COUNTRY_UPPER_ALT, anchor_window=(2, 25)),
    PhiPattern("country_after_zip", r"(?<![\w])" + ZIP + r",?[ \t]{1,3}(?P<phi>USA|US|U\.S\.A?\.?|United States(?: of America)?)(?![\w])",
               "LOCATION", 0.85, anchor=r"\d{5}", anchor_window=(2, 40)),
    PhiPattern("street_address",
               r"(?<![\w.,/-])(?P<phi>\d{1,6}[A-Z]?\s(?:(?:N|S|E|W|NE|NW|SE|SW|North|South|East|West)\.?\s)?"
               r"(?:(?:[A-Z][a-z]+|[A-Z]{2,}|\d{1,3}(?:st|nd|rd|th))\s){1,3}" + STREET_SUFFIX
               + r"(?:\s(?:N|S|E|W|NE|NW|SE|SW)\b)?"
               r"(?:\.?,?\s(?:Apt|Apartment|Suite|Ste|Unit|Fl|Floor|Bldg|Building|Rm|#|APT|SUITE|UNIT)\.?\s?#?\s?[A-Za-z0-9-]*\d[A-Za-z0-9-]*)?)",
               "LOCATION", 0.85),
    # street lines written in capitals or without capitals ("5286 WHIPPOORWILL LN APT 11C", "1054 s. chestnut st.")
    PhiPattern("street_address_upper",
               r"(?<![\w.,/-])(?P<phi>\d{1,6}[A-Z]?\s(?:(?:N|S|E|W|NE|NW|SE|SW|NORTH|SOUTH|EAST|WEST)\.?\s)?"
               r"(?:(?!" + _NOT_STREET_WORD.upper() + r"\s)[A-Z]{2,}\s){1,3}" + _STREET_SUFFIX_UPPER
               + r"(?:(?<=ST|RD|DR|LN|CT|PL)\.|(?<=AVE|TER|CIR|TRL)\.|(?<=BLVD|PKWY)\.)?"
               r"(?:,?\s(?:APT|APARTMENT|SUITE|STE|UNIT|#)\.?\s?#?\s?[A-Z0-9-]*\d[A-Z0-9-]*)?)(?![\w])",
               "LOCATION", 0.85),
    PhiPattern("street_address_lower",
               r"(?<![\w.,/-])(?P<phi>\d{1,6}[a-z]?\s(?:(?:n|s|e|w|ne|nw|se|sw|north|south|east|west)\.?\s)?"
               r"(?:(?!" + _NOT_STREET_WORD + r"\s)[a-z]{2,}\s){1,3}" + _STREET_SUFFIX_UPPER.lower() + r"(?:(?<=st|rd|dr|ln|ct|pl)\.|(?<=ave|ter|cir|trl)\.|(?<=blvd|pkwy)\.)?"
               r"(?:,?\s(?:apt|apartment|suite|ste|unit|#)\.?\s?#?\s?[a-z0-9-]*\d[a-z0-9-]*)?)(?![\w])",
               "LOCATION", 0.8),
    # rural-route and highway-contract addresses: "RR 5 Box 410", "Rural Route 2, Box 17"
    PhiPattern("rural_route", r"\b(?P<phi>(?i:RR|R\.R\.|Rural\s+Route|HC|Highway\s+Contract|Star\s+Route)\s*#?\s*\d{1,4},?"
               r"\s+(?i:Box)\s*#?\s*\d{1,6})\b", "LOCATION", 0.85),
    PhiPattern("po_box", r"\b(?P<phi>(?i:P\.?\s?O\.?\s+Box|Post\s+Office\s+Box)\s+\d{1,6})\b", "LOCATION", 0.85),
    PhiPattern("apartment", r"(?<![\w])(?P<phi>(?:Apt|Apartment|Suite|Ste)\.?\s*#?\s*\d+[A-Za-z]?)(?![\w])", "LOCATION", 0.6),
    # ------------------------------------------------------------------ names (weak signal)
    PhiPattern("doctor_title", r"\b(?:Dr|DR|Doctor|DOCTOR|Prof|Professor)\.? (?P<phi>" + NAME_TITLED + ")", "DOCTOR", 0.85),
    PhiPattern("doctor_credential", r"(?=[A-Za-z])(?<![\w])(?P<phi>" + NAME + r"),? {1,2}" + CREDENTIAL, "DOCTOR", 0.8,
               anchor=r"[ ,]" + CREDENTIAL, anchor_window=(80, 12)),
    PhiPattern("doctor_role",
               r"\b(?i:attending(?:\s+physician)?|pcp|primary\s+care(?:\s+(?:physician|provider))?|resident|fellow|intern|"
               r"surgeon|provider|physician|clinician|referring(?:\s+(?:physician|provider))?|consultant|nurse|signed\s+by|"
               r"electronically\s+signed\s+by|dictated\s+by|transcribed\s+by|authored\s+by|verified\s+by|reviewed\s+by|"
               r"requested\s+by|referred\s+by|signed|cc|team)\s*:\s*(?:(?:Dr|DR|Doctor)\.?\s+)?(?P<phi>"
               + NAME + ")", "DOCTOR", 0.75, anchor=r":", anchor_window=(45, 50)),
    PhiPattern("doctor_role_word",
               r"\b(?:[Rr]esident|[Aa]ttending|[Ff]ellow|[Ii]ntern|RN|NP|[Nn]urse|[Ss]onographer|[Tt]echnologist|[Tt]herapist|"
               r"[Pp]harmacist|[Ss]urgeon|[Aa]nesthesiologist|[Rr]adiologist|[Pp]athologist|[Hh]ospitalist|[Cc]linician|"
               r"[Ss]ocial worker|SW|[Cc]ase manager|[Cc]haplain|[Dd]ietitian|[Mm]idwife|[Pp]rovider|[Pp]hysician|[Cc]olleague)"
               r"(?:,| {1,2}(?:with|by)?)? ?(?:(?:Dr|DR)\.? )?(?P<phi>" + NAME_PLAIN + ")", "DOCTOR", 0.6),
    PhiPattern("doctor_role_initials",
               r"\b(?:[Rr]esident|[Aa]ttending|[Ff]ellow|RN|NP|[Nn]urse|[Ss]cribe|[Tt]ech|[Aa]ssist(?:ant)?|[Aa]nesthetist|"
               r"ANESTHETIST|ASSIST|[Ss]urgeon|CRNA|[Pp]roceduralist|[Ii]ntern)\s+(?P<phi>[A-Z]{2,3})(?![\w]|\.\w)",
               "DOCTOR", 0.5, validator="initials"),
    # initials signing off a sentence at the end of a line: "Charge nurse aware. -- CW"
    PhiPattern("doctor_signoff_initials", r"(?<=[.!)] )--?[ \t]?(?P<phi>[A-Z]{2,3})(?=[ \t]*(?:\n|$))",
               "DOCTOR", 0.5, validator="initials"),
    PhiPattern("doctor_by", r"\b(?i:seen|evaluated|examined|signed|dictated|discussed\s+with|referred\s+by|referred\s+to|"
               r"authored|verified|reviewed|requested|performed|interpreted|ordered|anesthesia)"
               r" (?i:by )?(?:(?:Dr|DR|Doctor)\.? )?(?P<phi>" + NAME + ")", "DOCTOR", 0.5, anchor=r"\b(?i:seen|evaluated|examined|signed|dictated|discussed|referred|authored|verified|reviewed|requested|performed|interpreted|ordered|anesthesia)", anchor_window=(2, 70)),
    PhiPattern("patient_title", r"\b(?:Mr|Mrs|Ms|Miss|Mx|MR|MRS|MS|MISS)\.? (?P<phi>" + NAME_TITLED + ")", "PATIENT", 0.7),
    PhiPattern("patient_label", r"\b(?i:patient(?:\s+name)?|pt\.?(?:\s+name)?|name)(?:\s*:|\s*\.{2,})\s*(?P<phi>" + NAME + ")",
               "PATIENT", 0.75, anchor=r"[:.]", anchor_window=(30, 50)),
    PhiPattern("patient_label_list", r"\b(?:Patient|PATIENT|Pt|PT) (?P<phi>" + _LAST_FIRST + "|" + _NAME_CAP + ")",
               "PATIENT", 0.6, validator="two_tokens"),
    PhiPattern("patient_header", r"(?:^|\*{2,} |\n)(?P<phi>" + _LAST_FIRST + r") {1,3}\((?:M|F|male|female|X)\b",
               "PATIENT", 0.75, anchor=r"\((?:M|F|male|female|X)\b", anchor_window=(70, 5)),
    PhiPattern("relative",
               r"\b(?i:granddaughter|grandson|daughter|son|wife|husband|mother|father|brother|sister|spouse|partner|niece|"
               r"nephew|aunt|uncle|cousin|friend|caregiver|guardian|grandmother|grandfather|fianc[eé]e?|boyfriend|"
               r"girlfriend|stepdaughter|stepson|stepmother|stepfather|neighbor|roommate|mom|dad|sibling)"
               r"(?:,| (?:is|was|named))? (?:\([\w ]+\) )?(?P<phi>" + NAME_PLAIN + ")", "PATIENT", 0.65, anchor=r"(?:[Dd]aughter|[Ss]on|[Ww]ife|[Hh]usband|[Mm]other|[Ff]ather|[Bb]rother|[Ss]ister|[Ss]pouse|[Pp]artner|[Nn]iece|[Nn]ephew|[Aa]unt|[Uu]ncle|[Cc]ousin|[Ff]riend|[Cc]aregiver|[Gg]uardian|[Ff]ianc|[Bb]oyfriend|[Gg]irlfriend|[Nn]eighbor|[Rr]oommate|[Mm]om|[Dd]ad|[Ss]ibling)", anchor_window=(25, 60)),
    # ------------------------------------------------------------------ HOSPITAL (weak; gazetteer is primary)
    PhiPattern("hospital_name",
               r"(?<![\w])(?P<phi>(?:(?:St|Saint|ST)\.? )?" + _HOSP_TOKEN + r"(?:(?: | and | & | de | of the | of )" + _HOSP_TOKEN
               + r"){0,4} " + _HOSP_SUFFIX + r"(?: of (?:the )?" + _HOSP_TOKEN + r"(?: " + _HOSP_TOKEN + r"){0,2})?)(?![\w])",
               "HOSPITAL", 0.6, validator="specific_facility", anchor=_HOSP_SUFFIX, anchor_window=(110, 60)),
    PhiPattern("hospital_label",
               r"\b(?:Facility|FACILITY|Institution|Outside institution|Hospital|Transferred from|Transfer from)"
               r"(?: ?:| ?\.{2,}) ?(?P<phi>(?:(?:St|Saint)\.? )?" + _HOSP_TOKEN + r"(?:(?: | and | de | of )" + _HOSP_TOKEN + r"){1,5})",
               "HOSPITAL", 0.55),
)


def pattern_names(patterns: Sequence[PhiPattern] = DEFAULT_PATTERNS) -> list[str]:
    return [p.name for p in patterns]
