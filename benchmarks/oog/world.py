"""The "world" OOG corpus: long real-world-like prose (1-8 kB) with European formats and scripts.

Six document types: news reports, court and tribunal narratives, letters, case histories, obituaries
and meeting minutes.  People, relatives, firms, places, dates and numbers stand in running text;
addresses, phones, national id shapes and case numbers follow the local habits of the United
Kingdom, Ireland, Germany, France, Spain, Italy, the Netherlands, Hungary, Greece and Poland, plus
US military APO/FPO/DPO boxes; some names and places are in Greek or Cyrillic script.  Dates are
written in words, as ranges and pairs, with weekdays, in local languages and as bare years.
Money amounts, measurements and statute references are hard negatives (never PHI); their offsets
are in ``metadata["negatives"]``.
"""

from __future__ import annotations

import datetime as dt
import random
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchmarks.oog.builder import TERM, DocBuilder, OffsetError, Piece, Pieces
from benchmarks.oog.vocab import load_vocab
from benchmarks.oog.world_phi import DATE, ID, LOC, MONTHS, ORDINAL_WORDS, PHONE, WorldFake, WPerson
from benchmarks.oog.world_vocab import ADDRESS_COUNTRIES, load_world_vocab, script_of
from tide_core.evaluation.gold_io import GoldDoc

NEG = "NEG"  # pseudo-label: a hard negative (money, measurement, statute), recorded in metadata
PATIENT, DOCTOR, OTHER, HOSPITAL, AGE, EMAIL, URL = "PATIENT", "DOCTOR", "OTHER", "HOSPITAL", "AGE", "EMAIL", "URL"
SOURCE = "oog.world@1"
SIZE = (1000, 8000)

Slot = Callable[[], Piece | Pieces]

NATIONALITY = {
    "GB": "British",
    "IE": "Irish",
    "DE": "German",
    "FR": "French",
    "ES": "Spanish",
    "IT": "Italian",
    "NL": "Dutch",
    "HU": "Hungarian",
    "GR": "Greek",
    "PL": "Polish",
    "UA": "Ukrainian",
    "RU": "Russian",
    "BG": "Bulgarian",
}
JOBS = ["teacher", "postal worker", "nurse", "lorry driver", "engineer", "farmer", "accountant", "baker", "welder"]
JOBS += ["librarian", "electrician", "civil servant", "shop assistant", "fisherman", "seamstress", "chemist"]


class WorldBuilder(DocBuilder):
    """A DocBuilder that also records hard negatives (label ``NEG``) apart from PHI and clinical terms."""

    def __init__(self, note_id: str, rng: random.Random) -> None:
        super().__init__(note_id, rng)
        self.negatives: list[list[int]] = []

    def e(self, s: str, label: str | None) -> DocBuilder:
        if label != NEG:
            return super().e(s, label)
        if not s or s != s.strip():
            raise OffsetError(f"bad negative surface {s!r}")
        start = self.pos
        self.raw(s)
        self.negatives.append([start, self.pos])
        return self


@dataclass
class Cast:
    """The people and places of one document (the same person keeps one name throughout)."""

    subject: WPerson
    dob: dt.date
    home: str
    spouse: WPerson
    children: list[WPerson]
    sibling: WPerson
    parents: list[WPerson]
    lawyer: WPerson
    doctor: WPerson
    extras: list[WPerson] = field(default_factory=list)


