"""Slot fillers: turn ``{slot:arg}`` into labelled pieces for one note of one patient.

A :class:`NoteContext` holds everything one note may mention: the patient, the note's dates
(admission, prior visit, follow-up ... derived from the note date, so one patient's notes stay
on a plausible timeline), the clinicians acting in this note, the facility and a relative.
Entities are created lazily, once per note, so "Dr. Okafor" in the body is the same person who
signs the note.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta

from tide_core.synth.builder import Piece, lit, phi
from tide_core.synth.negatives import negative_pieces
from tide_core.synth.surface import (
    address_pieces,
    age_pieces,
    clinician_name,
    date_pieces,
    patient_name,
    phone_text,
    range_pieces,
)
from tide_core.synth.world import Clinician, Facility, Patient, Relative, World

ROLE_CREDENTIALS = {
    "attending": None,
    "resident": "MD",
    "pcp": "MD",
    "consultant": "MD",
    "surgeon": "MD",
    "anesth": "MD",
    "radiologist": "MD",
    "pathologist": "MD",
    "referring": None,
    "rn": "RN",
    "rn2": "RN",
    "sw": "LCSW",
    "pharm": "PharmD",
    "therapist": "PT",
    "tech": "RT",
    "ma": "MA",
    "np": "NP",
}

DX = (
    "community-acquired pneumonia",
    "acute decompensated heart failure",
    "COPD exacerbation",
    "type 2 diabetes mellitus",
    "acute kidney injury",
    "cellulitis of the left lower extremity",
    "urinary tract infection",
    "atrial fibrillation with rapid ventricular response",
    "NSTEMI",
    "small bowel obstruction",
    "acute pancreatitis",
    "diverticulitis",
    "pulmonary embolism",
    "hypertensive urgency",
    "sepsis secondary to pyelonephritis",
    "acute cholecystitis",
    "major depressive disorder",
    "alcohol withdrawal",
    "DKA",
    "syncope",
    "GI bleed",
    "hip fracture",
    "migraine without aura",
    "asthma exacerbation",
    "chronic low back pain",
    "iron deficiency anemia",
    "hypothyroidism",
    "osteoarthritis of the right knee",
    "acute ischemic stroke",
    "seizure disorder",
    "chronic kidney disease stage 3",
    "obstructive sleep apnea",
    "gout flare",
    "benign prostatic hyperplasia",
    "hyponatremia",
)
SX = (
    "chest pain",
    "shortness of breath",
    "abdominal pain",
    "nausea and vomiting",
    "fever and chills",
    "productive cough",
    "dizziness",
    "headache",
    "lower extremity swelling",
    "dysuria",
    "palpitations",
    "fatigue",
    "confusion",
    "back pain",
    "rash",
    "weakness",
    "diarrhea",
    "blurred vision",
    "joint pain",
    "weight loss",
)
PROC = (
    "laparoscopic cholecystectomy",
    "right total knee arthroplasty",
    "appendectomy",
    "colonoscopy with polypectomy",
    "cardiac catheterization",
    "ORIF of the left distal radius",
    "EGD with biopsy",
    "inguinal hernia repair",
    "lumbar laminectomy",
    "cystoscopy",
    "thyroidectomy",
    "coronary artery bypass grafting x3",
    "excisional biopsy",
    "incision and drainage",
    "cesarean section",
    "tonsillectomy",
)
NOTE_TITLES = {
    "discharge_summary": ("DISCHARGE SUMMARY", "Discharge Summary", "HOSPITAL DISCHARGE SUMMARY"),
    "progress_note": ("PROGRESS NOTE", "Progress Note", "Daily Progress Note", "CLINIC PROGRESS NOTE"),
    "radiology_report": ("RADIOLOGY REPORT", "Radiology Report", "DIAGNOSTIC IMAGING REPORT"),
    "pathology_report": ("SURGICAL PATHOLOGY REPORT", "Pathology Report", "CYTOPATHOLOGY REPORT"),
    "ed_note": ("EMERGENCY DEPARTMENT NOTE", "ED Provider Note", "Emergency Department Visit"),
    "nursing_note": ("NURSING NOTE", "Nursing Progress Note", "RN Shift Note"),
    "referral_letter": ("REFERRAL LETTER", "Referral", "Letter of Referral"),
    "lab_report": ("LABORATORY REPORT", "Lab Results", "CLINICAL LABORATORY REPORT"),
    "telephone_encounter": ("TELEPHONE ENCOUNTER", "Telephone Note", "Phone Call Documentation"),
    "operative_note": ("OPERATIVE REPORT", "Operative Note", "BRIEF OPERATIVE NOTE"),
    "consult_note": ("CONSULTATION NOTE", "Consult Note", "INPATIENT CONSULTATION"),
}
_SPECIALTIES = (
    "Cardiology",
    "Nephrology",
    "Gastroenterology",
    "Neurology",
    "Infectious Disease",
    "Endocrinology",
    "Pulmonology",
    "Hematology/Oncology",
    "Rheumatology",
    "Psychiatry",
    "Orthopedic Surgery",
    "General Surgery",
    "Urology",
    "Dermatology",
    "Palliative Care",
)

_DATE_OFFSETS: dict[str, Callable[[random.Random], int]] = {
    "note": lambda r: 0,
    "discharge": lambda r: 0,
    "collected": lambda r: 0,
    "admit": lambda r: -r.randint(1, 12),
    "onset": lambda r: -r.randint(1, 10),
    "surgery": lambda r: -r.randint(0, 3),
    "received": lambda r: r.randint(0, 1),
    "reported": lambda r: r.randint(1, 5),
    "prior": lambda r: -r.randint(30, 1500),
    "prior2": lambda r: -r.randint(5, 400),
    "followup": lambda r: r.randint(7, 90),
    "future2": lambda r: r.randint(1, 21),
    "dx": lambda r: -r.randint(365, 7300),
    "lmp": lambda r: -r.randint(10, 60),
    "vaccine": lambda r: -r.randint(30, 700),
    "imaging": lambda r: -r.randint(0, 2),
    "transfer": lambda r: -r.randint(0, 1),
}


@dataclass
class NoteContext:
    world: World
    patient: Patient
    note_index: int
    note_type: str
    rng: random.Random
    facility: Facility
    dates: dict[str, date] = field(default_factory=dict)
    roles: dict[str, Clinician] = field(default_factory=dict)
    other_facility: Facility | None = None
    relative: Relative | None = None

    @property
    def note_date(self) -> date:
        return self.patient.note_dates[self.note_index]

    def date(self, key: str) -> date:
        if key not in self.dates:
            if key == "dob":
                self.dates[key] = self.patient.dob
            elif key == "lastvisit":
                self.dates[key] = (
                    self.patient.note_dates[self.note_index - 1]
                    if self.note_index
                    else self.note_date - timedelta(days=self.rng.randint(30, 400))
                )
            elif key not in _DATE_OFFSETS:
                raise KeyError(f"unknown date key {key!r}")
            else:
                self.dates[key] = self.note_date + timedelta(days=_DATE_OFFSETS[key](self.rng))
        return self.dates[key]

    def role(self, name: str) -> Clinician:
        if name == "pcp":
            return self.patient.pcp
        if name not in self.roles:
            self.roles[name] = self.world.clinician(ROLE_CREDENTIALS[name])
        return self.roles[name]

    def other(self) -> Facility:
        if self.other_facility is None:
            for _ in range(5):
                f = self.world.facility()
                if f.name != self.facility.name:
                    break
            self.other_facility = f
        return self.other_facility

    def rel(self) -> Relative:
        if self.relative is None:
            self.relative = self.rng.choice(self.patient.relatives)
        return self.relative


# -- handlers --------------------------------------------------------------------------------
def _fixed(ctx: NoteContext, key: str, draw: Callable[[], str]) -> str:
    """A per-patient attribute drawn on first mention and repeated in later notes."""
    if key not in ctx.patient.extra:
        ctx.patient.extra[key] = draw()
    return ctx.patient.extra[key]


def _pronoun(ctx: NoteContext, kind: str) -> list[Piece]:
    f = ctx.patient.person.sex == "F"
    age = ctx.patient.age_on(ctx.note_date)
    words = {
        "he": ("she", "he"),
        "He": ("She", "He"),
        "his": ("her", "his"),
        "His": ("Her", "His"),
        "him": ("her", "him"),
        "sexl": ("female", "male"),
        "sexm": ("F", "M"),
        "man": (("girl", "boy") if age < 18 else ("woman", "man")),
    }
    return [lit(words[kind][0 if f else 1])]


def _id_piece(ctx: NoteContext, kind: str) -> str:
    w, r, p = ctx.world, ctx.rng, ctx.patient
    if kind == "mrn":
        return p.mrn
    if kind == "ssn":
        return p.ssn
    if kind == "member":
        return p.member_id
    if kind == "acct":
        return r.choice((w.digits(9), w.digits(10), f"A{w.digits(8)}", w.digits(7)))
    if kind == "csn":
        return w.digits(r.choice((9, 10, 12)))
    if kind == "accession":
        y = ctx.note_date.year % 100
        return r.choice(
            (
                f"S{y:02d}-{w.digits(5, False)}",
                f"{w.letters(2)}{y:02d}-{w.digits(6, False)}",
                f"RAD-{ctx.note_date.year}-{w.digits(6, False)}",
                w.digits(8),
                f"{w.letters(1)}{w.digits(7)}",
                f"CT{y:02d}-{w.digits(7)}",
            )
        )
    if kind == "order":
        return r.choice((f"ORD-{w.digits(8)}", w.digits(8), f"{w.letters(2)}{w.digits(6)}"))
    if kind == "npi":
        return w.digits(10)
    if kind == "device":
        return r.choice(
            (
                f"{w.digits(1)}{w.letters(2)}{w.digits(2)}{w.letters(1)}{w.digits(1)}{w.letters(1)}",
                f"SN{w.digits(9)}",
                f"{w.letters(3)}{w.digits(6)}",
            )
        )
    if kind == "alnum":
        return f"{w.letters(2)}-{w.digits(2)}-{w.digits(4)}"
    if kind == "license":
        return f"{w.letters(1)}{w.digits(7)}"
    raise KeyError(kind)


_MRN_LABELS = (
    "MRN: ",
    "MRN# ",
    "MRN #",
    "MRN ",
    "MR#: ",
    "Med Rec #: ",
    "Medical Record Number: ",
    "MR No. ",
    "Hosp #: ",
    "Unit No: ",
)


def render_slot(ctx: NoteContext, name: str, arg: str) -> list[Piece]:
    """Pieces for one slot; raises KeyError for an unknown slot (caught by template tests)."""
    r, w, p = ctx.rng, ctx.world, ctx.patient
    if name == "pt":
        return patient_name(p.person, arg or "any", r)
    if name in ("he", "He", "his", "His", "him", "sexl", "sexm", "man"):
        return _pronoun(ctx, name)
    if name == "age":
        return age_pieces(p.age_on(ctx.note_date), arg or "adj", r)
    if name == "relage":
        return age_pieces(r.randint(38, 97), arg or "n", r)
    if name == "date":
        key, _, form = arg.partition("|")
        if key == "dob" and not form:
            form = "full" if r.random() < 0.8 else "numeric"
        return date_pieces(ctx.date(key or "note"), form or "any", r)
    if name == "range":
        a, _, b = arg.partition(",")
        first, second = sorted((ctx.date(a), ctx.date(b)))
        if first == second:
            second = second + timedelta(days=r.randint(1, 6))
        return range_pieces(first, second, r)
    if name == "year":
        return [phi(str(ctx.date(arg or "dx").year), "DATE")]
    if name in ROLE_CREDENTIALS:
        return clinician_name(ctx.role(name), arg or "any", r)
    if name == "rel":
        rel = ctx.rel()
        form = arg or "phrase"
        if form == "relation":
            return [lit(rel.relation)]
        if form == "name":
            return patient_name(rel.person, r.choice(("full", "full", "first")), r)
        if form == "phone":
            return [phi(phone_text(rel.phone, r), "PHONE")]
        lead = r.choice(
            (
                f"{_pronoun(ctx, 'his')[0].text} {rel.relation}, ",
                f"{rel.relation} ",
                f"{rel.relation}, ",
                f"{_pronoun(ctx, 'his')[0].text} {rel.relation} ",
            )
        )
        return [lit(lead), *patient_name(rel.person, r.choice(("full", "full", "first")), r)]
    if name in ("mrn", "ssn", "member", "acct", "csn", "accession", "order", "npi", "device", "alnum", "license"):
        value = _id_piece(ctx, name)
        if name == "mrn" and arg == "l":
            return [lit(r.choice(_MRN_LABELS)), phi(value, "ID")]
        return [phi(value, "ID")]
    if name == "phone":
        src = arg or "pt"
        parts = {"pt": p.phone, "fac": ctx.facility.phone, "other": ctx.other().phone}.get(src)
        if src == "rel":
            parts = ctx.rel().phone
        elif src == "dr" or parts is None:
            parts = (ctx.facility.phone[0], ctx.facility.phone[1], f"{r.randint(0, 9999):04d}")
        return [phi(phone_text(parts, r, ext=True if src == "ext" else None), "PHONE")]
    if name == "fax":
        return [phi(phone_text(ctx.facility.fax, r, ext=False), "PHONE")]
    if name == "pager":
        return [
            phi(
                r.choice(
                    (
                        f"{r.randint(2, 9)}{r.randint(1000, 9999)}",
                        f"{r.randint(1, 9)}-{r.randint(1000, 9999)}",
                        phone_text(w.phone(), r, ext=False),
                    )
                ),
                "PHONE",
            )
        ]
    if name == "email":
        if arg in ("dr", "attending", "pcp", "referring", "consultant"):
            c = ctx.role("attending" if arg == "dr" else arg)
            return [phi(f"{c.email_user}@{ctx.facility.domain}", "EMAIL")]
        return [phi(p.email if r.random() < 0.85 else p.email.upper(), "EMAIL")]
    if name == "url":
        d = ctx.facility.domain
        kind = arg or r.choice(("portal", "site", "tele"))
        if kind == "ip":
            return [
                phi(f"{r.choice((10, 172, 192))}.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}", "URL")
            ]
        text = {
            "portal": r.choice(
                (f"https://mychart.{d}", f"https://mychart.{d}/MyChart/", f"portal.{d}", f"http://portal.{d}/login")
            ),
            "site": r.choice((f"www.{d}", f"https://www.{d}", f"www.{d}/patients", f"https://www.{d}/billing")),
            "tele": f"https://telehealth.{d}/visit/{w.letters(3)}{w.digits(4)}",
        }[kind]
        return [phi(text, "URL")]
    if name == "addr":
        return address_pieces(p.address, arg or "line", r)
    if name == "faddr":
        return address_pieces(ctx.facility.address, arg or "line", r)
    if name == "city":
        town = r.choice(w.vocab.cities)
        return (
            [phi(town.city, "LOCATION")]
            if arg != "state"
            else [phi(town.city, "LOCATION"), lit(", "), phi(town.state, "LOCATION")]
        )
    if name == "state":  # the state a patient moved from: fixed per patient
        return [phi(_fixed(ctx, "state", lambda: r.choice(w.vocab.states)[1]), "LOCATION")]
    if name == "country":  # country of birth: fixed per patient
        return [phi(_fixed(ctx, "country", lambda: r.choice(w.vocab.countries)), "LOCATION")]
    if name == "hosp":
        f = ctx.other() if arg == "other" else ctx.facility
        return [phi(f.name, "HOSPITAL")]
    if name == "clinic":
        clinics = [f for f in w.site_facilities + w.external_facilities if f.kind == "clinic"]
        return [phi(r.choice(clinics).name, "HOSPITAL")]
    if name == "employer":
        return [phi(p.employer or r.choice(w.vocab.employers), "OTHER")]
    if name == "school":
        return [phi(p.school or r.choice(w.vocab.schools), "OTHER")]
    if name == "neg":
        return negative_pieces(arg, r, w.vocab)
    if name == "dx":
        return [lit(r.choice(DX))]
    if name == "sx":
        return [lit(r.choice(SX))]
    if name == "proc":
        return [lit(r.choice(PROC))]
    if name == "title":
        return [lit(r.choice(NOTE_TITLES[ctx.note_type]))]
    if name == "specialty":
        return [lit(r.choice(_SPECIALTIES))]
    if name == "num":
        lo, _, hi = (arg or "1-10").partition("-")
        return [lit(str(r.randint(int(lo), int(hi))))]
    raise KeyError(f"unknown slot {name!r}")
