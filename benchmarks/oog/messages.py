"""The "messages" OOG corpus: short, mostly non-clinical texts full of personal data."""

from __future__ import annotations

from typing import Any

from benchmarks.oog.builder import Pieces
from benchmarks.oog.common import Ctx, age_on, pronouns
from benchmarks.oog.vocab import WORLD


def _slots(c: Ctx) -> dict[str, Any]:
    r, f, p = c.rng, c.f, c.pat.person
    other, third = f.person(16, 80), f.person(16, 80)
    company = f.org("company")
    s = {
        "ME": lambda: c.pt(r.choice(["full", "full", "first", "mid_init"])),
        "MEF": lambda: c.pt("first"),
        "ME_T": lambda: c.pt_titled(),
        "OTHER": lambda: c.pt(r.choice(["full", "first"]), other),
        "OTHERF": lambda: c.pt("first", other),
        "THIRD": lambda: c.pt(r.choice(["full", "first", "last_first"]), third),
        "ANYONE": lambda: c.pt(r.choice(["full", "first", "init_last"]), f.person(16, 80)),
        "DOC": lambda: c.doc(),
        "CLINIC": lambda: (f.facility(r.choice(["clinic", "hospital", "pharmacy"])), "HOSPITAL"),
        "COMPANY": (company, "OTHER"),
        "ORG": lambda: (f.org(), "OTHER"),
        "SCHOOL": lambda: (f.org("school"), "OTHER"),
        "EMPLOYER": lambda: (f.org("employer"), "OTHER"),
        "CITY": lambda: c.town(False),
        "CITY_ST": lambda: c.town(True),
        "WORLD": lambda: c.world(),
        "WCITY": lambda: c.b.tagged("place_alone", (f.world_city()[0], "LOCATION")),
        "COUNTRY": lambda: (f.country(), "LOCATION"),
        "ADDR": lambda: c.address(one_line=True),
        "STREET": lambda: (f.street(), "LOCATION"),
        "ZIP": lambda: (f.zip(), "LOCATION"),
        "DATE": lambda: c.dt(-700, 200),
        "DATE_T": lambda: c.dt(-30, 30, time=True),
        "YEAR": lambda: c.dt(-8000, -100, "year"),
        "DATE_OF": lambda: [("the ", None)] + c.dt(-100, 100, "ordinal_of"),
        "MON_D": lambda: c.dt(-60, 60, r.choice(["mon_d", "month_ordinal", "us_short", "weekday_short", "mon_d"])),
        "DOB": lambda: c.dt(d=p.dob),
        "AGE": lambda: c.age(),
        "AGE_PRED": lambda: c.age(kind="pred"),
        "AGE2": lambda: c.age(r.randint(2, 95)),
        "AGE_N": lambda: (str(r.randint(16, 90)), "AGE"),
        "PHONE": lambda: c.phone(),
        "PHONE_US": lambda: [(f.phone_us(), "PHONE")],
        "PHONE_INTL": lambda: c.phone(True),
        "EMAIL": lambda: (c.pat.email or f.email(p), "EMAIL"),
        "EMAIL2": lambda: (f.email(other), "EMAIL"),
        "EMAIL_CO": lambda: (f.email(third, f.slug(company) + r.choice([".com", ".io", ".co"])), "EMAIL"),
        "URL": lambda: (f.url(company if r.random() < 0.5 else None), "URL"),
        "IP": lambda: (f.ip(r.random() < 0.2), "URL"),
        "SSN": lambda: c.ident("ssn"),
        "PASSPORT": lambda: c.ident("passport"),
        "DL": lambda: c.ident("licence"),
        "ACCT": lambda: c.ident("account"),
        "CARD": lambda: c.ident("card"),
        "IBAN": lambda: c.ident("iban"),
        "ORDER": lambda: c.ident("order"),
        "MEMBER": lambda: c.ident("member"),
        "NOCUE_ID": lambda: c.b.tagged("id_no_cue", (f.ident(r.choice(["account", "order", "passport", "ssn"])), "ID")),
        "LAST4": lambda: (f.digits(4), "ID"),
        "TIME": lambda: (f.time_of_day(), None),
        "N": lambda: (str(r.randint(2, 40)), None),
        "AMOUNT": lambda: (r.choice(["$", "€", "£"]) + f"{r.uniform(5, 2400):.2f}", None),
        "PRODUCT": lambda: (
            r.choice(["router", "blender", "standing desk", "winter tires", "headphones", "phone case", "sofa"]),
            None,
        ),
    }
    s.update(pronouns(p))
    return s