class World:
    def __init__(self, note_id: str, rng: random.Random, cc: str, date: dt.date, min_age: int, max_age: int) -> None:
        self.r = rng
        self.f = WorldFake(rng, load_world_vocab())
        self.b = WorldBuilder(note_id, rng)
        self.cc = cc
        self.date = date
        f = self.f
        subj = f.person(cc)
        age = rng.randint(min_age, max_age)
        dob = date - dt.timedelta(days=age * 365 + rng.randint(0, 364))
        spouse = f.person(cc, "F" if subj.sex == "M" else "M", script=subj.script if cc in ("GR", "UA") else None)
        spouse_last = f.relative(subj, spouse.sex).last if rng.random() < 0.7 else spouse.last
        spouse.last = spouse_last
        doc_cc = cc if rng.random() < 0.7 else f.cc(with_cyrillic=False)
        self.cast = Cast(
            subj,
            dob,
            f.town(cc, "latin" if rng.random() < 0.6 else None),
            spouse,
            [f.relative(subj, "M"), f.relative(subj, "F"), f.relative(subj)],
            f.relative(subj, "M"),
            [f.relative(subj, "M"), f.person(cc, "F")],
            f.person(cc),
            f.person(doc_cc),
        )
        self.others = [f.person(f.cc() if rng.random() < 0.3 else cc) for _ in range(6)]
        self.n_other = 0
        self.phone_cc = cc
        self.subject_phone = f.phone(cc)
        self.subject_email = self.email(subj)
        self.subject_nid = f.national_id(cc)
        self.military = False

    def make_military(self) -> None:
        """The letter goes to a US service member at an APO/FPO/DPO box (the subject becomes that person)."""
        self.cast.subject = self.f.person("US")
        self.cast.spouse = self.f.person("US", "F" if self.cast.subject.sex == "M" else "M")
        self.subject_email = self.email(self.cast.subject)
        self.military = True

    # -- pieces ----------------------------------------------------------------------------------
    def nm(self, p: WPerson, label: str = PATIENT, style: str | None = None) -> Pieces:
        return [(self.f.name(p, style), label)]

    def titled(self, p: WPerson, label: str = PATIENT) -> Pieces:
        r = self.r
        title = self.f.title(p) if label == PATIENT else r.choice(["Dr ", "Dr. ", "Prof. "])
        if r.random() < 0.2 and label == PATIENT:
            title = {"M": "Mr. ", "F": r.choice(["Mrs ", "Miss ", "Mrs. "])}[p.sex]
        return [(title, None), (self.f.name(p, r.choice(["last", "last", "full", "init_last"])), label)]

    def other(self) -> WPerson:
        """A new bystander each call (neighbour, witness, colleague), drawn from several countries."""
        self.n_other += 1
        if self.n_other <= len(self.others):
            return self.others[self.n_other - 1]
        return self.f.person(self.f.cc() if self.r.random() < 0.3 else self.cc)

    def age_of(self, dob: dt.date, on: dt.date) -> int:
        return on.year - dob.year - ((on.month, on.day) < (dob.month, dob.day))

    def past(self, lo: int = -900, hi: int = -1) -> dt.date:
        return self.date + dt.timedelta(days=self.r.randint(lo, hi))

    def when(self, d: dt.date | None = None, style: str | None = None) -> Pieces:
        s = self.f.date_en(d or self.past(), style)
        if re.match(r"^([a-z]|\d+(st|nd|rd|th) (of|day))", s):
            return [("the ", None), (s, DATE)]
        return [(s, DATE)]

    def date_words(self, d: dt.date | None = None) -> Pieces:
        return self.when(d, self.r.choice(["words", "words", "day_of", "ord_my"]))

    def date_week(self, d: dt.date | None = None) -> Pieces:
        return self.when(d, "weekday_dmy")

    def date_range(self) -> Pieces:
        r = self.r
        d1 = self.past(-900, -30)
        d2 = d1 + dt.timedelta(days=r.randint(1, 40))
        m1, m2, y = MONTHS[d1.month - 1], MONTHS[d2.month - 1], str(d2.year)
        if d1.month == d2.month:
            return r.choice(
                [
                    [("between ", None), (str(d1.day), DATE), (" and ", None), (f"{d2.day} {m2} {y}", DATE)],
                    [("from ", None), (str(d1.day), DATE), (" to ", None), (f"{d2.day} {m2}", DATE)],
                    [(str(d1.day), DATE), ("–", None), (f"{d2.day} {m2} {y}", DATE)],
                    [("between the ", None), (ORDINAL_WORDS[d1.day - 1], DATE), (" and the ", None)]
                    + [(f"{ORDINAL_WORDS[d2.day - 1]} of {m2}", DATE)],
                    [("from ", None), (f"{m1} {d1.day}", DATE), (" through ", None), (f"{d2.day}, {y}", DATE)],
                ]
            )
        return r.choice(
            [
                [("from ", None), (f"{d1.day} {m1}", DATE), (" to ", None), (f"{d2.day} {m2} {y}", DATE)],
                [("between ", None), (f"{d1.day} {m1}", DATE), (" and ", None), (f"{d2.day} {m2} {y}", DATE)],
                [(f"{d1.day} {m1}", DATE), (" – ", None), (f"{d2.day} {m2} {y}", DATE)],
                [
                    ("from ", None),
                    (self.f.date_en(d1, "mdy"), DATE),
                    (" until ", None),
                    (self.f.date_en(d2, "mdy"), DATE),
                ],
            ]
        )

    def date_pair(self) -> Pieces:
        r = self.r
        d1 = self.past(-900, -30)
        d2 = d1 + dt.timedelta(days=r.randint(1, 12))
        while d2.month != d1.month:
            d2 -= dt.timedelta(days=1)
        if d2 == d1:
            d2 = d1 + dt.timedelta(days=1) if d1.day < 28 else d1 - dt.timedelta(days=1)
            d1, d2 = min(d1, d2), max(d1, d2)
        m, y = MONTHS[d1.month - 1], str(d1.year)
        if r.random() < 0.2 and d1.day + 1 < d2.day:
            mid = str(r.randint(d1.day + 1, d2.day - 1))
            return [(str(d1.day), DATE), (", ", None), (mid, DATE), (" and ", None), (f"{d2.day} {m} {y}", DATE)]
        tail = f"{d2.day} {m} {y}" if r.random() < 0.6 else f"{d2.day} {m}"
        return [(str(d1.day), DATE), (r.choice([" and ", " & "]), None), (tail, DATE)]

    def year(self, lo: int = -9000, hi: int = -365) -> Pieces:
        return [(str(self.past(lo, hi).year), DATE)]

    def month_year(self) -> Pieces:
        d = self.past(-3000, -60)
        r = self.r
        return r.choice(
            [
                [(f"{MONTHS[d.month - 1]} {d.year}", DATE)],
                [
                    ("the ", None),
                    (r.choice(["spring", "summer", "autumn", "winter"]) + " of ", None),
                    (str(d.year), DATE),
                ],
                [("early ", None), (str(d.year), DATE)],
                [(f"{MONTHS[d.month - 1]} of {d.year}", DATE)],
            ]
        )

    def date_local(self, cc: str | None = None, d: dt.date | None = None) -> Pieces:
        s = self.f.date_local(d or self.past(), cc or self.cc)
        if (cc or self.cc) == "PL" and any(ch.isalpha() for ch in s) and self.r.random() < 0.5:
            return [(s, DATE), (" r.", None)]
        return [(s, DATE)]

    def town(self, cc: str | None = None, country: bool | None = None) -> Pieces:
        cc = cc or (self.cc if self.r.random() < 0.7 else self.f.cc())
        out: Pieces = [(self.f.town(cc), LOC)]
        if country if country is not None else self.r.random() < 0.3:
            out += [(", ", None), (self.f.country(cc), LOC)]
        return out

    def phone(self, intl: bool | None = None, cc: str | None = None) -> Pieces:
        return [(self.f.phone(cc or self.phone_cc, intl), PHONE)]

    def email(self, p: WPerson) -> str:
        def ascii_(s: str) -> str:
            s = unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode()
            return "".join(ch for ch in s.lower() if ch.isalnum())

        first, last = ascii_(self.f.v.given_m["GB"][0] if script_of(p.first) != "latin" else p.first), ascii_(p.last)
        if not first or not last:
            first, last = "kontakt", f"{self.r.randint(10, 99)}"
        dom = {
            "DE": ["web.de", "gmx.de", "t-online.de"],
            "FR": ["orange.fr", "free.fr", "laposte.net"],
            "ES": ["telefonica.es", "gmail.com"],
            "IT": ["libero.it", "tiscali.it"],
            "NL": ["ziggo.nl", "kpnmail.nl"],
            "HU": ["freemail.hu", "citromail.hu"],
            "GR": ["otenet.gr", "yahoo.gr"],
            "PL": ["wp.pl", "onet.pl", "interia.pl"],
            "IE": ["eircom.net", "gmail.com"],
            "GB": ["btinternet.com", "outlook.com"],
        }.get(p.cc, ["gmail.com", "mail.ru"])
        local = self.r.choice(
            [f"{first}.{last}", f"{first[0]}{last}", f"{last}{self.r.randint(1, 99)}", f"{first}_{last}"]
        )
        return f"{local}@{self.r.choice(dom)}"

    def neg(self, kind: str = "money") -> Pieces:
        s = {"money": self.f.money(self.cc), "measure": self.f.measure(), "statute": self.f.statute()}[kind]
        return [(s, NEG)]

    def cue_value(self, pair: tuple[str, str], label: str = ID) -> Pieces:
        cue, value = pair
        return [(cue + self.r.choice([" ", " ", ": "]) if not cue.endswith(":") else cue + " ", None), (value, label)]

    def drug(self) -> Pieces:
        name, doses = self.r.choice(load_vocab().drugs)
        return [(name, TERM), (" ", None), (self.r.choice(doses), TERM)]

    def slots(self) -> dict[str, Slot]:
        c, f, r = self.cast, self.f, self.r
        s = c.subject
        pro = {"M": ("he", "his", "him"), "F": ("she", "her", "her")}[s.sex]
        on = self.date
        ages_at = self.age_of(c.dob, on)
        rel = {"M": "husband", "F": "wife"}[c.spouse.sex]
        out: dict[str, Slot] = {
            "he": lambda: (pro[0], None),
            "He": lambda: (pro[0].capitalize(), None),
            "his": lambda: (pro[1], None),
            "His": lambda: (pro[1].capitalize(), None),
            "him": lambda: (pro[2], None),
            "rel": lambda: (rel, None),
            "role": lambda: ({"M": "husband", "F": "wife"}[s.sex], None),
            "DOB_W": lambda: self.when(c.dob, r.choice(["words", "dmy", "ord_my", "day_of"])),
            "S": lambda: self.nm(s, style=r.choice(["full", "full", "last", "first", "init_last"])),
            "S_FULL": lambda: self.nm(s, style="full"),
            "S_T": lambda: self.titled(s),
            "S_FIRST": lambda: self.nm(s, style="first"),
            "S_LAST": lambda: self.nm(s, style="last"),
            "S_UP": lambda: self.nm(s, style="upper_last_first"),
            "SP": lambda: self.nm(c.spouse, style=r.choice(["full", "first", "first"])),
            "SP_FULL": lambda: self.nm(c.spouse, style="full"),
            "C1": lambda: self.nm(c.children[0], style=r.choice(["full", "first"])),
            "C2": lambda: self.nm(c.children[1], style=r.choice(["full", "first"])),
            "C3": lambda: self.nm(c.children[2], style="first"),
            "SIB": lambda: self.nm(c.sibling, style=r.choice(["full", "first"])),
            "PAR": lambda: self.nm(c.parents[0], style="full"),
            "PAR2": lambda: self.nm(c.parents[1], style=r.choice(["full", "first"])),
            "NEE": lambda: [(" (née ", None), (c.parents[1].last, PATIENT), (")", None)] if s.sex == "F" else [],
            "X": lambda: self.nm(self.other(), style=r.choice(["full", "full", "init_last", "last_comma_first"])),
            "X_T": lambda: self.titled(self.other()),
            "X_NATIVE": lambda: self.nm(f.person(r.choice(["GR", "UA", "RU", "BG"]), script="native"), style="full"),
            "X_US": lambda: self.nm(f.person("US"), style="full"),
            "L": lambda: self.nm(c.lawyer, style=r.choice(["full", "full", "init_last"])),
            "DR": lambda: self.titled(c.doctor, DOCTOR) if r.random() < 0.6 else self.nm(c.doctor, DOCTOR, "full"),
            "DR2": lambda: (
                [("Dr ", None)] + self.nm(f.person(self.cc), DOCTOR, r.choice(["full", "last", "init_last"]))
            ),
            "NURSE": lambda: self.nm(f.person(self.cc), DOCTOR, r.choice(["full", "first"])),
            "AGE": lambda: (str(ages_at), AGE),
            "AGE_X": lambda: (str(r.randint(19, 96)), AGE),
            "DOB": lambda: self.when(c.dob, r.choice(["dmy", "dmy_num", "mdy", "ord_my"])),
            "D": lambda: self.when(),
            "D_W": lambda: self.date_words(),
            "D_WEEK": lambda: self.date_week(),
            "D_RANGE": lambda: self.date_range(),
            "D_PAIR": lambda: self.date_pair(),
            "D_NUM": lambda: self.when(None, "dmy_num"),
            "D_LOCAL": lambda: self.date_local(),
            "NOTE_DATE": lambda: self.when(on, r.choice(["dmy", "mdy", "ord_my", "weekday_dmy"])),
            "YEAR": lambda: self.year(),
            "MY": lambda: self.month_year(),
            "HOME": lambda: (c.home, LOC),
            "TOWN": lambda: self.town(),
            "TOWN_C": lambda: self.town(country=True),
            "TOWN_ABROAD": lambda: self.town(f.cc(), country=r.random() < 0.6),
            "COUNTRY": lambda: (f.country(f.cc()), LOC),
            "NAT": lambda: (NATIONALITY[self.cc], None),
            "NAT_A": lambda: (("an " if NATIONALITY[self.cc][0] in "AEIOU" else "a ") + NATIONALITY[self.cc], None),
            "BYEAR": lambda: (str(c.dob.year), DATE),
            "SP_BYEAR": lambda: (str(c.dob.year + r.randint(-6, 6)), DATE),
            "CDOB": lambda: self.when(c.dob + dt.timedelta(days=365 * 24 + r.randint(0, 3650)), "dmy"),
            "SON": lambda: self.nm(c.children[0], style=r.choice(["full", "first"])),
            "DAU": lambda: self.nm(c.children[1], style=r.choice(["full", "first"])),
            "GSON": lambda: self.nm(f.relative(s, "M"), style="first"),
            "ADDR": lambda: f.address(self.cc, one_line=True),
            "ADDR_BLOCK": lambda: f.address(self.cc, one_line=False),
            "ADDR_ABROAD": lambda: f.address(r.choice(ADDRESS_COUNTRIES), one_line=True, country=True),
            "ADDR_MIL": lambda: f.military_address(),
            "STREET": lambda: (f.street_line(self.cc), LOC),
            "PHONE": lambda: self.phone(),
            "PHONE_I": lambda: self.phone(True),
            "PHONE_S": lambda: (self.subject_phone, PHONE),
            "PHONE_ODD": lambda: self.phone(None, "XX"),
            "EMAIL": lambda: (self.subject_email, EMAIL),
            "EMAIL_X": lambda: (self.email(self.other()), EMAIL),
            "URL": lambda: (
                f"www.{r.choice(['kanzlei', 'studio', 'bestattungen', 'funerals', 'notaire'])}-"
                f"{self.email(c.lawyer).split('@')[0].replace('.', '').replace('_', '')}.{self.cc.lower()}",
                URL,
            ),
            "NID": lambda: self.cue_value(f.national_id(self.cc)),
            "NID_S": lambda: self.cue_value(self.subject_nid),
            "NID_BARE": lambda: (f.national_id(self.cc)[1], ID),
            "CASE": lambda: self.cue_value(f.case_number(self.cc)),
            "CASE_BARE": lambda: (f.case_number(self.cc)[1], ID),
            "IBAN": lambda: (f.iban(self.cc), ID),
            "PLATE": lambda: (f.plate(self.cc), ID),
            "PASSPORT": lambda: (f.fill(r.choice(["@@#######", "@########", "##@@#####"])), ID),
            "FIRM": lambda: (f.firm(self.cc), OTHER),
            "FIRM_ABROAD": lambda: (f.firm(r.choice(ADDRESS_COUNTRIES)), OTHER),
            "ASSOC": lambda: (f.association(self.cc), OTHER),
            "FAC": lambda: (f.facility(self.cc), HOSPITAL),
            "FAC_ABROAD": lambda: (f.facility(r.choice(ADDRESS_COUNTRIES + ("UA", "RU"))), HOSPITAL),
            "MONEY": lambda: self.neg("money"),
            "MEAS": lambda: self.neg("measure"),
            "MEAS_LEN": lambda: [
                (f"{r.randint(2, 14)} cm" if r.random() < 0.6 else f"{r.randint(2, 9)} x {r.randint(2, 9)} cm", NEG)
            ],
            "MEAS_SPEED": lambda: [(f"{r.randint(30, 180)} {r.choice(['km/h', 'mph'])}", NEG)],
            "MEAS_W": lambda: [(f"{r.randint(40, 130)}{r.choice([' kg', 'kg', '.5 kg'])}", NEG)],
            "MEAS_AREA": lambda: [(f"{r.randint(4, 30)} {r.choice(['m²', 'square metres', 'sq m'])}", NEG)],
            "MEAS_DIST": lambda: [(f"{r.randint(1, 900)} {r.choice(['metres', 'm', 'km', 'yards'])}", NEG)],
            "STAT": lambda: self.neg("statute"),
            "DRUG": lambda: self.drug(),
            "TIME": lambda: (r.choice(["10.30 am", "11:00", "7.30 pm", "2 p.m.", "noon", "14.00", "9:15 a.m."]), None),
            "N": lambda: (str(r.randint(2, 12)), None),
            "JOB": lambda: (r.choice(JOBS), None),
            "ORD_AGE": lambda: [(str(r.choice([50, 60, 70, 75, 80, 85, 90, 95, 100])), AGE), ("th", None)],
        }
        return out

    # -- composing -------------------------------------------------------------------------------
    def para(self, template: str, s: dict[str, Slot]) -> None:
        self.b.fill(template, s)

    def body(self, bank: list[str], s: dict[str, Slot], target: int, sep: str = "\n\n", numbered: bool = False) -> None:
        order = list(bank)
        self.r.shuffle(order)
        k = 0
        while self.b.pos < target:
            if k and k % len(order) == 0:
                self.r.shuffle(order)
            if self.b.pos > SIZE[1] - 1400:
                break
            if numbered:
                self.b.t(f"{k + 1}. ")
            self.para(order[k % len(order)], s)
            self.b.t(sep)
            k += 1


