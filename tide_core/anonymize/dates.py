"""Per-patient, interval-preserving date shifting that writes dates back in their own format.

Every date of one patient moves by the same keyed offset, so intervals between full dates are
exact.  The offset is ``HMAC(subkey("date"), patient_id)``-derived: magnitude 3..180 days, either
sign (never 0, never under 3 days).  A new key gives a new, unlinkable offset.

Formats understood (case-insensitive month and weekday names, optional attached time of day):
``3/4/2021``, ``03/04/21``, ``03-04-2021``, ``2021-03-04``, ``2021/03/04``, ``20210304``,
``2021-03-04T14:30:00Z``, ``03/04/2021 14:30``, ``March 3, 2021``, ``Mar. 3 2021``,
``Tuesday, March 3rd, 2021``, ``3 March 2021``, ``3rd of March, 2021``, ``03-Mar-2021``,
``March 3rd``, ``3 Mar``, ``3/4`` (month/day), ``March 2021``, ``Mar '21``, ``03/2021``,
``2021-03``, ``2019`` and ``'19``.  Numeric dates are US month/day/year unless the first number
cannot be a month (``25/03/2021`` is day/month/year).

Partial dates (documented rule, see docs/anonymizer.md):
* month + day, no year: shifted by the exact offset inside ``reference_year`` (the note's year
  when the engine knows it, else the leap year 2000, so "2/29" stays valid);
* month + year: moved by the patient's offset *rounded to whole months, at least one, in the
  offset's direction* (``sign * max(1, round(|offset| / 30.44))``), so it always changes, keeps
  month-precision intervals exactly and stays within about half a month of the full dates;
* year alone: generalised to its decade (``2019`` -> ``2010s``, ``'19`` -> ``'10s``;
  operator ``date.decade``).  A year shifted by a keyed offset cannot both change and stay
  unlinkable: moved one year in the offset's direction, two releases under different keys
  disagree for half the patients and the original year is then their midpoint (measured: 250 of
  548 year-only dates).  The decade is the same under every key and carries nothing keyed, so
  comparing any number of releases gives back the decade and no more.
The time of day is kept verbatim (shifts are whole days).  Dates outside years 1000..9998, or that
a shift would carry out of them (``0001-01-01``, ``9999-12-31`` placeholders), raise ``E413`` and
the note is quarantined whatever ``on_unparseable_date`` says (a masked sentinel would hide a data
problem; a shifted one is impossible).  Anything else raises a coded ``AnonymizationError``; the
engine masks or quarantines it, it never passes through.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

from tide_core.anonymize.keys import KeyRing
from tide_core.errors import AnonymizationError

OFFSET_MIN, OFFSET_MAX = 3, 180
#: Years a date (as written, and once shifted) must lie in; outside them the note is quarantined (E413).
MIN_YEAR, MAX_YEAR = 1000, 9998
DEFAULT_REFERENCE_YEAR = 2000  # leap year: "2/29" without a year stays valid
TWO_DIGIT_PIVOT = 69  # like strptime %y: 69..99 -> 19xx, 00..68 -> 20xx

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def date_offset_days(keyring: KeyRing, patient_id: str) -> int:
    """The patient's keyed shift in days: 3..180 in magnitude, either sign."""
    v = keyring.mac_int("date", "offset", str(patient_id))
    magnitude = OFFSET_MIN + (v >> 1) % (OFFSET_MAX - OFFSET_MIN + 1)
    return -magnitude if v & 1 else magnitude


def _out_of_range() -> AnonymizationError:
    return AnonymizationError(
        "E413",
        f"date is outside years {MIN_YEAR}..{MAX_YEAR}, or its shift would leave them",
        hint="a placeholder date (year 1, year 9999) cannot be shifted: store NULL for an unknown "
        "date; the note stays quarantined until then",
    )


def _in_range(*days: date) -> bool:
    return all(MIN_YEAR <= d.year <= MAX_YEAR for d in days)