def _pick(c: Ctx, bank: list[str], lo: int, hi: int, s: dict[str, Any], joiner: str = " ") -> None:
    for i, tpl in enumerate(c.rng.sample(bank, min(len(bank), c.rng.randint(lo, hi)))):
        if i:
            c.b.t(joiner)
        c.b.fill(tpl, s)


def email(c: Ctx) -> None:
    r = c.rng
    s = _slots(c)
    hdr: list[tuple[str, Pieces]] = [
        ("From", s["ME"]() + [(" <", None), s["EMAIL"](), (">", None)]),
        ("To", [s["EMAIL2"]()]),
        ("Date", c.dt(-5, 0, time=True, style=r.choice(["weekday_full", "d_month_y", "iso", "mon_d_y", "us"]))),
        (
            "Subject",
            [
                (
                    r.choice(
                        ["Re: Saturday", "moving update", "Invoice question", "Fwd: reference letter", "Quick favour"]
                    ),
                    None,
                )
            ],
        ),
    ]
    c.header(hdr[: r.randint(2, 4)], per_line=1)
    c.b.nl()
    c.b.t(r.choice(["Hi ", "Dear ", "Hello ", "Hey "]))
    c.put(s["OTHERF"]())
    c.b.t(",\n")
    bank = [
        "We finally moved to {CITY_ST} on {MON_D}; the new address is {ADDR}.",
        "Can you send the signed lease to {EMAIL} before {DATE}?",
        "My cousin {THIRD} starts at {COMPANY} next week, she says hi.",
        "Call me on {PHONE} if anything changes, I'm in {WCITY} until {DATE_OF}.",
        "The reference number they gave me is {ORDER}.",
        "Please pass this on to {ANYONE} at {ORG}.",
        "{OTHERF}'s birthday party is on {MON_D} at {TIME}, she turns {AGE_N}.",
        "The school ({SCHOOL}) needs the forms signed by {DATE}.",
        "Flight lands in {WORLD} at {TIME} on {DATE}.",
    ]
    _pick(c, bank, 2, 4, s)
    c.b.t(r.choice(["\n\nThanks,\n", "\n\nBest,\n", "\n\nCheers\n", "\n\n— "]))
    c.put(s["MEF"]() if r.random() < 0.5 else s["ME"]())
    if r.random() < 0.5:
        c.b.nl()
        c.put([s["COMPANY"]])
        c.b.t(r.choice([" | ", "\n"]))
        c.put(s["PHONE"]())
        if r.random() < 0.5:
            c.b.t(r.choice([" | ", "\n"]))
            c.put([s["URL"]()])
    c.b.nl()


def chat(c: Ctx) -> None:
    r = c.rng
    s = _slots(c)
    me, other = s["MEF"], s["OTHERF"]
    lines = [
        "did {THIRD} ever pay you back?",
        "im at the {CITY} station, train is late again",
        "my new number is {PHONE}",
        "lol {ANYONE} said the same thing",
        "she turns {AGE_N} on {MON_D}",
        "send it to {EMAIL}",
        "meeting moved to {DATE_T}",
        "grabbing coffee near {STREET}, want anything?",
        "ok",
        "omw",
        "landing in {WCITY} at {TIME}",
        "my account # is {ACCT} if you need it",
        "remember when we worked at {EMPLOYER}?",
        "link: {URL}",
        "ssn is {SSN} dont share",
    ]
    stamp_style = r.choice(["time", "datetime", "none", "bracket_dt"])
    for tpl in r.sample(lines, r.randint(3, 7)):
        if stamp_style == "time":
            c.b.t(f"[{c.f.time_of_day()}] ")
        elif stamp_style in ("datetime", "bracket_dt"):
            c.b.t("[" if stamp_style == "bracket_dt" else "")
            c.put(c.dt(-3, 0, style=r.choice(["us_short", "iso", "us"]), time=True))
            c.b.t("] " if stamp_style == "bracket_dt" else " - ")
        c.put((me if r.random() < 0.5 else other)())
        c.b.t(r.choice([": ", " > ", ": "]))
        c.b.fill(tpl, s)
        c.b.nl()