# ---------------------------------------------------------------------------------- document types
NEWS = [
    "{S_FULL}, {AGE}, of {HOME}, was named on {D_WEEK} as the driver who died when {his} car left the road near "
    "{TOWN} shortly after {TIME}. Police said the vehicle, registration {PLATE}, had been travelling at about "
    "{MEAS_SPEED}.",
    "{S_LAST}'s {rel}, {SP}, told reporters the couple had moved from {TOWN_C} in {MY} after {he} took a job with "
    "{FIRM}.",
    "The firm, {FIRM}, was fined {MONEY} by the district court in {TOWN} on {D} over an earlier accident at its depot "
    "on {STREET} (case no. {CASE_BARE}).",
    "Residents of {STREET} complained of lorries using the lane {D_RANGE}; {X}, who has lived at number "
    "{N} since {YEAR}, said the council had ignored them.",
    "A spokeswoman for {FAC} confirmed that {S_T} had been treated there on {D_PAIR} but would not comment further.",
    "Anyone with information is asked to call Sergeant {X} on {PHONE}, quoting incident number {CASE_BARE}.",
    "{S_FIRST}'s brother, {SIB}, who now lives in {TOWN_ABROAD}, said: \"{S_FIRST} was the one who held the family "
    'together after our father {PAR} died in {YEAR}."',
    "Land registry records show the house at {ADDR} was bought for {MONEY} on {D_W}.",
    "The inquest was opened and adjourned on {D_WEEK}; a full hearing is expected {D_RANGE}.",
    "{S_T} had worked as a {JOB} for {FIRM} since {YEAR} and was treasurer of the {ASSOC}.",
    "Speaking through an interpreter, {X_NATIVE}, a neighbour, said the family had arrived from {TOWN_ABROAD} "
    "with two suitcases.",
    "In a statement issued through their solicitors, {FIRM}, the family thanked the staff of {FAC} and asked for "
    "privacy. Tributes can be left at {URL}.",
    "The crash happened {MEAS_DIST} from the junction where {X}, {AGE_X}, was killed on {D_W}.",
    "Council minutes from {MY} record that {X_T} had warned about the bend, citing {STAT}.",
    "A notice in the local paper dated {D_LOCAL} had asked drivers to avoid the road near {TOWN}.",
    "{S_FIRST} leaves {his} children {C1} and {C2} and {his} mother, who lives in {TOWN}.",
]

