"""Surface-form generators for PHI-like values (names, dates, numbers, places, organisations)."""

from __future__ import annotations

import datetime as dt
import random
import string
from dataclasses import dataclass, field
from typing import Any

from benchmarks.oog.vocab import US_STATES, WORLD, Vocab

MONTHS = [
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
]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def ordinal(n: int) -> str:
    suf = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suf}"


def luhn_digit(digits: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return str((10 - total % 10) % 10)


@dataclass
class Person:
    first: str
    last: str
    middle: str | None = None
    sex: str = "U"
    dob: dt.date | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def full(self) -> str:
        return f"{self.first} {self.last}"


class Fake:
    def __init__(self, rng: random.Random, vocab: Vocab) -> None:
        self.r = rng
        self.v = vocab

    # -- generic -------------------------------------------------------------------------------
    def digits(self, n: int, lead_zero_ok: bool = True) -> str:
        s = "".join(self.r.choice(string.digits) for _ in range(n))
        if not lead_zero_ok and s[0] == "0":
            s = self.r.choice("123456789") + s[1:]
        return s

    def letters(self, n: int) -> str:
        return "".join(self.r.choice("ABCDEFGHJKLMNPRSTUVWXYZ") for _ in range(n))

    def pattern(self, pat: str) -> str:
        return "".join(
            self.r.choice(string.digits) if ch == "#" else self.r.choice("ABCDEFGHJKLMNPRSTUVWXYZ") if ch == "@" else ch
            for ch in pat
        )

    # -- people --------------------------------------------------------------------------------
    def person(self, min_age: int = 0, max_age: int = 98, ref: dt.date | None = None) -> Person:
        ref = ref or dt.date(2022, 6, 1)
        age = self.r.randint(min_age, max_age)
        dob = ref - dt.timedelta(days=age * 365 + self.r.randint(0, 364))
        middle = self.r.choice(self.v.given) if self.r.random() < 0.45 else None
        last = self.r.choice(self.v.family)
        if self.r.random() < 0.08:
            last = f"{last}-{self.r.choice(self.v.family)}"
        return Person(self.r.choice(self.v.given), last, middle, self.r.choice("MF"), dob)

    def name(self, p: Person, style: str | None = None) -> str:
        styles = [
            "full",
            "full",
            "full",
            "mid_init",
            "last_first",
            "init_last",
            "first",
            "last",
            "upper_last_first",
            "full_mid",
        ]
        style = style or self.r.choice(styles)
        m = p.middle
        if style == "mid_init" and m:
            return f"{p.first} {m[0]}. {p.last}"
        if style == "full_mid" and m:
            return f"{p.first} {m} {p.last}"
        if style == "last_first":
            return f"{p.last}, {p.first}" + (f" {m[0]}" if m and self.r.random() < 0.5 else "")
        if style == "upper_last_first":
            return f"{p.last.upper()}, {p.first.upper()}"
        if style == "init_last":
            return f"{p.first[0]}. {p.last}"
        if style == "first":
            return p.first
        if style == "last":
            return p.last
        return p.full()

    # -- dates ---------------------------------------------------------------------------------
    def date(self, d: dt.date, style: str | None = None, time: bool = False) -> str:
        styles = [
            "iso",
            "us",
            "us",
            "us2",
            "us_nopad",
            "eu_dot",
            "eu_slash",
            "dmy_mon",
            "mon_d",
            "month_d_y",
            "d_month_y",
            "month_ordinal",
            "weekday_full",
            "weekday_short",
            "compact",
            "iso_slash",
            "month_year",
            "us_short",
            "mon_d_y",
        ]
        style = style or self.r.choice(styles)
        month, mon, wday = MONTHS[d.month - 1], MONTHS[d.month - 1][:3], WEEKDAYS[d.weekday()]
        s = {
            "iso": f"{d:%Y-%m-%d}",
            "us": f"{d.month:02d}/{d.day:02d}/{d.year}",
            "us2": f"{d.month}/{d.day}/{d.year % 100:02d}",
            "us_nopad": f"{d.month}/{d.day}/{d.year}",
            "eu_dot": f"{d.day:02d}.{d.month:02d}.{d.year}",
            "eu_slash": f"{d.day}/{d.month:02d}/{d.year}",
            "dmy_mon": f"{d.day:02d}-{mon}-{d.year}",
            "mon_d": f"{mon} {d.day}",
            "mon_d_y": f"{mon}. {d.day}, {d.year}",
            "month_d_y": f"{month} {d.day}, {d.year}",
            "d_month_y": f"{d.day} {month} {d.year}",
            "month_ordinal": f"{month} {ordinal(d.day)}",
            "ordinal_of": f"{ordinal(d.day)} of {month}",
            "weekday_full": f"{wday}, {month} {d.day}, {d.year}",
            "weekday_short": f"{wday[:3]} {d.month}/{d.day}",
            "compact": f"{d.day:02d}{mon.upper()}{d.year}",
            "iso_slash": f"{d:%Y/%m/%d}",
            "month_year": f"{month} {d.year}",
            "us_short": f"{d.month}/{d.day}",
            "year": f"{d.year}",
        }[style]
        if time and style not in ("month_year", "year", "ordinal_of", "month_ordinal"):
            h, mi = self.r.randint(0, 23), self.r.choice([0, 5, 12, 15, 20, 30, 41, 45, 50])
            if style == "iso" and self.r.random() < 0.4:
                s += f"T{h:02d}:{mi:02d}:00"
            elif self.r.random() < 0.5:
                s += f" {h:02d}:{mi:02d}"
            elif self.r.random() < 0.5:
                s += f" {h:02d}{mi:02d}"
            else:
                s += f" {(h % 12) or 12}:{mi:02d} {'AM' if h < 12 else 'PM'}"
        return s

    def time_of_day(self) -> str:
        h, mi = self.r.randint(0, 23), self.r.randint(0, 59)
        return self.r.choice(
            [
                f"{h:02d}:{mi:02d}",
                f"{h:02d}{mi:02d}",
                f"{(h % 12) or 12}:{mi:02d} {'am' if h < 12 else 'pm'}",
                f"{(h % 12) or 12} {'AM' if h < 12 else 'PM'}",
            ]
        )

    def near(self, d: dt.date, lo: int, hi: int) -> dt.date:
        return d + dt.timedelta(days=self.r.randint(lo, hi))

    # -- contact -------------------------------------------------------------------------------
    def area(self) -> str:
        return self.r.choice("23456789") + self.digits(1) + self.r.choice("123456789")

    def phone_us(self, allow_ext: bool = True) -> str:
        a, x, n = self.area(), self.r.choice("23456789") + self.digits(2), self.digits(4)
        fmt = self.r.choice(
            [
                f"({a}) {x}-{n}",
                f"{a}-{x}-{n}",
                f"{a}.{x}.{n}",
                f"{a} {x} {n}",
                f"+1 {a} {x} {n}",
                f"+1-{a}-{x}-{n}",
                f"1 ({a}) {x}-{n}",
                f"{a}{x}{n}",
                f"({a}){x}-{n}",
                f"{x}-{n}",
                f"1-{a}-{x}-{n}",
                f"+1 ({a}) {x}-{n}",
                f"{a}/{x}-{n}",
            ]
        )
        if allow_ext and self.r.random() < 0.12:
            fmt += self.r.choice([" ext. ", " ext ", " x", " x.", ", ext. "]) + self.digits(self.r.randint(2, 4), False)
        return fmt

    def phone_intl(self, cc: str | None = None) -> str:
        cc = cc or self.r.choice(sorted(WORLD))
        _, prefix, pats = WORLD[cc]
        national = self.pattern(self.r.choice(pats))
        style = self.r.random()
        if style < 0.55:
            return f"+{prefix} {national}"
        if style < 0.7:
            return f"00{prefix} {national}"
        if style < 0.8 and cc in ("GB", "FR", "DE", "IT", "NL"):
            return f"+{prefix} (0){national}"
        if style < 0.9:
            return f"+{prefix}-{national.replace(' ', '-')}"
        return "0" + national if cc != "IT" else national

    def phone(self) -> str:
        return self.phone_intl() if self.r.random() < 0.15 else self.phone_us()

    EMAIL_DOMAINS = [
        "gmail.com",
        "outlook.com",
        "yahoo.com",
        "icloud.com",
        "proton.me",
        "aol.com",
        "comcast.net",
        "granitestate.net",
        "fastmail.fm",
        "hotmail.co.uk",
        "web.de",
        "orange.fr",
        "riverbend-isp.net",
        "mail.ru",
        "yahoo.co.in",
        "gmx.de",
    ]

    def email(self, p: Person | None = None, domain: str | None = None) -> str:
        p = p or self.person()
        f, sur = p.first.lower(), "".join(ch for ch in p.last.lower() if ch.isalpha())
        f = "".join(ch for ch in f if ch.isalpha()) or "x"
        local = self.r.choice(
            [
                f"{f}.{sur}",
                f"{f[0]}{sur}",
                f"{sur}.{f}",
                f"{f}{sur}{self.digits(2)}",
                f"{f}_{sur}",
                f"{f[0]}.{sur}{self.digits(1)}",
                f"{sur}{f[0]}",
                f"{f}{self.r.randint(1950, 2010)}",
                f"{self.r.choice(['sunny', 'blue', 'dr', 'the', 'real', 'big'])}{f}{self.digits(2)}",
            ]
        )
        return f"{local}@{domain or self.r.choice(self.EMAIL_DOMAINS)}"

    def slug(self, name: str) -> str:
        return "".join(ch for ch in name.lower() if ch.isalnum())[:24] or "site"

    def ip(self, v6: bool = False) -> str:
        if v6:
            return (
                ":".join(f"{self.r.randint(0, 65535):x}" for _ in range(8))
                if self.r.random() < 0.5
                else f"2001:db8:{self.r.randint(1, 65535):x}::{self.r.randint(1, 65535):x}"
            )
        first = self.r.choice(["10", "172", "192", str(self.r.randint(11, 223))])
        second = "168" if first == "192" else str(self.r.randint(0, 255))
        return f"{first}.{second}.{self.r.randint(0, 255)}.{self.r.randint(1, 254)}"

    def url(self, org: str | None = None) -> str:
        base = self.slug(
            org or self.r.choice(self.v.org_words) + self.r.choice(["health", "care", "clinic", "group", "net"])
        )
        tld = self.r.choice([".org", ".com", ".net", ".health", ".co.uk", ".de", ".io"])
        path = self.r.choice(
            [
                "",
                "/",
                "/portal",
                "/patients/login",
                f"/msg/{self.digits(5)}",
                "/forms/intake.pdf",
                f"/appointments?id={self.digits(6)}",
                "/about-us",
                f"/~{self.slug(self.r.choice(self.v.family))}",
            ]
        )
        style = self.r.random()
        if style < 0.4:
            return f"https://www.{base}{tld}{path}"
        if style < 0.6:
            return f"www.{base}{tld}"
        if style < 0.75:
            port = self.r.choice([":8080", "", ":443"])
            return f"http://{self.ip()}{port}/{self.r.choice(['pacs', 'viewer', 'login', 'cgi-bin/rx'])}"
        if style < 0.9:
            return f"{self.r.choice(['portal', 'my', 'mychart', 'secure'])}.{base}{tld}{path}"
        return f"https://{base}{tld}{path}"

    # -- identifiers ---------------------------------------------------------------------------
    def ident(self, kind: str = "mrn") -> str:
        r = self.r
        y = r.randint(14, 23)
        shapes = {
            "mrn": [
                lambda: "00" + self.digits(6),
                lambda: "MRN" + "00" + self.digits(6),
                lambda: "A00" + self.digits(6),
                lambda: (lambda d: f"{d}-{luhn_digit(d)}")(self.digits(7, False)),
                lambda: f"{self.digits(3)} {self.digits(3)} {self.digits(2)}",
                lambda: f"0{self.digits(2)}-{self.digits(2)}-{self.digits(3)}",
                lambda: "E" + self.digits(8),
                lambda: f"M-{self.digits(7)}",
                lambda: self.digits(r.randint(6, 10), False),
                lambda: f"{self.letters(2)}{self.digits(6)}",
            ],
            "account": [
                lambda: self.digits(10, False),
                lambda: f"{self.digits(4)}-{self.digits(4)}-{self.digits(2)}",
                lambda: "AC" + self.digits(9),
                lambda: f"00{self.digits(8)}",
                lambda: f"{self.digits(3)} {self.digits(4)} {self.digits(3)}",
            ],
            "accession": [
                lambda: f"S{y}-{self.digits(5)}",
                lambda: f"SP-20{y}-{self.digits(6)}",
                lambda: f"CX{y}-{self.digits(4)}",
                lambda: f"RAD{self.digits(7)}",
                lambda: f"{self.letters(1)}{y}-{self.digits(3)}",
                lambda: f"20{y}{self.digits(7)}",
            ],
            "specimen": [
                lambda: f"S{y}-{self.digits(5)}-{self.letters(1)}{r.randint(1, 9)}",
                lambda: f"{y}-SP-{self.digits(6)}-A{r.randint(1, 4)}",
                lambda: f"BX{self.digits(6)}",
            ],
            "encounter": [
                lambda: "E00" + self.digits(8),
                lambda: f"ENC-{self.digits(4)}-{self.digits(4)}",
                lambda: f"V000{self.digits(5)}",
                lambda: self.digits(12, False),
            ],
            "ssn": [
                lambda: f"{self.r.randint(100, 665)}-{self.digits(2)}-{self.digits(4)}",
                lambda: f"{self.r.randint(100, 665)} {self.digits(2)} {self.digits(4)}",
                lambda: str(self.r.randint(100, 665)) + self.digits(6),
            ],
            "licence": [
                lambda: f"{self.letters(1)}{self.digits(3)}-{self.digits(4)}-{self.digits(4)}",
                lambda: f"{self.letters(1)}{self.digits(7)}",
                lambda: f"{self.digits(2)}{self.letters(3)}{self.digits(5)}",
                lambda: self.digits(9, False),
            ],
            "serial": [
                lambda: self.pattern("#@#@-##@#-####"),
                lambda: f"PM{self.digits(7)}",
                lambda: self.pattern("SN@@######"),
                lambda: self.pattern("###-@@-#####"),
            ],
            "member": [
                lambda: f"{self.letters(3)}{self.digits(9)}",
                lambda: f"W{self.digits(9)} {self.digits(2)}",
                lambda: self.pattern("#@@#-@@#-@@##"),
                lambda: f"{self.digits(3)}-{self.digits(2)}-{self.digits(4)}-{self.letters(1)}",
                lambda: f"ZGP{self.digits(8)}",
            ],
            "case": [
                lambda: f"20{y}-CV-{self.digits(6)}",
                lambda: f"{y}-{self.digits(4)}",
                lambda: f"CPS-{self.digits(7)}",
                lambda: f"#{self.digits(6)}".lstrip("#"),
            ],
            "passport": [
                lambda: f"{self.letters(1)}{self.digits(8)}",
                lambda: f"{self.letters(2)}{self.digits(7)}",
                lambda: self.digits(9, False),
            ],
            "card": [lambda: self._card(" "), lambda: self._card("-"), lambda: self._card("")],
            "iban": [lambda: self._iban()],
            "npi": [lambda: "1" + self.digits(9)],
            "order": [
                lambda: f"ORD-{self.digits(8)}",
                lambda: f"{self.letters(3)}-{self.digits(5)}-{self.letters(2)}",
                lambda: f"#{self.digits(9)}".lstrip("#"),
                lambda: self.pattern("@#@#@#@#"),
            ],
        }
        return r.choice(shapes[kind])()

    def _card(self, sep: str) -> str:
        body = self.r.choice(["4", "51", "53", "37", "6011"])
        n = 15 if body == "37" else 16
        body += self.digits(n - 1 - len(body))
        full = body + luhn_digit(body)
        if n == 15:
            return sep.join([full[:4], full[4:10], full[10:]])
        return sep.join(full[i : i + 4] for i in range(0, 16, 4))

    def _iban(self) -> str:
        cc = self.r.choice(["GB", "DE", "FR", "ES", "NL", "IE"])
        raw = cc + self.digits(2) + (self.letters(4) if cc in ("GB", "NL", "IE") else "") + self.digits(14)
        return " ".join(raw[i : i + 4] for i in range(0, len(raw), 4))

    # -- places --------------------------------------------------------------------------------
    def town(self) -> tuple[str, str]:
        return self.r.choice(self.v.towns)

    def world_city(self) -> tuple[str, str]:
        return self.r.choice(self.v.world_cities)

    def state(self, abbr: str) -> str:
        return abbr if self.r.random() < 0.65 else US_STATES.get(abbr, abbr)

    def zip(self) -> str:
        z = self.digits(5)
        return z + "-" + self.digits(4) if self.r.random() < 0.15 else z

    def street(self) -> str:
        num = str(self.r.randint(1, 9999)) if self.r.random() < 0.9 else f"{self.r.randint(1, 99)}{self.r.choice('AB')}"
        kind = self.r.choice(
            [
                "Street",
                "St.",
                "St",
                "Road",
                "Rd",
                "Avenue",
                "Ave.",
                "Lane",
                "Ln",
                "Drive",
                "Dr.",
                "Court",
                "Ct",
                "Way",
                "Terrace",
                "Boulevard",
                "Blvd",
                "Circle",
                "Place",
                "Highway",
            ]
        )
        line = f"{num} {self.r.choice(self.v.streets)} {kind}"
        if self.r.random() < 0.15:
            pre = self.r.choice(["North", "South", "East", "West", "N.", "S.", "W", "E"])
            line = f"{num} {pre} {self.r.choice(self.v.streets)} {kind}"
        if self.r.random() < 0.25:
            line += self.r.choice(
                [
                    f" Apt {self.r.randint(1, 40)}{self.r.choice('ABCD')}",
                    f" Unit {self.r.randint(1, 300)}",
                    f", Apt. {self.r.randint(1, 20)}",
                    f" #{self.r.randint(1, 60)}",
                    f" Lot {self.r.randint(1, 99)}",
                ]
            )
        if self.r.random() < 0.05:
            line = f"PO Box {self.r.randint(10, 9999)}"
        if self.r.random() < 0.04:
            line = f"RR {self.r.randint(1, 9)} Box {self.r.randint(10, 999)}"
        return line

    def county(self) -> tuple[str, str]:
        return self.r.choice(self.v.counties)

    def country(self) -> str:
        return self.r.choice(
            [WORLD[c][0] for c in sorted(WORLD)] + ["USA", "Ghana", "Peru", "Portugal", "Haiti", "Ukraine"]
        )

    # -- facilities & organisations -------------------------------------------------------------
    def facility(self, kind: str | None = None, town: str | None = None) -> str:
        r = self.r
        town = town or self.town()[0]
        fam = r.choice(self.v.family)
        saint = r.choice(self.v.saints)
        kind = kind or r.choice(["hospital", "hospital", "clinic", "nursing", "pharmacy", "dept", "foreign"])
        if kind == "hospital":
            return r.choice(
                [
                    f"{town} Regional Medical Center",
                    f"{town} Community Hospital",
                    f"{town} General Hospital",
                    f"St. {saint} Hospital",
                    f"Saint {saint} Medical Center",
                    f"{fam} Memorial Hospital",
                    f"{town} Memorial",
                    f"{r.choice(self.v.org_words)} Valley Hospital",
                    f"{fam} County Hospital",
                    f"Mercy Hospital of {town}",
                    f"{town} Veterans Affairs Medical Center",
                ]
            )
        if kind == "clinic":
            return r.choice(
                [
                    f"{town} Family Health Center",
                    f"{r.choice(self.v.org_words)} Pediatrics",
                    f"{fam} Family Practice",
                    f"{town} Urgent Care",
                    f"{r.choice(self.v.org_words)} Community Health Center",
                    f"{town} Dialysis Unit",
                    f"{fam} Orthopedic Associates",
                    f"{town} Women's Health",
                    f"{fam} Eye Institute",
                ]
            )
        if kind == "nursing":
            return r.choice(
                [
                    f"{r.choice(self.v.org_words)} Nursing and Rehabilitation Center",
                    f"{town} Manor",
                    f"{fam} House",
                    f"St. {saint} Home for the Aged",
                    f"{r.choice(self.v.streets)} Assisted Living",
                    f"{town} Hospice House",
                ]
            )
        if kind == "pharmacy":
            return r.choice(
                [
                    f"{fam}'s Pharmacy",
                    f"{town} Drug",
                    f"{r.choice(self.v.org_words)} Apothecary",
                    f"{fam} Pharmacy",
                    f"Corner Drug of {town}",
                ]
            )
        if kind == "dept":
            return r.choice(
                [
                    f"{fam} Heart Institute",
                    f"{fam} Center for Sleep Medicine",
                    f"{fam} Cancer Pavilion",
                    f"{fam} Wing",
                    f"{fam} Children's Center",
                    f"{fam} Behavioral Health Unit",
                ]
            )
        # foreign-language facility
        if kind == "foreign" and r.random() < 0.6:
            return self.facility_abroad(*self.world_city())
        return r.choice(
            [
                f"Hospital General de Zona {r.randint(1, 99)}",
                f"Hospital Universitario San {saint.split()[0]}",
                f"Clínica Santa {r.choice(['Lucía', 'María', 'Teresa', 'Ana'])}",
                f"Clinique Saint-{r.choice(['Luc', 'Jean', 'Pierre', 'Michel'])}",
                f"Centre Hospitalier de {r.choice(['Vienne', 'Rodez', 'Dax', 'Laval', 'Bayonne'])}",
                f"Hôpital {r.choice(['Lariboisière', 'Saint-Antoine', 'de la Croix-Rousse', 'Sainte-Justine'])}",
                f"Klinikum {r.choice(['Nord', 'Schwabing', 'Am Steinenberg', 'Bremerhaven'])}",
                f"Ospedale {r.choice(['San Raffaele', 'Maggiore', 'Santa Chiara', 'Sant Anna'])}",
                f"IMSS Unidad de Medicina Familiar {r.randint(1, 80)}",
                f"Szpital Miejski nr {r.randint(1, 9)}",
            ]
        )

    def facility_abroad(self, city: str, cc: str) -> str:
        """A facility name in the language / naming habits of country ``cc``."""
        r = self.r
        saint = r.choice(self.v.saints).split()[0]
        by_cc = {
            "MX": [
                f"Hospital General de Zona {r.randint(1, 99)}",
                f"IMSS Unidad de Medicina Familiar {r.randint(1, 80)}",
                f"Hospital Civil de {city}",
                f"Cruz Roja {city}",
            ],
            "ES": [
                f"Hospital Universitario de {city}",
                f"Hospital Clínico San {saint}",
                f"Centro de Salud {city} Norte",
            ],
            "FR": [
                f"Centre Hospitalier de {city}",
                f"Clinique Saint-{r.choice(['Luc', 'Jean', 'Pierre', 'Michel'])}",
                f"CHU de {city}",
                f"Hôpital {r.choice(['Saint-Antoine', 'de la Croix-Rousse', 'Nord'])}",
            ],
            "DE": [
                f"Klinikum {city}",
                f"Universitätsklinikum {city}",
                f"Krankenhaus {r.choice(['Nord', 'Am Stadtpark', 'St. Elisabeth'])}",
            ],
            "IT": [
                f"Ospedale {r.choice(['Maggiore', 'San Raffaele', 'Santa Chiara'])} di {city}",
                f"Policlinico di {city}",
            ],
            "PL": [f"Szpital Miejski nr {r.randint(1, 9)} w {city}", f"Wojewódzki Szpital Specjalistyczny w {city}"],
            "BR": [f"Santa Casa de Misericórdia de {city}", f"Hospital das Clínicas de {city}"],
            "NL": [f"Ziekenhuis {city}", f"Medisch Centrum {city}"],
            "GB": [f"{city} Royal Infirmary", f"{city} General Hospital", f"St {saint}'s Hospital, {city}"],
            "IE": [f"St {saint}'s University Hospital", f"{city} University Hospital"],
            "IN": [f"{city} Institute of Medical Sciences", f"Government General Hospital {city}"],
            "JP": [f"{city} Red Cross Hospital", f"{city} Municipal Hospital"],
            "NG": [f"{city} University Teaching Hospital", f"General Hospital {city}"],
            "TR": [f"{city} Devlet Hastanesi", f"{city} Eğitim ve Araştırma Hastanesi"],
        }
        return r.choice(
            by_cc.get(cc, [f"{city} General Hospital", f"{city} District Hospital", f"{city} Medical Centre"])
        )

    def org(self, kind: str | None = None, town: str | None = None) -> str:
        r = self.r
        town = town or self.town()[0]
        fam, w, w2 = r.choice(self.v.family), r.choice(self.v.org_words), r.choice(self.v.org_words)
        kind = kind or r.choice(["employer", "employer", "school", "church", "company"])
        if kind == "employer":
            return r.choice(
                [
                    f"{fam} Tool & Die",
                    f"{town} Public Works",
                    f"{w} Logistics",
                    f"{fam} Construction",
                    f"{town} Fire Department",
                    f"{w} Paper Mill",
                    f"{fam} & Sons Roofing",
                    f"{w} Foods",
                    f"{w} Credit Union",
                    f"{town} School District",
                    f"{fam} Dairy Farm",
                    f"{w}{w2.lower()} Software",
                ]
            )
        if kind == "school":
            return r.choice(
                [
                    f"{town} High School",
                    f"{fam} Elementary School",
                    f"{town} Community College",
                    f"{fam} Academy",
                    f"University of {r.choice(list(US_STATES.values()))}",
                    f"{town} Middle School",
                    f"St. {r.choice(self.v.saints)} School",
                    f"{w} Montessori",
                ]
            )
        if kind == "church":
            return r.choice(
                [
                    f"St. {r.choice(self.v.saints)} Parish",
                    f"First Baptist Church of {town}",
                    f"{town} Lutheran Church",
                    f"{w} Bible Fellowship",
                    f"Temple Beth {r.choice(['Shalom', 'El', 'Israel'])}",
                    f"{town} Islamic Center",
                    f"Kingdom Hall of {town}",
                ]
            )
        return r.choice(
            [
                f"{w} Systems",
                f"{w}{w2.lower()} Inc.",
                f"{fam} & {r.choice(self.v.family)} LLP",
                f"{w} Insurance Group",
                f"{w} Bank",
                f"{w} Telecom",
                f"{fam} Realty",
                f"{w} Airlines",
                f"{w} Energy Co-op",
            ]
        )