def shift_note_date(keyring: KeyRing, patient_id: str, iso_date: object) -> str | None:
    """Shift a note's ISO ``yyyy-mm-dd`` date (or ``datetime.date``); ``None`` stays ``None``.

    Raises ``E412`` for text that is no ISO date and ``E413`` for a date outside (or shifted
    outside) years ``MIN_YEAR..MAX_YEAR``; never ``OverflowError``.
    """
    if iso_date is None:
        return None
    if isinstance(iso_date, date):
        d = iso_date
    else:
        try:
            d = date.fromisoformat(str(iso_date)[:10])
        except ValueError:
            raise AnonymizationError(
                "E412", "note_date is not an ISO yyyy-mm-dd date", hint="store note_date as DATE or ISO text"
            ) from None
    try:
        new = d + timedelta(days=date_offset_days(keyring, patient_id))
    except OverflowError:
        raise _out_of_range() from None
    if not _in_range(d, new):
        raise _out_of_range()
    return new.isoformat()


# --- patterns ------------------------------------------------------------------------------
_MON = (
    r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_WD = (
    r"(?:(?P<wd>mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun"
    r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\.?,?\s+)?"
)
_DAY = r"(?P<day>\d{1,2})(?P<ord>st|nd|rd|th)?"
_YEAR = r"'?(?P<year>\d{4}|\d{2})"
_TIME = (
    r"(?:(?:\s*,\s*|\s+at\s+|\s+@\s*|\s+|T)(?:\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:\s*[ap]\.?m\.?)?"
    r"|(?:[01]\d|2[0-3])[0-5]\d(?:\s*h(?:rs?)?)?)"  # military time: "03/04/2021 1430"
    r"(?:\s*(?:z|[+-]\d{2}:?\d{2}|[ecmp][sd]t|utc|gmt))?)?"
)

# (kind, regex, numeric-group order for ambiguous "a/b/y")
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (k, re.compile(p + (_TIME if k in ("full", "ambig") else ""), re.I))
    for k, p in [
        ("full", r"(?P<year>\d{4})(?P<s1>[-/.])(?P<month>\d{1,2})(?P=s1)(?P<day>\d{1,2})"),
        ("ambig", r"(?P<a>\d{1,2})(?P<s1>[-/.])(?P<b>\d{1,2})(?P=s1)(?P<year>\d{4}|\d{2})"),
        ("full", r"(?P<year>(?:1[89]|2[01])\d{2})(?P<month>0[1-9]|1[0-2])(?P<day>0[1-9]|[12]\d|3[01])"),
        ("full", _WD + _MON + r"(?:\s+|-|\s*/\s*)" + _DAY + r"(?:,\s*|\s+|-|\s*/\s*)" + _YEAR),
        ("full", _WD + _DAY + r"(?:\s+of\s+|\s+|-|\s*/\s*|)" + _MON + r"(?:,\s*|\s+|-|\s*/\s*|)" + _YEAR),
        ("md", _WD + _MON + r"(?:\s+|-)" + _DAY),
        ("md", _WD + r"(?:the\s+)?" + _DAY + r"(?:\s+of\s+|\s+|-)" + _MON),
        ("my", _MON + r"(?:,?\s+|\s+of\s+|-|\s*/\s*)(?P<year>\d{4}|'\d{2})"),
        ("my", r"(?P<month>\d{1,2})(?P<s1>[/-])(?P<year>\d{4})"),
        ("my", r"(?P<year>\d{4})(?P<s1>[/-])(?P<month>\d{1,2})"),
        ("md", r"(?P<month>\d{1,2})(?P<s1>/|-)(?P<day>\d{1,2})"),
        ("y", r"(?P<year>'\d{2}|\d{4})"),
    ]
]
# Named groups of the time suffix are not needed: the time is copied verbatim.


@dataclass(frozen=True)
class ParsedDate:
    """What a date string says, and how to write a new date in the same format."""

    kind: str  # "full" | "md" | "my" | "y"
    year: int | None
    month: int | None
    day: int | None
    render: Callable[[date], str]


def date_part(v: int | None) -> int:
    """A year, month or day the date's kind guarantees; ``None`` raises ``TypeError`` as ``date(None, ...)`` does."""
    if v is None:
        raise TypeError("date part missing")
    return v


def _case_like(template: str, word: str) -> str:
    letters = [c for c in template if c.isalpha()]
    if letters and all(c.isupper() for c in letters) and len(letters) > 1:
        return word.upper()
    if letters and all(c.islower() for c in letters):
        return word.lower()
    return word[:1].upper() + word[1:].lower()


