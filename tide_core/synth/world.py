"""The synthetic world: patients, relatives, clinicians and facilities with consistent PHI.

A patient keeps one name, DOB, MRN, address, phone and e-mail across all of their notes; their
notes fall on a plausible timeline.  The patients table (``Patient.row()``) has exactly the
source-schema columns of docs/architecture.md, so the known-PHI recognizer can be evaluated on
the same patients the notes mention.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import date, timedelta

from tide_core.synth.vocab import City, FacilityName, Vocabulary

PATIENT_COLUMNS = (
    "patient_id",
    "first_name",
    "middle_name",
    "last_name",
    "dob",
    "mrn",
    "phone",
    "email",
    "street",
    "city",
    "state",
    "zip",
)

_UNITS = ("Apt {n}{l}", "Apt {n}", "Unit {n}", "#{n}", "Apt. {n}{l}", "Suite {n}", "Unit {n}{l}")
_PREDIR = ("N", "S", "E", "W", "North", "South", "East", "West")


@dataclass(frozen=True)
class Person:
    first: str
    middle: str | None
    last: str
    sex: str  # "F" / "M"

    @property
    def title(self) -> str:
        return "Mr." if self.sex == "M" else "Ms."


@dataclass(frozen=True)
class Clinician:
    person: Person
    credential: str  # MD, DO, NP, PA-C, RN, LCSW, PharmD, RT ...
    email_user: str


@dataclass(frozen=True)
class Relative:
    person: Person
    relation: str
    phone: tuple[str, str, str]


@dataclass(frozen=True)
class Address:
    number: str
    predir: str | None
    root: str
    suffix: tuple[str, str]
    unit: str | None
    city: City
    zip5: str
    plus4: str

    def street_line(self, abbreviated: bool = False) -> str:
        parts = [self.number]
        if self.predir:
            parts.append(self.predir + ("." if abbreviated and len(self.predir) == 1 else ""))
        parts.append(self.root)
        full, abbr = self.suffix
        parts.append((abbr + ("." if abbr != full else "")) if abbreviated else full)
        line = " ".join(parts)
        if self.unit:
            line += (", " if abbreviated else " ") + self.unit
        return line


@dataclass(frozen=True)
class Facility:
    name: str
    kind: str
    pool: str
    phone: tuple[str, str, str]
    fax: tuple[str, str, str]
    address: Address
    domain: str


@dataclass
class Patient:
    patient_id: str
    person: Person
    dob: date
    mrn: str
    phone: tuple[str, str, str]
    email: str
    address: Address
    ssn: str
    member_id: str
    employer: str | None
    school: str | None
    relatives: list[Relative]
    pcp: Clinician
    home: Facility
    note_dates: list[date] = field(default_factory=list)
    extra: dict[str, str] = field(default_factory=dict)  # attributes fixed on first mention

    def age_on(self, d: date) -> int:
        return d.year - self.dob.year - ((d.month, d.day) < (self.dob.month, self.dob.day))

    def row(self) -> dict[str, str]:
        p = self.person
        return {
            "patient_id": self.patient_id,
            "first_name": p.first,
            "middle_name": p.middle or "",
            "last_name": p.last,
            "dob": self.dob.isoformat(),
            "mrn": self.mrn,
            "phone": f"({self.phone[0]}) {self.phone[1]}-{self.phone[2]}",
            "email": self.email,
            "street": self.address.street_line(),
            "city": self.address.city.city,
            "state": self.address.city.state,
            "zip": self.address.zip5,
        }


def _ascii(s: str) -> str:
    return re.sub(r"[^a-z0-9]", "", s.lower())


class World:
    """Draws people, places and facilities from one vocabulary part with one RNG."""

    def __init__(self, vocab: Vocabulary, rng: random.Random, site_share: float = 0.6):
        self.vocab = vocab
        self.rng = rng
        self.site_share = site_share
        self._used_mrns: set[str] = set()
        self.site_facilities = [self._facility(f) for f in vocab.site_facilities]
        self.external_facilities = [self._facility(f) for f in vocab.external_facilities]

    # -- primitives ---------------------------------------------------------------------------
    def digits(self, n: int, first_nonzero: bool = True) -> str:
        r = self.rng
        s = str(r.randint(1, 9)) if first_nonzero else str(r.randint(0, 9))
        return s + "".join(str(r.randint(0, 9)) for _ in range(n - 1))

    def letters(self, n: int) -> str:
        return "".join(self.rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(n))

    def phone(self) -> tuple[str, str, str]:
        r = self.rng
        return (
            f"{r.randint(2, 9)}{r.randint(0, 8)}{r.randint(0, 9)}",
            f"{r.randint(2, 9)}{r.randint(0, 9)}{r.randint(0, 9)}",
            f"{r.randint(0, 9999):04d}",
        )

    def last_name(self) -> str:
        r = self.rng
        name = r.choice(self.vocab.last)
        if r.random() < 0.08:
            other = r.choice(self.vocab.last)
            if other != name and " " not in other and " " not in name:
                name = f"{name}-{other}"
        return name

    def person(self, sex: str | None = None, last: str | None = None) -> Person:
        r = self.rng
        sex = sex or r.choice("FM")
        pool = self.vocab.first_f if sex == "F" else self.vocab.first_m
        first = r.choice(pool)
        middle = None if r.random() < 0.3 else r.choice(pool if r.random() < 0.8 else self.vocab.last)
        if middle == first:
            middle = None
        return Person(first, middle, last or self.last_name(), sex)

    def address(self, city: City | None = None) -> Address:
        r = self.rng
        city = city or r.choice(self.vocab.cities)
        number = str(r.choice((r.randint(1, 99), r.randint(100, 999), r.randint(1000, 9999), r.randint(10000, 39999))))
        unit = None
        if r.random() < 0.25:
            unit = r.choice(_UNITS).format(n=r.randint(1, 40), l=r.choice("ABCDEF"))
        zip3 = r.randint(city.zip_low, city.zip_high)
        return Address(
            number,
            r.choice(_PREDIR) if r.random() < 0.15 else None,
            r.choice(self.vocab.streets),
            r.choice(self.vocab.suffixes),
            unit,
            city,
            f"{zip3:03d}{r.randint(1, 99):02d}",
            f"{r.randint(1, 9999):04d}",
        )

    def _facility(self, f: FacilityName) -> Facility:
        words = [w for w in re.split(r"[^A-Za-z]+", f.name.replace("'s", "")) if w]
        stop = {"of", "the", "and", "St", "Saint", "Our", "Lady"}
        core = [w for w in words if w not in stop][:3]
        domain = _ascii("".join(core)) + self.rng.choice((".org", ".org", ".com", ".health", ".net"))
        return Facility(f.name, f.kind, f.pool, self.phone(), self.phone(), self.address(), domain)

    def clinician(self, credential: str | None = None) -> Clinician:
        r = self.rng
        cred = credential or r.choice(("MD", "MD", "MD", "MD", "DO", "NP", "PA-C"))
        p = self.person()
        user = r.choice(
            (
                f"{_ascii(p.first[0])}{_ascii(p.last)}",
                f"{_ascii(p.first)}.{_ascii(p.last)}",
                f"{_ascii(p.last)}{_ascii(p.first[0])}",
            )
        )
        return Clinician(p, cred, user)

    def facility(self, kind: str | None = None) -> Facility:
        """A facility: from the site's own list with probability ``site_share``, else an outside one."""
        r = self.rng
        pool = (
            self.site_facilities
            if r.random() < self.site_share or not self.external_facilities
            else self.external_facilities
        )
        if kind is not None:
            pool = [f for f in pool if f.kind == kind] or pool
        return r.choice(pool)

    def mrn(self) -> str:
        r = self.rng
        while True:
            style = r.random()
            if style < 0.6:
                m = self.digits(8)
            elif style < 0.75:
                m = self.digits(7)
            elif style < 0.85:
                m = "00" + self.digits(8)
            elif style < 0.93:
                m = self.letters(1) + self.digits(7)
            else:
                m = f"{self.letters(2)}-{self.digits(6)}"
            if m not in self._used_mrns:
                self._used_mrns.add(m)
                return m

    # -- patients -----------------------------------------------------------------------------
    def patient(self, patient_id: str, n_notes: int) -> Patient:
        r = self.rng
        first_note = date(2012, 1, 1) + timedelta(days=r.randint(0, 12 * 365))
        u = r.random()
        age = r.randint(1, 17) if u < 0.07 else (r.randint(90, 101) if u < 0.13 else r.randint(18, 89))
        dob = first_note - timedelta(days=age * 365 + r.randint(0, 364))
        person = self.person()
        domain = r.choice(self.vocab.email_domains)
        fa, la = _ascii(person.first), _ascii(person.last)
        email = (
            r.choice(
                (
                    f"{fa}.{la}",
                    f"{fa[0]}{la}",
                    f"{fa}{la}{dob.year % 100:02d}",
                    f"{la}.{fa}{r.randint(1, 99)}",
                    f"{fa}_{la}",
                )
            )
            + "@"
            + domain
        )
        rels: list[Relative] = []
        for _ in range(r.randint(1, 3)):
            rels.append(self._relative(person, age))
        member = r.choice(
            (
                f"{self.letters(3)}-{self.digits(2)}-{self.digits(4)}",
                f"{self.letters(1)}{self.digits(9)}",
                f"{self.letters(3)}{self.digits(9)}",
                f"{self.letters(2)}-{self.digits(2)}-{self.digits(4)}",
            )
        )
        p = Patient(
            patient_id=patient_id,
            person=person,
            dob=dob,
            mrn=self.mrn(),
            phone=self.phone(),
            email=email,
            address=self.address(),
            ssn=f"{r.randint(100, 899)}-{r.randint(10, 99)}-{r.randint(1000, 9999)}",
            member_id=member,
            employer=r.choice(self.vocab.employers) if 18 <= age < 75 else None,
            school=r.choice(self.vocab.schools) if age < 23 else None,
            relatives=rels,
            pcp=self.clinician("MD"),
            home=self.facility("hospital"),
        )
        d = first_note
        for _ in range(n_notes):
            p.note_dates.append(d)
            d = d + timedelta(days=r.choice((r.randint(1, 14), r.randint(15, 120), r.randint(121, 500))))
        return p

    def _relative(self, pt: Person, age: int) -> Relative:
        r = self.rng
        if age < 18:
            relation = r.choice(("mother", "father", "grandmother", "aunt", "guardian"))
        elif age > 70:
            relation = r.choice(
                ("wife" if pt.sex == "M" else "husband", "daughter", "son", "niece", "granddaughter", "caregiver")
            )
        else:
            relation = r.choice(
                (
                    "wife" if pt.sex == "M" else "husband",
                    "partner",
                    "sister",
                    "brother",
                    "mother",
                    "daughter",
                    "son",
                    "friend",
                )
            )
        sex = (
            "F"
            if relation in ("mother", "grandmother", "aunt", "wife", "daughter", "niece", "granddaughter", "sister")
            else ("M" if relation in ("father", "husband", "son", "brother") else None)
        )
        same_last = relation not in ("friend", "caregiver", "guardian") and r.random() < 0.7
        return Relative(self.person(sex, pt.last if same_last else None), relation, self.phone())
