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

from dataclasses import dataclass

# --------------------------------------------------------------------------- building blocks
_MONTH_WORDS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)
_MONTH_ABBR = ("Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec")


def _month_alternation() -> str:
    """Capitalised and upper-case month names and abbreviations (case-sensitive on purpose:
    "may" and "mar" are ordinary words)."""
    words = sorted(set(_MONTH_WORDS + _MONTH_ABBR), key=len, reverse=True)
    forms = []
    for w in words:
        forms.append(w)
        forms.append(w.upper())
    return "(?:" + "|".join(forms) + r")(?![a-z])\.?"


MONTH = _month_alternation()
DAY = r"(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?"
NUM_DAY = r"(?:3[01]|[12]\d|0?[1-9])"
NUM_MONTH = r"(?:1[0-2]|0?[1-9])"
YEAR4 = r"(?:19|20)\d{2}"
# An attached time in the same token run: "03/04/2021 14:30", "2021-03-04T14:30:00".
TIME = r"(?:[ T](?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?:\.\d+)?(?:\s?[AaPp]\.?[Mm]\.?)?Z?)?"
# Numeric boundaries: not inside a longer number, path, version or decimal.
NL = r"(?<![\w/.\-:])"
NR = r"(?![\w/]|[.\-:]\d)"

STATE_ABBR = (
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN", "IA",
    "KS", "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM",
    "NY", "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA",
    "WV", "WI", "WY", "PR",
)
#: Abbreviations that are also clinical credentials or common tokens ("Smith, MD", "Jones, PA").
_AMBIGUOUS_STATE_ABBR = ("MD", "PA", "MS", "ME", "DE", "IN", "OR", "OK", "HI", "ID", "CO", "CA", "LA")
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

_STATE_ABBR_ALT = "(?:" + "|".join(STATE_ABBR) + r")\b"
_STATE_SAFE_ALT = "(?:" + "|".join(a for a in STATE_ABBR if a not in _AMBIGUOUS_STATE_ABBR) + r")\b"
_STATE_NAME_ALT = "(?:" + "|".join(sorted(STATE_NAMES, key=len, reverse=True)) + r")\b"
ZIP = r"\d{5}(?:-\d{4})?(?![\w-])"

STREET_SUFFIX = (
    r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Drive|Dr|Lane|Ln|Court|Ct|Way|Place|Pl|"
    r"Terrace|Ter|Circle|Cir|Parkway|Pkwy|Highway|Hwy|Trail|Trl|Square|Sq|Loop|Row|Pike|Alley|"
    r"Crescent|Plaza|Run|Pass|Ridge)\b"
)
_STREET_WORDS = STREET_SUFFIX.replace(r")\b", r")\b")

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
) + _MONTH_WORDS
_NOT_NAME_ALT = "(?:" + "|".join(sorted(set(_NOT_NAME), key=len, reverse=True)) + r")\b"
NAME_TOKEN = r"(?!" + _NOT_NAME_ALT + r")(?:[A-Z]'|Mc|Mac|De|Van|Le)?[A-Z][a-z]+(?:-[A-Z][a-z]+)*(?!['’]?[A-Za-z])"
INITIAL = r"[A-Z]\.(?!\w)"
NAME = (r"(?:(?:" + INITIAL + r"\s?){1,2}\s*)?" + NAME_TOKEN +
        r"(?:\s(?:" + INITIAL + "|" + NAME_TOKEN + r")){0,2}(?!\s" + NAME_TOKEN + r")")
# A name needs at least one token of 2+ letters; initials alone ("J. K.") never match.

CREDENTIAL = (r"(?:M\.D\.|D\.O\.|MD|DO|RN|NP|PA-C|PA|CNP|APRN|CRNA|DNP|PharmD|PhD|MSW|LCSW|DPT|"
              r"CNM|FNP|FNP-BC|FACS|FACP|MBBS)(?![\w-])")

