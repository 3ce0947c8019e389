"""Compose one document from randomly chosen, randomly ordered sections.

Sections: key/value headers (random field order, separators, casing, fields per line), prose
(running-text frames), bullet and numbered lists, pipe/tab tables, communication logs,
signature blocks.  Prose sections are wrapped at a random width by turning spaces into newlines,
which keeps every recorded offset exact.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta

from tide_core.synth.builder import NoteBuilder, Piece, lit, phi
from tide_core.synth.compose import fill, frames
from tide_core.synth.compose.frames import Ctx
from tide_core.synth.compose.sources import Sources

SEPARATORS = (":", " - ", "=", "\t", "|")
NOTE_TYPES = (
    "progress_note",
    "discharge_summary",
    "ed_note",
    "radiology_report",
    "nursing_note",
    "consult_note",
    "telephone_encounter",
    "lab_report",
    "referral_letter",
    "operative_note",
    "pathology_report",
    "social_work_note",
    "case_management_note",
    "pharmacy_note",
)


@dataclass
class Section:
    name: str
    text: str
    spans: list[tuple[int, int, str]]  # (start, end, label)
    negatives: list[tuple[int, int, str]]  # (start, end, kind)


# -- small layout helpers --------------------------------------------------------------------
def _title(r: random.Random, names: tuple[str, ...]) -> str:
    t = r.choice(names)
    t = fill.case(t, r.choices(("keep", "upper", "lower"), (50, 40, 10))[0])
    return r.choice(("{}:", "{}", "{}:", "== {} ==", "# {}", "[{}]", "{} -", "*** {} ***", "{}:")).format(t)


def _sep(r: random.Random, base: str) -> str:
    if base == ":":
        return r.choice((": ", ": ", ":", " : ", ":  "))
    if base == "=":
        return r.choice(("=", " = "))
    if base == "|":
        return r.choice((" | ", "|"))
    return base


def _kv(r: random.Random, key: str, value: list[Piece], sep: str, key_case: str) -> list[Piece]:
    return [lit(fill.case(key, key_case) + _sep(r, sep)), *value]


def _join_lines(r: random.Random, items: list[list[Piece]], per_line: int = 1) -> list[Piece]:
    out: list[Piece] = []
    glue = r.choice(("   ", "  ", " | ", "\t", "; "))
    for i, item in enumerate(items):
        if i:
            out.append(lit("\n" if i % per_line == 0 else glue))
        out.extend(item)
    return out


def _bullets(r: random.Random, items: list[list[Piece]]) -> list[Piece]:
    style = r.choice(("- ", "* ", "• ", "{n}. ", "{n}) ", "  - ", "", "o "))
    out: list[Piece] = []
    for i, item in enumerate(items):
        if i:
            out.append(lit("\n"))
        out.append(lit(style.replace("{n}", str(i + 1))))
        out.extend(item)
    return out


def _table(r: random.Random, header: list[str], rows: list[list[list[Piece]]]) -> list[Piece]:
    kind = r.choice(("pipe", "pipe_edge", "tab", "spaces"))
    glue = {"pipe": " | ", "pipe_edge": " | ", "tab": "\t", "spaces": "    "}[kind]
    edge = kind == "pipe_edge"
    hcase = r.choice(("keep", "upper"))
    out: list[Piece] = []
    out.append(lit(("| " if edge else "") + glue.join(fill.case(h, hcase) for h in header) + (" |" if edge else "")))
    if kind.startswith("pipe") and r.random() < 0.6:
        out.append(lit("\n" + ("|" if edge else "") + "|".join("---" for _ in header) + ("|" if edge else "")))
    for row in rows:
        out.append(lit("\n" + ("| " if edge else "")))
        for j, cell in enumerate(row):
            if j:
                out.append(lit(glue))
            out.extend(cell if cell else [lit("-")])
        if edge:
            out.append(lit(" |"))
    return out


def _prose(ctx: Ctx, n: int, weights: dict[str, int] | None = None) -> list[Piece]:
    r = ctx.r
    w = weights or frames.SENTENCE_WEIGHTS
    kinds = list(w)
    out: list[Piece] = []
    for i in range(n):
        k = r.choices(kinds, [w[x] for x in kinds])[0]
        if i:
            out.append(lit(r.choice((" ", " ", "  ", "\n", " "))))
        out.extend(frames.SENTENCE_KINDS[k](ctx))
    return out


# -- sections -------------------------------------------------------------------------------
def sec_header(ctx: Ctx) -> list[Piece]:
    r, src, pt = ctx.r, ctx.src, ctx.pt
    sep = r.choice(SEPARATORS)
    kc = r.choices(("keep", "upper", "lower"), (55, 35, 10))[0]
    mrn_key = r.choice(("MRN", "Medical Record #", "MR#", "Patient ID", "Hosp #", "ID", "Unit No."))
    fields: list[tuple[str, list[Piece]]] = [
        (
            r.choice(("Name", "Patient", "Pt Name", "Patient Name", "NAME")),
            fill.name_pieces(pt, r, "PATIENT", r.choice(("full", "hdr", "hdr"))),
        ),
        (
            r.choice(("DOB", "D.O.B.", "Date of Birth", "Birthdate", "DOB/Age")),
            fill.date_pieces(ctx.dob, r, r.choice(("numeric", "full"))),
        ),
        (mrn_key, [phi(ctx.mrn, "ID")]),
    ]
    opt: list[tuple[str, list[Piece]]] = [
        ("Age", [phi(str(ctx.age), "AGE"), lit(r.choice(("", " y", " yrs", "Y", " years")))]),
        (
            r.choice(("Sex", "Gender")),
            [fill.negp(r.choice(("F", "M", "Female", "Male")) if pt.sex == "F" else r.choice(("M", "Male")), "sex")],
        ),
        (r.choice(("Address", "Addr", "Home address")), fill.address_pieces(r, src, ctx.home, block=False)),
        (
            r.choice(("Phone", "Tel", "Ph", "Home #", "Cell", "Home phone")),
            [phi(fill.phone_value(r, ctx.home), "PHONE")],
        ),
        (r.choice(("Email", "E-mail")), [phi(fill.email_value(r, pt, src), "EMAIL")]),
        (
            r.choice(("PCP", "Primary care", "Referring MD", "Attending", "Provider")),
            fill.staff_pieces(ctx.staffer("PCP")[0], r, True),
        ),
        (r.choice(("Facility", "Location", "Site", "Hosp")), fill.facility_pieces(ctx.fac, r)),
        (
            r.choice(("Admit date", "Adm", "DOA", "Visit date", "DOS", "Date of service")),
            fill.date_pieces(ctx.note_date, r, r.choice(("numeric", "time", "full"))),
        ),
        (r.choice(("Room", "Bed", "Rm/Bed", "Unit")), [ctx.neg("room")]),
        (
            r.choice(("Acct", "Account #", "FIN", "Encounter #", "CSN", "Visit #")),
            [phi(fill.id_value(r, r.choice(("account", "encounter"))), "ID")],
        ),
        (r.choice(("Employer", "Occupation/Employer")), fill.org_pieces(fill.organisation(r, src, "employer"), r)),
        (r.choice(("Emergency contact", "EC", "Next of kin", "NOK")), _contact(ctx)),
        (
            r.choice(("Language", "Preferred language")),
            [fill.negp(r.choice(("English", "Spanish", "Vietnamese", "Somali", "ASL")), "language")],
        ),
        (r.choice(("Portal", "MyChart")), [phi(fill.url_value(r, ctx.fac), "URL")]),
        (r.choice(("Insurance ID", "Member ID", "Policy #")), [phi(fill.id_value(r, "member"), "ID")]),
        (
            r.choice(("Note type", "Service")),
            [
                fill.negp(
                    r.choice(
                        ("Progress Note", "Internal Medicine", "Cardiology", "Hospital Medicine", "General Surgery")
                    ),
                    "clinical_word",
                )
            ],
        ),
    ]
    fields += r.sample(opt, r.randint(2, 8))
    r.shuffle(fields)
    items = [_kv(r, k, v, sep, kc) for k, v in fields]
    return _join_lines(r, items, r.choice((1, 1, 1, 2, 3)))


def _contact(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    p, rel = ctx.relative()
    out = fill.name_pieces(p, r, "PATIENT", r.choice(("full", "first", "titlefull", "hdr")))
    out = out + [
        lit(r.choice((f" ({rel})", f", {rel}", f" - {rel}", f" {rel}"))),
        lit(r.choice((" ", ", ", " - ", " @ "))),
        phi(fill.phone_value(r, ctx.home), "PHONE"),
    ]
    return out


def sec_hpi(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    first = frames.age_date_sentence(ctx)
    return first + [lit(" ")] + _prose(ctx, r.randint(2, 8))


def sec_social(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    w = {"person": 6, "place": 8, "org": 6, "profession": 4, "negative": 1, "contact": 1}
    if r.random() < 0.5:
        return _prose(ctx, r.randint(3, 7), w)
    kinds = list(w)
    items = [frames.SENTENCE_KINDS[r.choices(kinds, [w[k] for k in kinds])[0]](ctx) for _ in range(r.randint(3, 6))]
    return _bullets(r, items)


def sec_contacts(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    header = ["Name", "Relationship", "Phone"] + (["Address"] if r.random() < 0.3 else [])
    rows = []
    for _ in range(r.randint(1, 4)):
        p, rel = ctx.relative()
        row = [
            fill.name_pieces(p, r, "PATIENT", r.choice(("full", "hdr", "titlefull"))),
            [lit(fill.case(rel, r.choice(("keep", "title", "upper"))).capitalize() if r.random() < 0.5 else rel)],
            [phi(fill.phone_value(r, ctx.home), "PHONE")],
        ]
        if len(header) == 4:
            row.append(fill.address_pieces(r, ctx.src, block=False))
        rows.append(row)
    return _table(r, header, rows)


def sec_labs(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    header = ["Date", "Test", "Result", r.choice(("Accession", "Acc #", "Specimen", "Order #"))]
    rows = []
    for _ in range(r.randint(2, 6)):
        d = ctx.note_date - timedelta(days=r.randint(0, 400))
        lab = ctx.neg("lab")
        rows.append(
            [
                fill.date_pieces(d, r, r.choice(("numeric", "time", "numeric"))),
                [lab],
                [lit(r.choice(("H", "L", "N", "final", "*")))],
                [phi(fill.id_value(r, r.choice(("accession", "specimen", "order"))), "ID")],
            ]
        )
    return _table(r, header, rows)


def sec_orders(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    header = ["Order #", "Ordered", "Ordering provider", "Status"]
    rows = []
    for _ in range(r.randint(1, 5)):
        p, role = ctx.staffer(r.choice(("attending", "resident", "NP", "PA", "hospitalist")))
        rows.append(
            [
                [phi(fill.id_value(r, "order"), "ID")],
                fill.date_pieces(ctx.note_date, r, r.choice(("time", "numeric"))),
                fill.staff_pieces(p, r, role in frames.PHYSICIAN_ROLES),
                [fill.negp(r.choice(("Final", "Pending", "Discontinued", "Completed", "In process")), "status")],
            ]
        )
    return _table(r, header, rows)


def sec_care_team(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    sep = r.choice(SEPARATORS)
    items = []
    for _ in range(r.randint(2, 5)):
        p, role = ctx.staffer(r.choice(frames.STAFF_ROLES))
        item = _kv(
            r,
            role if role.isupper() else role.title(),
            fill.staff_pieces(p, r, role in frames.PHYSICIAN_ROLES),
            sep,
            "keep",
        )
        if r.random() < 0.4:
            item += [
                lit(r.choice((", pager ", " ext ", " - ", ", cell "))),
                phi(fill.phone_value(r, ctx.home) if r.random() < 0.6 else str(r.randint(1000, 99999)), "PHONE"),
            ]
        items.append(item)
    return _bullets(r, items)


def sec_meds(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    items = [[ctx.neg("med")] for _ in range(r.randint(2, 7))]
    if r.random() < 0.3:
        items.append(
            [
                lit("Pharmacy: "),
                *fill.facility_pieces(
                    fill.Facility(f"{fill.town(r, ctx.src)} {r.choice(('Pharmacy', 'Drug', 'Apothecary'))}", "en"),
                    r,
                    "keep",
                ),
            ]
        )
    return _bullets(r, items)


def sec_exam(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    parts = [
        [ctx.neg("vitals")],
        [lit("Neuro: "), ctx.neg("eponym_sign"), lit(r.choice((" negative", " absent", ", ")))],
        [lit("Lines: "), ctx.neg("eponym_device")],
        [ctx.neg("score")],
        [lit("Labs: "), ctx.neg("labs")],
        [lit("Pt in "), ctx.neg("room"), lit(", "), ctx.neg("eponym_position")],
    ]
    r.shuffle(parts)
    return _join_lines(r, parts[: r.randint(2, len(parts))])


def sec_plan(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    w = {"negative": 6, "facility": 4, "person": 4, "id": 2, "agedate": 2, "contact": 1, "place": 1}
    kinds = list(w)
    items = [frames.SENTENCE_KINDS[r.choices(kinds, [w[k] for k in kinds])[0]](ctx) for _ in range(r.randint(2, 6))]
    return _bullets(r, items)


def sec_insurance(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    sep = r.choice(SEPARATORS)
    kc = r.choices(("keep", "upper", "lower"), (50, 35, 15))[0]
    cues = r.sample(
        [c for c in fill.ID_CUES if c[1] in ("member", "claim", "account", "encounter", "mrn")], r.randint(2, 4)
    )
    items = [_kv(r, cue, [phi(fill.id_value(r, kind), "ID")], sep, kc) for cue, kind in cues]
    items.append(
        _kv(
            r,
            r.choice(("Payer", "Plan", "Coverage")),
            [fill.negp(r.choice(("Medicare", "Medicaid", "Commercial", "Self-pay", "Medicare Advantage")), "payer")],
            sep,
            kc,
        )
    )
    if r.random() < 0.6:
        p, rel = ctx.relative() if r.random() < 0.5 else (ctx.pt, "self")
        items.append(
            _kv(
                r,
                "Subscriber",
                fill.name_pieces(p, r, "PATIENT", r.choice(("full", "hdr"))) + [lit(f" ({rel})")],
                sep,
                kc,
            )
        )
    if r.random() < 0.4:
        items.append(
            _kv(r, "Subscriber employer", fill.org_pieces(fill.organisation(r, ctx.src, "employer"), r), sep, kc)
        )
    r.shuffle(items)
    return _join_lines(r, items, r.choice((1, 1, 2)))


def sec_devices(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    if r.random() < 0.5:
        header = ["Vaccine", "Date", "Lot", r.choice(("Site", "Given at"))]
        rows = []
        for _ in range(r.randint(1, 4)):
            vac = fill.negp(
                r.choice(("Tdap", "Influenza", "PCV20", "Shingrix", "COVID-19 mRNA", "Hep B", "MMR")), "vaccine"
            )
            last = (
                fill.facility_pieces(fill.facility(r, ctx.src), r)
                if "Given" in header[3]
                else [fill.negp(r.choice(("L deltoid", "R deltoid", "LVL")), "site")]
            )
            rows.append(
                [
                    [vac],
                    fill.date_pieces(fill.rand_date(r, ctx.dob, ctx.note_date), r, "numeric"),
                    [phi(fill.id_value(r, "lot"), "ID")],
                    last,
                ]
            )
        return _table(r, header, rows)
    sep = r.choice(SEPARATORS)
    dev = fill.negp(
        r.choice(
            (
                "dual-chamber pacemaker",
                "ICD",
                "insulin pump",
                "left TKA implant",
                "VNS generator",
                "LVAD",
                "cochlear implant",
                "spinal cord stimulator",
            )
        ),
        "device",
    )
    items = [
        _kv(r, "Device", [dev], sep, "keep"),
        _kv(
            r,
            r.choice(("Device serial", "Serial #", "S/N", "SN")),
            [phi(fill.id_value(r, "serial"), "ID")],
            sep,
            "keep",
        ),
        _kv(
            r,
            r.choice(("Implanted", "Implant date")),
            fill.date_pieces(fill.rand_date(r, ctx.dob, ctx.note_date), r),
            sep,
            "keep",
        ),
        _kv(
            r,
            r.choice(("Implanting facility", "Implanted at")),
            fill.facility_pieces(fill.facility(r, ctx.src), r),
            sep,
            "keep",
        ),
    ]
    if r.random() < 0.5:
        items.append(
            _kv(r, r.choice(("Lot", "Lot #", "Model/Serial")), [phi(fill.id_value(r, "lot"), "ID")], sep, "keep")
        )
    r.shuffle(items)
    return _join_lines(r, items)


def sec_comm_log(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    items = []
    d = ctx.note_date
    for _ in range(r.randint(2, 5)):
        kind = r.choice(("person", "person", "facility", "id", "contact"))
        items.append(
            [
                *fill.date_pieces(d, r, "time"),
                lit(r.choice((" - ", " ", ": ", "  "))),
                *frames.SENTENCE_KINDS[kind](ctx),
            ]
        )
        d = d + timedelta(days=r.choice((0, 0, 1)))
    return _join_lines(r, items)


def sec_signature(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    p, role = ctx.staffer(r.choice(("attending", "resident", "NP", "social worker", "case manager", "RN", "PA")))
    out = [
        lit(r.choice(("Electronically signed by ", "Signed: ", "Dictated by: ", "Authenticated by ", "-- ", ""))),
        *fill.staff_pieces(p, r, role in frames.PHYSICIAN_ROLES),
    ]
    if r.random() < 0.7:
        out += [
            lit(r.choice((" on ", " ", ", ", " at "))),
            *fill.date_pieces(ctx.note_date, r, r.choice(("time", "numeric"))),
        ]
    if r.random() < 0.5:
        out += [lit("\n"), *fill.facility_pieces(ctx.fac, r)]
        if r.random() < 0.5:
            out += [lit("\n"), *fill.address_pieces(r, ctx.src)]
    if r.random() < 0.4:
        out += [
            lit(r.choice(("\nPh ", "\nTel: ", " | P: ", "\nPhone "))),
            phi(fill.phone_value(r, ctx.home), "PHONE"),
            lit(r.choice((" Fax ", " | F: ", "\nFax: "))),
            phi(fill.phone_value(r, ctx.home), "PHONE"),
        ]
    if r.random() < 0.2:
        out += [lit("\nNPI "), phi(fill.id_value(r, "npi"), "ID")]
    return out


def sec_banner(ctx: Ctx) -> list[Piece]:
    """A banner line: identifiers next to the name with no cue word."""
    r = ctx.r
    g = r.choice(("  ", " ", "\t", " | ", " / "))
    name = fill.name_pieces(ctx.pt, r, "PATIENT", r.choice(("hdr", "full")))
    k = r.randrange(4)
    if k == 0:
        return [*name, lit(g), phi(ctx.mrn, "ID"), lit(g), *fill.date_pieces(ctx.dob, r, "numeric")]
    if k == 1:
        return [phi(ctx.mrn, "ID"), lit(g), *name]
    if k == 2:
        return [
            *name,
            lit(g),
            phi(str(ctx.age), "AGE"),
            lit(r.choice(("F", "M", " yo F", " y M"))),
            lit(g),
            phi(ctx.mrn, "ID"),
        ]
    return [
        *name,
        lit(" ("),
        phi(ctx.mrn, "ID"),
        lit(")"),
        lit(g),
        lit("Encounter date "),
        *fill.date_pieces(ctx.note_date, r, "numeric"),
    ]


def sec_transfer(ctx: Ctx) -> list[Piece]:
    r = ctx.r
    sep = r.choice(SEPARATORS)
    f = fill.facility(r, ctx.src)
    p, _ = ctx.staffer(r.choice(("attending", "hospitalist", "PCP")))
    items = [
        _kv(
            r,
            r.choice(("Transferring facility", "Referred from", "Sending hospital", "OSH")),
            fill.facility_pieces(f, r),
            sep,
            "keep",
        ),
        _kv(
            r,
            r.choice(("Accepting facility", "Receiving", "Destination")),
            fill.facility_pieces(ctx.fac, r),
            sep,
            "keep",
        ),
        _kv(
            r,
            r.choice(("Accepting physician", "Accepting MD", "Referring provider")),
            fill.staff_pieces(p, r, True),
            sep,
            "keep",
        ),
        _kv(r, r.choice(("Transfer date", "Date")), fill.date_pieces(ctx.note_date, r, "any"), sep, "keep"),
        _kv(
            r,
            r.choice(("Transfer #", "Reference #", "Case #")),
            [phi(fill.id_value(r, r.choice(("case", "generic"))), "ID")],
            sep,
            "keep",
        ),
    ]
    if r.random() < 0.5:
        items.append(_kv(r, "Address", fill.address_pieces(r, ctx.src, block=False), sep, "keep"))
    r.shuffle(items)
    return _join_lines(r, items[: r.randint(3, len(items))])


SECTIONS = {
    "header": (sec_header, ("Patient information", "Demographics", "Registration", "Patient")),
    "hpi": (sec_hpi, ("HPI", "History of present illness", "Subjective", "Interval history", "Narrative", "Note")),
    "social": (sec_social, ("Social history", "Social Hx", "SH", "Psychosocial", "Social")),
    "contacts": (sec_contacts, ("Contacts", "Emergency contacts", "Family contacts", "Support system")),
    "labs": (sec_labs, ("Labs", "Results", "Laboratory", "Recent labs")),
    "orders": (sec_orders, ("Orders", "Active orders", "Order history")),
    "care_team": (sec_care_team, ("Care team", "Treatment team", "Providers", "Team")),
    "meds": (sec_meds, ("Medications", "Meds", "Home meds", "Current medications")),
    "exam": (sec_exam, ("Exam", "Physical exam", "PE", "Objective", "Vitals")),
    "plan": (sec_plan, ("Assessment and plan", "A/P", "Plan", "Assessment/Plan", "Recommendations")),
    "insurance": (sec_insurance, ("Insurance", "Billing", "Coverage", "Financial")),
    "devices": (sec_devices, ("Devices", "Implants", "Immunizations", "Vaccines")),
    "comm_log": (sec_comm_log, ("Communication log", "Phone log", "Contacts/calls", "Events")),
    "signature": (sec_signature, ()),
    "banner": (sec_banner, ()),
    "transfer": (sec_transfer, ("Transfer", "Referral", "Transfer information")),
}
SECTION_WEIGHTS = {
    "header": 6,
    "hpi": 8,
    "social": 7,
    "contacts": 3,
    "labs": 3,
    "orders": 2,
    "care_team": 3,
    "meds": 4,
    "exam": 4,
    "plan": 6,
    "insurance": 2,
    "devices": 2,
    "comm_log": 3,
    "signature": 5,
    "banner": 3,
    "transfer": 2,
}
PROSE = {"hpi", "social", "plan", "comm_log"}


def wrap(text: str, spans: list[tuple[int, int, str]], width: int, into_spans: bool) -> str:
    """Turn spaces into newlines so no line exceeds ``width`` (length, hence offsets, unchanged)."""
    inside = bytearray(len(text))
    if not into_spans:
        for s, e, _ in spans:
            inside[s:e] = b"\x01" * (e - s)
    chars = list(text)
    col, last = 0, -1
    for i, ch in enumerate(chars):
        if ch == "\n":
            col, last = 0, -1
            continue
        col += 1
        if ch == " " and not inside[i] and col > 1:
            last = i
        if col > width and last >= 0:
            chars[last] = "\n"
            col = i - last
            last = -1
    return "".join(chars)


def build_section(name: str, ctx: Ctx) -> Section:
    r = ctx.r
    fn, titles = SECTIONS[name]
    b = NoteBuilder()
    if titles and r.random() < 0.85:
        b.text(_title(r, titles))
        b.text(r.choice(("\n", "\n", " ", "\n\n")))
    b.extend(fn(ctx))
    text = b.build()
    if name in PROSE and r.random() < 0.45:
        text = wrap(text, b.spans, r.randint(28, 100), r.random() < 0.15)
    return Section(name, text, list(b.spans), list(b.negatives))


def make_context(r: random.Random, src: Sources) -> Ctx:
    note_date = date(2008, 1, 1) + timedelta(days=r.randint(0, 6200))
    dob = note_date - timedelta(days=r.randint(18 * 365, 98 * 365) if r.random() < 0.93 else r.randint(10, 17 * 365))
    pt = fill.person(r, src)
    home = fill.us_place(r, src)
    return Ctx(
        r=r,
        src=src,
        pt=pt,
        note_date=note_date,
        dob=dob,
        home=home,
        fac=fill.facility(r, src, 0.1),
        mrn=fill.id_value(r, r.choice(("mrn", "mrn", "generic"))),
    )


MAX_CHARS = 4000
MIN_CHARS = 200


def compose_document(
    r: random.Random, src: Sources
) -> tuple[Ctx, str, list[tuple[int, int, str]], list[tuple[int, int, str]], list[str]]:
    """One document: (context, text, spans, hard negatives, section names)."""
    ctx = make_context(r, src)
    names = list(SECTION_WEIGHTS)
    k = r.randint(2, 7)
    chosen: list[str] = []
    while len(chosen) < k:
        s = r.choices(names, [SECTION_WEIGHTS[n] for n in names])[0]
        if s not in chosen or s in ("hpi", "plan") and chosen.count(s) < 2:
            chosen.append(s)
    r.shuffle(chosen)
    for pin, pos in (("header", 0), ("banner", 0), ("signature", -1)):
        if pin in chosen and r.random() < 0.7:
            chosen.remove(pin)
            chosen.insert(len(chosen) if pos == -1 else 0, pin)
    sections: list[Section] = []
    glues: list[str] = []
    total = 0

    def add(sec: Section) -> None:
        nonlocal total
        glue = r.choice(("\n\n", "\n", "\n\n", "\n\n\n", "\n \n")) if sections else ""
        if total + len(glue) + len(sec.text) <= MAX_CHARS:
            glues.append(glue)
            sections.append(sec)
            total += len(glue) + len(sec.text)

    for name in chosen:
        add(build_section(name, ctx))
    tries = 0
    while (total < MIN_CHARS or not any(sec.negatives for sec in sections)) and tries < 12:
        tries += 1
        add(build_section(r.choice(("meds", "exam", "hpi")), ctx))
    parts: list[str] = []
    spans: list[tuple[int, int, str]] = []
    negatives: list[tuple[int, int, str]] = []
    offset = 0
    for glue, sec in zip(glues, sections, strict=True):
        parts.append(glue)
        offset += len(glue)
        parts.append(sec.text)
        spans += [(s + offset, e + offset, lab) for s, e, lab in sec.spans]
        negatives += [(s + offset, e + offset, kd) for s, e, kd in sec.negatives]
        offset += len(sec.text)
    text = "".join(parts)
    if r.random() < 0.03:
        up = text.upper()
        if len(up) == len(text):
            text = up
    return ctx, text, spans, negatives, [s.name for s in sections]
