"""Per-patient, interval-preserving date shifting that writes dates back in their own format.

Every date of one patient moves by the same keyed offset, so intervals between full dates are
exact.  The offset is ``HMAC(subkey("date"), patient_id)``-derived: magnitude 3..180 days, either
sign (never 0, never under 3 days).  Without a study date secret a new key gives a new, unlinkable
offset, and k linked releases under k keys narrow each true date (their offsets' differences are
exact); with one (``<study>/dates.key``, see ``keys.py``) ``subkey("date")`` comes from it, so every
key version of the study gives a patient the same offset and the same dates (month + year dates
too): k releases reveal what one does, and dates link them.

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

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import NamedTuple

from tide_core.anonymize.keys import KeyRing
from tide_core.errors import AnonymizationError
from tide_core.text.normalize import normalize_surface

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
    """The patient's keyed shift in days: 3..180 in magnitude, either sign.

    It is the same under every key of the study when the key ring holds the study's date secret.
    """
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
    (k, re.compile(p + (_TIME if k in ("full", "ambig", "md") else ""), re.I))
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
        ("md", _WD + r"(?P<month>\d{1,2})(?P<s1>/|-)(?P<day>\d{1,2})"),
        ("y", r"(?P<year>'\d{2}|\d{4})"),
    ]
]
# Named groups of the time suffix are not needed: the time is copied verbatim.

#: Groups that carry a date part, and their role (the numbers of an ambiguous "a/b/y" date are the
#: month and the day, in an order the parser decides).
_ROLE_GROUPS = frozenset({"a", "b", "month", "day", "mon", "year", "wd", "ord"})
_AMBIG_ROLES = {"a": ("month", "day"), "b": ("day", "month")}  # [month first, day first]


def _group_roles(rx: re.Pattern[str], day_first: bool) -> tuple[tuple[str, str], ...]:
    """(group, role) of each date-part group of ``rx``, in pattern order (which is text order)."""
    groups = sorted((grp for grp in rx.groupindex if grp in _ROLE_GROUPS), key=rx.groupindex.__getitem__)
    return tuple((grp, _AMBIG_ROLES[grp][day_first] if grp in _AMBIG_ROLES else grp) for grp in groups)


#: (kind, pattern, group roles month first, group roles day first), in the order patterns are tried.
_MATCHERS = [(kind, rx, _group_roles(rx, False), _group_roles(rx, True)) for kind, rx in _PATTERNS]


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


_MONTH_BY_PREFIX = {name[:3]: i + 1 for i, name in enumerate(MONTHS)}


def _mon_index(token: str) -> int:
    """The month (1..12) a month word names.

    Its first three letters are unique to one month, and every word the month pattern reads starts
    with them ("Sept", "June", "Mar.").
    """
    month = _MONTH_BY_PREFIX.get(token[:3].lower())
    if month is None:  # a look-alike the case-blind pattern let through ("ſept"): never guess
        raise _bad("E411", "date span names no month")
    return month


def _bad(code: str, what: str) -> AnonymizationError:
    return AnonymizationError(
        code,
        what,
        hint="write the date in a supported format (docs/anonymizer.md) "
        "or let the engine mask it (on_unparseable_date='mask')",
    )


def _match(core: str) -> tuple[str, re.Match[str], tuple[tuple[str, str], ...]]:
    """(kind, match, (group, role) of its date parts) for the first pattern that matches all of ``core``.

    An ambiguous numeric date ("a/b/y") is a full date, month first unless only day first is valid.
    """
    unshiftable: tuple[str, re.Match[str], tuple[tuple[str, str], ...]] | None = None
    for kind, rx, month_first, day_first in _MATCHERS:
        m = rx.fullmatch(core)
        if m is None or (unshiftable is not None and kind != "md"):
            continue
        if kind == "full" and unshiftable is None and _four_digit_year_outside(m):
            # "Feb 23 0550" is 23 February at 05:50, not the year 550: a month/day reading with a
            # time wins; without one the date stays unshiftable (E413, as for "0001-01-01")
            unshiftable = kind, m, month_first
            continue
        if kind != "ambig":
            return kind, m, month_first
        a, b = int(m["a"]), int(m["b"])
        return "full", m, day_first if a > 12 and b <= 12 else month_first
    if unshiftable is not None:
        return unshiftable
    raise _bad("E410", "date span is in no supported format")


def _four_digit_year_outside(m: re.Match[str]) -> bool:
    """The match's year is written with four digits and lies outside ``MIN_YEAR..MAX_YEAR``."""
    year = m["year"]
    return year is not None and len(year) == 4 and not MIN_YEAR <= int(year) <= MAX_YEAR