# Context vocabularies (matched case-insensitively on word boundaries before the span).
DATE_CONTEXT = ("date", "dated", "on", "since", "dob", "born", "admitted", "admission", "discharged",
                "discharge", "seen", "visit", "dos", "surgery", "until", "from", "through", "starting",
                "started", "last", "next", "scheduled", "returned", "follow-up", "followup", "f/u",
                "appointment", "appt", "effective", "as of", "before", "after", "by", "due", "procedure")
PHONE_CONTEXT = ("phone", "tel", "telephone", "cell", "mobile", "call", "called", "pager", "page",
                 "fax", "contact", "reach", "reached", "ph", "number", "home", "work", "office", "#")
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

    def span_groups(self) -> tuple[tuple[str, str], ...]:
        return self.groups or (("phi", self.label),)

    def labels(self) -> frozenset[str]:
        return frozenset(label for _, label in self.span_groups())


_UNIT_AFTER = (r"\s*(?:mg|mcg|g|kg|ml|mL|cc|L|units?|u|iu|IU|mmHg|mm|cm|%|kcal|calories|cells|"
               r"patients|tabs?|tablets?|caps?|capsules?|doses?|puffs?|times|x)\b")
_RATIO_AFTER = (r"\s*(?:tabs?|tablets?|caps?|strength|dose|of|pain|units?|mg|ml|cc|inch|in\b|"
                r"cup|NS|normal|saline|\+|x\b)")
_SCORE_BEFORE = r"(?i:pain|score|scale|rated|strength|murmur|grade|power|motor|reflexes|bp|blood pressure|gcs)\W*(?:\w+\W+){0,2}$"

