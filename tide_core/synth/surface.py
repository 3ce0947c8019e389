"""Surface forms: how one PHI value is written, as a list of text pieces with labels.

Each renderer returns ``list[Piece]`` so that a value written with non-PHI around it
("Dr. " + name + ", MD", "MRN# " + id, "67" + "-year-old") carries its span on exactly the
characters the annotation conventions of docs/architecture.md label.
"""

from __future__ import annotations

import random
from datetime import date

from tide_core.synth.builder import Piece, lit, phi
from tide_core.synth.world import Address, Clinician, Person

MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
MON = tuple(m[:3] for m in MONTHS)


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# -- dates -----------------------------------------------------------------------------------
def _full(d: date, k: int) -> str:
    m, dd, y = d.month, d.day, d.year
    return (
        f"{m}/{dd}/{y}",
        f"{m:02d}/{dd:02d}/{y}",
        f"{m}/{dd}/{y % 100:02d}",
        d.isoformat(),
        f"{m:02d}-{dd:02d}-{y}",
        f"{MONTHS[m - 1]} {dd}, {y}",
        f"{MON[m - 1]} {dd}, {y}",
        f"{MON[m - 1]}. {dd}, {y}",
        f"{dd} {MONTHS[m - 1]} {y}",
        f"{dd:02d}-{MON[m - 1]}-{y}",
        f"{MONTHS[m - 1]} {ordinal(dd)}, {y}",
        f"{y}/{m:02d}/{dd:02d}",
        f"{m:02d}.{dd:02d}.{y}",
        f"{dd:02d}{MON[m - 1].upper()}{y}",
        f"{m:02d}/{dd:02d}/{y % 100:02d}",
        f"{m}-{dd}-{y % 100:02d}",
    )[k]


N_FULL = 16
#: Weights of the full forms: numeric m/d/yyyy styles dominate, as in US notes.
_FULL_W = (10, 10, 5, 5, 3, 5, 3, 1, 2, 2, 1, 1, 1, 1, 3, 1)


def _partial(d: date, k: int) -> str:
    m, dd = d.month, d.day
    return (
        f"{m}/{dd}",
        f"{m:02d}/{dd:02d}",
        f"{MONTHS[m - 1]} {dd}",
        f"{MON[m - 1]} {dd}",
        f"{MONTHS[m - 1]} {ordinal(dd)}",
        f"{ordinal(dd)} of {MONTHS[m - 1]}",
        f"{dd} {MON[m - 1]}",
    )[k]


def _month(d: date, k: int) -> str:
    return (
        f"{MONTHS[d.month - 1]} {d.year}",
        f"{MON[d.month - 1]} {d.year}",
        f"{d.month:02d}/{d.year}",
        f"{d.month}/{d.year}",
        f"{MON[d.month - 1]}-{d.year}",
        f"{MONTHS[d.month - 1]} of {d.year}",
    )[k]


def _time(r: random.Random) -> str:
    h, mi = r.randint(0, 23), r.choice((0, 5, 10, 15, 20, 30, 36, 42, 45, 50, 55))
    k = r.randrange(4)
    if k == 0:
        return f"{h:02d}:{mi:02d}"
    if k == 1:
        return f"{h:02d}{mi:02d}"
    if k == 2:
        return f"{(h % 12) or 12}:{mi:02d} {'AM' if h < 12 else 'PM'}"
    return f"{h:02d}:{mi:02d}:{r.randint(0, 59):02d}"


def date_text(d: date, form: str, r: random.Random) -> str:
    """One written form of ``d``: form is any|full|partial|month|year|time|numeric."""
    if form == "any":
        u = r.random()
        form = "full" if u < 0.72 else "partial" if u < 0.86 else "time" if u < 0.95 else "month"
    if form == "full":
        return _full(d, r.choices(range(N_FULL), _FULL_W)[0])
    if form == "numeric":
        return _full(d, r.choice((0, 1, 2, 14)))
    if form == "partial":
        return _partial(d, r.choices(range(7), (5, 3, 2, 2, 1, 1, 1))[0])
    if form == "month":
        return _month(d, r.choices(range(6), (4, 3, 2, 1, 1, 1))[0])
    if form == "year":
        return str(d.year)
    if form == "time":
        k = r.choice((0, 1, 3, 14))
        base = d.isoformat() if k == 3 and r.random() < 0.3 else _full(d, k)
        sep = "T" if base == d.isoformat() and r.random() < 0.3 else " "
        return base + sep + (_time(r) if sep == " " else f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}")
    raise ValueError(f"unknown date form {form!r}")


