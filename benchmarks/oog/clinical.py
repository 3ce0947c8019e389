"""The "clinical" OOG corpus: narrative, tabular and noisy clinical documents."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchmarks.oog.builder import TERM, Pieces
from benchmarks.oog.common import Ctx, age_on, pronouns
from benchmarks.oog.phi import Person
from benchmarks.oog.vocab import WORLD


def _rel(c: Ctx, min_age: int = 18, max_age: int = 85) -> Person:
    return c.f.person(min_age, max_age)


_EPO_CACHE: dict[str, list[str]] = {}


def _epo_kind(eponyms: tuple[str, ...], kind: str) -> list[str]:
    """Split the eponym list into diagnoses, signs/tests/scales and devices/procedures."""
    if kind not in _EPO_CACHE:
        dev = ("catheter", "line", "drain", "monitor", "ultrasound")
        sign = ("sign", "test", "gait", "respirations", "breathing")
        proc = ("procedure", "fundoplication", "bypass", "repair", "maneuver")
        misc = ("scale", "score", "criteria", "class", "chart", "nodes", "node", "rods", "cells")
        low = {e: e.lower() for e in eponyms}
        _EPO_CACHE["device"] = [e for e in eponyms if low[e].endswith(dev)]
        _EPO_CACHE["sign"] = [e for e in eponyms if low[e].endswith(sign)]
        _EPO_CACHE["proc"] = [e for e in eponyms if low[e].endswith(proc)]
        _EPO_CACHE["dx"] = [e for e in eponyms if not low[e].endswith(dev + sign + proc + misc)]
    return _EPO_CACHE[kind]


def _story_slots(c: Ctx) -> dict[str, Any]:
    """Slots for narrative templates (fixed relatives, fresh dates/places on each use)."""
    r, f, p = c.rng, c.f, c.pat.person
    spouse, child, neighbour, coworker, friend, sib = (_rel(c) for _ in range(6))
    child.last = p.last if r.random() < 0.6 else child.last
    home = f.town()
    emp = f.org("employer")
    s = {
        "PT": lambda: c.pt(r.choice(["full", "first", "full"])),
        "PTF": lambda: c.pt("first"),
        "PT_T": lambda: c.pt_titled(),
        "SPOUSE": lambda: c.pt(r.choice(["full", "first"]), spouse),
        "SPOUSE_REL": (r.choice(["wife", "husband", "partner", "fiancée", "common-law husband"]), None),
        "CHILD": lambda: c.pt(r.choice(["full", "first"]), child),
        "CHILD_REL": (r.choice(["daughter", "son", "stepdaughter", "granddaughter", "grandson", "niece"]), None),
        "NEIGHBOUR": lambda: c.pt(r.choice(["full", "first", "mid_init"]), neighbour),
        "COWORKER": lambda: c.pt(r.choice(["full", "first"]), coworker),
        "FRIEND": lambda: c.pt(r.choice(["full", "first"]), friend),
        "SIB": lambda: c.pt(r.choice(["full", "first"]), sib),
        "SIB_REL": (r.choice(["sister", "brother", "half-brother", "twin sister", "cousin"]), None),
        "HOME": lambda: c.b.tagged("place_alone", (home[0], "LOCATION")),
        "TOWN": lambda: c.town(False),
        "TOWN_ST": lambda: c.town(True),
        "TOWN_ANY": lambda: c.town(),
        "WORLD": lambda: c.world(),
        "COUNTRY": lambda: (f.country(), "LOCATION"),
        "COUNTY": lambda: (f.county()[0], "LOCATION"),
        "NEIGH": lambda: (
            [("the ", None), (n[4:], "LOCATION")]
            if (n := r.choice(f.v.neighbourhoods)).startswith("the ")
            else (n, "LOCATION")
        ),
        "EMP": (emp, "OTHER"),
        "ORG": lambda: (f.org(), "OTHER"),
        "SCHOOL": lambda: (f.org("school"), "OTHER"),
        "CHURCH": lambda: (f.org("church"), "OTHER"),
        "FAC": lambda: (f.facility("hospital"), "HOSPITAL"),
        "CLINIC": lambda: (f.facility("clinic"), "HOSPITAL"),
        "NURSING": lambda: (f.facility("nursing"), "HOSPITAL"),
        "PHARM": lambda: (f.facility("pharmacy"), "HOSPITAL"),
        "DEPT": lambda: (f.facility("dept"), "HOSPITAL"),
        "FOREIGN_FAC": lambda: (f.facility("foreign"), "HOSPITAL"),
        "DATE": lambda: c.dt(-900, -1),
        "DATE_T": lambda: c.dt(-60, -1, time=True),
        "FUT": lambda: c.dt(3, 90),
        "DATE_OF": lambda: [("the ", None)] + c.dt(-300, -1, "ordinal_of"),
        "YEAR": lambda: c.dt(-9000, -400, "year"),
        "MONTH_YEAR": lambda: c.dt(-3000, -60, "month_year"),
        "MON_D": lambda: c.dt(-200, -1, r.choice(["mon_d", "month_ordinal", "us_short", "weekday_short"])),
        "AGE": lambda: c.age(),
        "AGE_NP": lambda: c.age(kind="np"),
        "AGE_PRED": lambda: c.age(kind="pred"),
        "AGE_ADJ": lambda: c.age(kind="adj"),
        "AGE_KID": lambda: c.age(r.randint(13, 15)),
        "AGE_OLD": lambda: c.age(r.randint(60, 104)),
        "PHONE": lambda: c.phone(),
        "PHONE_INTL": lambda: c.phone(True),
        "EMAIL": lambda: (f.email(), "EMAIL"),
        "URL": lambda: (f.url(), "URL"),
        "DOC": lambda: c.doc(),
        "RN": lambda: c.doc(role="rn"),
        "SW": lambda: c.doc(role="sw"),
        "ALLIED": lambda: c.doc(role="allied"),
        "DRUG": lambda: c.drug(),
        "EPO": lambda: (r.choice(_epo_kind(f.v.eponyms, "dx")), TERM),
        "SIGN": lambda: (r.choice(_epo_kind(f.v.eponyms, "sign")), TERM),
        "DEVICE": lambda: (r.choice(_epo_kind(f.v.eponyms, "device")), TERM),
        "PROC": lambda: (r.choice(_epo_kind(f.v.eponyms, "proc")), TERM),
        "LAB": lambda: c.lab(),
        "SCORE": lambda: c.score(),
        "VITAL": lambda: c.vital(),
        "TIME": lambda: (f.time_of_day(), None),
        "ROOM": lambda: (
            r.choice(
                [
                    f"room {r.randint(100, 899)}",
                    f"Room {r.randint(2, 12)}{r.choice('ABCDEF')}",
                    f"bed {r.randint(1, 40)}",
                    f"4 West bed {r.randint(1, 30)}",
                    f"Bay {r.randint(1, 12)}",
                    f"ICU {r.randint(1, 16)}",
                ]
            ),
            None,
        ),
        "NOCUE_ID": lambda: c.b.tagged(
            "id_no_cue", (f.ident(r.choice(["mrn", "account", "encounter", "member"])), "ID")
        ),
        "MEMBER": lambda: (f.ident("member"), "ID"),
        "CASE": lambda: (f.ident("case"), "ID"),
        "SSN": lambda: (f.ident("ssn"), "ID"),
        "N": lambda: (str(r.randint(2, 30)), None),
        "STREET": lambda: (f.street(), "LOCATION"),
        "USA": lambda: (r.choice(["United States", "US", "U.S.", "States"]), "LOCATION"),
    }
    s.update(pronouns(p))
    return s


HPI = [
    "{PT_T} is {AGE_NP} who {HE} tells me was in {HIS} usual state of health until {MON_D}, when "
    "{HE} noticed worsening dyspnea while shoveling snow.",
    "{HE_C} moved here from {HOME} in {YEAR} to be closer to {HIS} {CHILD_REL}, {CHILD}, and has "
    "been followed for {EPO} since then.",
    "This morning {HIS} neighbour {NEIGHBOUR} found {HIM} on the kitchen floor around {TIME} and "
    "drove {HIM} up from {TOWN} in the back of a pickup.",
    "{HIS_C} {SPOUSE_REL} {SPOUSE} reports that {HE} had been taking {DRUG} but ran out about a week ago.",
    "At triage {HE} had {VITAL} and {VITAL}, with a {SCORE}.",
    "Initial labs were notable for {LAB} and {LAB}; {LAB}.",
    "{HE_C} was seen at {FAC} on {DATE} for similar symptoms and was sent home on {DRUG}.",
    "{HIS_C} coworker {COWORKER} from {EMP} says {HE} looked grey and sweaty on the loading dock after lunch.",
    "{HE_C} spent the winter with {HIS} {SIB_REL} {SIB} in {TOWN_ST} and only came back {MON_D}.",
    "Of note, {HE} reports a fall on the {DATE_OF} with a negative {SIGN} at the time.",
    "Exam showed a positive {SIGN} and {VITAL}; a {DEVICE} was placed in the ED.",
    "{HE_C} denies chest pain, fevers or recent travel outside {COUNTY}.",
    "Surgical history is notable for a {PROC} at {FAC} in {YEAR}.",
    "Per {HIS} friend {FRIEND}, {HE} has been more forgetful since {MONTH_YEAR}.",
]
SOCIAL = [
    "{HE_C} grew up in {WORLD} and came to the {USA} in {YEAR}.",
    "Works nights at {EMP}; before that {HE} drove a school bus for {ORG} for {N} years.",
    "Lives with {HIS} {SPOUSE_REL}, {SPOUSE}, in a split-level house off {STREET} in {TOWN}.",
    "Attends {CHURCH} most Sundays; a friend from church, {FRIEND}, helps with groceries.",
    "{HIS_C} {CHILD_REL} {CHILD} ({AGE_KID}) is in the ninth grade at {SCHOOL}.",
    "Quit smoking in {MONTH_YEAR}; drinks two or three beers on weekends; no drug use.",
    "They spend part of the year in {TOWN_ST} and fly out of {TOWN} when the roads allow.",
    "{HIS_C} landlord, {NEIGHBOUR}, has a key and checks on {HIM} when the mail piles up.",
    "Previously lived in {NEIGH} before the building was sold in {YEAR}.",
    "Emergency contact: {SPOUSE} ({SPOUSE_REL}) {PHONE}.",
]
COURSE = [
    "{HE_C} was admitted to {ROOM} and started on {DRUG} and {DRUG}.",
    "Cardiology was consulted; {DOC} recommended continuing {DRUG}.",
    "Repeat {LAB} on hospital day {N} had improved.",
    "A {DEVICE} was removed on {MON_D} and {HE} voided without difficulty.",
    "Physical therapy ({ALLIED}) cleared {HIM} for home with a walker; {SCORE}.",
    "Nursing ({RN}) noted intermittent confusion overnight at {TIME} that resolved without {DRUG}.",
    "{HE_C} was seen by {DOC} from the {DEPT} who felt this was most consistent with {EPO}.",
    "A bedside {PROC} was performed by {DOC} at {TIME} with partial relief.",
    "Discussed the plan with {HIS} {CHILD_REL} {CHILD} by phone ({PHONE}).",
]


def _sentences(c: Ctx, bank: list[str], k_lo: int, k_hi: int, slots: dict[str, Any], joiner: str = " ") -> None:
    chosen = c.rng.sample(bank, min(len(bank), c.rng.randint(k_lo, k_hi)))
    for i, tpl in enumerate(chosen):
        if i:
            c.b.t(joiner)
        c.b.fill(tpl, slots)


def _sec(c: Ctx, title: str) -> None:
    r = c.rng
    t = r.choice([title.upper(), title.title(), title])
    c.b.nl(r.choice([1, 2])).t(t + r.choice([":", "", " -", ":"])).raw(r.choice(["\n", " "]))


# ------------------------------------------------------------------------------------------------
def discharge_narrative(c: Ctx) -> None:
    r, p, f = c.rng, c.pat, c.f
    s = _story_slots(c)
    adm = f.near(c.date, -12, -2)
    if r.random() < 0.5:
        fac = f.facility("hospital", p.city)
        c.b.e(fac.upper() if r.random() < 0.5 else fac, "HOSPITAL").nl()
    c.b.t(r.choice(["DISCHARGE SUMMARY", "Discharge Summary", "Hospital Discharge Narrative"])).nl()
    fields: list[tuple[str, Pieces]] = [
        ("Patient", c.pt(r.choice(["last_first", "upper_last_first", "full"]))),
        (
            r.choice(["DOB", "Date of Birth", "D.O.B.", "Born"]),
            c.dt(d=p.person.dob, style=r.choice(["us", "iso", "eu_dot", "dmy_mon"])),
        ),
        (r.choice(["MRN", "Med Rec #", "Unit No", "Chart"]), [(p.mrn, "ID")]),
        (r.choice(["Admitted", "Admit Date", "Adm"]), c.dt(d=adm)),
        (r.choice(["Discharged", "D/C date"]), c.dt(d=c.date)),
        (r.choice(["Attending", "Attending physician"]), c.doc()),
    ]
    if r.random() < 0.5:
        fields.append(
            (r.choice(["Account", "Acct", "Visit #", "Encounter"]), c.ident(r.choice(["account", "encounter"])))
        )
    if r.random() < 0.4:
        fields.append(("PCP", c.doc()))
    c.header(fields)
    _sec(c, "History of present illness")
    _sentences(c, HPI, 3, 9, s)
    if r.random() < 0.6:
        _sec(c, r.choice(["Past medical history", "PMH", "Problem list"]))
        for k in range(r.randint(2, 6)):
            c.b.t(r.choice([f"{k + 1}. ", "- ", ""]))
            c.put(
                r.choice(
                    [
                        [s["EPO"]()],
                        [
                            (
                                r.choice(
                                    [
                                        "Type 2 diabetes",
                                        "CKD stage 3",
                                        "COPD",
                                        "Atrial fibrillation",
                                        "Hypertension",
                                        "Osteoarthritis",
                                        "Major depressive disorder",
                                        "Hypothyroidism",
                                        "GERD",
                                    ]
                                ),
                                None,
                            )
                        ],
                    ]
                )
            )
            if r.random() < 0.3:
                pre, post = r.choice([(", dx ", ""), (" (since ", ")"), (" - diagnosed ", "")])
                c.b.t(pre)
                c.put(c.dt(-8000, -400, r.choice(["year", "month_year", "us"])))
                c.b.t(post)
            c.b.nl()
    if r.random() < 0.5:
        _sec(c, r.choice(["Pertinent labs", "LABS", "Results"]))
        labs = r.sample(list(f.v.labs), r.randint(3, 8))
        days = sorted({f.near(c.date, -6, 0) for _ in range(r.randint(1, 3))})
        rows: list[list[Pieces]] = []
        for lab in labs:
            cells: list[Pieces] = [[(lab.name, TERM)]]
            for _ in days:
                v = r.uniform(lab.low, lab.high)
                cells.append([(f"{v:.{lab.decimals}f}", TERM)])
            cells.append([(lab.unit, None)] if lab.unit else [])
            rows.append(cells)
        hdr = ["Test"] + [f.date(d, r.choice(["us_short", "mon_d", "iso"])) for d in days] + ["Units"]
        # the date column headers are PHI: write the header row by hand
        sep = r.choice([" | ", "\t"])
        c.b.t("Test")
        for h in hdr[1:-1]:
            c.b.raw(sep)
            c.b.e(h, "DATE")
        c.b.raw(sep + "Units\n")
        for row in rows:
            for j, cell in enumerate(row):
                if j:
                    c.b.raw(sep)
                c.put(cell) if cell else c.b.raw("-")
            c.b.nl()
    _sec(c, "Social history")
    _sentences(c, SOCIAL, 2, 5, s)
    _sec(c, "Hospital course")
    _sentences(c, COURSE, 2, 8, s)
    _sec(c, "Discharge medications")
    for _ in range(r.randint(2, 6)):
        c.b.t(r.choice(["- ", "* ", "", "  "]))
        c.put(c.drug())
        c.b.nl()
    _sec(c, "Follow-up")
    c.b.fill(
        r.choice(
            [
                "{DOC} at {CLINIC} on {FUT} at {TIME}; call {PHONE} with questions.",
                "Follow up with {DOC} in 1-2 weeks. Clinic line {PHONE}. Repeat {LAB} before the visit.",
                "Home with VNA; {NURSING} if family cannot manage. Return precautions reviewed with {SPOUSE}.",
            ]
        ),
        s,
    )
    c.b.nl(2)
    c.b.t(r.choice(["Electronically signed: ", "Signed by ", "Dictated by: ", ""]))
    c.put(c.doc())
    c.b.t(r.choice([" on ", " ", "  "]))
    c.put(c.dt(0, 2, time=True))
    c.b.nl()


def portal_message(c: Ctx) -> None:
    r, p, f = c.rng, c.pat, c.f
    s = _story_slots(c)
    sent = f.near(c.date, -3, 0)
    hdr: list[tuple[str, Pieces]] = [
        ("From", c.pt("full") + ([(" <", None), (p.email, "EMAIL"), (">", None)] if p.email else [])),
        ("Sent", c.dt(d=sent, time=True, style=r.choice(["weekday_full", "us", "iso", "mon_d_y"]))),
        ("To", [(r.choice(["Nurse Triage Pool", "Refill Requests", "Clinic Inbox"]), None)]),
        (
            "Subject",
            [
                (
                    r.choice(
                        ["refill", "question about my meds", "RE: test results", "appointment??", "forms for work"]
                    ),
                    None,
                )
            ],
        ),
    ]
    c.header(hdr, per_line=1)
    c.b.nl()
    greet = r.choice(["Hi ", "Hello ", "Dear ", "hi ", ""])
    if greet:
        c.b.t(greet)
        c.put(
            r.choice(
                [
                    [("Dr. ", None), (c.f.name(c.staff[0], "last"), "DOCTOR")],
                    c.doc(role="rn"),
                    [("Dr ", None), (c.staff[0].first, "DOCTOR")],
                ]
            )
        )
        c.b.t(",\n")
    body = [
        "this is {PTF}, my birthday is {DOB}. i need a refill on my {DRUG} sent to {PHARM} on {STREET}.",
        "my {SPOUSE_REL} {SPOUSE} can pick it up after work, {HE} gets off at {EMP} around {TIME}.",
        "the {EPO} has been acting up again since {MON_D} and the {DRUG} isn't helping.",
        "we were at my {SIB_REL}'s in {TOWN} over the weekend and i had to go to {FAC}.",
        "they said my {LAB} and gave me a paper with {URL} on it to look at.",
        "my insurance changed, new member id is {MEMBER}.",
        "can someone call me back at {PHONE}? or email {MYEMAIL}. thanks",
        "also my neighbor {NEIGHBOUR} says hi, she used to work with you at {CLINIC}.",
        "i have the card that says {NOCUE_ID} if you need it.",
    ]
    s["DOB"] = lambda: c.dt(d=p.person.dob, style=r.choice(["us", "us2", "month_d_y", "us_nopad"]))
    s["MYEMAIL"] = lambda: (p.email or f.email(p.person), "EMAIL")
    _sentences(c, body, 3, 7, s, joiner=r.choice([" ", "\n", "  "]))
    c.b.nl(2)
    c.put(c.pt(r.choice(["first", "full"])))
    c.b.nl()
    if r.random() < 0.6:
        c.b.nl().t(r.choice(["--- Reply ---", "Response:", "RN reply"])).t(" ")
        c.put(c.dt(d=c.date, time=True))
        c.b.nl()
        c.b.fill(
            r.choice(
                [
                    "Hi {PTF}, I sent the refill to {PHARM}. Please keep your appointment on {FUT}. - {RN}",
                    "Thanks for the message. {DOC} reviewed your {LAB} and would like a visit; "
                    "scheduling will call you at {PHONE}.\n{RN}",
                ]
            ),
            s,
        )
        c.b.nl()


def referral_letter(c: Ctx) -> None:
    r, p, f = c.rng, c.pat, c.f
    s = _story_slots(c)
    fac = f.facility(r.choice(["clinic", "hospital", "dept"]))
    c.b.e(fac.upper() if r.random() < 0.6 else fac, "HOSPITAL").nl()
    c.put(c.address(one_line=r.random() < 0.4))
    c.b.nl()
    c.b.t(r.choice(["Tel ", "T: ", "Phone ", "ph. "]))
    c.put(c.phone())
    c.b.t(r.choice(["   Fax ", " | F: ", "\nFax: ", "  fax "]))
    c.put(c.phone())
    if r.random() < 0.5:
        c.b.nl()
        c.put([(f.url(fac), "URL")])
    c.b.nl(2)
    c.put(c.dt(-2, 0, r.choice(["month_d_y", "d_month_y", "us", "iso", "weekday_full"])))
    c.b.nl(2)
    to = f.person(30, 70)
    c.put([("Dr. ", None), (f.name(to, r.choice(["full", "mid_init"])), "DOCTOR")])
    c.b.nl()
    c.put([(f.facility(r.choice(["clinic", "hospital", "foreign"])), "HOSPITAL")])
    c.b.nl()
    c.put(c.address(one_line=False))
    c.b.nl(2)
    c.b.t(r.choice(["RE: ", "Re: ", "Regarding: ", "Patient: "]))
    c.put(c.pt(r.choice(["full", "upper_last_first", "mid_init"])))
    c.b.t(r.choice([", DOB ", "  (born ", " - d.o.b. ", ", "]))
    c.put(c.dt(d=p.person.dob, style=r.choice(["us", "d_month_y", "eu_slash", "iso"])))
    c.b.t(r.choice([", ", "  "]))
    cue = r.choice(["our ref ", "Hosp No. ", "NHS no. ", "", ""])
    c.b.t(cue)
    if not cue:
        c.b.tag("id_no_cue")
    c.put([(p.mrn, "ID")])
    c.b.nl(2)
    c.b.t("Dear ")
    c.put([("Dr. " if r.random() < 0.8 else "Doctor ", None), (to.last, "DOCTOR")])
    c.b.t(",\n\n")
    c.b.fill(
        r.choice(
            [
                "Thank you for seeing this pleasant {AGE_ADJ} whom I have looked after since {YEAR}.",
                "I would be grateful for your opinion on {PT_T}, {AGE}, who presents with "
                "progressive symptoms of {EPO}.",
                "Many thanks for seeing {PT}, who is {AGE_PRED}.",
            ]
        ),
        s,
    )
    c.b.t(" ")
    _sentences(c, HPI + SOCIAL, 3, 6, s)
    c.b.t("\n\nCurrent medications: ")
    for i in range(r.randint(2, 4)):
        if i:
            c.b.t(", ")
        c.put(c.drug())
    c.b.t(".\n\n")
    c.b.fill(
        r.choice(
            [
                "Please contact me directly on {PHONE} or at {EMAIL}.",
                "{HIS_C} daughter asked that letters go to {STREET}.",
                "I have asked {HIM} to bring previous imaging from {FOREIGN_FAC}.",
            ]
        ),
        s,
    )
    c.b.t(r.choice(["\n\nYours sincerely,\n\n", "\n\nKind regards,\n", "\n\nBest,\n\n"]))
    doc = c.staff[0]
    c.put(
        [
            (f.name(doc, r.choice(["full", "mid_init"])), "DOCTOR"),
            (r.choice([", MD", " MB ChB MRCP", ", DO", " MD FACP"]), None),
        ]
    )
    c.b.nl()
    if r.random() < 0.5:
        c.b.t("cc: ")
        c.put(c.pt("full"))
        c.b.t(", ")
        if p.street:
            c.put(c.address(p.street, p.city, p.state, p.zip, one_line=True))
        else:
            c.put([(p.city, "LOCATION")])
            c.b.tag("place_alone")
        c.b.nl()


def nursing_flowsheet(c: Ctx) -> None:
    r, p, f = c.rng, c.pat, c.f
    s = _story_slots(c)
    c.b.t(r.choice(["NURSING FLOWSHEET", "Flowsheet - Vitals/Assessment", "Nursing Flow Sheet"])).nl()
    c.header(
        [
            ("Pt", c.pt(r.choice(["upper_last_first", "last_first"]))),
            ("MRN", [(p.mrn, "ID")]),
            ("Unit", [(r.choice(["4 West", "MICU", "Step-down", "5N", "L&D"]), None)]),
            ("Room", [(f"{r.randint(100, 999)}{r.choice(['', 'A', 'B'])}", None)]),
            ("Admit", c.dt(-10, -1)),
            ("Age", [(str(age_on(p.person.dob, c.date)), "AGE")]),
        ],
        per_line=r.choice([2, 3, 6]),
    )
    c.b.nl()
    nurses = [f.person(22, 60) for _ in range(3)]
    cols = r.choice(
        [
            ["Date/Time", "BP", "HR", "RR", "SpO2", "Temp", "Pain", "RN"],
            ["Time", "BP", "HR", "SpO2", "Temp", "Initials/Sig"],
            ["When", "Vitals", "Pain 0-10", "Nurse"],
        ]
    )
    d0 = f.near(c.date, -3, 0)
    rows: list[list[Pieces]] = []
    for _i in range(r.randint(3, 9)):
        if cols[0] == "Time":
            when: Pieces = [(f.time_of_day(), None)]
        else:
            when = [(f.date(f.near(d0, 0, 2), r.choice(["us_short", "us", "iso", "eu_dot"]), time=True), "DATE")]
        nurse = r.choice(nurses)
        sig: Pieces = r.choice(
            [
                [(f.name(nurse, "init_last"), "DOCTOR")],
                [(f.name(nurse, "first"), "DOCTOR"), (" RN", None)],
                [(f.name(nurse, "full"), "DOCTOR")],
            ]
        )
        if len(cols) == 8:
            rows.append(
                [
                    when,
                    [(f"{r.randint(90, 180)}/{r.randint(50, 100)}", TERM)],
                    [(str(r.randint(50, 130)), None)],
                    [(str(r.randint(12, 28)), None)],
                    [(f"{r.randint(88, 100)}%", None)],
                    [(f"{r.uniform(36.0, 39.5):.1f}", None)],
                    [(str(r.randint(0, 10)), None)],
                    sig,
                ]
            )
        elif len(cols) == 6:
            rows.append(
                [
                    when,
                    [(f"{r.randint(90, 180)}/{r.randint(50, 100)}", TERM)],
                    [(str(r.randint(50, 130)), None)],
                    [(f"{r.randint(88, 100)}%", None)],
                    [(f"{r.uniform(97, 103):.1f}F", None)],
                    sig,
                ]
            )
        else:
            rows.append([when, c.vital(), [(str(r.randint(0, 10)), None)], sig])
    c.table(cols, rows)
    c.b.nl()
    grid: list[tuple[str, Pieces]] = [
        ("Braden Scale", [(str(r.randint(9, 23)), None)]),
        ("Morse Fall Scale", [(str(r.choice([0, 25, 45, 65])), None)]),
        ("Foley catheter", [(r.choice(["in place", "removed", "none"]), None)]),
        ("Diet", [(r.choice(["NPO", "cardiac", "clear liquids"]), None)]),
        ("Isolation", [(r.choice(["contact", "none", "droplet"]), None)]),
        ("Code status", [(r.choice(["Full", "DNR/DNI"]), None)]),
    ]
    r.shuffle(grid)
    sep = r.choice([": ", " = ", "\t", " - "])
    for k, v in grid[: r.randint(3, 6)]:
        if k in ("Braden Scale", "Morse Fall Scale", "Foley catheter"):
            c.b.c(k)
        else:
            c.b.t(k)
        c.b.t(sep)
        c.put(v)
        c.b.nl()
    c.b.nl()
    c.b.fill(
        r.choice(
            [
                "{TIME}: {CHILD_REL} {CHILD} at bedside, updated on plan; requests call back at {PHONE}.",
                "Pt states {HIS} {SPOUSE_REL} {SPOUSE} will bring {HIS} {DEVICE} supplies from home in {TOWN}.",
                "Given {DRUG} at {TIME} for pain 7/10 per {RN}. Reassessed at {TIME}, pain 3/10.",
                "Chaplain from {CHURCH} visited. Pt tearful, talked about {HIS} late {SPOUSE_REL} {SPOUSE}.",
            ]
        ),
        s,
    )
    c.b.t(" ")
    c.b.fill(
        r.choice(
            ["Signed {RN} {DATE_T}.", "-- {RN}", "Handoff given to {RN} at {TIME}.", "Labels for {NOCUE_ID} reprinted."]
        ),
        s,
    )
    c.b.nl()


def pathology_report(c: Ctx) -> None:
    r, p, f = c.rng, c.pat, c.f
    s = _story_slots(c)
    fac = f.facility(r.choice(["hospital", "hospital", "foreign"]))
    c.b.e(fac.upper() if r.random() < 0.5 else fac, "HOSPITAL").nl()
    c.b.t(r.choice(["SURGICAL PATHOLOGY REPORT", "Pathology Consultation", "CYTOLOGY REPORT"])).nl(2)
    col = f.near(c.date, -6, -1)
    fields: list[tuple[str, Pieces]] = [
        (r.choice(["Accession", "Accession #", "Acc No", "Case"]), [(f.ident("accession"), "ID")]),
        (r.choice(["Specimen ID", "Specimen", "Container"]), [(f.ident("specimen"), "ID")]),
        (r.choice(["Collected", "Collection date", "Procedure date"]), c.dt(d=col, time=r.random() < 0.5)),
        (r.choice(["Received", "Rec'd"]), c.dt(d=f.near(col, 0, 1), time=r.random() < 0.5)),
        (r.choice(["Reported", "Final", "Sign-out"]), c.dt(d=c.date)),
        (r.choice(["Patient", "Name", "Pt name"]), c.pt(r.choice(["upper_last_first", "last_first", "full"]))),
        (r.choice(["DOB/Age", "DOB"]), c.dt(d=p.person.dob, style=r.choice(["us", "iso", "dmy_mon", "compact"]))),
        ("Sex", [(p.person.sex, None)]),
        (r.choice(["MRN", "Hospital #", "Unit Number"]), [(p.mrn, "ID")]),
        (r.choice(["Submitting physician", "Ordered by", "Surgeon"]), c.doc()),
        (r.choice(["Location", "Client"]), [(f.facility(r.choice(["clinic", "hospital"])), "HOSPITAL")]),
    ]
    if r.random() < 0.5:
        c.header(fields, per_line=r.choice([1, 2]))
    else:
        # a two-column grid of key/value cells
        r.shuffle(fields)
        for i in range(0, len(fields), 2):
            pair = fields[i : i + 2]
            c.b.raw("| " if r.random() < 0.3 else "")
            for j, (k, v) in enumerate(pair):
                if j:
                    c.b.raw(r.choice([" | ", "\t", "      "]))
                c.b.t(k + r.choice([": ", " ", ":\t"]))
                c.put(v)
            c.b.nl()
    c.b.nl()
    c.b.t(r.choice(["FINAL DIAGNOSIS:", "Diagnosis", "DIAGNOSIS -"])).nl()
    diag: list[Callable[[], Pieces]] = [
        lambda: [
            ("A. Prostate, needle biopsies: adenocarcinoma, ", None),
            (f"Gleason score {r.choice(['3+3=6', '3+4=7', '4+3=7'])}", TERM),
            (".", None),
        ],
        lambda: [("B. Esophagus, biopsy: ", None), ("Barrett's esophagus", TERM), (" without dysplasia.", None)],
        lambda: [
            ("Colon, resection: ", None),
            ("Crohn's disease", TERM),
            (" with transmural inflammation; 0/14 lymph nodes.", None),
        ],
        lambda: [
            ("Lymph node, excision: classic ", None),
            ("Hodgkin lymphoma", TERM),
            (" with ", None),
            ("Reed-Sternberg cells", TERM),
            (".", None),
        ],
        lambda: [("Thyroid, lobectomy: ", None), ("Hashimoto's thyroiditis", TERM), ("; no malignancy.", None)],
        lambda: [("Skin, left calf, shave: ", None), ("Kaposi sarcoma", TERM), (", patch stage.", None)],
        lambda: [("Bone marrow: myeloid blasts with ", None), ("Auer rods", TERM), (", 34% of cellularity.", None)],
    ]
    for i, fn in enumerate(r.sample(diag, r.randint(1, 3))):
        c.b.t(f"{i + 1}. " if r.random() < 0.5 else "")
        c.put(fn())
        c.b.nl()
    c.b.nl()
    c.b.t(r.choice(["GROSS DESCRIPTION:", "Gross"])).nl()
    c.b.fill(
        r.choice(
            [
                'Received in formalin labeled with the patient\'s name "{PTU}" and "{NOCUE_ID}" are '
                "{N} tan cores of tissue.",
                'Received fresh in a container labeled "{PTU}, {NOCUE_ID}", a {N} x 2.1 x 1.0 cm segment.',
                "Specimen received from {FOREIGN_FAC} on {DATE} in two containers, both labeled {PTU}.",
            ]
        ),
        {**s, "PTU": lambda: c.pt(r.choice(["upper_last_first", "last_first", "full"]))},
    )
    c.b.t(" ")
    c.b.fill(
        r.choice(
            [
                "Gross dictated by {ALLIED} at {TIME}.",
                "Blocks A1-A{N}. Outside slides returned to {CLINIC}.",
                "Frozen section called to {DOC} in OR 6 at {TIME}.",
            ]
        ),
        s,
    )
    c.b.nl(2)
    c.b.t(r.choice(["Electronically signed out by ", "Pathologist: ", "I have personally reviewed the slides. "]))
    c.put(c.doc())
    c.b.t(r.choice([" ", ", ", " on "]))
    c.put(c.dt(0, 0, time=True, d=c.date))
    c.b.nl()


def social_work_note(c: Ctx) -> None:
    r, _p, _f = c.rng, c.pat, c.f
    s = _story_slots(c)
    c.b.t(r.choice(["Social Work Progress Note", "SOCIAL WORK ASSESSMENT", "Case management / SW note"])).nl()
    c.b.t(r.choice(["Date of service: ", "DOS ", "Seen: "]))
    c.put(c.dt(d=c.date, style=r.choice(["us", "month_d_y", "eu_dot", "iso", "weekday_full"])))
    c.b.t(r.choice(["   ", "\n", " | "]))
    c.put(c.pt_titled())
    c.b.nl(2)
    bank = [
        "SW met with {PT_T} and {HIS} {CHILD_REL} {CHILD} at bedside to discuss discharge planning.",
        "{HE_C} is {AGE_PRED} and has lived alone in {TOWN} since {HIS} {SPOUSE_REL} {SPOUSE} died in {YEAR}.",
        "The family relocated from {WORLD} and {HIS} {SIB_REL}, {SIB}, still lives there ({PHONE_INTL}).",
        "{HE_C} receives home-delivered meals through {ORG} and help from neighbour {NEIGHBOUR} on weekdays.",
        "Insurance: Medicaid, member {MEMBER}; pending redetermination since {MON_D}.",
        "Adult Protective Services case {CASE} was opened by {COUNTY} in {MONTH_YEAR} after a report from {FRIEND}.",
        "{HE_C} was employed by {EMP} until {YEAR}; now on disability.",
        "SW left a voicemail for {CHILD} at {PHONE} and sent an email to {EMAIL}.",
        "Referral faxed to {NURSING} in {TOWN_ANY}; bed offer expected by {FUT}.",
        "{HE_C} would prefer to return to {NEIGH}, where {HE} has lived for {N} years.",
        "Transportation: {HIS} cousin drives down from {TOWN} twice a month.",
        "Pastor {FRIEND} of {CHURCH} may be able to assist with rent.",
        "Patient reports a PHQ-2 of 4; {SCORE}. Denies SI. Takes {DRUG}.",
        "Spoke with {SW} at {FAC} regarding prior admission on {DATE}.",
        "Please reference {NOCUE_ID} when contacting the benefits office.",
        "Guardianship hearing at the courthouse is set for {FUT} at {TIME}.",
    ]
    paras = r.randint(2, 5)
    for _i in range(paras):
        _sentences(c, bank, 2, 5, s)
        c.b.nl(2 if r.random() < 0.7 else 1)
    c.b.fill(r.choice(["Plan: SW to follow. {SW}, pager 4471", "{SW} | ext. {N}", "-- {SW}, {DATE_T}"]), s)
    c.b.nl()


def radiology_addendum(c: Ctx) -> None:
    r, p, f = c.rng, c.pat, c.f
    s = _story_slots(c)
    exam = r.choice(
        [
            "CT head without contrast",
            "CTA chest (PE protocol)",
            "MRI lumbar spine",
            "XR chest 2 views",
            "US right upper quadrant",
            "MRI brain with and without contrast",
            "Doppler ultrasound, left lower extremity",
        ]
    )
    c.b.t(r.choice(["ADDENDUM", "*** ADDENDUM ***", "Addendum to report"])).nl()
    fields: list[tuple[str, Pieces]] = [
        ("Exam", [(exam, TERM if exam.startswith("Doppler") else None)]),
        (r.choice(["Accession", "Acc#", "Study ID"]), [(f.ident("accession"), "ID")]),
        (r.choice(["Exam date", "Performed", "DOS"]), c.dt(-5, 0, time=r.random() < 0.6)),
        (r.choice(["Patient", "Name"]), c.pt(r.choice(["upper_last_first", "last_first", "full"]))),
        ("MRN", [(p.mrn, "ID")]),
        (r.choice(["Ordering", "Referring", "Ordered by"]), c.doc()),
    ]
    c.header(fields, per_line=r.choice([1, 2, 3]))
    c.b.nl()
    bank = [
        "Comparison: {DATE} and outside study from {FAC} dated {DATE}.",
        "Findings were discussed with {DOC} by telephone at {TIME} on {DATE_T}, who acknowledged "
        "receipt; read-back confirmed.",
        "Critical result called to {RN} ({PHONE}) at {TIME}.",
        "Additional review again demonstrates findings of known {EPO}.",
        "Images available at {URL} for 30 days.",
        "The {DEVICE} tip projects over the cavoatrial junction.",
        "Prior images from {FOREIGN_FAC} were uploaded by the family; CD labeled {NOCUE_ID}.",
        "Clinical history per {DOC}: {AGE} with {EPO}, on {DRUG}; {LAB}.",
        "Recommend follow-up {EXAM2} in 3 months (by {FUT}).",
    ]
    s["EXAM2"] = (r.choice(["CT", "MRI", "ultrasound"]), None)
    _sentences(c, bank, 2, 5, s, joiner=r.choice([" ", "\n", "\n\n"]))
    c.b.nl(2)
    c.b.t(r.choice(["Addendum signed by ", "Radiologist: ", "Electronically signed: "]))
    c.put(c.doc())
    c.b.t(r.choice([" ", " on ", "\n"]))
    c.put(c.dt(0, 0, d=c.date, time=True))
    c.b.nl()


def transfer_summary(c: Ctx) -> None:
    r, p, f = c.rng, c.pat, c.f
    s = _story_slots(c)
    city, cc = f.world_city()
    src = f.facility_abroad(city, cc)
    c.b.t(r.choice(["INTERFACILITY TRANSFER", "Transfer Summary", "Transfer note / Nota de traslado"])).nl()
    fields: list[tuple[str, Pieces]] = [
        (
            "From",
            [
                (src.upper() if r.random() < 0.5 else src, "HOSPITAL"),
                (", ", None),
                (city, "LOCATION"),
                (", ", None),
                (WORLD[cc][0], "LOCATION"),
            ],
        ),
        ("To", [(f.facility("hospital"), "HOSPITAL")]),
        (
            "Transfer date",
            c.dt(-2, 0, style=r.choice(["eu_dot", "eu_slash", "d_month_y", "iso", "dmy_mon"]), time=r.random() < 0.5),
        ),
        ("Patient", c.pt(r.choice(["full", "upper_last_first"]))),
        (
            r.choice(["Fecha de nacimiento", "Date de naissance", "DOB"]),
            c.dt(d=p.person.dob, style=r.choice(["eu_dot", "eu_slash", "d_month_y"])),
        ),
        (r.choice(["Passport", "Passport no.", "ID"]), c.ident("passport")),
        (r.choice(["Sending physician", "Médico tratante", "Médecin"]), c.doc(f.person(30, 70))),
        (r.choice(["Contact abroad", "Family contact"]), c.pt("full", _rel(c)) + [(" ", None)] + c.phone(True)),
    ]
    c.header(fields, per_line=r.choice([1, 1, 2]))
    c.b.nl()
    bank = [
        "{PT_T}, {AGE}, was on holiday in {WORLD} when {HE} developed symptoms of {EPO} on {DATE_OF}.",
        "{HE_C} was treated at the sending hospital with {DRUG} and {DRUG}.",
        "Family in {TOWN_ST} arranged repatriation; {HIS} {CHILD_REL} {CHILD} flew in from {TOWN}.",
        "On arrival {VITAL}, {VITAL}, {SCORE}.",
        "Outside records (in Spanish) list {LAB} and {LAB}.",
        "Receiving physician {DOC} accepted in transfer; bed {N} on the step-down unit.",
        "Travel insurance claim {CASE}; assistance line {PHONE_INTL}.",
        "Records may be requested by email from {EMAIL}.",
    ]
    _sentences(c, bank, 3, 6, s)
    c.b.nl()


def telephone_encounter(c: Ctx) -> None:
    r, p, _f = c.rng, c.pat, c.f
    s = _story_slots(c)
    c.b.t(r.choice(["Telephone encounter", "TEL ENC", "Phone note"])).t(r.choice([" ", " - ", ": "]))
    c.put(c.dt(d=c.date, time=True, style=r.choice(["us", "us2", "iso", "mon_d_y"])))
    c.b.nl()
    phone_fields: list[tuple[str, Pieces]] = [
        ("Pt", c.pt(r.choice(["last_first", "full"]))),
        ("DOB", c.dt(d=p.person.dob, style=r.choice(["us", "us2", "iso"]))),
        (r.choice(["MRN", "Chart #"]), [(p.mrn, "ID")]),
        ("Call back", [(p.phone, "PHONE")]),
    ]
    c.header(phone_fields[: r.randint(2, 4)], per_line=r.choice([1, 4]))
    c.b.fill(
        r.choice(
            [
                "{CHILD_REL} {CHILD} called from {PHONE} re: {PTF}'s {DRUG}. Advised to hold "
                "tonight's dose; {HE} has an appointment {FUT}.",
                "Caller: {SPOUSE} ({SPOUSE_REL}). Pt fell at home in {TOWN} this am, no LOC, "
                "{SCORE}. Told to go to {FAC}.",
                "Pharmacist at {PHARM} called about {DRUG} interaction with {DRUG}. Spoke with {DOC}; OK to dispense.",
                "Pt called asking for results. {LAB}. Message left on machine at {PHONE} per consent on file.",
            ]
        ),
        s,
    )
    c.b.t(" ")
    c.b.fill(
        r.choice(
            [
                "Symptoms reviewed: denies fever, {VITAL} per home cuff. Will route to {DOC}.",
                "{HE_C} is staying with {HIS} {SIB_REL} {SIB} in {TOWN_ANY} until {MON_D}.",
                "Reports {EPO} flare; continue {DRUG}. Callback number confirmed.",
                "Last seen {DATE} at {CLINIC}. Labs ordered: {LAB}.",
            ]
        ),
        s,
    )
    c.b.nl()
    c.put(c.doc(role="rn") if r.random() < 0.7 else c.doc())
    c.b.nl()


NOTE_TYPES = {
    "discharge_narrative": discharge_narrative,
    "portal_message": portal_message,
    "referral_letter": referral_letter,
    "nursing_flowsheet": nursing_flowsheet,
    "pathology_report": pathology_report,
    "social_work_note": social_work_note,
    "radiology_addendum": radiology_addendum,
    "transfer_summary": transfer_summary,
    "telephone_encounter": telephone_encounter,
}