def _month_name(template: str, month: int, abbr_may: bool = False) -> str:
    """New month name in the template's style: full or 3-letter ("Sept" kept), same case.

    "May" is both; it is read as an abbreviation when followed by "-", "/", "." or a digit
    ("09-MAY-2012", "06MAY2021"), else as a full name ("May 3, 2021").
    """
    full = MONTHS[month - 1]
    t = template.lower()
    if t == "may":
        word = full[:3] if abbr_may else full
    elif t in MONTHS:
        word = full
    elif t == "sept" and month == 9:
        word = "sept"
    else:
        word = full[:3]
    return _case_like(template, word)


def _weekday_name(template: str, d: date) -> str:
    full = WEEKDAYS[d.weekday()]
    word = full if template.lower() in WEEKDAYS else full[:3]
    return _case_like(template, word)


def _ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _year_value(text: str) -> tuple[int, int]:
    """(year, written width) — a 2-digit year is resolved with the %y pivot."""
    digits = text.lstrip("'")
    y = int(digits)
    if len(digits) == 2:
        y += 1900 if y >= TWO_DIGIT_PIVOT else 2000
    return y, len(digits)


def _mon_index(token: str) -> int:
    t = token.lower()
    for i, name in enumerate(MONTHS):
        if name.startswith(t[:3]):
            return i + 1
    raise ValueError(token)


def _bad(code: str, what: str) -> AnonymizationError:
    return AnonymizationError(
        code,
        what,
        hint="write the date in a supported format (docs/anonymizer.md) "
        "or let the engine mask it (on_unparseable_date='mask')",
    )


def parse_date(text: str, reference_year: int | None = None) -> ParsedDate:
    """Parse ``text`` (the whole span) into a :class:`ParsedDate`; raises AnonymizationError."""
    core = text.strip()
    lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]
    found = next(((kind, m) for kind, rx in _PATTERNS if (m := rx.fullmatch(core))), None)
    if found is None:
        raise _bad("E410", "date span is in no supported format")
    kind, m = found
    g = m.groupdict()
    roles: dict[str, str] = {}
    if kind == "ambig":
        a, b = int(g["a"]), int(g["b"])
        if a > 12 and b <= 12:
            roles = {"a": "day", "b": "month"}
        else:
            roles = {"a": "month", "b": "day"}
        kind = "full"
    for name in ("month", "day"):
        if g.get(name) is not None:
            roles[name] = name
    if g.get("mon") is not None:
        roles["mon"] = "mon"
    if g.get("year") is not None:
        roles["year"] = "year"
    if g.get("wd") is not None:
        roles["wd"] = "wd"
    if g.get("ord") is not None:
        roles["ord"] = "ord"
    values: dict[str, int] = {}
    year_width = 4
    for grp, role in roles.items():
        if role in ("month", "day"):
            values[role] = int(g[grp])
        elif role == "mon":
            values["month"] = _mon_index(g[grp])
        elif role == "year":
            values["year"], year_width = _year_value(g[grp])
    y, mo, d = values.get("year"), values.get("month"), values.get("day")
    try:
        if kind == "full":
            date(date_part(y), date_part(mo), date_part(d))
        elif kind == "md":
            date(DEFAULT_REFERENCE_YEAR, date_part(mo), date_part(d))
        elif kind == "my":
            date(date_part(y), date_part(mo), 1)
        elif not 1000 <= date_part(y) <= 2999:
            raise ValueError
    except (ValueError, TypeError):
        raise _bad("E411", f"date span is not a valid calendar date ({kind})") from None

    numeric = [g[k] for k, r in roles.items() if r in ("month", "day")]
    if "mon" in roles:  # "March 05, 2021": pad the day only if it was padded
        padded = any(len(x) == 2 and x.startswith("0") for x in numeric)
    else:  # numeric: a leading zero -> padded, a 1-digit part -> not
        padded = not any(len(x) == 1 for x in numeric)
    abbr_may = False
    if "mon" in roles:
        after = core[m.end("mon") : m.end("mon") + 1]
        abbr_may = after in ("-", "/", ".") or after.isdigit()

    def num(value: int) -> str:
        return f"{value:02d}" if padded else str(value)

    def render(new: date) -> str:
        pieces = []
        for grp, role in roles.items():
            s, e = m.span(grp)
            orig = g[grp]
            if role == "month":
                rep = num(new.month)
            elif role == "day":
                rep = num(new.day)
            elif role == "mon":
                rep = _month_name(orig, new.month, abbr_may)
            elif role == "ord":
                rep = _ordinal(new.day)
                rep = rep.upper() if orig.isupper() else rep
            elif role == "wd":
                rep = _weekday_name(orig, new)
            else:  # year
                prefix = "'" if orig.startswith("'") else ""
                short = str(new.year % 100).zfill(2)
                # a two-digit year that would read back in another century (2068 -> '69' -> 1969)
                # is written in full, so the shifted date keeps its interval to every other date
                if year_width == 2 and _year_value(short)[0] == new.year:
                    rep = prefix + short
                else:
                    rep = str(new.year).zfill(4)
            pieces.append((s, e, rep))
        out = core
        for s, e, rep in sorted(pieces, reverse=True):
            out = out[:s] + rep + out[e:]
        return lead + out + trail

    return ParsedDate(kind, y, mo, d, render)