COURT = [
    "The applicant, {S_T}, is {NAT_A} national who was born in {BYEAR} and lives in {HOME}. {He} was represented "
    "by {L}, a lawyer practising in {TOWN}.",
    "On {D_W} the applicant was arrested at {his} home at {ADDR} and taken to the police station in {TOWN}.",
    "The applicant was held {D_RANGE} in a cell measuring {MEAS_AREA} together with {N} other detainees.",
    "On {D_PAIR} the investigator questioned {X} and {X}, neighbours of the applicant, who stated that they had "
    "seen {him} on {STREET} on the evening of {D}.",
    "By a decision of {D} (no. {CASE_BARE}), the Regional Court in {TOWN} dismissed the claim and ordered the "
    "applicant to pay {MONEY} in costs.",
    "The applicant complained under {STAT} that the proceedings had been unfair.",
    "A forensic report drawn up by {DR} of {FAC} on {D} recorded a haematoma of {MEAS_LEN} on the applicant's "
    "left arm.",
    "The applicant's mother, {PAR2}, lodged a complaint with the prosecutor's office on {D_WEEK}; it was registered "
    "under {CASE}.",
    "In {his} submissions of {D_W} the applicant gave {his} tax number ({NID_BARE}) and that of {his} {rel}, {SP}, "
    "born in {SP_BYEAR}.",
    "The employer, {FIRM}, with its registered office at {ADDR}, contested the dismissal, which had taken effect "
    "on {D}.",
    "The hearing took place on {D_WEEK} and was adjourned until {D_W}, when the court heard {X_T} and an expert, "
    "{DR2}.",
    "The applicant's son {SON} (born on {CDOB}) and daughter {DAU} were placed with {his} brother, {SIB}, in {TOWN_C} "
    "from {D} onwards.",
    "The domestic court awarded the applicant {MONEY} in respect of non-pecuniary damage, a sum paid into account "
    "{IBAN} on {D}.",
    "The Government relied on {STAT} and on the judgment of {D_NUM} in case {CASE_BARE}.",
    "On {D_LOCAL} the appeal court sitting in {TOWN} upheld the decision (file {CASE_BARE}).",
    "The applicant's representative, {L}, wrote on {D} from {ADDR_ABROAD} asking for an extension.",
]