DEFAULT_PATTERNS: tuple[PhiPattern, ...] = (
    # ------------------------------------------------------------------ DATE
    PhiPattern("date_mdy", NL + r"(?P<phi>" + NUM_MONTH + r"(?P<sep>[/-])" + NUM_DAY + r"(?P=sep)(?:"
               + YEAR4 + r"|\d{2})" + TIME + ")" + NR, "DATE", 0.95, validator="date_mdy"),
    PhiPattern("date_mdy_dot", NL + r"(?P<phi>" + NUM_MONTH + r"\." + NUM_DAY + r"\." + YEAR4 + TIME + ")" + NR,
               "DATE", 0.85, validator="date_mdy"),
    PhiPattern("date_iso", NL + r"(?P<phi>" + YEAR4 + r"(?P<sep>[-/.])" + NUM_MONTH + r"(?P=sep)" + NUM_DAY
               + TIME + ")" + NR, "DATE", 0.95, validator="date_ymd"),
    PhiPattern("date_month_day_year", r"(?<![\w])(?P<phi>" + MONTH + r"\s{1,2}" + DAY + r",?\s{1,2}" + YEAR4 + r"\b" + TIME + ")",
               "DATE", 0.95),
    PhiPattern("date_day_month_year", r"(?<![\w])(?P<phi>" + DAY + r"(?:\s+of)?[\s-]" + MONTH + r",?[\s-]" + YEAR4 + r"\b)",
               "DATE", 0.95),
    PhiPattern("date_month_day", r"(?<![\w])(?P<phi>" + MONTH + r"\s{1,2}" + DAY + r")(?![\w]|,?\s*\d|:\d)", "DATE", 0.85,
               exclude_after=_UNIT_AFTER),
    PhiPattern("date_day_month", r"(?<![\w.\d/])(?P<phi>" + DAY + r"(?:\s+of)?\s" + MONTH + r")(?![\w])", "DATE", 0.8),
    PhiPattern("date_month_year", r"(?<![\w])(?P<phi>" + MONTH + r",?\s{1,2}(?:of\s)?" + YEAR4 + r")\b", "DATE", 0.9),
    PhiPattern("date_month_slash_year", NL + r"(?P<phi>" + NUM_MONTH + r"/" + YEAR4 + ")" + NR, "DATE", 0.75),
    PhiPattern("date_month_day_numeric", NL + r"(?P<phi>" + NUM_MONTH + r"/" + NUM_DAY + ")" + NR, "DATE", 0.5,
               context=DATE_CONTEXT, context_score=0.8, requires_context=True, chain=True, window=20,
               exclude_after=_RATIO_AFTER, exclude_before=_SCORE_BEFORE),
    PhiPattern("date_year_in_context",
               r"\b(?i:in|since|during|until|till|circa|ca\.|year|early|late|mid-?|summer|winter|spring|fall|"
               r"autumn|born|dob:?|diagnosed|married|widowed|retired|moved)\s+(?:(?i:of|the|in)\s+){0,2}(?:(?i:early|late|mid)\s+)?"
               r"(?P<phi>" + YEAR4 + r")(?![\w.,]\d|\w)", "DATE", 0.8, exclude_after=_UNIT_AFTER),
    PhiPattern("date_year_range", r"(?<![\w/.\-])(?P<phi>" + YEAR4 + r")\s*(?:-|–|to|through|and)\s*(?P<phi2>" + YEAR4
               + r")(?![\w/]|[.\-]\d)", "DATE", 0.8,
               groups=(("phi", "DATE"), ("phi2", "DATE")), validator="year_range", exclude_after=_UNIT_AFTER),
    PhiPattern("date_year_chained", r"(?<![\w/.\-])(?P<phi>" + YEAR4 + r")(?![\w/]|[.\-,]\d)", "DATE", 0.5,
               requires_context=True, chain=True, context=(), exclude_after=_UNIT_AFTER),
    # ------------------------------------------------------------------ PHONE
    PhiPattern("phone_us", r"(?<![\w+])(?P<phi>(?:\+?1[\s.-]?)?(?:\(\d{3}\)\s?|\d{3}[\s.-])\d{3}[\s.-]\d{4}"
               r"(?:,?\s?(?i:x|ext\.?|extension)\s?\d{1,6})?)(?![\w]|-\d)", "PHONE", 0.75,
               context=PHONE_CONTEXT, context_score=0.95, validator="phone"),
    PhiPattern("phone_plain_digits", r"(?<![\w+])(?P<phi>(?:\+?1)?\d{10})(?!\w)", "PHONE", 0.4,
               context=PHONE_CONTEXT, context_score=0.85, requires_context=True, window=25),
    PhiPattern("phone_local", r"(?<![\w\-/.])(?P<phi>\d{3}-\d{4}(?:\s?(?i:x|ext\.?)\s?\d{1,6})?)(?![\w]|-\d)", "PHONE", 0.4,
               context=PHONE_CONTEXT, context_score=0.8, requires_context=True, window=25),
    # ------------------------------------------------------------------ EMAIL / URL / IP
    PhiPattern("email", r"(?<![\w.+-])(?P<phi>[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
               r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,})(?![\w@])", "EMAIL", 0.95),
    PhiPattern("url_scheme", r"(?P<phi>(?i:https?|ftp)://[^\s<>\"'()\[\]]+|(?<![\w.@])(?i:www)\.[^\s<>\"'()\[\]]+)",
               "URL", 0.9, trim=".,;:!?"),
    PhiPattern("url_domain", r"(?<![\w.@/-])(?P<phi>[A-Za-z0-9][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)*\.(?i:com|org|net|edu|gov|io|us|info|health|care)"
               r"(?:/[^\s<>\"'()]*)?)(?![\w@])", "URL", 0.7, trim=".,;:!?"),
    PhiPattern("ipv4", r"(?<![\d.])(?P<phi>(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})"
               r"(?![\d]|\.\d)", "URL", 0.85),
    # ------------------------------------------------------------------ ID
    PhiPattern("ssn", NL + r"(?P<phi>\d{3}-\d{2}-\d{4})" + NR, "ID", 0.85,
               context=("ssn", "social", "security"), context_score=1.0, validator="ssn"),
    PhiPattern("ssn_spaced", NL + r"(?P<phi>\d{3} \d{2} \d{4})" + NR, "ID", 0.5,
               context=("ssn", "social", "security"), context_score=0.9, requires_context=True, window=25),
    PhiPattern("id_prefixed",
               r"\b(?i:MRN|MR|Med(?:ical)?\s+Rec(?:ord)?(?:\s+(?:Number|No))?|Record\s+(?:Number|No)|Acct|Account(?:\s+(?:Number|No))?"
               r"|Patient\s+ID|Pt\.?\s+ID|Member\s+ID|Subscriber\s+ID|Policy(?:\s+(?:Number|No))?|Insurance\s+ID|Claim(?:\s+(?:Number|No))?"
               r"|Encounter(?:\s+(?:Number|No|ID))?|FIN|CSN|HAR|Accession(?:\s+(?:Number|No))?|Specimen(?:\s+(?:Number|No|ID))?"
               r"|License(?:\s+(?:Number|No))?|Lic|DEA|NPI|Serial(?:\s+(?:Number|No))?|Device\s+ID|ID|SSN"
               r"|Social\s+Security(?:\s+(?:Number|No))?|Unit\s+(?:Number|No)|Health\s+Plan(?:\s+(?:Number|No|ID))?"
               r"|Beneficiary(?:\s+(?:Number|No|ID))?|Case\s+(?:Number|No)|Ref(?:erence)?\s+(?:Number|No))"
               r"\.?\s*(?:\#|(?i:No\.?|Number|Num\.?)\s*)?[:#=]?\s*"
               r"(?P<phi>(?=[A-Za-z0-9-]*\d[A-Za-z0-9-]*\d)[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){3,24})(?![\w-])",
               "ID", 0.9, validator="id_token"),
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
    PhiPattern("age_prefixed", r"\b(?i:age|aged|ages|age\s+of)\s*[:=]?\s*(?P<phi>\d{1,3})(?![\w.]|\.\d)", "AGE", 0.9,
               validator="age", exclude_after=r"\s*(?:%|percent|mg|kg|points)"),
    PhiPattern("age_months_old", r"(?<![\w.])(?P<phi>\d{1,2})(?:\s*-\s*|\s+)(?i:months?|weeks?|days?)(?:\s*-\s*|\s+)(?i:old)\b",
               "AGE", 0.85),
    # ------------------------------------------------------------------ LOCATION
    PhiPattern("city_state_zip",
               r"(?<![\w])(?P<city>" + NAME_TOKEN.replace(_NOT_NAME_ALT, "(?:" + _NOT_NAME_ALT + "|" + STREET_SUFFIX + ")")
               + r"(?:[ -]" + NAME_TOKEN + r"){0,2}),\s+(?P<state>" + _STATE_ABBR_ALT + "|" + _STATE_NAME_ALT
               + r")\.?,?\s+(?P<zip>" + ZIP + ")", "LOCATION", 0.9,
               groups=(("city", "LOCATION"), ("state", "LOCATION"), ("zip", "LOCATION"))),
    PhiPattern("state_zip", r"(?<![\w])(?P<state>" + _STATE_ABBR_ALT + "|" + _STATE_NAME_ALT + r"),?\s+(?P<zip>" + ZIP + ")",
               "LOCATION", 0.85, groups=(("state", "LOCATION"), ("zip", "LOCATION"))),
    PhiPattern("city_state", r"(?<![\w])(?P<city>" + NAME_TOKEN + r"(?:[ -]" + NAME_TOKEN + r"){0,2}),\s+(?P<state>"
               + _STATE_SAFE_ALT + "|" + _STATE_NAME_ALT + r")(?!\.?,?\s*\d)", "LOCATION", 0.7,
               groups=(("city", "LOCATION"), ("state", "LOCATION"))),
    PhiPattern("zip_context", r"\b(?i:zip(?:\s*code)?|zipcode|postal\s+code)\s*[:#]?\s*(?P<phi>" + ZIP + ")", "LOCATION", 0.85),
    PhiPattern("state_name", r"(?<![\w])(?P<phi>" + _STATE_NAME_ALT + ")", "LOCATION", 0.6, validator="state_name"),
    PhiPattern("street_address",
               r"(?<![\w.,/-])(?P<phi>\d{1,6}[A-Z]?\s+(?:(?:N|S|E|W|NE|NW|SE|SW|North|South|East|West)\.?\s+)?"
               r"(?:(?:[A-Z][a-z]+|[A-Z]{2,}|\d{1,3}(?:st|nd|rd|th))\s+){1,3}" + STREET_SUFFIX
               + r"(?:\s+(?:N|S|E|W|NE|NW|SE|SW)\b)?"
               r"(?:,?\s+(?:Apt|Apartment|Suite|Ste|Unit|Fl|Floor|Bldg|Building|Rm|#)\.?\s*#?\s*[A-Za-z0-9-]*\d[A-Za-z0-9-]*)?)",
               "LOCATION", 0.85),
    PhiPattern("po_box", r"\b(?P<phi>(?i:P\.?\s?O\.?\s+Box|Post\s+Office\s+Box)\s+\d{1,6})\b", "LOCATION", 0.85),
    PhiPattern("apartment", r"(?<![\w])(?P<phi>(?:Apt|Apartment|Suite|Ste)\.?\s*#?\s*\d+[A-Za-z]?)(?![\w])", "LOCATION", 0.6),
    # ------------------------------------------------------------------ names (weak signal)
    PhiPattern("doctor_title", r"\b(?:Dr|DR|Doctor|Prof|Professor)\.?\s+(?P<phi>" + NAME + ")", "DOCTOR", 0.85),
    PhiPattern("doctor_credential", r"(?<![\w])(?P<phi>" + NAME + r"),?\s+" + CREDENTIAL, "DOCTOR", 0.8),
    PhiPattern("doctor_role",
               r"\b(?i:attending(?:\s+physician)?|pcp|primary\s+care(?:\s+(?:physician|provider))?|resident|fellow|intern|"
               r"surgeon|provider|physician|referring(?:\s+(?:physician|provider))?|consultant|nurse|signed\s+by|"
               r"electronically\s+signed\s+by|dictated\s+by|transcribed\s+by|cc)\s*:\s*(?:(?:Dr|Doctor)\.?\s+)?(?P<phi>"
               + NAME + ")", "DOCTOR", 0.75),
    PhiPattern("doctor_by", r"\b(?i:seen|evaluated|examined|signed|dictated|discussed\s+with|referred\s+by|referred\s+to)"
               r"\s+(?i:by\s+)?(?:(?:Dr|Doctor)\.?\s+)?(?P<phi>" + NAME + ")", "DOCTOR", 0.5),
    PhiPattern("patient_title", r"\b(?:Mr|Mrs|Ms|Miss|Mx|MR|MRS|MS)\.?\s+(?P<phi>" + NAME + ")", "PATIENT", 0.7),
    PhiPattern("patient_label", r"\b(?i:patient(?:\s+name)?|pt\.?\s+name|name)\s*:\s*(?P<phi>" + NAME + ")", "PATIENT", 0.75),
    # ------------------------------------------------------------------ HOSPITAL (weak; gazetteer is primary)
    PhiPattern("hospital_name",
               r"(?<![\w])(?P<phi>(?:(?:St|Saint)\.?\s+)?(?:" + NAME_TOKEN + r"(?:'s)?\s+){1,4}(?:Hospital|Medical\s+Center|"
               r"Medical\s+Centre|Health\s+Center|Health\s+System|Infirmary|Memorial|Regional\s+Medical\s+Center|"
               r"Rehabilitation\s+Center|Nursing\s+Home|Hospice|Cancer\s+Center|Children's\s+Hospital|Clinic))\b",
               "HOSPITAL", 0.6),
)


def pattern_names(patterns=DEFAULT_PATTERNS) -> list[str]:
    return [p.name for p in patterns]