def date_pieces(d: date, form: str, r: random.Random) -> list[Piece]:
    return [phi(date_text(d, form, r), "DATE")]


def range_pieces(a: date, b: date, r: random.Random) -> list[Piece]:
    """A date range: always two DATE spans, never one."""
    same_year = a.year == b.year
    first = date_text(a, r.choice(("partial", "numeric")) if same_year and r.random() < 0.6 else "full", r)
    second = date_text(b, r.choice(("full", "numeric")), r)
    joiner = r.choice(
        (("from ", " to "), ("", " - "), ("", "-"), ("", " through "), ("between ", " and "), ("", " to "), ("", " – "))
    )
    return [lit(joiner[0]), phi(first, "DATE"), lit(joiner[1]), phi(second, "DATE")]


# -- names -----------------------------------------------------------------------------------
_CREDENTIAL_LIKE = {"MD", "DO", "RN", "NP", "PA", "MA", "PT", "RT", "DR", "MR", "MS"}


def _mid_initial(p: Person) -> str:
    return p.middle[0] if p.middle else ""


def patient_name(p: Person, form: str, r: random.Random, label: str = "PATIENT") -> list[Piece]:
    """Forms: any, full, hdr (header, "LAST, FIRST M"), ref (short reference), first, last,
    title ("Mr." + last; the title is not part of the span), init (initials)."""
    mi = _mid_initial(p)
    if form == "any":
        form = r.choices(("full", "ref", "title", "first", "hdr"), (5, 3, 3, 2, 1))[0]
    if form == "ref":
        form = r.choices(("title", "first", "last", "init", "full"), (5, 3, 1, 1, 2))[0]
    if form == "full":
        k = r.randrange(6)
        text = (
            f"{p.first} {p.last}",
            f"{p.first} {mi}. {p.last}" if mi else f"{p.first} {p.last}",
            f"{p.first} {p.middle} {p.last}" if p.middle else f"{p.first} {p.last}",
            f"{p.first} {p.last}".upper(),
            f"{p.first[0]}. {p.last}",
            f"{p.first} {p.last}",
        )[k]
        return [phi(text, label)]
    if form == "hdr":
        k = r.randrange(6)
        text = (
            f"{p.last}, {p.first}".upper(),
            f"{p.last}, {p.first}",
            f"{p.last}, {p.first} {mi}".upper().strip(),
            f"{p.last}, {p.first} {mi}.".strip(" .") + ("." if mi else ""),
            f"{p.first} {mi} {p.last}" if mi else f"{p.first} {p.last}",
            f"{p.last.upper()}, {p.first}",
        )[k]
        return [phi(text, label)]
    if form == "title":
        title = p.title if r.random() < 0.85 or p.sex == "M" else "Mrs."
        return [lit(title + " "), phi(p.last if r.random() < 0.85 else f"{p.first} {p.last}", label)]
    if form == "first":
        return [phi(p.first, label)]
    if form == "last":
        return [phi(p.last, label)]
    if form == "init":
        inits = [p.first[0], *(c for c in ([mi] if mi else [])), p.last[0]]
        if "".join(inits).upper() in _CREDENTIAL_LIKE:  # "M.D." as initials would read as a title
            return [phi(f"{p.first} {p.last}", label)]
        return [phi(r.choice((".".join(inits) + ".", "".join(inits), ". ".join(inits) + ".")), label)]
    raise ValueError(f"unknown name form {form!r}")