def form(c: Ctx) -> None:
    r, p = c.rng, c.pat
    s = _slots(c)
    c.b.t(
        r.choice(
            [
                "APPLICATION FORM",
                "New customer registration",
                "Tenant application",
                "Volunteer sign-up",
                "Visa appointment request",
            ]
        )
    ).nl()
    fields: list[tuple[str, Pieces]] = [
        (r.choice(["Full name", "Name", "Applicant"]), c.pt(r.choice(["full", "last_first", "full_mid"]))),
        (
            r.choice(["Date of birth", "DOB", "Birth date"]),
            c.dt(d=p.person.dob, style=r.choice(["us", "iso", "eu_dot", "d_month_y"])),
        ),
        ("Age", [(str(age_on(p.person.dob, c.date)), "AGE")]),
        ("Phone", [(p.phone, "PHONE")]),
        ("E-mail", [(p.email or c.f.email(p.person), "EMAIL")]),
        ("Address", c.address(p.street, p.city, p.state, p.zip) if p.street and p.zip else c.address()),
        (r.choice(["SSN", "Social Security No."]), c.ident("ssn"))
        if r.random() < 0.8
        else ("SSN (last 4)", [s["LAST4"]()]),
        (r.choice(["Driver's license", "DL #", "Licence number"]), c.ident("licence")),
        (r.choice(["Passport", "Passport number"]), c.ident("passport")),
        (r.choice(["Employer", "Company", "Current employer"]), [(c.f.org("employer"), "OTHER")]),
        (r.choice(["Emergency contact", "Next of kin"]), s["OTHER"]() + [(" ", None)] + s["PHONE"]()),
        (r.choice(["Country of birth", "Nationality"]), [s["COUNTRY"]()]),
        (r.choice(["Website", "Portfolio"]), [s["URL"]()]),
    ]
    fields = r.sample(fields, r.randint(4, 9))
    c.header(fields, per_line=r.choice([1, 1, 2]))
    if r.random() < 0.4:
        c.b.t(r.choice(["Signed: ", "Signature: "]))
        c.put(c.pt("full"))
        c.b.t(r.choice(["  Date: ", ", "]))
        c.put(c.dt(-2, 0))
        c.b.nl()


def support_ticket(c: Ctx) -> None:
    r = c.rng
    s = _slots(c)
    c.b.t(r.choice(["Ticket ", "Case #", "Support request "]))
    c.put(c.ident("order"))
    c.b.t(r.choice([" - ", ": ", "\n"]))
    c.put(c.dt(0, 0, time=True, style=r.choice(["iso", "us", "mon_d_y"])))
    c.b.nl()
    bank = [
        "Customer {ME} reports that the {PRODUCT} ordered on {DATE} (order {ORDER}) never arrived at {ADDR}.",
        "Card on file ending in {LAST4} was charged {AMOUNT} twice.",
        "Login attempts from IP {IP} were blocked at {TIME}.",
        "Customer can be reached at {PHONE} or {EMAIL}.",
        "Refund requested to card {CARD}.",
        "Verified identity using DOB {DOB} and last four of SSN {LAST4}.",
        "Customer asked us to speak with {HIS} {REL} {OTHER} instead.",
        "Replacement shipped from our {CITY} warehouse; tracking {NOCUE_ID}.",
        "The account holder moved to {WORLD} and wants statements sent by email.",
    ]
    s["REL"] = (r.choice(["husband", "wife", "son", "daughter", "roommate", "assistant"]), None)
    _pick(c, bank, 2, 4, s)
    c.b.nl()
    if r.random() < 0.6:
        c.b.t(r.choice(["Agent: ", "Handled by ", "-- "]))
        c.put(s["ANYONE"]())
        c.b.t(r.choice([" (Tier 2)", "", ", Customer Care"]))
        c.b.nl()


def sms(c: Ctx) -> None:
    r = c.rng
    s = _slots(c)
    c.b.fill(
        r.choice(
            [
                "hey its {MEF}, new phone. save this number. also {OTHERF} says call {PHONE}",
                "Your {COMPANY} verification code is {N}{N}. Do not share it. Sent to {PHONE}.",
                "Reminder: {ME_T} you have an appointment with {DOC} at {CLINIC} on {MON_D} at "
                "{TIME}. Reply C to confirm.",
                "pick up {OTHERF} from {SCHOOL} at {TIME} pls, im stuck in {CITY}",
                "{ME}: package for {ADDR} left at front desk {DATE_T}",
                "happy {AGE_N}th bday {OTHERF}!! see u in {WCITY}",
            ]
        ),
        s,
    )
    c.b.nl()