LETTER = [
    "Thank you for your letter of {D} concerning your late father, {PAR}, who died at {FAC} on {D_W}.",
    "We understand that your sister {SIB} (tel. {PHONE}) is named as executor and that the property at {ADDR} is "
    "to be sold.",
    "The outstanding balance of {MONEY} should be paid into account {IBAN} no later than {D}.",
    "Please note that our office will be closed {D_RANGE}. In urgent matters, {X} can be reached on {PHONE_I}.",
    "Your emergency contact is recorded as {X} ({PHONE}); please tell us if this has changed since {MY}.",
    "We enclose a copy of the certificate issued in {TOWN_ABROAD} on {D_LOCAL}, with the {NAT} identity number "
    "{NID_BARE}.",
    "Your {rel}'s pension from {FIRM_ABROAD} was paid until {D_W}; the last payment of {MONEY} was returned.",
    "I spoke to {X_T} at {FIRM} on {D_WEEK}; {he} confirmed that the vehicle {PLATE} is registered to you.",
    "The appointment with {DR} at {FAC} has been moved to {D_WEEK} at {TIME}.",
    "As agreed on the telephone on {D_PAIR}, we will write to {C1} at {ADDR_ABROAD}.",
    "Our reference for this matter remains {CASE_BARE}; please quote it, and your {NID}, in all correspondence.",
    "Your son {SON} asked us to send copies to {EMAIL_X} as well as to {EMAIL}.",
    "We have also written to your former employer, {FIRM_ABROAD}, at {ADDR_ABROAD}.",
]