def clinician_name(c: Clinician, form: str, r: random.Random) -> list[Piece]:
    """Forms: any, sig (signature line), dr ("Dr. Last"), short (first name or last name alone).
    Titles and credentials (Dr., MD, RN) are never part of the DOCTOR span."""
    p = c.person
    mi = _mid_initial(p)
    cred = c.credential
    is_dr = cred in ("MD", "DO")
    if form == "any":
        form = r.choices(("dr", "sig", "plain", "short"), (5 if is_dr else 0, 3, 2, 1))[0]
    if form == "dr" and not is_dr:
        form = "sig"
    if form == "dr":
        k = r.randrange(5)
        if k == 0:
            return [lit("Dr. "), phi(p.last, "DOCTOR")]
        if k == 1:
            return [lit("Dr. "), phi(f"{p.first} {p.last}", "DOCTOR")]
        if k == 2:
            return [lit("Dr. "), phi(f"{p.first[0]}. {p.last}", "DOCTOR")]
        if k == 3:
            return [lit("Dr "), phi(p.last, "DOCTOR")]
        return [lit("Dr. "), phi(f"{p.first} {mi}. {p.last}" if mi else f"{p.first} {p.last}", "DOCTOR")]
    if form == "sig":
        k = r.randrange(6)
        text = (
            f"{p.first} {p.last}",
            f"{p.first} {mi}. {p.last}" if mi else f"{p.first} {p.last}",
            f"{p.last}, {p.first}",
            f"{p.first[0]}. {p.last}",
            f"{p.last}, {p.first}".upper(),
            f"{p.first} {p.last}".upper(),
        )[k]
        sep = r.choice((", ", " ", ", ")) if k not in (2, 4) else r.choice((", ", " "))
        return [phi(text, "DOCTOR"), lit(sep + cred)]
    if form == "plain":
        inits = f"{p.first[0]}{p.last[0]}".upper()
        options = (f"{p.first} {p.last}", f"{p.last}") + (() if inits in _CREDENTIAL_LIKE else (inits,))
        return [phi(r.choice(options), "DOCTOR")]
    if form == "short":
        return [phi(p.first if not is_dr else p.last, "DOCTOR")]
    raise ValueError(f"unknown clinician form {form!r}")


# -- numbers -----------------------------------------------------------------------------------
def age_pieces(age: int, form: str, r: random.Random) -> list[Piece]:
    """AGE span = the digits only.  form: adj ("67-year-old"), n (bare), any."""
    n = str(age)
    if form == "n":
        return [phi(n, "AGE")]
    unit = r.choices(
        ("-year-old", " year old", " yo", " y/o", "yo", " y.o.", "-yr-old", " yr old", "-year old", " YO"),
        (10, 3, 4, 4, 1, 2, 1, 1, 1, 1),
    )[0]
    return [phi(n, "AGE"), lit(unit)]


def phone_text(parts: tuple[str, str, str], r: random.Random, ext: bool | None = None) -> str:
    a, b, c = parts
    k = r.choices(range(9), (8, 8, 3, 2, 2, 2, 1, 1, 1))[0]
    text = (
        f"({a}) {b}-{c}",
        f"{a}-{b}-{c}",
        f"{a}.{b}.{c}",
        f"{a} {b} {c}",
        f"{a}{b}{c}",
        f"+1 {a}-{b}-{c}",
        f"1-{a}-{b}-{c}",
        f"+1 ({a}) {b}-{c}",
        f"({a}){b}-{c}",
    )[k]
    if ext is None:
        ext = r.random() < 0.08
    if ext:
        text += r.choice((" ext. ", " x", " ext ", " Ext. ", " x.")) + str(r.randint(2, 9999))
    return text


def address_pieces(a: Address, form: str, r: random.Random) -> list[Piece]:
    """form: line (one line), block (two lines), street, city, citystate, zip, cityzip.
    Street line is one LOCATION span (unit included); city, state, ZIP, country are separate."""
    abbreviated = r.random() < 0.3
    street = phi(a.street_line(abbreviated), "LOCATION")
    city = phi(a.city.city if r.random() < 0.9 else a.city.city.upper(), "LOCATION")
    state = phi(a.city.state if r.random() < 0.8 else a.city.state_name, "LOCATION")
    zip_ = phi(a.zip5 if r.random() < 0.85 else f"{a.zip5}-{a.plus4}", "LOCATION")
    if form == "street":
        return [street]
    if form == "city":
        return [city]
    if form == "citystate":
        return [city, lit(", "), state]
    if form == "zip":
        return [zip_]
    if form == "cityzip":
        return [city, lit(", "), state, lit(" "), zip_]
    tail: list[Piece] = []
    if r.random() < 0.08:
        tail = [lit(", "), phi(r.choice(("USA", "United States", "US")), "LOCATION")]
    sep = "\n" if form == "block" else ", "
    return [street, lit(sep), city, lit(r.choice((", ", " "))), state, lit(r.choice((" ", "  "))), zip_, *tail]
