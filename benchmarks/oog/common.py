"""Helpers shared by the two OOG corpora: per-document context, slot factories, headers, tables."""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from typing import Any

from benchmarks.oog.builder import TERM, DocBuilder, Piece, Pieces
from benchmarks.oog.phi import Fake, Person
from benchmarks.oog.vocab import WORLD

SEPARATORS = [": ", ":", " - ", " = ", "=", "\t", " : ", ":\t", " -- ", " | "]


@dataclass
class Patient:
    pid: str
    person: Person
    mrn: str
    phone: str
    email: str | None
    street: str | None
    city: str
    state: str
    zip: str | None

    def row(self) -> dict[str, Any]:
        p = self.person
        return {
            "patient_id": self.pid,
            "first_name": p.first,
            "middle_name": p.middle,
            "last_name": p.last,
            "dob": p.dob.isoformat() if p.dob else None,
            "mrn": self.mrn,
            "phone": self.phone,
            "email": self.email,
            "street": self.street,
            "city": self.city,
            "state": self.state,
            "zip": self.zip,
        }


def make_patient(pid: str, f: Fake, min_age: int = 0, max_age: int = 97) -> Patient:
    p = f.person(min_age, max_age)
    city, st = f.town()
    return Patient(
        pid,
        p,
        f.ident("mrn"),
        f.phone_us(allow_ext=False),
        f.email(p) if f.r.random() < 0.7 else None,
        f.street() if f.r.random() < 0.9 else None,
        city,
        st,
        f.zip() if f.r.random() < 0.9 else None,
    )


def age_on(dob: dt.date | None, d: dt.date) -> int:
    assert dob is not None  # patients are made with a date of birth
    return d.year - dob.year - ((d.month, d.day) < (dob.month, dob.day))