def shifted_date(parsed: ParsedDate, offset: int, reference_year: int | None = None) -> date:
    """The shifted day for ``parsed`` (full dates: exact; partial dates: the precision rule).

    :func:`anonymize_date` never shifts a year alone (it writes the decade); the ``y`` branch
    below is kept for callers of this function only.
    """
    sign = -1 if offset < 0 else 1
    if parsed.kind == "full":
        return date(date_part(parsed.year), date_part(parsed.month), date_part(parsed.day)) + timedelta(days=offset)
    if parsed.kind == "md":
        ry = reference_year or DEFAULT_REFERENCE_YEAR
        if (parsed.month, parsed.day) == (2, 29) and not _leap(ry):
            ry = DEFAULT_REFERENCE_YEAR
        return date(ry, date_part(parsed.month), date_part(parsed.day)) + timedelta(days=offset)
    if parsed.kind == "my":
        months = sign * max(1, round(abs(offset) / 30.44))
        total = date_part(parsed.year) * 12 + (date_part(parsed.month) - 1) + months
        return date(total // 12, total % 12 + 1, 1)
    return date(date_part(parsed.year) + sign * max(1, round(abs(offset) / 365.25)), 1, 1)


def _leap(y: int) -> bool:
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


def generalise_year(parsed: ParsedDate, text: str) -> str:
    """A year alone, written as its decade in the same style: ``2019`` -> ``2010s``, ``'19`` -> ``'10s``."""
    if parsed.kind != "y":
        raise ValueError("not a year-only date")
    core = text.strip()
    lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]
    decade = date_part(parsed.year) - date_part(parsed.year) % 10
    if core.startswith("'"):
        return f"{lead}'{decade % 100:02d}s{trail}"
    return f"{lead}{decade}s{trail}"


def anonymize_date(keyring: KeyRing, patient_id: str, text: str, reference_year: int | None = None) -> tuple[str, str]:
    """(surrogate, operator): ``date.shift`` (the patient's offset) or ``date.decade`` (a year alone)."""
    parsed = parse_date(text, reference_year)
    if parsed.kind == "y":
        return generalise_year(parsed, text), "date.decade"
    if parsed.kind != "md" and not _in_range(date(date_part(parsed.year), parsed.month or 1, 1)):
        raise _out_of_range()
    try:
        new = shifted_date(parsed, date_offset_days(keyring, patient_id), reference_year)
    except (OverflowError, ValueError):
        raise _out_of_range() from None
    if parsed.kind != "md" and not _in_range(new):
        raise _out_of_range()
    return parsed.render(new), "date.shift"


def shift_date(keyring: KeyRing, patient_id: str, text: str, reference_year: int | None = None) -> str:
    """Anonymize the date in ``text``: shifted by the patient's offset in the same format (a year
    alone: its decade).  Raises a coded AnonymizationError (E410/E411 unparseable, E413 range)."""
    return anonymize_date(keyring, patient_id, text, reference_year)[0]
