"""Running-text frames, generated from parts (subject / verb / preposition / tail combinations).

Each ``*_sentence`` function returns one sentence as ``list[Piece]``; the slot values are drawn
fresh (other people, places, facilities, organisations, identifiers without cue words) and the
sentences carry hard negatives (professions, times of day, drugs, rooms) that stay unlabelled.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date

from tide_core.synth.builder import Piece, lit, phi
from tide_core.synth.compose import fill
from tide_core.synth.compose.sources import Sources, UsPlace
from tide_core.synth.negatives import _one as negative_text

RELATIONS = (
    ("wife", "F"),
    ("husband", "M"),
    ("son", "M"),
    ("daughter", "F"),
    ("mother", "F"),
    ("father", "M"),
    ("sister", "F"),
    ("brother", "M"),
    ("neighbor", None),
    ("neighbour", None),
    ("coworker", None),
    ("co-worker", None),
    ("friend", None),
    ("pastor", None),
    ("roommate", None),
    ("boyfriend", "M"),
    ("girlfriend", "F"),
    ("partner", None),
    ("granddaughter", "F"),
    ("grandson", "M"),
    ("niece", "F"),
    ("nephew", "M"),
    ("aunt", "F"),
    ("uncle", "M"),
    ("stepdaughter", "F"),
    ("landlord", None),
    ("guardian", None),
    ("caregiver", None),
    ("fiance", None),
    ("ex-husband", "M"),
    ("mom", "F"),
    ("dad", "M"),
    ("best friend", None),
    ("foster mother", "F"),
    ("sponsor", None),
    ("employer", None),
    ("supervisor", None),
    ("teacher", None),
    ("coach", None),
    ("priest", "M"),
    ("rabbi", None),
)
STAFF_ROLES = (
    "case manager",
    "social worker",
    "CM",
    "SW",
    "charge nurse",
    "bedside RN",
    "RN",
    "PT",
    "OT",
    "SLP",
    "pharmacist",
    "interpreter",
    "chaplain",
    "dietitian",
    "unit secretary",
    "resident",
    "attending",
    "NP",
    "PA",
    "intern",
    "fellow",
    "nurse navigator",
    "care coordinator",
    "tech",
    "MA",
    "scribe",
    "hospitalist",
    "PCP",
    "cardiologist",
    "surgeon",
    "psychiatrist",
    "on-call provider",
    "RT",
    "wound care nurse",
    "hospice nurse",
    "home health nurse",
    "transplant coordinator",
)
PHYSICIAN_ROLES = {
    "resident",
    "attending",
    "intern",
    "fellow",
    "hospitalist",
    "PCP",
    "cardiologist",
    "surgeon",
    "psychiatrist",
    "on-call provider",
}
PROFESSIONS = (
    "welder",
    "teacher",
    "truck driver",
    "nurse",
    "electrician",
    "accountant",
    "farmer",
    "cashier",
    "mechanic",
    "carpenter",
    "plumber",
    "engineer",
    "lawyer",
    "waitress",
    "bartender",
    "janitor",
    "custodian",
    "firefighter",
    "police officer",
    "pastor",
    "secretary",
    "hairdresser",
    "cook",
    "chef",
    "roofer",
    "machinist",
    "software developer",
    "nursing assistant",
    "home health aide",
    "paralegal",
    "bus driver",
    "mail carrier",
    "landscaper",
    "dental hygienist",
    "pharmacist",
    "social worker",
    "veteran",
    "housekeeper",
    "forklift operator",
    "miner",
    "fisherman",
    "construction worker",
    "warehouse worker",
    "librarian",
    "professor",
    "student",
    "retiree",
    "physician",
    "paramedic",
    "realtor",
    "banker",
    "barber",
    "security guard",
    "nanny",
    "tailor",
)


@dataclass
class Ctx:
    """The cast and setting of one document."""

    r: random.Random
    src: Sources
    pt: fill.Person
    note_date: date
    dob: date
    home: UsPlace
    fac: fill.Facility
    mrn: str
    staff: list[tuple[fill.Person, str]] = field(default_factory=list)  # (Person, role)
    family: list[tuple[fill.Person, str]] = field(default_factory=list)  # (Person, relation)

    @property
    def age(self) -> int:
        d, b = self.note_date, self.dob
        return d.year - b.year - ((d.month, d.day) < (b.month, b.day))

    @property
    def he(self) -> str:
        return "he" if self.pt.sex == "M" else "she"

    @property
    def his(self) -> str:
        return "his" if self.pt.sex == "M" else "her"

    @property
    def him(self) -> str:
        return "him" if self.pt.sex == "M" else "her"

    def neg(self, kind: str) -> Piece:
        return fill.negp(negative_text(self.r, self.src.vocab, kind), kind)

    def relative(self) -> tuple[fill.Person, str]:
        r = self.r
        if self.family and r.random() < 0.35:
            return r.choice(self.family)
        rel, sex = r.choice(RELATIONS)
        same = (
            rel
            in (
                "wife",
                "husband",
                "son",
                "daughter",
                "mother",
                "father",
                "sister",
                "brother",
                "mom",
                "dad",
                "granddaughter",
                "grandson",
                "stepdaughter",
            )
            and r.random() < 0.6
        )
        p = fill.person(r, self.src, last=self.pt.last if same else None, sex=sex or r.choice("FM"))
        self.family.append((p, rel))
        return p, rel

    def staffer(self, role: str | None = None) -> tuple[fill.Person, str]:
        r = self.r
        if self.staff and role is None and r.random() < 0.3:
            return r.choice(self.staff)
        p = fill.person(r, self.src)
        role = role or r.choice(STAFF_ROLES)
        self.staff.append((p, role))
        return p, role


def sentence(pieces: list[Piece], end: str = ".") -> list[Piece]:
    """Capitalise a leading literal and close the sentence."""
    if pieces and pieces[0].label is None and pieces[0].text[:1].islower():
        p = pieces[0]
        pieces = [Piece(p.text[0].upper() + p.text[1:], None, p.neg), *pieces[1:]]
    last = pieces[-1].text if pieces else ""
    if last and last[-1] not in ".!?:;" and end:
        pieces = [*pieces, lit(end)]
    return pieces


def _when(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    k = r.randrange(10)
    if k == 0:
        return [lit(" on "), *fill.date_pieces(ctx.note_date, r, r.choice(("numeric", "partial", "full")))]
    if k == 1:
        return [lit(" at "), ctx.neg("time")]
    if k in (2, 3):
        return [
            lit(
                " "
                + r.choice(
                    (
                        "today",
                        "this morning",
                        "this afternoon",
                        "last night",
                        "yesterday",
                        "overnight",
                        "earlier today",
                        "this AM",
                        "this evening",
                    )
                )
            )
        ]
    if k == 4:
        return [lit(" " + r.choice(("by phone", "via telephone", "over the phone", "in person", "at bedside")))]
    return []


def _subject(ctx: Ctx) -> str:
    return ctx.r.choice(("Pt", "Patient", "The patient", ctx.he.capitalize(), "pt", "Pt.", "The pt"))


# -- people other than the patient ----------------------------------------------------------
_PERSON_SUBJ_VP = (
    "called",
    "called the unit",
    "is at bedside",
    "was at bedside",
    "brought pt in",
    "brought {him} to the ED",
    "will drive {him} home",
    "is the emergency contact",
    "reports pt has been more confused",
    "states pt fell at home",
    "has been helping with meds",
    "is staying with {him}",
    "visited",
    "asked about discharge plans",
    "was updated",
    "agrees with the plan",
    "will pick up prescriptions",
    "is requesting a call back",
    "is HCP",
    "signed consent",
    "declined to be present",
    "found {him} on the floor",
    "noticed slurred speech",
    "manages {his} finances",
    "has POA",
    "checks on {him} daily",
    "is primary caregiver",
    "called 911",
    "drove {him} in",
    "reports poor PO intake",
    "denies any falls at home",
    "provided collateral",
    "would like to be called with results",
    "is aware of the diagnosis",
)
_PERSON_VERB_OBJ = (
    "spoke with",
    "discussed plan with",
    "updated",
    "called",
    "left message for",
    "pt lives with",
    "pt accompanied by",
    "pt is cared for by",
    "per",
    "collateral obtained from",
    "lives alone; checked on daily by",
    "consent obtained from",
    "reviewed results with",
    "message relayed to",
    "pt stayed with",
    "pt was driven in by",
    "discharge teaching provided to",
    "pt's ride home is",
    "family meeting held with",
    "code status discussed with",
    "pt would like us to contact",
    "no answer from",
    "voicemail left for",
    "emergency contact is",
    "pt was found by",
    "pt was brought in by",
    "d/w",
    "spoke to",
    "phone call from",
    "pt reports that",
)
_STAFF_FRAMES = (
    "discussed with {role} {N}",
    "{N}, {role}, aware",
    "{role} {N} paged",
    "d/w {N} ({role})",
    "seen with {N}",
    "handoff given to {N}",
    "{role} ({N}) consulted",
    "per {role} {N}",
    "case reviewed with {N}",
    "{N} from {role_lc} will follow",
    "plan per {N}",
    "{role} {N} notified",
    "spoke with {N} in {dept}",
    "report called to {N}",
    "{N} to see pt tomorrow",
    "care coordinated with {N}",
    "signed out to {N}",
    "{N} ({role}) at bedside for the procedure",
    "co-signed by {N}",
)
_DEPTS = (
    "Cardiology",
    "Pharmacy",
    "Radiology",
    "Case Management",
    "Social Work",
    "Physical Therapy",
    "the ICU",
    "Oncology",
    "Nephrology",
    "Infectious Disease",
    "Wound Care",
    "Palliative Care",
    "Psychiatry",
    "Endocrinology",
    "Transfusion Medicine",
    "the Emergency Department",
)


def _fmt(ctx: Ctx, s: str) -> str:
    return s.replace("{him}", ctx.him).replace("{his}", ctx.his).replace("{he}", ctx.he)


def _rel_np(ctx: Ctx, p: fill.Person, rel: str, subject: bool) -> list[Piece]:
    r = ctx.r
    name = fill.name_pieces(p, r, "PATIENT")
    k = r.randrange(7)
    if k == 0:
        return [lit(f"{rel} "), *name]
    if k == 1:
        poss = ctx.his if subject else r.choice((ctx.his, "pt's", "the"))
        return [lit(f"{poss} {rel} "), *name]
    if k == 2:
        return [*name, lit(f" ({rel})")]
    if k == 3:
        return [*name, lit(f", {ctx.his} {rel},")]
    if k == 4:
        return [lit(f"{ctx.his} {rel}, "), *name, lit(",")]
    if k == 5:
        return name
    return [lit(f"pt's {rel} "), *name]


def person_sentence(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    u = r.random()
    if u < 0.3:
        p, role = ctx.staffer()
        tmpl = r.choice(_STAFF_FRAMES)
        pieces: list[Piece] = []
        physician = role in PHYSICIAN_ROLES
        name = fill.staff_pieces(p, r, physician)
        head, _, rest = tmpl.partition("{N}")
        for part, more in ((head, name), (rest, [])):
            part = part.replace("{role_lc}", role.lower()).replace("{role}", role).replace("{dept}", r.choice(_DEPTS))
            if part:
                pieces.append(lit(part))
            pieces.extend(more)
        return sentence(pieces + _when(ctx))
    p, rel = ctx.relative()
    if u < 0.62:
        np = _rel_np(ctx, p, rel, True)
        if np[-1].text.endswith(","):
            np = np + [lit(" ")]
        else:
            np = np + [lit(" ")]
        return sentence(np + [lit(_fmt(ctx, r.choice(_PERSON_SUBJ_VP)))] + _when(ctx))
    if u < 0.9:
        np = _rel_np(ctx, p, rel, False)
        if np[-1].text.endswith(","):
            np = np[:-1] + [lit(np[-1].text[:-1])] if np[-1].text != "," else np[:-1]
        out = [lit(r.choice(_PERSON_VERB_OBJ) + " "), *[x for x in np if x.text]]
        if r.random() < 0.25:
            out += [lit(r.choice((" at ", ", cell ", " (", " - ", " @ "))), phi(fill.phone_value(r, ctx.home), "PHONE")]
            if out[-2].text == " (":
                out.append(lit(")"))
        return sentence(out + _when(ctx))
    # person + place or organisation
    name = fill.name_pieces(p, r, "PATIENT", r.choice(("first", "full", "title")))
    if r.random() < 0.5:
        verb = r.choice((" lives in ", " is flying in from ", " lives near ", " is driving down from ", " moved to "))
        return sentence([lit(f"{ctx.his} {rel} "), *name, lit(verb), *fill.place_alone(r, ctx.src)])
    org = fill.organisation(r, ctx.src, "employer")
    return sentence(
        [
            lit(f"{ctx.his} {rel} "),
            *name,
            lit(r.choice((" works at ", " is employed by ", " works for "))),
            *fill.org_pieces(org, r),
        ]
    )


# -- places named alone ---------------------------------------------------------------------
_PLACE_PRE = (
    "moved from",
    "lives in",
    "drove in from",
    "is back in",
    "grew up in",
    "was born in",
    "recently returned from",
    "traveled to",
    "was visiting family in",
    "relocated to",
    "spent the winter in",
    "has a son in",
    "works in",
    "came up from",
    "was living in",
    "emigrated from",
    "had a recent trip to",
    "flew in from",
    "is from",
    "is returning to",
    "stays in",
    "has family in",
    "was incarcerated in",
    "was hiking near",
    "went camping in",
    "was on a cruise to",
    "will be staying in",
    "commutes from",
    "was transferred here from a hospital in",
    "was previously followed in",
    "recently moved here from",
)
_PLACE_POST = (" native", " resident", "-based")
_PLACE_TAIL = (
    "",
    "",
    "",
    " last month",
    " for work",
    " with family",
    " and has no local support",
    " {n} weeks ago",
    " in {year}",
    " about {n} years ago",
    " to be closer to family",
    " after {his} divorce",
    " since {year}",
    " for the holidays",
    " over the summer",
)


def place_sentence(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    place = fill.place_alone(r, ctx.src)
    k = r.randrange(10)
    if k < 6:
        subj = _subject(ctx) if r.random() < 0.75 else f"{ctx.his} {r.choice(RELATIONS)[0]}"
        out = [lit(f"{subj} {r.choice(_PLACE_PRE)} "), *place]
    elif k < 8:
        out = [
            *place,
            lit(r.choice(_PLACE_POST)),
            lit(
                r.choice(
                    (
                        f", here for {r.choice(('f/u', 'evaluation', 'surgery', 'a second opinion'))}",
                        f" who presents with {r.choice(('chest pain', 'SOB', 'fevers', 'a fall', 'abd pain'))}",
                        f", {r.choice(PROFESSIONS)}",
                        "",
                    )
                )
            ),
        ]
    elif k == 8:
        out = [
            lit(r.choice(("Lives ", "Pt lives ", "Resides "))),
            lit(
                r.choice(("about ", "~", ""))
                + f"{r.randint(2, 90)} {r.choice(('miles', 'min', 'minutes'))} "
                + r.choice(("outside ", "north of ", "from ", "south of "))
            ),
            *place,
        ]
    else:
        out = [lit(r.choice(("Travel hx: ", "Recent travel: ", "Travel: ", "Born in ", "Hometown: "))), *place]
    tail = r.choice(_PLACE_TAIL).replace("{his}", ctx.his).replace("{n}", str(r.randint(2, 11)))
    if "{year}" in tail:
        a, _, b = tail.partition("{year}")
        return sentence(
            out + [lit(a), phi(str(r.randint(1975, ctx.note_date.year)), "DATE"), lit(b)]
            if b
            else out + [lit(a), phi(str(r.randint(1975, ctx.note_date.year)), "DATE")]
        )
    return sentence(out + ([lit(tail)] if tail else []))


# -- facilities -----------------------------------------------------------------------------
_FAC_PRE = (
    "transferred from",
    "was seen at",
    "was admitted to",
    "follows at",
    "records requested from",
    "discharged to",
    "was previously treated at",
    "presented to",
    "had surgery at",
    "recent admission at",
    "outside films from",
    "was evaluated at",
    "rehab at",
    "resides at",
    "gets dialysis at",
    "receives infusions at",
    "f/u scheduled at",
    "referred to",
    "was intubated at",
    "had a cath at",
    "delivered at",
    "was born at",
    "had an MRI at",
    "receives care at",
    "was boarded at",
    "MRI done at",
    "pt is a nursing home resident at",
    "went to",
    "transferred to",
    "will be accepted at",
    "obtained records from",
)
_FAC_TAIL = (
    "",
    "",
    " ED",
    " ER",
    " in {place}",
    " last {month}",
    " on {date}",
    " for {dx}",
    " {n} days ago",
    " and was sent here",
    " (OSH)",
    " per report",
)
_DX = (
    "NSTEMI",
    "CHF exacerbation",
    "pneumonia",
    "a hip fracture",
    "sepsis",
    "a GI bleed",
    "DKA",
    "COPD exacerbation",
    "a stroke workup",
    "pyelonephritis",
    "cellulitis",
    "syncope",
    "an SBO",
)


def facility_sentence(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    f = fill.facility(r, ctx.src) if r.random() < 0.85 else ctx.fac
    fp = fill.facility_pieces(f, r)
    k = r.randrange(8)
    if k < 5:
        out = [lit(f"{_subject(ctx)} {r.choice(_FAC_PRE)} "), *fp]
    elif k == 5:
        out = [
            lit(r.choice(("OSH: ", "Outside hospital: ", "Prior facility: ", "Transferring facility - ", "From "))),
            *fp,
        ]
    elif k == 6:
        out = [
            *fp,
            lit(
                r.choice(
                    (
                        " records reviewed",
                        " notes reviewed",
                        " called to give report",
                        " accepted the transfer",
                        " cardiology will follow",
                        " imaging reviewed",
                        " discharge summary scanned",
                    )
                )
            ),
        ]
    else:
        out = [
            lit(r.choice(("Per ", "Per the ", "According to "))),
            *fp,
            lit(" " + r.choice(("records", "ED note", "H&P", "chart"))),
        ]
    tail = r.choice(_FAC_TAIL)
    if tail == " in {place}":
        out += [lit(" in "), *fill.place_alone(r, ctx.src)]
    elif tail == " on {date}":
        out += [lit(" on "), *fill.date_pieces(fill.rand_date(r, ctx.dob, ctx.note_date), r)]
    elif tail == " last {month}":
        out += [
            lit(" last "),
            phi(r.choice(("January", "March", "May", "July", "September", "November", "spring")), "DATE")
            if r.random() < 0.8
            else lit("year"),
        ]
        if out[-1].text == "spring":
            out[-1] = lit("spring")
    elif tail:
        out.append(lit(tail.replace("{dx}", r.choice(_DX)).replace("{n}", str(r.randint(2, 20)))))
    return sentence(out)


# -- organisations + professions (professions are negatives) ---------------------------------
_ORG_PRE = {
    "employer": (
        "works at",
        "works for",
        "is employed at",
        "is employed by",
        "retired from",
        "used to work at",
        "was laid off from",
        "is on leave from",
        "works nights at",
        "works part time at",
        "just started a job at",
        "has worked {n} years at",
        "drives for",
        "does maintenance for",
    ),
    "school": (
        "attends",
        "is a student at",
        "graduated from",
        "is in {grade} grade at",
        "teaches at",
        "is a junior at",
        "dropped out of",
        "coaches at",
        "goes to",
    ),
    "church": (
        "attends services at",
        "is a member of",
        "is active at",
        "volunteers at",
        "gets support from",
        "sings in the choir at",
    ),
    "club": ("is a member of", "volunteers with", "gets meals from", "attends meetings at", "goes to"),
}


def org_sentence(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    kind = r.choices(("employer", "school", "church", "club"), (6, 3, 2, 1))[0]
    org = fill.organisation(r, ctx.src, kind)
    pre = (
        r.choice(_ORG_PRE[kind])
        .replace("{n}", str(r.randint(2, 30)))
        .replace("{grade}", r.choice(("3rd", "5th", "8th", "10th", "11th")))
    )
    subj = _subject(ctx)
    if kind == "employer" and r.random() < 0.5:
        prof = r.choice(PROFESSIONS)
        art = "an" if prof[0] in "aeiou" else "a"
        k = r.randrange(4)
        if k == 0:
            return sentence(
                [lit(f"{subj} works as {art} "), fill.negp(prof, "profession"), lit(" at "), *fill.org_pieces(org, r)]
            )
        if k == 1:
            return sentence(
                [
                    lit(f"{subj} is a retired "),
                    fill.negp(prof, "profession"),
                    lit(" (" + r.choice(("", "formerly ")) + "at "),
                    *fill.org_pieces(org, r),
                    lit(")"),
                ]
            )
        if k == 2:
            return sentence(
                [
                    lit("Occupation: "),
                    fill.negp(prof, "profession"),
                    lit(r.choice((", ", " at ", " - "))),
                    *fill.org_pieces(org, r),
                ],
                "",
            )
        return sentence(
            [lit(f"{subj} is {art} "), fill.negp(prof, "profession"), lit(" for "), *fill.org_pieces(org, r)]
        )
    return sentence([lit(f"{subj} {pre} "), *fill.org_pieces(org, r)])


def profession_sentence(ctx: Ctx) -> list[Piece]:
    """A profession in running text, no organisation: a pure negative."""
    r = ctx.r
    prof = r.choice(PROFESSIONS)
    art = "an" if prof[0] in "aeiou" else "a"
    k = r.randrange(5)
    if k == 0:
        return sentence([lit(f"{_subject(ctx)} is a retired "), fill.negp(prof, "profession")])
    if k == 1:
        return sentence(
            [
                lit(f"Works as {art} "),
                fill.negp(prof, "profession"),
                lit(r.choice(("", " full time", ", on disability"))),
            ]
        )
    if k == 2:
        return sentence(
            [lit(f"{ctx.his.capitalize()} {r.choice(RELATIONS)[0]} is {art} "), fill.negp(prof, "profession")]
        )
    if k == 3:
        return sentence(
            [
                lit("Former "),
                fill.negp(prof, "profession"),
                lit(f"; {r.choice(('lives alone', 'married', 'widowed', 'divorced'))}"),
            ]
        )
    return sentence([lit("Occupation: "), fill.negp(prof.capitalize() if r.random() < 0.3 else prof, "profession")], "")


# -- identifiers, cued and uncued -----------------------------------------------------------
_ID_RUN_CUED = (
    "{cue} {ID} sent to {dept}",
    "{cue} {ID} received in formalin",
    "{cue} {ID} denied by insurer",
    "please reference {cue} {ID}",
    "{cue} {ID} was resulted",
    "see {cue} {ID}",
    "{cue} {ID} on file",
    "{cue} {ID} verified",
    "documented under {cue} {ID}",
    "results filed to {cue} {ID}",
    "added on to {cue} {ID}",
    "{cue} {ID} cancelled and reordered",
    "implant log: {cue} {ID}",
)
_ID_RUN_UNCUED = (
    "please reference {ID} on all correspondence",
    "two identifiers confirmed (name and {ID})",
    "labels printed with {ID}",
    "faxed to insurer re: {ID}",
    "sticker {ID} placed on the requisition",
    "scanned under {ID}",
    "results sent under {ID}",
    "specimens labelled {ID} at bedside",
    "pt's card reads {ID}",
    "chart {ID} merged with old chart",
    "{ID} - duplicate record, do not use",
    "old number {ID} retired",
    "bracelet reads {ID}",
    "tube {ID} hemolyzed; redraw ordered",
    "billing question about {ID}",
    "{NAME} ({ID})",
    "{NAME} {ID}",
    "re: {NAME}, {ID}",
    "{ID} / {NAME}",
    "previously registered as {ID}",
    "mother's chart is {ID}",
    "prior authorization approved ({ID})",
    "pathology {ID}: benign",
    "vaccine given, {ID}, left deltoid",
)


def id_sentence(ctx: Ctx, cued: bool | None = None) -> list[Piece]:
    r = ctx.r
    if cued is None:
        cued = r.random() < 0.45
    if cued:
        cue, kind = r.choice(fill.ID_CUES)
        cue = fill.case(cue, r.choices(("keep", "lower", "upper"), (70, 20, 10))[0])
        tmpl = r.choice(_ID_RUN_CUED).replace("{cue}", cue).replace("{dept}", r.choice(_DEPTS))
        value = fill.id_value(r, kind)
    else:
        tmpl = r.choice(_ID_RUN_UNCUED)
        value = fill.id_value(r, r.choice(("mrn", "generic", "any", "account", "specimen")))
    out: list[Piece] = []
    rest = tmpl
    while rest:
        i = min((rest.find(t) for t in ("{ID}", "{NAME}") if rest.find(t) >= 0), default=-1)
        if i < 0:
            out.append(lit(rest))
            break
        if i:
            out.append(lit(rest[:i]))
        if rest.startswith("{ID}", i):
            out.append(phi(value, "ID"))
            rest = rest[i + 4 :]
        else:
            out.extend(fill.name_pieces(ctx.pt, r, "PATIENT", r.choice(("full", "hdr", "full"))))
            rest = rest[i + 6 :]
    return sentence(out)


# -- phones, e-mail, URLs, ages, dates in running text -------------------------------------
def contact_sentence(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    k = r.randrange(6)
    phone = phi(fill.phone_value(r, ctx.home), "PHONE")
    if k == 0:
        return sentence([lit(r.choice(("Call back at ", "Pt can be reached at ", "Best number is ", "Cell "))), phone])
    if k == 1:
        p, rel = ctx.relative()
        return sentence(
            [
                lit(f"{rel.capitalize()} "),
                *fill.name_pieces(p, r, "PATIENT", "first"),
                lit(r.choice((" at ", " - ", ": "))),
                phone,
            ]
        )
    if k == 2:
        return sentence([lit(r.choice(("Fax records to ", "Clinic fax: ", "Pager "))), phone])
    if k == 3:
        return sentence(
            [
                lit(r.choice(("Pt e-mailed from ", "Email: ", "Prefers contact via "))),
                phi(fill.email_value(r, ctx.pt, ctx.src), "EMAIL"),
            ]
        )
    if k == 4:
        return sentence(
            [
                lit(r.choice(("Enrolled in portal at ", "Instructions at ", "Remote access via "))),
                phi(fill.url_value(r, ctx.fac), "URL"),
            ]
        )
    return sentence([lit(r.choice(("Interpreter line ", "Triage line ", "Called pharmacy at "))), phone])


def age_date_sentence(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    k = r.randrange(6)
    age = str(ctx.age)
    if k == 0:
        lead: list[Piece] = []
        if r.random() < 0.5:
            lead = [
                *fill.name_pieces(ctx.pt, r, "PATIENT", r.choice(("title", "full", "first", "titlefull"))),
                lit(r.choice((" is a ", " is an ", ", a ", " - "))),
            ]
            if lead[-1].text == " is a " and age.startswith(("8", "11", "18")):
                lead[-1] = lit(" is an ")
            elif lead[-1].text == " is an " and not age.startswith(("8", "11", "18")):
                lead[-1] = lit(" is a ")
        return sentence(
            lead
            + [
                phi(age, "AGE"),
                lit(r.choice(("-year-old ", " yo ", " y/o ", " year old ", "yo "))),
                lit(
                    r.choice(
                        ("male", "man", "M", "gentleman", "pt")
                        if ctx.pt.sex == "M"
                        else ("female", "woman", "F", "lady", "pt")
                    )
                ),
                lit(" " + r.choice(("with h/o HTN", "s/p fall", "c/o chest pain", "w/ DM2", "here for f/u"))),
            ]
        )
    if k == 1:
        return sentence(
            [lit(r.choice(("Pt is ", "Age: ", "Aged "))), phi(age, "AGE"), lit(r.choice(("", " years", " yrs")))]
        )
    if k == 2:
        p, rel = ctx.relative()
        return sentence(
            [
                lit(f"{ctx.his.capitalize()} {rel}, "),
                *fill.name_pieces(p, r, "PATIENT", "first"),
                lit(", is "),
                phi(str(r.randint(2, 95)), "AGE"),
            ]
        )
    if k == 3:
        d = fill.rand_date(r, ctx.dob, ctx.note_date)
        return sentence(
            [
                lit(r.choice(("Last seen ", "Last colonoscopy ", "Last admission ", "Symptoms began "))),
                *fill.date_pieces(d, r, r.choice(("any", "month", "partial", "year"))),
            ]
        )
    if k == 4:
        return sentence([lit("DOB "), *fill.date_pieces(ctx.dob, r, r.choice(("numeric", "full")))])
    return sentence(
        [
            lit(r.choice(("Follow up on ", "RTC ", "Next appt "))),
            *fill.date_pieces(fill.rand_date(r, ctx.note_date, date(ctx.note_date.year + 1, 12, 28)), r),
        ]
    )


# -- hard negatives in running text ---------------------------------------------------------
_NEG_KINDS = ("eponym", "med", "bp", "vitals", "lab", "time", "score", "room", "duration", "measure", "icd", "dose")


def negative_sentence(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    k = r.randrange(8)
    if k == 0:
        return sentence([lit("Started "), ctx.neg("med"), lit(r.choice((" and ", "; continue "))), ctx.neg("med")])
    if k == 1:
        return sentence([lit("Exam notable for "), ctx.neg("eponym_sign"), lit(", "), ctx.neg("eponym")])
    if k == 2:
        return sentence([lit("Moved to "), ctx.neg("room"), lit(" at "), ctx.neg("time")])
    if k == 3:
        return sentence([ctx.neg("vitals")])
    if k == 4:
        return sentence([lit("Labs: "), ctx.neg("labs")])
    if k == 5:
        return sentence(
            [
                lit(r.choice(("Hx of ", "Known ", "Followed for "))),
                ctx.neg("eponym_disease"),
                lit(r.choice((", ", "; "))),
                ctx.neg("score"),
            ]
        )
    if k == 6:
        clin = r.choice(
            (
                "Cardiology",
                "Neurology",
                "Emergency Department",
                "Intensive Care Unit",
                "Physical Therapy",
                "Social Work",
                "Nephrology",
                "Hospice",
                "Radiology",
                "Oncology",
                "General Surgery",
                "Internal Medicine",
                "Medicine",
                "Pulmonology",
                "Labor and Delivery",
            )
        )
        return sentence([lit("Consulted "), fill.negp(clin, "clinical_word"), lit(" re: "), ctx.neg("eponym_device")])
    return sentence(
        [lit(r.choice(("Pain ", "Cough ", "Dyspnea "))), ctx.neg("duration"), lit(", "), ctx.neg("measure")]
    )


SENTENCE_KINDS = {
    "person": person_sentence,
    "place": place_sentence,
    "facility": facility_sentence,
    "org": org_sentence,
    "profession": profession_sentence,
    "id": id_sentence,
    "contact": contact_sentence,
    "agedate": age_date_sentence,
    "negative": negative_sentence,
}
SENTENCE_WEIGHTS = {
    "person": 9,
    "place": 7,
    "facility": 6,
    "org": 4,
    "profession": 2,
    "id": 4,
    "contact": 2,
    "agedate": 3,
    "negative": 6,
}