@dataclass
class Ctx:
    rng: random.Random
    f: Fake
    b: DocBuilder
    pat: Patient
    date: dt.date
    staff: list[Person] = field(default_factory=list)
    other_staff: dict[str, Any] = field(default_factory=dict)

    # -- pieces (lists of (surface, label)) -----------------------------------------------------
    def pt(self, style: str | None = None, person: Person | None = None) -> Pieces:
        return [(self.f.name(person or self.pat.person, style), "PATIENT")]

    def pt_titled(self, person: Person | None = None) -> Pieces:
        p = person or self.pat.person
        title = {
            "M": self.rng.choice(["Mr. ", "Mr ", "MR. "]),
            "F": self.rng.choice(["Mrs. ", "Ms. ", "Ms ", "Miss "]),
        }.get(p.sex, "Mx. ")
        return [(title, None), (self.f.name(p, self.rng.choice(["last", "last", "full"])), "PATIENT")]

    def doc(self, person: Person | None = None, role: str = "md") -> Pieces:
        r = self.rng
        if person is not None:
            p = person
        elif role == "md":
            p = r.choice(self.staff) if self.staff else self.f.person(28, 70)
        else:
            pool = self.other_staff.setdefault(role, [self.f.person(22, 66) for _ in range(2)])
            p = r.choice(pool)
        if role == "md":
            return r.choice(
                [
                    [("Dr. ", None), (self.f.name(p, r.choice(["full", "last", "mid_init"])), "DOCTOR")],
                    [("Dr ", None), (self.f.name(p, r.choice(["init_last", "last"])), "DOCTOR")],
                    [
                        (self.f.name(p, r.choice(["full", "mid_init"])), "DOCTOR"),
                        (r.choice([", MD", " MD", ", M.D.", ", DO", " (attending)"]), None),
                    ],
                    [(self.f.name(p, "full"), "DOCTOR")],
                ]
            )
        cred = {
            "rn": ["RN", "BSN, RN", "LPN", "CNA"],
            "sw": ["LICSW", "MSW", "LCSW"],
            "allied": ["PT", "OTR/L", "RD", "PharmD", "RRT", "PA-C", "NP"],
        }[role]
        return r.choice(
            [
                [(self.f.name(p, r.choice(["full", "full", "mid_init"])), "DOCTOR"), (", " + r.choice(cred), None)],
                [(self.f.name(p, "first"), "DOCTOR"), (f" ({r.choice(cred)})", None)],
                [(r.choice(cred) + " ", None), (self.f.name(p, r.choice(["full", "init_last"])), "DOCTOR")],
                [(self.f.name(p, "full"), "DOCTOR")],
            ]
        )

    def dt(
        self, lo: int = -400, hi: int = 30, style: str | None = None, time: bool = False, d: dt.date | None = None
    ) -> Pieces:
        return [(self.f.date(d or self.f.near(self.date, lo, hi), style, time), "DATE")]

    def age(self, n: int | None = None, kind: str = "appos") -> Pieces:
        """Age frames; ``kind`` is appos ("aged 54"), pred ("54 years old"), np ("a 54-year-old
        woman") or adj ("54-year-old woman")."""
        n = age_on(self.pat.person.dob, self.date) if n is None else n
        s, r = str(n), self.rng
        art = "an " if s.startswith("8") or s in ("11", "18") else "a "
        sex = self.pat.person.sex if n == age_on(self.pat.person.dob, self.date) else "U"
        noun = r.choice(
            {
                "M": ["man", "gentleman", "male", "M", "patient", "pt"],
                "F": ["woman", "lady", "female", "F", "patient", "pt"],
            }.get(sex, ["patient", "person", "pt"])
        )
        if kind == "np" or kind == "adj":
            head = r.choice(
                [
                    [(s, "AGE"), ("-year-old " + noun, None)],
                    [(s, "AGE"), (" year old " + noun, None)],
                    [(s, "AGE"), ("yo " + noun, None)],
                    [(s, "AGE"), (" y/o " + noun, None)],
                    [(s, "AGE"), ("-yr-old " + noun, None)],
                    [(s, "AGE"), (" y.o. " + noun, None)],
                ]
            )
            return ([(art, None)] if kind == "np" else []) + head
        if kind == "pred":
            return r.choice(
                [
                    [(s, "AGE"), (" years old", None)],
                    [("aged ", None), (s, "AGE")],
                    [(s, "AGE"), (" y.o.", None)],
                    [(s, "AGE")],
                    [(s, "AGE"), (" yrs", None)],
                    [("now ", None), (s, "AGE")],
                ]
            )
        frames = [
            [("aged ", None), (s, "AGE")],
            [(s, "AGE"), (" y.o.", None)],
            [(art, None), (s, "AGE"), ("-year-old", None)],
            [(s, "AGE"), ("yo", None)],
            [("age: ", None), (s, "AGE")],
            [(s, "AGE"), (" years old", None)],
            [(s, "AGE"), (" yr old", None)],
            [(s, "AGE"), (r.choice({"M": ["M", " M", "y/o M"], "F": ["F", " F", "y/o F"]}.get(sex, ["y/o"])), None)],
            [(s, "AGE"), ("-yr-old", None)],
            [("age ", None), (s, "AGE")],
            [(s, "AGE"), (" yrs", None)],
        ]
        return r.choice(frames)

    def drug(self) -> Pieces:
        name, doses = self.rng.choice(self.f.v.drugs)
        freq = self.rng.choice(
            [" daily", " BID", " twice a day", " q8h", " at bedtime", " PRN", " once", " every morning", ""]
        )
        return [(name, TERM), (" ", None), (self.rng.choice(doses), TERM), (freq, None)]

    def epo(self) -> Pieces:
        return [(self.rng.choice(self.f.v.eponyms), TERM)]

    def lab(self) -> Pieces:
        lab = self.rng.choice(self.f.v.labs)
        val = self.rng.uniform(lab.low, lab.high)
        v = f"{val:.{lab.decimals}f}" + ((" " if lab.unit != "%" else "") + lab.unit if lab.unit else "")
        sep = self.rng.choice([" ", " of ", ": ", " was "])
        return [(lab.name, TERM), (sep, None), (v, TERM)]

    def score(self) -> Pieces:
        r = self.rng
        return [
            (
                r.choice(
                    [
                        f"GCS {r.randint(3, 15)}",
                        f"Glasgow Coma Scale of {r.randint(3, 15)}",
                        f"PHQ-9 score of {r.randint(0, 27)}",
                        f"NIHSS {r.randint(0, 24)}",
                        f"CHA2DS2-VASc score {r.randint(0, 9)}",
                        f"Braden Scale {r.randint(9, 23)}",
                        f"Apgar {r.randint(5, 9)} and {r.randint(7, 10)}",
                        f"Gleason score {r.choice(['3+3=6', '3+4=7', '4+3=7', '4+4=8'])}",
                        f"MELD {r.randint(6, 35)}",
                        f"Wells score {r.choice(['1.5', '3', '4.5', '6'])}",
                        f"ASA class {r.choice(['II', 'III', 'IV'])}",
                        f"ECOG {r.randint(0, 4)}",
                        f"Mallampati class {r.choice(['I', 'II', 'III'])}",
                        f"Morse Fall Scale {r.choice([25, 45, 55, 70])}",
                        f"GAD-7 of {r.randint(0, 21)}",
                        f"MoCA {r.randint(14, 30)}/30",
                        f"CURB-65 {r.randint(0, 4)}",
                        f"HEART score {r.randint(1, 8)}",
                    ]
                ),
                TERM,
            )
        ]

    def vital(self) -> Pieces:
        r = self.rng
        return [
            (
                r.choice(
                    [
                        f"BP {r.randint(88, 190)}/{r.randint(48, 110)}",
                        f"HR {r.randint(44, 140)}",
                        f"SpO2 {r.randint(84, 100)}% on {r.choice(['RA', '2L NC', 'room air'])}",
                        f"T {r.uniform(35.6, 39.9):.1f} C",
                        f"RR {r.randint(10, 32)}",
                        f"temp {r.uniform(97.0, 103.1):.1f} F",
                        f"weight {r.randint(38, 160)} kg",
                        f"BMI {r.uniform(16, 48):.1f}",
                    ]
                ),
                TERM,
            )
        ]

    def phone(self, intl: bool = False) -> Pieces:
        return [(self.f.phone_intl() if intl else self.f.phone(), "PHONE")]

    def ident(self, kind: str = "mrn") -> Pieces:
        return [(self.f.ident(kind), "ID")]

    def town(self, with_state: bool | None = None) -> Pieces:
        city, st = self.f.town()
        if with_state is None:
            with_state = self.rng.random() < 0.35
        if with_state:
            return [(city, "LOCATION"), (", ", None), (self.f.state(st), "LOCATION")]
        self.b.tag("place_alone")
        return [(city, "LOCATION")]

    def world(self) -> Pieces:
        city, cc = self.f.world_city()

        if self.rng.random() < 0.6:
            return [(city, "LOCATION"), (", ", None), (WORLD[cc][0], "LOCATION")]
        self.b.tag("place_alone")
        return [(city, "LOCATION")]

    def address(
        self,
        street: str | None = None,
        city: str | None = None,
        st: str | None = None,
        zp: str | None = None,
        one_line: bool | None = None,
    ) -> Pieces:
        if city is None:
            city, st = self.f.town()
        street = street or self.f.street()
        zp = zp or self.f.zip()
        one_line = self.rng.random() < 0.5 if one_line is None else one_line
        return [
            (street, "LOCATION"),
            (", " if one_line else "\n", None),
            (city, "LOCATION"),
            (self.rng.choice([", ", " ", ",  "]), None),
            (self.f.state(st or "NH"), "LOCATION"),
            (self.rng.choice([" ", "  ", " "]), None),
            (zp, "LOCATION"),
        ]

    def put(self, pieces: Piece | Pieces) -> None:
        self.b._put(pieces)

    # -- layouts ---------------------------------------------------------------------------------
    def header(self, fields: list[tuple[str, Pieces]], per_line: int | None = None) -> None:
        """Fields in random order with a random separator; one or several per line."""
        r = self.rng
        fields = list(fields)
        r.shuffle(fields)
        sep = r.choice(SEPARATORS)
        per_line = per_line or r.choice([1, 1, 1, 2, 3])
        joiner = r.choice(["   ", "\t", " | ", "    ", "; "])
        key_case = r.choice(["as_is", "upper", "title"])
        for i, (key, pieces) in enumerate(fields):
            k = key.upper() if key_case == "upper" else key.title() if key_case == "title" else key
            self.b.t(k + sep)
            self.put(pieces)
            if (i + 1) % per_line == 0 or i == len(fields) - 1:
                self.b.nl()
            else:
                self.b.raw(joiner)

    def table(self, columns: list[str], rows: list[list[Pieces]]) -> None:
        r = self.rng
        style = r.choice(["pipe", "pipe_edge", "tab", "spaces"])
        sep = {"pipe": " | ", "pipe_edge": " | ", "tab": "\t", "spaces": "   "}[style]
        edge = style == "pipe_edge"
        self.b.raw(("| " if edge else "") + sep.join(columns) + (" |" if edge else "") + "\n")
        if style.startswith("pipe") and r.random() < 0.6:
            self.b.raw(
                ("|" if edge else "") + "|".join("-" * (len(c) + 2) for c in columns) + ("|" if edge else "") + "\n"
            )
        for row in rows:
            if edge:
                self.b.raw("| ")
            for j, cell in enumerate(row):
                if j:
                    self.b.raw(sep)
                if cell:
                    self.put(cell)
                else:
                    self.b.raw(r.choice(["", "-", "n/a"]) if style != "spaces" else "--")
            if edge:
                self.b.raw(" |")
            self.b.nl()


def pronouns(p: Person) -> dict[str, Any]:
    if p.sex == "M":
        return {
            "HE": ("he", None),
            "HE_C": ("He", None),
            "HIS": ("his", None),
            "HIS_C": ("His", None),
            "HIM": ("him", None),
        }
    return {
        "HE": ("she", None),
        "HE_C": ("She", None),
        "HIS": ("her", None),
        "HIS_C": ("Her", None),
        "HIM": ("her", None),
    }
