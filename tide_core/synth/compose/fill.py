"""Slot fillers: people, places, facilities, organisations, identifiers, phones, dates.

Every filler returns ``list[Piece]`` (see :mod:`tide_core.synth.builder`) so that the labelled
characters follow docs/architecture.md "Annotation conventions": titles and credentials
outside names, city/state/ZIP/country separate, a street line as one span, an identifier
without its cue word.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass
from datetime import date, timedelta

from tide_core.synth.builder import Piece, lit, neg, phi
from tide_core.synth.compose.sources import FACILITY_LANG_CC, Sources, UsPlace, WorldPlace
from tide_core.synth.surface import date_text, phone_text

UPPER = string.ascii_uppercase
DIGITS = string.digits


def case(s: str, mode: str) -> str:
    """title / upper / lower / keep; never changes the length (falls back to ``s``)."""
    out = s.upper() if mode == "upper" else s.lower() if mode == "lower" else s
    return out if len(out) == len(s) else s


def recase(pieces: list[Piece], mode: str) -> list[Piece]:
    return [Piece(case(p.text, mode), p.label, p.neg) for p in pieces]


# -- people ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Person:
    first: str
    middle: str
    last: str
    sex: str


def person(r: random.Random, src: Sources, last: str | None = None, sex: str | None = None) -> Person:
    while True:
        first, s = r.choice(src.first)
        if sex is None or s == sex:
            break
    middle = r.choice(src.first)[0] if r.random() < 0.35 else ""
    return Person(first, middle, last or r.choice(src.last), s)


_NOT_INITIALS = {
    "MD",
    "DO",
    "RN",
    "NP",
    "PA",
    "MA",
    "PT",
    "OT",
    "RT",
    "DR",
    "MR",
    "MS",
    "CM",
    "SW",
    "ED",
    "OR",
    "IV",
    "PO",
    "BP",
    "HR",
    "GI",
    "ID",
    "UA",
    "CT",
    "EF",
    "AM",
    "PM",
    "NO",
    "OK",
}


def initials(p: Person, r: random.Random) -> str | None:
    parts = [p.first[0], *([p.middle[0]] if p.middle and r.random() < 0.4 else []), p.last[0]]
    if "".join(parts).upper() in _NOT_INITIALS:
        return None
    return r.choice((".".join(parts) + ".", "".join(parts), ". ".join(parts) + "."))


def name_pieces(p: Person, r: random.Random, label: str, form: str = "any") -> list[Piece]:
    """A non-staff person (PATIENT): first, full, Mr./Mrs. X, initials, surname-first ..."""
    if form == "any":
        form = r.choices(
            ("first", "full", "title", "init", "last", "hdr", "firstl", "titlefull"), (6, 7, 5, 2, 1, 2, 1, 2)
        )[0]
    if form == "init":
        ini = initials(p, r)
        if ini is None:
            form = "full"
        else:
            return [phi(ini, label)]
    if form == "first":
        return [phi(p.first, label)]
    if form == "last":
        return [phi(p.last, label)]
    if form == "firstl":
        return [phi(f"{p.first} {p.last[0]}.", label)]
    if form == "hdr":
        return [
            phi(
                r.choice(
                    (
                        f"{p.last}, {p.first}",
                        f"{p.last.upper()}, {p.first.upper()}",
                        f"{p.last}, {p.first} {p.middle[:1]}".strip(),
                    )
                ),
                label,
            )
        ]
    if form in ("title", "titlefull"):
        title = "Mr." if p.sex == "M" else r.choice(("Mrs.", "Ms.", "Mrs", "Ms", "Miss"))
        if p.sex == "M" and r.random() < 0.15:
            title = "Mr"
        value = p.last if form == "title" else f"{p.first} {p.last}"
        return [lit(title + " "), phi(value, label)]
    mid = r.random()
    if p.middle and mid < 0.25:
        text = f"{p.first} {p.middle[0]}. {p.last}"
    elif p.middle and mid < 0.35:
        text = f"{p.first} {p.middle} {p.last}"
    else:
        text = f"{p.first} {p.last}"
    return [phi(text.upper() if r.random() < 0.08 else text, label)]


CREDENTIALS = (
    "MD",
    "DO",
    "RN",
    "NP",
    "PA-C",
    "LCSW",
    "MSW",
    "PharmD",
    "PT",
    "DPT",
    "OTR/L",
    "CCC-SLP",
    "BSN, RN",
    "APRN",
    "CNA",
    "LPN",
    "RD",
    "MD, PhD",
    "FNP-BC",
    "CRNA",
    "RRT",
)


def staff_pieces(p: Person, r: random.Random, physician: bool | None = None) -> list[Piece]:
    """A clinician or staff member (DOCTOR); titles and credentials are never in the span."""
    if physician is None:
        physician = r.random() < 0.5
    cred = r.choice(("MD", "MD", "DO", "MD, PhD")) if physician else r.choice(CREDENTIALS[2:])
    k = r.randrange(9 if physician else 6)
    full = f"{p.first} {p.last}" if not p.middle or r.random() < 0.6 else f"{p.first} {p.middle[0]}. {p.last}"
    if k == 0:
        return [phi(full, "DOCTOR"), lit(r.choice((", ", " ")) + cred)]
    if k == 1:
        return [phi(p.first, "DOCTOR")]
    if k == 2:
        return [phi(full, "DOCTOR")]
    if k == 3:
        return [phi(f"{p.first} {p.last[0]}.", "DOCTOR"), lit(", " + cred)]
    if k == 4:
        return [phi(f"{p.last}, {p.first}", "DOCTOR"), lit(" " + cred)]
    if k == 5:
        return [phi(f"{p.first[0]}. {p.last}", "DOCTOR")]
    if k == 6:
        return [lit(r.choice(("Dr. ", "Dr ", "DR. "))), phi(p.last, "DOCTOR")]
    if k == 7:
        return [lit("Dr. "), phi(full, "DOCTOR")]
    return [phi(p.last.upper(), "DOCTOR"), lit(", " + cred)]


# -- places ---------------------------------------------------------------------------------
_UNITS = ("Apt {n}", "Apt {n}{l}", "Unit {n}", "#{n}", "Apt. {n}{l}", "Suite {n}", "Lot {n}", "Trlr {n}", "Rm {n}")
_PREDIR = ("N", "S", "E", "W", "North", "South", "NE", "SW")


def street_line(r: random.Random, src: Sources) -> str:
    v = src.vocab
    full, abbr = r.choice(v.suffixes)
    root = r.choice(v.streets)
    if r.random() < 0.1:
        root = f"{r.randint(2, 120)}{'th' if r.random() < 0.7 else 'st'}"
    parts = [str(r.choice((r.randint(1, 99), r.randint(100, 9999), r.randint(10000, 99999))))]
    if r.random() < 0.2:
        parts.append(r.choice(_PREDIR))
    parts.append(root)
    parts.append(r.choice((full, abbr, abbr + ".")) if abbr != full else full)
    line = " ".join(parts)
    if r.random() < 0.25:
        line += r.choice((" ", ", ")) + r.choice(_UNITS).format(n=r.randint(1, 420), l=r.choice("ABCDEF"))
    if r.random() < 0.05:
        line = f"PO Box {r.randint(10, 99999)}"
    return line


def us_place(r: random.Random, src: Sources) -> UsPlace:
    return r.choice(src.us)


def world_place(r: random.Random, src: Sources, cc: str | None = None) -> WorldPlace:
    if cc and cc in src.world_by_cc:
        place: WorldPlace = r.choice(src.world_by_cc[cc])
        return place
    return r.choice(src.world) if src.world else WorldPlace("Oaxaca", "", "MX")


def town(r: random.Random, src: Sources) -> str:
    """A US town or city name (from zipcodes or GeoNames)."""
    if src.us_towns and r.random() < 0.3:
        return r.choice(src.us_towns)
    return us_place(r, src).city


_THE_COUNTRIES = {
    "Philippines",
    "Dominican Republic",
    "United Kingdom",
    "Netherlands",
    "Czech Republic",
    "Congo",
    "United States",
    "Gambia",
    "Bahamas",
}


def place_alone(r: random.Random, src: Sources) -> list[Piece]:
    """A town, city, county, state or country named on its own (no street, maybe its state)."""
    k = r.choices(range(9), (9, 5, 3, 3, 4, 4, 3, 1, 1))[0]
    mode = r.choices(("keep", "lower", "upper"), (85, 8, 7))[0]
    if k == 0:
        out = [phi(town(r, src), "LOCATION")]
    elif k == 1:
        u = us_place(r, src)
        out = [phi(u.city, "LOCATION"), lit(r.choice((", ", " "))), phi(u.state, "LOCATION")]
    elif k == 2:
        u = us_place(r, src)
        out = [phi(u.city, "LOCATION"), lit(", "), phi(u.state_name, "LOCATION")]
    elif k == 3:
        out = [phi(us_place(r, src).state_name, "LOCATION")]
    elif k == 4:
        c = r.choice(src.countries)
        out = [lit("the "), phi(c, "LOCATION")] if c in _THE_COUNTRIES and r.random() < 0.7 else [phi(c, "LOCATION")]
    elif k == 5:
        w = world_place(r, src)
        out = [phi(w.name, "LOCATION"), lit(", "), phi(w.country, "LOCATION")]
    elif k == 6:
        out = [phi(world_place(r, src).name, "LOCATION")]
    elif k == 7:
        u = us_place(r, src)
        out = [phi(u.county or f"{u.city} County", "LOCATION")]
    else:
        w = world_place(r, src)
        out = (
            [phi(w.name, "LOCATION"), lit(", "), phi(w.admin1, "LOCATION")]
            if w.admin1 and w.admin1 != w.name
            else [phi(w.name, "LOCATION")]
        )
    return recase(out, mode)


def address_pieces(r: random.Random, src: Sources, u: UsPlace | None = None, block: bool | None = None) -> list[Piece]:
    u = u or us_place(r, src)
    if block is None:
        block = r.random() < 0.4
    zip_ = u.zip5 if r.random() < 0.85 else f"{u.zip5}-{r.randint(0, 9999):04d}"
    state = u.state if r.random() < 0.8 else u.state_name
    out = [
        phi(street_line(r, src), "LOCATION"),
        lit("\n" if block else r.choice((", ", " "))),
        phi(u.city, "LOCATION"),
        lit(r.choice((", ", " ", ","))),
        phi(state, "LOCATION"),
        lit(r.choice((" ", "  ", " "))),
        phi(zip_, "LOCATION"),
    ]
    if r.random() < 0.06:
        out += [lit(r.choice((", ", " "))), phi(r.choice(("USA", "US", "United States")), "LOCATION")]
    return out


# -- facilities -----------------------------------------------------------------------------
SAINTS = (
    "Mary",
    "Joseph",
    "Luke",
    "Jude",
    "Francis",
    "Anthony",
    "Vincent",
    "Elizabeth",
    "Catherine",
    "Agnes",
    "Clare",
    "Rita",
    "Bernard",
    "Michael",
    "Peter",
    "Paul",
    "John",
    "Anne",
    "Teresa",
    "Margaret",
    "Patrick",
    "Dominic",
    "Gabriel",
    "Raphael",
    "Benedict",
    "Monica",
    "Cecilia",
)
_TREES = (
    "Willow",
    "Cedar",
    "Maple",
    "Aspen",
    "Juniper",
    "Magnolia",
    "Sycamore",
    "Birch",
    "Laurel",
    "Hawthorn",
    "Briar",
    "Linden",
    "Chestnut",
    "Heron",
    "Falcon",
    "Sunrise",
    "Harbor",
    "Summit",
)
_US_FAC = (
    "{T} General Hospital",
    "{T} Regional Medical Center",
    "{T} Memorial Hospital",
    "{L} Memorial Hospital",
    "St. {S}'s Hospital",
    "Saint {S} Medical Center",
    "St. {S} Regional",
    "{T} Community Hospital",
    "{T} Family Health Center",
    "{T} VA Medical Center",
    "{T} Medical Center",
    "{T} Rehabilitation Hospital",
    "{L} Nursing and Rehabilitation Center",
    "{W} Manor",
    "{W} Ridge Senior Living",
    "{T} Dialysis Center",
    "{T} Urgent Care",
    "{L} Family Practice",
    "{T} Children's Hospital",
    "{ST} University Hospital",
    "University of {ST} Medical Center",
    "{T} Cancer Institute",
    "{L} Eye Institute",
    "{T} Surgery Center",
    "{T} Behavioral Health",
    "Good Samaritan Hospital of {T}",
    "Mercy {T}",
    "{T} Health",
    "{T} Free Clinic",
    "{W} Hospice",
    "{W} Gardens Assisted Living",
    "{T} Veterans Home",
    "{L} Clinic",
    "{T} Women's Center",
    "{W} Point Care Center",
    "{T} Orthopedic Associates",
    "{L}-{L2} Heart Institute",
    "{T} Health Center",
    "{T} Memorial",
    "{ST} Psychiatric Institute",
    "{T} County Hospital",
    "Shriners Hospital {T}",
)
_FOREIGN_FAC = {
    "es": (
        "Hospital General de {T}",
        "Hospital Universitario {SE}",
        "Clínica {SE}",
        "Hospital de {T}",
        "Centro de Salud {T}",
        "Sanatorio {L}",
        "Hospital Regional de {T}",
        "Clínica Santa María de {T}",
        "Hospital Civil de {T}",
        "Hospital Materno Infantil de {T}",
    ),
    "fr": (
        "Hôpital {SF}",
        "Centre Hospitalier de {T}",
        "CHU de {T}",
        "Clinique {SF}",
        "Hôpital Privé de {T}",
        "Centre Hospitalier Universitaire de {T}",
        "Hôpital de {T}",
        "Polyclinique de {T}",
    ),
    "de": (
        "Klinikum {T}",
        "Universitätsklinikum {T}",
        "Krankenhaus {SD}",
        "St.-{SD}-Hospital",
        "Kreiskrankenhaus {T}",
        "Städtisches Klinikum {T}",
        "Klinik am {W}park",
        "Evangelisches Krankenhaus {T}",
    ),
    "it": (
        "Ospedale {SI}",
        "Ospedale Civile di {T}",
        "Policlinico {T}",
        "Azienda Ospedaliera di {T}",
        "Ospedale Maggiore di {T}",
        "Casa di Cura {SI}",
        "Ospedale San {L}",
    ),
}
_SAINTS_LANG = {
    "SE": ("San José", "Santa María", "San Juan de Dios", "Santa Lucía", "San Rafael", "Santa Teresa", "San Vicente"),
    "SF": ("Saint-Antoine", "Sainte-Anne", "Saint-Louis", "Saint-Joseph", "Sainte-Marguerite", "Saint-Vincent"),
    "SD": ("Georg", "Elisabeth", "Joseph", "Marien", "Vinzenz", "Franziskus", "Hedwig"),
    "SI": ("San Raffaele", "Sant'Orsola", "San Gerardo", "Santa Chiara", "San Camillo", "Sant'Andrea"),
}


def _abbreviate(name: str) -> str | None:
    words = [w for w in name.replace("-", " ").split() if w[:1].isupper() and w not in ("St.",)]
    if len(words) < 2:
        return None
    ab = "".join(w[0] for w in words)
    return ab if 2 <= len(ab) <= 6 and ab not in _NOT_INITIALS else None


@dataclass(frozen=True)
class Facility:
    name: str
    lang: str  # en / es / fr / de / it


def facility(r: random.Random, src: Sources, foreign_share: float = 0.18) -> Facility:
    u = r.random()
    if u < foreign_share:
        lang = r.choice(("es", "es", "fr", "de", "it"))
        cc = r.choice(FACILITY_LANG_CC[lang])
        tmpl = r.choice(_FOREIGN_FAC[lang])
        name = tmpl.format(
            T=world_place(r, src, cc).name,
            L=r.choice(src.last),
            W=r.choice(_TREES),
            **{k: r.choice(v) for k, v in _SAINTS_LANG.items()},
        )
        return Facility(name, lang)
    if u < foreign_share + 0.12 and src.vocab.external_facilities:
        return Facility(r.choice(src.vocab.external_facilities).name, "en")
    tmpl = r.choice(_US_FAC)
    name = tmpl.format(
        T=town(r, src),
        L=r.choice(src.last),
        L2=r.choice(src.last),
        S=r.choice(SAINTS),
        W=r.choice(_TREES),
        ST=us_place(r, src).state_name,
    )
    return Facility(name, "en")


def facility_pieces(f: Facility, r: random.Random, mode: str | None = None) -> list[Piece]:
    """Title case, ALL CAPS, an initialism ("RGH") or lower case."""
    if mode is None:
        mode = r.choices(("keep", "upper", "abbr", "lower"), (70, 15, 11, 4))[0]
    if mode == "abbr":
        ab = _abbreviate(f.name)
        return [phi(ab, "HOSPITAL")] if ab else [phi(f.name, "HOSPITAL")]
    return [phi(case(f.name, mode), "HOSPITAL")]


# -- organisations (OTHER) ------------------------------------------------------------------
_EMPLOYERS = (
    "{L} Construction",
    "{L} & Sons",
    "{L} Trucking",
    "{T} Public Schools",
    "{T} Police Department",
    "{T} Fire Department",
    "{T} Steel",
    "{T} Auto Body",
    "{L} Farms",
    "{T} Paper Mill",
    "{L} Law Group",
    "{T} Water Authority",
    "{L} Plumbing and Heating",
    "{T} Country Club",
    "{L} Roofing",
    "{T} Casino",
    "{L} Dairy",
    "{T} Poultry Plant",
    "{T} Transit Authority",
    "{L} Insurance Agency",
    "{T} Tire & Lube",
    "Walmart",
    "Amazon",
    "FedEx",
    "UPS",
    "Home Depot",
    "Tyson Foods",
    "Boeing",
    "General Motors",
    "Target",
    "Costco",
    "Starbucks",
    "Lowe's",
    "Kroger",
    "Dollar General",
    "McDonald's",
    "the {T} Post Office",
)
_SCHOOLS = (
    "{T} High School",
    "{T} Elementary",
    "{L} Middle School",
    "{T} Community College",
    "University of {ST}",
    "{ST} State University",
    "{T} Christian Academy",
    "{L} Elementary School",
    "{T} Technical College",
    "{T} Montessori School",
    "{T} Head Start",
)
_CHURCHES = (
    "{S} Catholic Church",
    "First Baptist Church",
    "First Baptist Church of {T}",
    "Grace Lutheran Church",
    "{T} Church of Christ",
    "Temple Beth Israel",
    "Masjid al-Noor",
    "New Hope Assembly of God",
    "St. {S}'s Parish",
    "{T} Bible Fellowship",
    "{T} First United Methodist Church",
    "Kingdom Hall of {T}",
)
_CLUBS = (
    "VFW Post {N}",
    "{T} Rotary Club",
    "{T} YMCA",
    "Meals on Wheels of {T}",
    "{T} Senior Center",
    "Boy Scout Troop {N}",
    "American Legion Post {N}",
    "{T} Food Bank",
    "{T} Habitat for Humanity",
)


def organisation(r: random.Random, src: Sources, kind: str = "any") -> str:
    """kind: employer, school, church, club, any."""
    if kind == "any":
        kind = r.choices(("employer", "school", "church", "club"), (6, 3, 2, 1))[0]
    if kind == "employer" and r.random() < 0.35 and src.vocab.employers:
        return r.choice(src.vocab.employers)
    if kind == "school" and r.random() < 0.35 and src.vocab.schools:
        return r.choice(src.vocab.schools)
    pool = {"employer": _EMPLOYERS, "school": _SCHOOLS, "church": _CHURCHES, "club": _CLUBS}[kind]
    return r.choice(pool).format(
        T=town(r, src), L=r.choice(src.last), S=r.choice(SAINTS), ST=us_place(r, src).state_name, N=r.randint(2, 9999)
    )


def org_pieces(name: str, r: random.Random) -> list[Piece]:
    mode = r.choices(("keep", "lower", "upper"), (72, 20, 8))[0]
    if name.startswith("the "):
        return [lit("the "), phi(case(name[4:], mode), "OTHER")]
    return [phi(case(name, mode), "OTHER")]


# -- identifiers ----------------------------------------------------------------------------
def _digits(r: random.Random, n: int, lead_zero: float = 0.2) -> str:
    s = "".join(r.choice(DIGITS) for _ in range(n))
    if r.random() < lead_zero:
        z = r.randint(1, max(1, n // 2))
        s = "0" * z + s[z:]
    return s


def _letters(r: random.Random, n: int) -> str:
    return "".join(r.choice(UPPER) for _ in range(n))


def _luhn_digit(num: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(num)):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            d -= 9 if d > 9 else 0
        total += d
    return str((10 - total % 10) % 10)


def _npi(r: random.Random) -> str:
    base = r.choice("12") + _digits(r, 8, 0)
    return base + _luhn_digit("80840" + base)


def _dea(r: random.Random) -> str:
    d = [r.randint(0, 9) for _ in range(6)]
    check = (d[0] + d[2] + d[4] + 2 * (d[1] + d[3] + d[5])) % 10
    return r.choice("ABFGMPR") + r.choice(UPPER) + "".join(map(str, d)) + str(check)


def _grouped(r: random.Random, groups: tuple[int, ...], sep: str) -> str:
    return sep.join(_digits(r, g, 0.1) for g in groups)


def id_value(r: random.Random, kind: str = "any") -> str:
    """An identifier of 4-16 characters in one of many shapes (``kind`` picks a family)."""
    yy = f"{r.randint(5, 25):02d}"
    ri = r.randint
    shapes = {
        "mrn": lambda: r.choice(
            (
                _digits(r, ri(6, 10), 0.4),
                r.choice("EMHK") + _digits(r, ri(6, 9), 0.5),
                _grouped(r, (3, 3, 3), r.choice("- .")),
                _digits(r, ri(6, 8)) + "-" + str(ri(0, 9)),
            )
        ),
        "accession": lambda: r.choice(
            (
                f"{r.choice(('CT', 'MR', 'US', 'XR', 'NM', 'RAD'))}{yy}-{_digits(r, ri(5, 7), 0.5)}",
                f"{yy}-{_digits(r, 6)}",
                f"A{_digits(r, 7, 0.3)}",
                f"{r.choice(('RAD', 'ACC', 'LAB'))}{2000 + int(yy)}{_digits(r, 6, 0.6)}",
            )
        ),
        "specimen": lambda: r.choice(
            (
                f"S{yy}-{_digits(r, ri(4, 6), 0.5)}",
                f"SP-{yy}-{_digits(r, 6, 0.6)}",
                f"{yy}SP-{_digits(r, 5, 0.5)}",
                f"{r.choice('SCHF')}{yy}-{ri(100, 99999)}",
                f"M{yy}-{ri(1000, 9999)}",
            )
        ),
        "account": lambda: r.choice(
            (
                _digits(r, ri(8, 12), 0.3),
                f"V{_digits(r, ri(8, 11), 0.6)}",
                _grouped(r, (4, 4), r.choice(" -")),
                f"{_digits(r, 9)}{r.choice(UPPER)}",
            )
        ),
        "encounter": lambda: r.choice(
            (
                f"E{_digits(r, ri(7, 9))}",
                _digits(r, ri(9, 12), 0.3),
                f"V-{_digits(r, 8, 0.6)}",
                f"{2000 + int(yy)}{_digits(r, 8, 0.5)}",
            )
        ),
        "order": lambda: r.choice(
            (
                f"ORD-{_digits(r, 7)}",
                _digits(r, ri(7, 10)),
                f"R{_digits(r, 7)}",
                f"{_letters(r, 2)}{_digits(r, 6)}",
                f"{_digits(r, 3)}.{_digits(r, 4)}",
            )
        ),
        "member": lambda: r.choice(
            (
                f"{_letters(r, 3)}{_digits(r, 9)}",
                f"W{_digits(r, 9)}",
                f"{_letters(r, 3)} {_digits(r, 3)} {_digits(r, 2)} {_digits(r, 4)}",
                f"{ri(1, 9)}{_letters(r, 2)}{ri(0, 9)}-{_letters(r, 2)}{ri(0, 9)}-{_letters(r, 2)}{ri(10, 99)}",
                f"{_digits(r, 9)}{r.choice(('A', 'B', 'C1', 'D6'))}",
            )
        ),
        "claim": lambda: r.choice(
            (
                f"{2000 + int(yy)}-{_digits(r, 8, 0.5)}-{ri(1, 9):02d}",
                f"C{_digits(r, 9)}",
                f"{_digits(r, 5)}-{_digits(r, 5)}",
                f"CLM{_digits(r, 10, 0.3)}",
            )
        ),
        "serial": lambda: r.choice(
            (
                f"SN{''.join(r.choice('0123456789ABCDEF') for _ in range(8))}",
                "-".join("".join(r.choice("0123456789ABCDEF") for _ in range(4)) for _ in range(3)),
                f"{_letters(r, 3)}{_digits(r, 6)}{r.choice(UPPER)}",
                f"{_digits(r, 10, 0.2)}",
                f"{_letters(r, 2)}{_digits(r, 3)}-{_digits(r, 4)}",
            )
        ),
        "lot": lambda: r.choice(
            (
                f"{_letters(r, 2)}{_digits(r, 4)}",
                f"{r.choice(UPPER)}{_digits(r, 2)}{r.choice(UPPER)}{_digits(r, 2)}",
                f"{_digits(r, 7, 0.3)}{r.choice(UPPER)}",
                f"{_letters(r, 1)}{_digits(r, 5)}",
            )
        ),
        "licence": lambda: r.choice(
            (
                f"{r.choice(UPPER)}{_digits(r, 4)}-{_digits(r, 5)}-{_digits(r, 5)}",
                f"{_letters(r, 2)}{_digits(r, 5)}",
                f"{r.choice(UPPER)}{_digits(r, 7)}",
                _grouped(r, (3, 3, 3), "-"),
                f"{_digits(r, 8)}",
            )
        ),
        "npi": lambda: _npi(r),
        "dea": lambda: _dea(r),
        "ssn": lambda: r.choice(
            (
                _grouped(r, (3, 2, 4), "-"),
                _grouped(r, (3, 2, 4), " "),
                _digits(r, 9, 0.1),
                f"XXX-XX-{_digits(r, 4)}",
                f"***-**-{_digits(r, 4)}",
            )
        ),
        "case": lambda: r.choice(
            (
                f"{2000 + int(yy)}-{_digits(r, 5, 0.6)}",
                f"{_letters(r, 2)}{yy}-{_digits(r, 4)}",
                _digits(r, 6, 0.4),
                f"{yy}-{_letters(r, 2)}-{_digits(r, 4)}",
            )
        ),
    }
    if kind == "any":
        kind = r.choice(tuple(shapes) + ("generic",) * 4)
    if kind == "generic":
        return generic_id(r)
    v = shapes[kind]()
    if not 4 <= len(v) <= 16 or v[-1] == "-":
        return generic_id(r)
    return v


def generic_id(r: random.Random) -> str:
    """A shape built from parts: letter prefix, digit groups with separators, suffix/check char."""
    while True:
        prefix = _letters(r, r.choice((0, 0, 0, 1, 1, 2, 3)))
        sep = r.choice(("", "", "-", " ", ".", "/")) if prefix else ""
        groups = [r.randint(2, 6) for _ in range(r.choice((1, 1, 1, 2, 2, 3)))]
        gsep = r.choice(("-", " ", ".", "-", ""))
        body = gsep.join(_digits(r, g, 0.35) for g in groups)
        suffix = r.choice(
            (
                "",
                "",
                "",
                "",
                f"-{r.randint(0, 9)}",
                r.choice(UPPER),
                f"-{r.choice(UPPER)}",
                f" {r.choice(UPPER)}{r.randint(1, 9)}",
            )
        )
        v = f"{prefix}{sep}{body}{suffix}"
        if 4 <= len(v) <= 16 and sum(c.isdigit() for c in v) >= 3:
            return v


# cue word -> id family
ID_CUES: tuple[tuple[str, str], ...] = (
    ("MRN", "mrn"),
    ("Medical record #", "mrn"),
    ("MR#", "mrn"),
    ("Hosp #", "mrn"),
    ("Unit No.", "mrn"),
    ("Accession", "accession"),
    ("Accession #", "accession"),
    ("Acc#", "accession"),
    ("Accession No.", "accession"),
    ("Specimen", "specimen"),
    ("Specimen #", "specimen"),
    ("Specimen ID", "specimen"),
    ("Surgical path #", "specimen"),
    ("Account", "account"),
    ("Acct", "account"),
    ("Acct #", "account"),
    ("Account No", "account"),
    ("FIN", "account"),
    ("Identifier", "generic"),
    ("ID", "generic"),
    ("Patient ID", "mrn"),
    ("Ref", "generic"),
    ("Reference #", "generic"),
    ("Case", "case"),
    ("Case #", "case"),
    ("Case No.", "case"),
    ("Encounter", "encounter"),
    ("Encounter #", "encounter"),
    ("CSN", "encounter"),
    ("Visit", "encounter"),
    ("Visit #", "encounter"),
    ("Visit ID", "encounter"),
    ("Order", "order"),
    ("Order #", "order"),
    ("Order ID", "order"),
    ("Requisition", "order"),
    ("Req #", "order"),
    ("Member", "member"),
    ("Member ID", "member"),
    ("Subscriber ID", "member"),
    ("Policy", "member"),
    ("Policy #", "member"),
    ("Policy No.", "member"),
    ("Group #", "member"),
    ("Medicaid #", "member"),
    ("Claim", "claim"),
    ("Claim #", "claim"),
    ("Claim No", "claim"),
    ("Auth #", "claim"),
    ("Prior auth", "claim"),
    ("Device serial", "serial"),
    ("Serial #", "serial"),
    ("S/N", "serial"),
    ("SN", "serial"),
    ("Model/Serial", "serial"),
    ("Lot", "lot"),
    ("Lot #", "lot"),
    ("Lot No.", "lot"),
    ("License", "licence"),
    ("Licence", "licence"),
    ("Lic #", "licence"),
    ("DL#", "licence"),
    ("Driver's license", "licence"),
    ("NPI", "npi"),
    ("NPI #", "npi"),
    ("DEA", "dea"),
    ("DEA #", "dea"),
    ("SSN", "ssn"),
    ("Social", "ssn"),
)


# -- contact --------------------------------------------------------------------------------
def phone_value(r: random.Random, u: UsPlace | None = None) -> str:
    area = r.choice(u.area_codes) if u and u.area_codes else str(r.randint(201, 989))
    if area[1:] == "11" or area[0] in "01":
        area = "4" + area[1:]
    line = f"{r.randint(0, 9999):04d}"
    return phone_text((area, str(r.randint(201, 989)), line), r)


def email_value(r: random.Random, p: Person, src: Sources) -> str:
    user = r.choice(
        (
            f"{p.first}.{p.last}",
            f"{p.first[0]}{p.last}",
            f"{p.first}{p.last[:1]}{r.randint(1, 99)}",
            f"{p.last}{r.randint(10, 9999)}",
            f"{p.first}_{p.last}",
        )
    ).lower()
    user = "".join(ch for ch in user if ch.isalnum() or ch in "._")
    return f"{user}@{r.choice(src.vocab.email_domains)}"


def url_value(r: random.Random, f: Facility | None = None) -> str:
    k = r.randrange(5)
    slug = "".join(ch for ch in (f.name if f else "myhealth").lower() if ch.isascii() and ch.isalnum())[:16] or "care"
    if k == 0:
        return f"https://mychart.{slug}.org"
    if k == 1:
        return f"www.{slug}.org/patients"
    if k == 2:
        return f"{r.randint(10, 192)}.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}"
    if k == 3:
        return f"http://portal.{slug}.com/login"
    return f"https://{slug}.org/refer?id={r.randint(1000, 99999)}"


# -- dates ----------------------------------------------------------------------------------
def rand_date(r: random.Random, lo: date, hi: date) -> date:
    return lo + timedelta(days=r.randint(0, max(0, (hi - lo).days)))


def date_pieces(d: date, r: random.Random, form: str = "any") -> list[Piece]:
    return [phi(date_text(d, form, r), "DATE")]


def negp(text: str, kind: str) -> Piece:
    return neg(text, kind)