def _check_valid(kind: str, y: int | None, mo: int | None, d: int | None) -> None:
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


class _Layout(NamedTuple):
    """How a parsed date is written: the text around it, its parts left to right and their style."""

    core: str  # the span without surrounding white space
    lead: str
    trail: str
    parts: tuple[tuple[int, int, str, str], ...]  # (start, end, role, as written) in ``core``
    padded: bool  # month and day numbers written with two digits
    abbr_may: bool  # "May" is an abbreviation here ("09-MAY-2012")
    year_width: int


def _parse(text: str) -> tuple[str, int | None, int | None, int | None, _Layout]:
    """(kind, year, month, day, layout) of the date ``text``; raises AnonymizationError.

    The date is read in the normalised view recognition saw (:func:`normalize_surface`:
    ``1961–07–14`` with en dashes is ``1961-07-14``, ``07&#47;14&#47;1961`` is ``07/14/1961``,
    ``0 7 / 1 4 / 1 9 6 1`` is ``07/14/1961``) and written back in that form, so a date the
    recognizers found is shifted as a whole, never in part.
    """
    text = normalize_surface(text)
    core = text.strip()
    kind, m, roles = _match(core)
    y = mo = d = None
    year_width = 4
    numeric: list[str] = []  # the month and day numbers as written
    parts: list[tuple[int, int, str, str]] = []
    mon_end = -1
    for grp, role in roles:  # in text order
        orig = m[grp]
        if orig is None:
            continue
        if role == "month":
            mo = int(orig)
            numeric.append(orig)
        elif role == "day":
            d = int(orig)
            numeric.append(orig)
        elif role == "mon":
            mo = _mon_index(orig)
            mon_end = m.end(grp)
        elif role == "year":
            y, year_width = _year_value(orig)
        start, end = m.span(grp)
        parts.append((start, end, role, orig))
    _check_valid(kind, y, mo, d)
    if mon_end >= 0:  # "March 05, 2021": pad the day only if it was padded
        padded = _zero_padded(numeric)
        after = core[mon_end : mon_end + 1]
        abbr_may = after in ("-", "/", ".") or after.isdigit()
    else:  # numeric: a leading zero -> padded, a 1-digit part -> not
        padded = 1 not in map(len, numeric)
        abbr_may = False
    lead = trail = ""
    if len(core) != len(text):
        lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]
    return kind, y, mo, d, _Layout(core, lead, trail, tuple(parts), padded, abbr_may, year_width)


def _zero_padded(numbers: list[str]) -> bool:
    """True when one of the numbers is written as two digits with a leading zero ("05")."""
    for x in numbers:
        if len(x) == 2 and x.startswith("0"):
            return True
    return False


def _render(layout: _Layout, new: date) -> str:
    """The date ``new`` written in ``layout`` (everything but the date parts kept verbatim)."""
    core = layout.core
    out = [layout.lead]
    last = 0
    for start, end, role, orig in layout.parts:
        out.append(core[last:start])
        out.append(_render_part(role, orig, new, layout))
        last = end
    out.append(core[last:])
    out.append(layout.trail)
    return "".join(out)


def parse_date(text: str, reference_year: int | None = None) -> ParsedDate:
    """Parse ``text`` (the whole span) into a :class:`ParsedDate`; raises AnonymizationError."""
    kind, y, mo, d, layout = _parse(text)
    return ParsedDate(kind, y, mo, d, functools.partial(_render, layout))