CASE_HISTORY = [
    "{S_T} is a {AGE}-year-old retired {JOB} from {HOME} who moved to {TOWN} in {YEAR} to live with {his} daughter "
    "{DAU}.",
    "{He} was first seen at {FAC} on {D_W} by {DR}, who started {DRUG} and arranged a scan on {D_PAIR}.",
    "{He} was admitted to {FAC_ABROAD} {D_RANGE} under {DR2}; weight on discharge was {MEAS_W}.",
    "{His} son {SON} (mobile {PHONE}) visits at weekends; {his} {rel} {SP} died in {MY}.",
    "The social worker, {X}, met the family on {D_PAIR} at their flat at {ADDR}.",
    "{He} holds {NAT_A} identity card ({NID_S}) and is insured with {FIRM}; policy {CASE_BARE}.",
    "Next of kin: {SP_FULL}, {ADDR}, tel. {PHONE}.",
    "Emergency contact: {X} (neighbour), {PHONE_I}, or {X} on {PHONE_ODD}.",
    "In the summer of {YEAR} {he} travelled to {TOWN_ABROAD} to visit {his} brother {SIB} and was treated at "
    "{FAC_ABROAD} for a fall.",
    "{He} takes {DRUG} and {DRUG}; {his} GP, {DR2}, reviewed the medication on {D}.",
    "Nurse {NURSE} noted on {D_WEEK} that {he} had walked {MEAS_DIST} with a frame.",
    "{He} was born in {TOWN_ABROAD} on {DOB} and worked for {FIRM_ABROAD} until {YEAR}.",
    "Letters from {FAC} are addressed to {ADDR_ABROAD}; the family asked that copies go to {EMAIL}.",
]