def short_sentence(c: Ctx) -> None:
    r = c.rng
    s = _slots(c)
    bank = [
        "{ME}, {AGE}, from {WORLD}, joined {COMPANY} in {YEAR}.",
        "{ANYONE} was born on {DOB} in {CITY_ST}.",
        "Please wire the deposit to {IBAN} by {DATE}.",
        "{ME_T} lives at {ADDR} with {HIS} dog.",
        "Passport {PASSPORT} issued to {ME} expires on {DATE}.",
        "Contact {OTHER} at {EMAIL2} or {PHONE_INTL}.",
        "The server at {IP} belongs to {ORG}.",
        "{ANYONE} graduated from {SCHOOL} on the {DATE_OF}.",
        "My SSN is {SSN} and my driver's license is {DL}.",
        "{THIRD} and {OTHER} met in {WCITY} in {YEAR}.",
        "Visit {URL} or call {PHONE} to renew your membership ({MEMBER}).",
        "{ME} ({AGE}) reported {HIS} wallet stolen near {STREET} on {MON_D}.",
        "Card number {CARD}, exp {EXP}, name on card {ME}.",
        "{ANYONE} flew from {CITY} to {WORLD} on {DATE}.",
        "Reference {NOCUE_ID} was assigned to {ME}.",
    ]
    s["EXP"] = (f"{r.randint(1, 12):02d}/{r.randint(24, 31)}", None)
    _pick(c, bank, 1, 3, s)
    c.b.nl()


def profile(c: Ctx) -> None:
    r = c.rng
    s = _slots(c)
    c.b.t(r.choice(["About me: ", "Bio\n", "Profile - ", ""]))
    bank = [
        "I'm {MEF}, {AGE_PRED}, originally from {WCITY} but living in {CITY} since {YEAR}.",
        "My mom was treated at {CLINIC} and now I fundraise for {ORG}.",
        "I studied at {SCHOOL} and spent {N} years at {EMPLOYER}.",
        "My partner {OTHER} and I run a small bakery on {STREET}.",
        "Reach me at {EMAIL} or {URL}.",
        "Currently traveling: {WORLD} until {MON_D}.",
        "Ask me about my trip to {COUNTRY} in {YEAR}!",
    ]
    _pick(c, bank, 2, 5, s)
    c.b.nl()


def booking(c: Ctx) -> None:
    r = c.rng
    s = _slots(c)
    c.b.t(r.choice(["BOOKING CONFIRMATION", "Your reservation", "E-ticket receipt"])).nl()
    city, cc = c.f.world_city()
    fields: list[tuple[str, Pieces]] = [
        ("Passenger", c.pt(r.choice(["upper_last_first", "full"]))),
        ("Booking ref", [(c.f.pattern("@#@@#@"), "ID")]),
        ("Passport", c.ident("passport")),
        ("Departure", c.dt(2, 120, style=r.choice(["dmy_mon", "d_month_y", "iso", "weekday_full"]), time=True)),
        ("From", c.town(r.random() < 0.5)),
        ("To", [(city, "LOCATION"), (", ", None), (WORLD[cc][0], "LOCATION")]),
        ("Contact", c.phone(r.random() < 0.5)),
        ("Email", [s["EMAIL"]()]),
    ]
    c.header(r.sample(fields, r.randint(4, len(fields))), per_line=r.choice([1, 2]))
    if r.random() < 0.5:
        c.b.fill("Manage your booking at {URL}.", s)
        c.b.nl()


def bank_alert(c: Ctx) -> None:
    r = c.rng
    s = _slots(c)
    c.b.fill(
        r.choice(
            [
                "Dear {ME_T}, a payment of {AMOUNT} to {COMPANY} was made from account {ACCT} on "
                "{DATE_T}. If this wasn't you, call {PHONE_US}.",
                "{COMPANY} Security: new sign-in to the account of {ME} from {IP} ({WCITY}) on {DATE_T}.",
                "Statement for {ME}, {ADDR}. IBAN {IBAN}. Period {DATE} to {DATE}.",
                "We could not verify card {CARD}. Please update your details at {URL} before {DATE}.",
            ]
        ),
        s,
    )
    c.b.nl()


def hr_record(c: Ctx) -> None:
    r = c.rng
    s = _slots(c)
    c.b.t(r.choice(["To whom it may concern,\n", "Employment verification\n", "Reference letter\n"]))
    bank = [
        "{ME} has been employed by {COMPANY} since {DATE} as a warehouse supervisor.",
        "{HE_C} previously worked for {EMPLOYER} in {CITY_ST}.",
        "Employee ID {NOCUE_ID}; SSN on file {SSN}.",
        "{HIS_C} manager, {OTHER}, can be reached at {EMAIL_CO} or {PHONE}.",
        "{HE_C} holds a degree from {SCHOOL} and is {AGE_PRED}.",
        "Last day of employment: {DATE}.",
    ]
    _pick(c, bank, 2, 4, s)
    c.b.t("\n\nSincerely,\n")
    c.put(s["THIRD"]())
    c.b.t(", HR\n")


MESSAGE_TYPES = {
    "email": email,
    "chat": chat,
    "form": form,
    "support_ticket": support_ticket,
    "sms": sms,
    "short_sentence": short_sentence,
    "profile": profile,
    "booking": booking,
    "bank_alert": bank_alert,
    "hr_record": hr_record,
}