def _render_part(role: str, orig: str, new: date, layout: _Layout) -> str:
    """The text of one date part (role ``month``/``day``/``mon``/``ord``/``wd``/``year``) for ``new``."""
    if role == "month":
        return f"{new.month:02d}" if layout.padded else str(new.month)
    if role == "day":
        return f"{new.day:02d}" if layout.padded else str(new.day)
    if role == "mon":
        return _month_name(orig, new.month, layout.abbr_may)
    if role == "ord":
        rep = _ordinal(new.day)
        return rep.upper() if orig.isupper() else rep
    if role == "wd":
        return _weekday_name(orig, new)
    prefix = "'" if orig.startswith("'") else ""
    short = str(new.year % 100).zfill(2)
    # a two-digit year that would read back in another century (2068 -> '69' -> 1969)
    # is written in full, so the shifted date keeps its interval to every other date
    if layout.year_width == 2 and _year_value(short)[0] == new.year:
        return prefix + short
    return str(new.year).zfill(4)


def shifted_date(parsed: ParsedDate, offset: int, reference_year: int | None = None) -> date:
    """The shifted day for ``parsed`` (full dates: exact; partial dates: the precision rule).

    :func:`anonymize_date` never shifts a year alone (it writes the decade); the ``y`` branch
    below is kept for callers of this function only.
    """
    return _shifted(parsed.kind, parsed.year, parsed.month, parsed.day, offset, reference_year)


def _shifted(kind: str, y: int | None, mo: int | None, d: int | None, offset: int, reference_year: int | None) -> date:
    sign = -1 if offset < 0 else 1
    if kind == "full":
        return date(date_part(y), date_part(mo), date_part(d)) + timedelta(days=offset)
    if kind == "md":
        ry = reference_year or DEFAULT_REFERENCE_YEAR
        if (mo, d) == (2, 29) and not _leap(ry):
            ry = DEFAULT_REFERENCE_YEAR
        return date(ry, date_part(mo), date_part(d)) + timedelta(days=offset)
    if kind == "my":
        months = sign * max(1, round(abs(offset) / 30.44))
        total = date_part(y) * 12 + (date_part(mo) - 1) + months
        return date(total // 12, total % 12 + 1, 1)
    return date(date_part(y) + sign * max(1, round(abs(offset) / 365.25)), 1, 1)


def _leap(y: int) -> bool:
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


def generalise_year(parsed: ParsedDate, text: str) -> str:
    """A year alone, written as its decade in the same style: ``2019`` -> ``2010s``, ``'19`` -> ``'10s``."""
    if parsed.kind != "y":
        raise ValueError("not a year-only date")
    return _decade(date_part(parsed.year), text)


def _decade(year: int, text: str) -> str:
    """The decade of ``year`` written in the style of ``text``.

    ``text`` is the year as written, with its surrounding white space.
    """
    core = text.strip()
    lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]
    decade = year - year % 10
    if core.startswith("'"):
        return f"{lead}'{decade % 100:02d}s{trail}"
    return f"{lead}{decade}s{trail}"


def anonymize_date(keyring: KeyRing, patient_id: str, text: str, reference_year: int | None = None) -> tuple[str, str]:
    """(surrogate, operator): ``date.shift`` (the patient's offset) or ``date.decade`` (a year alone)."""
    return anonymize_date_by(text, lambda: date_offset_days(keyring, patient_id), reference_year)


def anonymize_date_by(text: str, offset: Callable[[], int], reference_year: int | None = None) -> tuple[str, str]:
    """:func:`anonymize_date` with the patient's offset from ``offset()``.

    ``offset`` is called only for a date it shifts; the engine remembers each patient's offset for
    the length of one anonymizer.
    """
    kind, y, mo, d, layout = _parse(text)
    if kind == "y":  # the year as parsed (normalised), with its white space
        return _decade(date_part(y), layout.lead + layout.core + layout.trail), "date.decade"
    if kind != "md" and not MIN_YEAR <= date_part(y) <= MAX_YEAR:
        raise _out_of_range()
    try:
        new = _shifted(kind, y, mo, d, offset(), reference_year)
    except (OverflowError, ValueError):
        raise _out_of_range() from None
    if kind != "md" and not MIN_YEAR <= new.year <= MAX_YEAR:
        raise _out_of_range()
    return _render(layout, new), "date.shift"


def shift_date(keyring: KeyRing, patient_id: str, text: str, reference_year: int | None = None) -> str:
    """Anonymize the date in ``text``: shifted by the patient's offset in the same format.

    A year alone becomes its decade.  Raises a coded AnonymizationError (E410/E411 unparseable,
    E413 range).
    """
    return anonymize_date(keyring, patient_id, text, reference_year)[0]