OBITUARY = [
    "{S_FULL}{NEE}, of {STREET}, {HOME}, and formerly of {TOWN_ABROAD}, died peacefully at {FAC} on "
    "{D_WEEK}, aged {AGE}.",
    "Born in {TOWN} on {DOB_W}, {he} was the eldest of {N} children of {PAR} and {PAR2}.",
    "{He} worked as a {JOB} with {FIRM} for many years and was a lifelong member of the {ASSOC}.",
    "Beloved {role} of the late {SP_FULL}; loving parent of {C1}, {C2} and {C3}; dear sibling of {SIB} ({TOWN}).",
    "Reposing at {FIRM}, {ADDR}, on {D_WEEK} from {TIME}. Funeral service on {D_WEEK} at {TIME}, followed by burial "
    "in the old cemetery at {TOWN}.",
    "Family flowers only; donations, if desired, to the {ASSOC}, account {IBAN}.",
    "The family can be contacted through {X} on {PHONE} or at {EMAIL_X}.",
    "{He} will be sadly missed by {his} friends {X} and {X}, and by everyone at {FAC_ABROAD}, where {he} "
    "volunteered from {YEAR} until {MY}.",
    "{S_FIRST} emigrated to {TOWN_ABROAD} in {YEAR} and came home {D_RANGE} every year.",
    "The family will mark what would have been {his} {ORD_AGE} birthday on {D_W}.",
    "The death notice, dated {D_LOCAL}, was placed by {his} nephew {X}.",
    "{His} grandson {GSON} read a poem by {X_NATIVE}.",
]

MINUTES = [
    "Minutes of the previous meeting, held on {D_W}, were approved (proposed {X}, seconded {X}).",
    "Treasurer's report: {X} reported a balance of {MONEY}; membership now stands at {N}0.",
    "Planning: the application by {FIRM} for {ADDR} (ref. {CASE_BARE}) was discussed; {X_T} objected to the "
    "height of {MEAS_DIST} and a floor area of {MEAS_AREA}.",
    "{X} reported that a neighbour, {X}, at {STREET} had been without heating {D_RANGE}.",
    "Correspondence: a letter from {X} ({EMAIL_X}) about the car park, and an e-mail from {FIRM} dated {D}.",
    "The hall will be closed {D_RANGE}; bookings meanwhile via {X} on {PHONE}.",
    "AOB: congratulations to {X}, who celebrated their {ORD_AGE} birthday on {D_WEEK}.",
    "{X} thanked {S_T} and {his} {rel} {SP} for hosting the summer party at {ADDR} on {D_PAIR}.",
    "The committee noted the grant of {MONEY} from the council under {STAT}.",
    "A delegation from the twin town of {TOWN_ABROAD}, led by {X_NATIVE}, will visit {D_RANGE}.",
    "A letter dated {D_LOCAL} from {X} asked for the minutes in translation.",
    "{X} (tel. {PHONE_I}) offered to coordinate volunteers with {FIRM_ABROAD}.",
]


def _news(w: World, s: dict[str, Slot], target: int) -> None:
    r = w.r
    w.b.t(r.choice(["Tributes paid after crash on ", "Family's grief as ", "Questions raised over "]))
    w.para("{TOWN} road\n\nBy {X}\n\n", s)
    w.para(r.choice(["{TOWN}, {D_WEEK} — ", "{D_WEEK}\n\n", ""]), s)
    w.body(NEWS, s, target)


def _court(w: World, s: dict[str, Slot], target: int) -> None:
    r = w.r
    if r.random() < 0.5:
        w.b.t("FOURTH SECTION\n\nCASE OF ")
        w.para("{S_UP} v. " + r.choice(["THE STATE", "{FIRM}"]) + "\n\n(", s)
        w.para("Application no. {CASE_BARE})\n\nJUDGMENT\n\n", s)
    else:
        w.b.t("EMPLOYMENT TRIBUNALS\n\nClaimant: ")
        w.para("{S_FULL}\nRespondent: {FIRM}\nHeard at: {TOWN}    On: {D_PAIR}\nBefore: Employment Judge {X}\n", s)
        w.para("{CASE}\n\nREASONS\n\n", s)
    w.b.t("THE FACTS\n\n")
    w.body(COURT, s, target, "\n\n", numbered=True)
    w.para("Done in English, and notified in writing on {D_W}.\n\n{X}\nPresident", s)


def _letter(w: World, s: dict[str, Slot], target: int) -> None:
    r = w.r
    w.para("{FIRM}\n{ADDR_BLOCK}\nTel. {PHONE}   E-mail: {EMAIL_X}\n{URL}\n\n", s)
    w.para(r.choice(["{TOWN}, {D_LOCAL}\n\n", "{NOTE_DATE}\n\n", "Date: {D_NUM}\n\n"]), s)
    w.para("Our ref: {CASE_BARE}\n\n", s)
    if w.military:
        w.b.t(r.choice(["SGT ", "SPC ", "CPT ", "PFC "]))
        w.para("{S_FULL}\n{ADDR_MIL}\n\n", s)
    else:
        w.para("{S_T}\n{ADDR_BLOCK}\n\n", s)
    w.para("Dear {S_T},\n\nRe: {S_FULL}, date of birth {DOB}\n\n", s)
    w.body(LETTER, s, target, r.choice(["\n\n", " "]))
    w.para(
        "\n\nYours sincerely,\n\n{L}\n" + r.choice(["Partner", "Notary", "Caseworker"]) + "\n\ncc: {X}; {X} ({FIRM})\n",
        s,
    )


def _case_history(w: World, s: dict[str, Slot], target: int) -> None:
    w.para("CASE HISTORY — {S_UP}\nDate of birth: {DOB}    {NID_S}\nReferred by {DR}, {FAC}, on {D_NUM}\n\n", s)
    w.body(CASE_HISTORY, s, target, w.r.choice(["\n\n", " "]))
    w.para("\nPrepared by {NURSE} on {NOTE_DATE}.", s)


def _obituary(w: World, s: dict[str, Slot], target: int) -> None:
    w.b.t("Obituary\n\n")
    w.para("{S_UP}\n\n", s)
    w.body(OBITUARY, s, target, w.r.choice(["\n\n", " "]))
    w.para("\nMay {he} rest in peace. Inserted by {C1}, {PHONE_S}.", s)


def _minutes(w: World, s: dict[str, Slot], target: int) -> None:
    r = w.r
    w.b.t("Minutes of the meeting of the ")
    w.para("{ASSOC} held on {D_WEEK} at {TIME} in the parish hall, {ADDR}\n\nPresent: {X} (Chair), {X}, {X}, ", s)
    w.para("{S} (Secretary), {X}\nApologies: {X}, {X}\nIn attendance: {X} ({FIRM})\n\n", s)
    w.body(MINUTES, s, target, "\n", numbered=True)
    w.para(r.choice(["\nNext meeting: {D_WEEK} at {TIME}.\n", "\nNext meeting: {D_W}.\n"]), s)
    w.para("Signed: {S} (Secretary)    Date: {D_NUM}\n", s)


DOC_TYPES: dict[str, Callable[[World, dict[str, Slot], int], None]] = {
    "news": _news,
    "court": _court,
    "letter": _letter,
    "case_history": _case_history,
    "obituary": _obituary,
    "minutes": _minutes,
}
_AGES = {"obituary": (58, 99), "case_history": (40, 95)}


def world_doc(seed: int, i: int) -> tuple[GoldDoc, dict[str, Any]]:
    """Document ``i`` of the world corpus for ``seed`` and the subject's patients-table row."""
    note_id = f"OOGW-{i + 1:06d}"
    pick = random.Random(f"oog:world:{seed}:{i}")
    names = sorted(DOC_TYPES)
    doc_type = names[i % len(names)] if i < len(names) else pick.choice(names)
    cc = ADDRESS_COUNTRIES[i % len(ADDRESS_COUNTRIES)] if i < len(ADDRESS_COUNTRIES) else pick.choice(ADDRESS_COUNTRIES)
    doc: GoldDoc | None = None
    row: dict[str, Any] = {}
    for attempt in range(12):
        rng = random.Random(f"oog:world:{seed}:{i}:{attempt}")
        note_date = dt.date(2008, 1, 1) + dt.timedelta(days=rng.randrange(16 * 365))
        lo, hi = _AGES.get(doc_type, (19, 88))
        w = World(note_id, rng, cc, note_date, lo, hi)
        target = rng.randint(SIZE[0] + 100, SIZE[1] - 1500) if rng.random() < 0.7 else rng.randint(SIZE[0] + 100, 3000)
        if doc_type == "letter" and rng.random() < 0.2:
            w.make_military()
        DOC_TYPES[doc_type](w, w.slots(), target)
        wrap = rng.randint(60, 100) if rng.random() < 0.15 else None
        text, spans, terms = w.b.finish(wrap=wrap)
        for s, e in w.b.negatives:
            if any(sp.start < e and s < sp.end for sp in spans) or not text[s:e].strip():
                raise OffsetError(f"{note_id}: negative [{s},{e}) overlaps PHI")
        subj = w.cast.subject
        meta = {
            "note_date": note_date.isoformat(),
            "note_type": doc_type,
            "source": SOURCE,
            "site": f"oog-{cc.lower()}",
            "country": cc,
            "clinical_terms": terms,
            "negatives": sorted(w.b.negatives),
            "phenomena": sorted(w.b.tags),
            "wrapped": bool(wrap),
            "generator": "oog-world@1",
        }
        pid = f"OOGW-P{i + 1:06d}"
        doc = GoldDoc(note_id, pid, text, spans, meta)
        row = {
            "patient_id": pid,
            "first_name": subj.first,
            "middle_name": subj.middle,
            "last_name": subj.last,
            "dob": w.cast.dob.isoformat(),
            "mrn": w.subject_nid[1],
            "phone": w.subject_phone,
            "email": w.subject_email,
            "street": None,
            "city": w.cast.home,
            "state": None,
            "zip": None,
        }
        if SIZE[0] <= len(text) <= SIZE[1]:
            break
    assert doc is not None
    return doc, row
