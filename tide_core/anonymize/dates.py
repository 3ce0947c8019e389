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

Dates in words and in other languages, read when none of the formats above matches the whole span
and written back in the same words: ``the third of July``, ``Thirty-First of December, 2018``,
``July the third, 2019``, ``6th day of May, two thousand and eleven`` (a year in words keeps its
style: "two thousand and …", "nineteen ninety-nine", "nineteen hundred and five", "nineteen
oh-five", "twenty nineteen"), ``August`` (a month alone: the month + year rule), and month names
in French, Italian, Spanish, Portuguese, Dutch, German, Polish, Greek and Hungarian (``3
septembre 2014``, ``7 de octubre de 2013``, ``6. Februar 2017``, ``23 Μαΐου 2022``, ``2010.
március 3.``, ``septembre 2014``), rendered in the same language, case and diacritics.

Ranges and lists move as one, every end by the patient's offset: written as one span (``7-11
March 2019``, ``between 7 and 11 March``, ``March 7, 2019 to March 11, 2019``) or as the spans
the word-date recognizer gives (``"7"`` and ``"11 March"``, shifted together by the engine through
:func:`date_runs` and :func:`anonymize_date_run_by`).  A day written alone takes its month and
year from its neighbours, and writes them when its shifted date no longer shares them ("between 29
March and 2 April").  A day alone outside a range, a weekday alone and a holiday name no day a
shift can move: they raise ``E410`` and stay masked.

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
import unicodedata
from collections.abc import Callable, Iterable, Sequence
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
        (
            "full",
            _WD + r"(?:the\s+)?" + _DAY + r"(?:\s+of\s+|\s+|-|\s*/\s*|)" + _MON + r"(?:,\s*|\s+|-|\s*/\s*|)" + _YEAR,
        ),
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
        if m is None or (unshiftable is not None and kind != "md") or (kind == "full" and _reads_as_day_range(m)):
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


def _reads_as_day_range(m: re.Match[str]) -> bool:
    """The match reads "March 7-11" as 7 March '11: a month name, a space, a day, "-" and two digits.

    That is a range of days ("March 7-11, 2019", where ", 2019" would read as a time of day), read
    as a range instead; "Mar-07-11", with no space after the month, stays a date.
    """
    groups = m.re.groupindex
    if not all(g in groups and m[g] is not None for g in ("mon", "day", "year")) or len(m["year"]) != 2:
        return False
    day_end = m.end("ord") if "ord" in groups and m["ord"] is not None else m.end("day")
    between = m.string[m.end("mon") : m.start("day")]
    return (
        m.start("mon") < m.start("day")
        and " " in between
        and between.strip(" .") == ""
        and m.string[day_end : m.start("year")] == "-"
    )


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
        elif kind == "m":
            date(DEFAULT_REFERENCE_YEAR, date_part(mo), 1)
        elif kind in ("d", "dy"):
            date(DEFAULT_REFERENCE_YEAR, 1, date_part(d))
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
    lang: str = ""  # the language of a month name in another language ("fr", "de", ...)


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


def _render(layout: _Layout, new: date, inserts: tuple[tuple[int, str], ...] = ()) -> str:
    """The date ``new`` written in ``layout`` (everything but the date parts kept verbatim).

    ``inserts`` are (position in ``layout.core``, text) pairs written at that position, before a
    part that starts there: the month or year a day of a range takes from its neighbour.
    """
    core = layout.core
    out = [layout.lead]
    last = 0
    pending = sorted(inserts, key=lambda t: t[0])
    for start, end, role, orig in layout.parts:
        last = _insert_up_to(out, core, last, start, pending)
        out.append(core[last:start])
        out.append(_render_part(role, orig, new, layout))
        last = end
    last = _insert_up_to(out, core, last, len(core), pending)
    out.append(core[last:])
    out.append(layout.trail)
    return "".join(out)


def _insert_up_to(out: list[str], core: str, last: int, upto: int, pending: list[tuple[int, str]]) -> int:
    """Write ``core`` from ``last`` with every pending insert at a position up to ``upto``; the new ``last``."""
    while pending and pending[0][0] <= upto:
        pos, text = pending.pop(0)
        if pos > last:
            out.append(core[last:pos])
            last = pos
        out.append(text)
    return last


def parse_date(text: str, reference_year: int | None = None) -> ParsedDate:
    """Parse ``text`` (the whole span) into a :class:`ParsedDate`; raises AnonymizationError."""
    kind, y, mo, d, layout = _parse_single(text)
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
    if role in _WORD_ROLES:
        return _render_word_part(role, orig, new, layout)
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
    if kind in ("my", "m"):  # a month alone moves like a month + year (its year is not written)
        months = sign * max(1, round(abs(offset) / 30.44))
        total = (DEFAULT_REFERENCE_YEAR if kind == "m" else date_part(y)) * 12 + (date_part(mo) - 1) + months
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
    the length of one anonymizer.  A date written in words, in another language or as a range
    (``"7-11 March 2019"``) is read when no numeric or English month-name format matches
    (:func:`_parse_single`, :func:`_shift_range_text`).
    """
    try:
        kind, y, mo, d, layout = _parse(text)
    except AnonymizationError as exc:
        if exc.code != "E410":
            raise
        try:
            kind, y, mo, d, layout = _parse_words(text)
        except AnonymizationError as words_exc:
            if words_exc.code != "E410":
                raise
            return _shift_range_text(text, offset, reference_year, exc), "date.shift"
    if kind == "y":  # the year as parsed (normalised), with its white space
        return _decade(date_part(y), layout.lead + layout.core + layout.trail), "date.decade"
    yearless = kind in ("md", "m")  # no year written: nothing to leave MIN_YEAR..MAX_YEAR
    if not yearless and not MIN_YEAR <= date_part(y) <= MAX_YEAR:
        raise _out_of_range()
    try:
        new = _shifted(kind, y, mo, d, offset(), reference_year)
    except (OverflowError, ValueError):
        raise _out_of_range() from None
    if not yearless and not MIN_YEAR <= new.year <= MAX_YEAR:
        raise _out_of_range()
    return _render(layout, new), "date.shift"


def shift_date(keyring: KeyRing, patient_id: str, text: str, reference_year: int | None = None) -> str:
    """Anonymize the date in ``text``: shifted by the patient's offset in the same format.

    A year alone becomes its decade.  Raises a coded AnonymizationError (E410/E411 unparseable,
    E413 range).
    """
    return anonymize_date(keyring, patient_id, text, reference_year)[0]


# --- dates written in words, in other languages, and ranges --------------------------------------
# Read only when no numeric or English month-name format above matches the whole span, so the
# formats above are read exactly as before.

_ORDINAL_UNITS = (
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
    "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth"
).split()
_CARDINALS = (
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen"
).split()
_TENS_WORDS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
#: Number words and their values ("ninety" 90, "nine" 9): a year in words is read by adding them up.
_CARDINAL_VALUES = {w: i + 1 for i, w in enumerate(_CARDINALS)} | {w: 20 + 10 * i for i, w in enumerate(_TENS_WORDS)}


def _ordinal_day_words() -> dict[str, int]:
    """Ordinal word -> day of the month: "first" .. "thirty-first" ("twenty first", "twentyfirst" too)."""
    table = {w: i + 1 for i, w in enumerate(_ORDINAL_UNITS)} | {"twentieth": 20, "thirtieth": 30}
    for sep in ("-", " ", ""):
        table |= {f"twenty{sep}{w}": 21 + i for i, w in enumerate(_ORDINAL_UNITS[:9])}
        table[f"thirty{sep}first"] = 31
    return table


_ORDINAL_DAYS = _ordinal_day_words()


def _alternation(words: Iterable[str]) -> str:
    """Regex alternation of ``words``, longest first, spaces read as any white space."""
    return "|".join(
        re.escape(w).replace("\\ ", " ").replace(" ", r"\s+") for w in sorted(words, key=lambda w: (-len(w), w))
    )


#: Month names in the other languages the word-date recognizer (``tide.dates_words``) reads,
#: genitive forms where the language writes dates with them (Polish, Greek).
_FOREIGN_MONTHS: dict[str, tuple[str, ...]] = {
    lang: tuple(unicodedata.normalize("NFC", names).split())
    for lang, names in {
        "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
        "it": "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
        "es": "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
        "pt": "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro",
        "nl": "januari februari maart april mei juni juli augustus september oktober november december",
        "de": "januar februar märz april mai juni juli august september oktober november dezember",
        "pl": "stycznia lutego marca kwietnia maja czerwca lipca sierpnia września października listopada grudnia",
        "el": "ιανουαρίου φεβρουαρίου μαρτίου απριλίου μαΐου ιουνίου ιουλίου αυγούστου σεπτεμβρίου "
        "οκτωβρίου νοεμβρίου δεκεμβρίου",
        "hu": "január február március április május június július augusztus szeptember október november december",
    }.items()
}
#: Other spellings read as a month of one language ("setiembre", Austrian "Jänner").
_FOREIGN_VARIANTS = {("es", "setiembre"): 9, ("de", "jänner"): 1}
#: When a month word belongs to several languages and nothing else tells them apart.
_LANGUAGE_ORDER = ("fr", "it", "es", "pt", "nl", "de", "pl", "el", "hu")


def _fold(word: str, lang: str) -> str:
    """``word`` without its diacritics, as it is written on a keyboard without them ("maerz", "fevrier")."""
    if lang == "de":
        return word.replace("ä", "ae").replace("ö", "oe").replace("ü", "ue")
    return "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))


def _foreign_lookup() -> dict[str, dict[str, tuple[int, bool]]]:
    """Month word (lower case) -> {language: (month, written as the language spells it)}."""
    table: dict[str, dict[str, tuple[int, bool]]] = {}
    spellings = [(lang, name, i + 1) for lang, names in _FOREIGN_MONTHS.items() for i, name in enumerate(names)]
    spellings += [(lang, name, month) for (lang, name), month in _FOREIGN_VARIANTS.items()]
    for lang, name, month in spellings:
        table.setdefault(name, {})[lang] = (month, True)
        table.setdefault(_fold(name, lang), {}).setdefault(lang, (month, False))
    return table


_FOREIGN_LOOKUP = _foreign_lookup()

_DAY_ANY = r"(?:(?P<dword>" + _alternation(_ORDINAL_DAYS) + r")|" + _DAY + r")"
_UNDER_100 = (
    r"(?:(?:"
    + "|".join(_TENS_WORDS)
    + r")(?:[- ](?:"
    + "|".join(_CARDINALS[:9])
    + r"))?|"
    + "|".join(_CARDINALS[9:][::-1] + _CARDINALS[:9])
    + ")"
)
_CENTURY = r"(?:" + "|".join(_CARDINALS[9:]) + r"|twenty)"
#: A year in words: "two thousand and eleven", "nineteen ninety-nine", "nineteen hundred and five",
#: "nineteen oh-five", "twenty nineteen".
_YEAR_WORDS = (
    r"(?:two\s+thousand(?:(?:\s+and)?\s+" + _UNDER_100 + r")?"
    r"|" + _CENTURY + r"\s+hundred(?:(?:\s+and)?\s+" + _UNDER_100 + r")?"
    r"|" + _CENTURY + r"\s+oh[- ](?:" + "|".join(_CARDINALS[:9]) + r")"
    r"|" + _CENTURY + r"\s+(?:(?:" + "|".join(_TENS_WORDS) + r")(?:[- ](?:" + "|".join(_CARDINALS[:9]) + r"))?"
    r"|" + "|".join(_CARDINALS[9:]) + r"))"
)
_YEAR_ANY = r"(?:(?P<year>\d{4}|'\d{2})|(?P<yword>" + _YEAR_WORDS + r"))"
_FMON = r"(?P<fmon>" + _alternation(_FOREIGN_LOOKUP) + r")(?![^\W\d_])"
_FDAY = r"(?P<day>\d{1,2})(?:(?P<fsuf>er|o|a)|\.)?"  # "1er", "1º" (NFKC: "1o"), "6." (German)

#: (kind, pattern): kind None is "full" with a year and "md" without.  Parts: ``wd`` weekday,
#: ``day``/``ord``/``dword`` day, ``fsuf`` a day's suffix in another language, ``mon`` English
#: month, ``fmon`` month in another language, ``year``/``yword`` year.
_WORD_PATTERNS: list[tuple[str | None, re.Pattern[str]]] = [
    (k, re.compile(p, re.I))
    for k, p in [
        # "the third of July", "Thirty-First of December, 2018", "6th day of May, two thousand and eleven"
        (None, _WD + r"(?:the\s+)?" + _DAY_ANY + r"(?:\s+day)?(?:\s+of)?\s+" + _MON + r"(?:,?\s+" + _YEAR_ANY + ")?"),
        # "July the third, 2019", "Monday, July third", "July 4th, twenty nineteen"
        (None, _WD + _MON + r"\s+(?:the\s+)?" + _DAY_ANY + r"(?:,?\s+" + _YEAR_ANY + ")?"),
        ("m", _MON),  # "since August", "early Jan"
        # "3 septembre 2014", "7 de octubre de 2013", "6. Februar 2017", "3. April 2017", "23 Μαΐου 2022"
        ("full", _FDAY + r"\s+(?:de\s+)?(?:" + _FMON + "|" + _MON + r"),?\s+(?:de\s+)?(?P<year>\d{4})"),
        ("full", r"(?P<year>\d{4})\.\s+" + _FMON + r"\s+(?P<day>\d{1,2})\.?"),  # "2010. március 3."
        ("my", _FMON + r",?\s+(?:de\s+)?(?P<year>\d{4})"),  # "septembre 2014"
        ("md", _FDAY + r"\s+(?:de\s+)?" + _FMON),  # "3 septembre"
    ]
]
#: One end of a range or one item of a list, read only beside the date that gives its month:
#: "7" and "11" in "between 7 and 11 March", "28, 2010" in "September 2 through 28, 2010".
_PIECE_PATTERNS: list[tuple[str | None, re.Pattern[str]]] = [
    ("d", re.compile(r"(?:the\s+)?" + _DAY_ANY, re.I)),
    ("dy", re.compile(_DAY_ANY + r",?\s+" + _YEAR_ANY, re.I)),
]
_WORD_ROLES = frozenset({"dword", "yword", "fmon", "fsuf"})
_PART_GROUPS = ("wd", "day", "ord", "dword", "fsuf", "mon", "fmon", "year", "yword")
_DAY_ROLES = frozenset({"day", "ord", "dword", "fsuf"})
_MONTH_ROLES = frozenset({"month", "mon", "fmon"})
_YEAR_ROLES = frozenset({"year", "yword"})


def _parse_single(text: str) -> tuple[str, int | None, int | None, int | None, _Layout]:
    """(kind, year, month, day, layout) of one date in any format this module reads."""
    try:
        return _parse(text)
    except AnonymizationError as exc:
        if exc.code != "E410":
            raise
    return _parse_words(text)


def _parse_words(text: str, piece: bool = False) -> tuple[str, int | None, int | None, int | None, _Layout]:
    """(kind, year, month, day, layout) of a date in words or in another language; raises AnonymizationError.

    With ``piece`` a day alone and a day with a year (kinds ``d``, ``dy``) are read too: they are
    dates only beside the date of a range or list that gives their month.
    """
    text = normalize_surface(text)
    core = text.strip()
    for kind, rx in _WORD_PATTERNS + (_PIECE_PATTERNS if piece else []):
        m = rx.fullmatch(core)
        if m is not None:
            return _word_layout(text, core, kind, m)
    raise _bad("E410", "date span is in no supported format")


def _word_layout(
    text: str, core: str, kind: str | None, m: re.Match[str]
) -> tuple[str, int | None, int | None, int | None, _Layout]:
    """(kind, year, month, day, layout) of the word-date match ``m`` of ``core``."""
    y = mo = d = None
    year_width = 4
    lang = ""
    numeric: list[str] = []
    parts: list[tuple[int, int, str, str]] = []
    mon_end = -1
    for grp in sorted((g for g in _PART_GROUPS if g in m.re.groupindex and m[g] is not None), key=m.start):
        orig = m[grp]
        if grp == "day":
            d = int(orig)
            numeric.append(orig)
        elif grp == "dword":
            d = _ORDINAL_DAYS[re.sub(r"\s+", " ", orig.lower())]
        elif grp == "mon":
            mo, mon_end = _mon_index(orig), m.end(grp)
        elif grp == "fmon":
            lang = _foreign_language(orig, core, m)
            mo, mon_end = _FOREIGN_LOOKUP[orig.lower()][lang][0], m.end(grp)
        elif grp == "year":
            y, year_width = _year_value(orig)
        elif grp == "yword":
            y = _year_words_value(orig)
        parts.append((m.start(grp), m.end(grp), grp, orig))
    if kind is None:
        kind = "md" if y is None else "full"
    _check_valid(kind, y, mo, d)
    after = core[mon_end : mon_end + 1] if mon_end >= 0 else ""
    lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]
    layout = _Layout(
        core,
        lead,
        trail,
        tuple(parts),
        _zero_padded(numeric),
        after in ("-", "/", ".") or after.isdigit(),
        year_width,
        lang,
    )
    return kind, y, mo, d, layout


def _foreign_language(word: str, core: str, m: re.Match[str]) -> str:
    """The language of a month name that is not English, from the word and how the date is written.

    A word several languages share ("marzo", "juni", "novembre") is read in the language the date's
    layout points to: year first ("2010. november 3.") Hungarian, "de" Spanish or Portuguese, a day
    written "6." or a capitalised month German; else the first of :data:`_LANGUAGE_ORDER`.
    """
    spellings = _FOREIGN_LOOKUP[word.lower()]
    langs = [lang for lang, (_, exact) in spellings.items() if exact] or list(spellings)
    if "year" in m.re.groupindex and m["year"] is not None and m.start("year") == 0 and "day" in m.re.groupindex:
        preferred: tuple[str, ...] = ("hu",)
    elif re.search(r"\bde\b", core, re.I):
        preferred = ("es", "pt")
    elif re.search(r"\d\.\s", core) or (word[:1].isupper() and not word.isupper()):
        preferred = ("de",)
    else:
        preferred = ()
    return min(langs, key=lambda lang: (lang not in preferred, _LANGUAGE_ORDER.index(lang)))


def _year_words_value(text: str) -> int:
    """The year a year in words names ("two thousand and eleven" 2011, "nineteen oh-five" 1905)."""
    words = [w for w in re.split(r"[\s-]+", text.lower()) if w and w != "and"]
    if words[:2] == ["two", "thousand"]:
        return 2000 + _cardinal(words[2:])
    if "hundred" in words:
        i = words.index("hundred")
        return _cardinal(words[:i]) * 100 + _cardinal(words[i + 1 :])
    rest = words[2:] if words[1:2] == ["oh"] else words[1:]
    return _cardinal(words[:1]) * 100 + _cardinal(rest)


def _cardinal(words: list[str]) -> int:
    """The number the number words add up to (["ninety", "nine"] 99)."""
    return sum(_CARDINAL_VALUES[w] for w in words)


def _cardinal_words(n: int, sep: str) -> str:
    """``n`` (0 < n < 100) in words, tens and units joined by ``sep`` ("ninety-nine")."""
    if n < 20:
        return _CARDINALS[n - 1]
    tens, units = divmod(n, 10)
    return _TENS_WORDS[tens - 2] + (sep + _CARDINALS[units - 1] if units else "")


def _year_words(template: str, year: int) -> str:
    """``year`` in words, in the style of ``template`` (the year as written).

    The style is kept when it can write the year ("two thousand [and] …" for 2000-2099, "nineteen
    hundred [and] …", "nineteen oh-five", "nineteen ninety-nine"); otherwise the year is written as a
    pair ("nineteen ninety-nine"), or "two thousand" for 2000, still in words.
    """
    low = re.sub(r"\s+", " ", template.lower())
    joined = re.search(r"(?:" + "|".join(_TENS_WORDS) + r"|\boh)([- ])(?:" + "|".join(_CARDINALS[:9]) + r")\b", low)
    sep = joined.group(1) if joined else "-"
    also = " and " if " and " in low else " "
    century, rest = divmod(year, 100)
    if 2000 <= year <= 2099 and ("thousand" in low or rest == 0 or ("hundred" in low and century == 20)):
        words = "two thousand" + (also + _cardinal_words(rest, sep) if rest else "")
    elif "hundred" in low or rest == 0:
        words = _cardinal_words(century, sep) + " hundred" + (also + _cardinal_words(rest, sep) if rest else "")
    elif rest < 10:
        words = _cardinal_words(century, sep) + " oh" + sep + _cardinal_words(rest, sep)
    else:
        words = _cardinal_words(century, sep) + " " + _cardinal_words(rest, sep)
    return _case_words(template, words)


def _ordinal_word(template: str, day: int) -> str:
    """``day`` as an ordinal word in the style of ``template`` ("third", "Twenty-First", "twenty first")."""
    joined = re.match(r"(?i)(?:twenty|thirty)([- ]?)(?=[a-z])", template)
    sep = re.sub(r"\s+", " ", joined.group(1)) if joined else "-"
    if day < 20:
        word = _ORDINAL_UNITS[day - 1]
    elif day % 10 == 0:
        word = "twentieth" if day == 20 else "thirtieth"
    else:
        word = _TENS_WORDS[day // 10 - 2] + sep + _ORDINAL_UNITS[day % 10 - 1]
    return _case_words(template, word)


def _case_words(template: str, words: str) -> str:
    """``words`` in the letter case of ``template``: upper, every word capitalised, the first, or lower."""
    letters = [c for c in template if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return words.upper()
    shown = [w for w in re.findall(r"[^\W\d_]+", template) if w.lower() not in ("and", "of", "oh")]
    if len(shown) > 1 and all(w[0].isupper() for w in shown):
        return re.sub(
            r"[^\W\d_]+", lambda w: w.group() if w.group() in ("and", "oh") else w.group().capitalize(), words
        )
    if shown and shown[0][0].isupper():
        return words[:1].upper() + words[1:]
    return words


def _foreign_month(template: str, month: int, lang: str) -> str:
    """Month ``month`` in language ``lang``, spelt like ``template`` (with or without diacritics, same case).

    The month as written is kept when the shift stays in it ("setiembre", "Jänner").
    """
    written, _ = _FOREIGN_LOOKUP[template.lower()][lang]
    if written == month:
        return template
    canonical = _FOREIGN_MONTHS[lang][written - 1]
    word = _FOREIGN_MONTHS[lang][month - 1]
    if template.lower() != canonical and template.lower() == _fold(canonical, lang):
        word = _fold(word, lang)
    return _case_like(template, word)


def _render_word_part(role: str, orig: str, new: date, layout: _Layout) -> str:
    """The text of a word-date part (role ``dword``/``yword``/``fmon``/``fsuf``) for ``new``."""
    if role == "dword":
        return _ordinal_word(orig, new.day)
    if role == "yword":
        return _year_words(orig, new.year)
    if role == "fmon":
        return _foreign_month(orig, new.month, layout.lang)
    # "1er", "1º": the suffix of the first of the month stays on the first only
    first_only = any(r == "day" and o.lstrip("0") == "1" for _, _, r, o in layout.parts)
    return orig if new.day == 1 or not first_only else ""


# --- ranges and lists: one patient offset for every end ------------------------------------------

#: What joins the ends of a range or the items of a list ("7-11", "7 and 11", "7, 8 and 11",
#: "March 7th through the 11th"); matched on the normalised text between two dates.
_RUN_SEPARATOR = re.compile(
    r"\s*(?:-|&|,|(?<![^\W\d_])(?:to|and|or|through|thru|until|till)\b)\s*(?:(?:and|or)\s+)?(?:the\s+)?", re.I
)
_RANGE_LEAD = re.compile(r"(?:(?:between|from)\s+)?(?:the\s+)?", re.I)
_MAX_RANGE_SEPARATORS = 12
#: The longest text between two dates of one run (" through the " and markup around it).
_MAX_GAP = 40


class _Piece(NamedTuple):
    """One end of a range or one item of a list, as written (month or year may be missing)."""

    kind: str
    year: int | None
    month: int | None
    day: int
    layout: _Layout


def _piece(text: str) -> _Piece:
    """Read one end of a range; raises AnonymizationError when it is no date with a day."""
    try:
        kind, y, mo, d, layout = _parse(text)
    except AnonymizationError as exc:
        if exc.code != "E410":
            raise
        kind, y, mo, d, layout = _parse_words(text, piece=True)
    if d is None:  # a year, a month or a month + year: no end of a range of days
        raise _bad("E410", "date span is no day")
    return _Piece(kind, y, mo, d, layout)


def _needs_neighbours(pieces: list[_Piece]) -> bool:
    """Some piece takes its month, or its year, from another one."""
    with_year = any(p.year is not None for p in pieces)
    return any(p.month is None or (with_year and p.year is None) for p in pieces)


def _part_span(layout: _Layout, roles: frozenset[str]) -> tuple[int, int] | None:
    """(first start, last end) of the parts of ``layout`` with one of ``roles``, or None."""
    spans = [(s, e) for s, e, role, _ in layout.parts if role in roles]
    return (min(s for s, _ in spans), max(e for _, e in spans)) if spans else None


def _day_first(layout: _Layout) -> bool:
    """The day is written before the month ("11 March", "5th of June")."""
    day, month = _part_span(layout, _DAY_ROLES), _part_span(layout, _MONTH_ROLES)
    return day is not None and month is not None and day[0] < month[0]


def _nearest(pieces: list[_Piece], i: int, has: Callable[[_Piece], bool], after_first: bool) -> int | None:
    """The index of the piece nearest ``i`` for which ``has`` holds, looking after it first or before it first."""
    later = [j for j in range(i + 1, len(pieces)) if has(pieces[j])]
    earlier = [j for j in range(i - 1, -1, -1) if has(pieces[j])]
    order = later + earlier if after_first else earlier + later
    return order[0] if order else None


def _names_month(piece: _Piece) -> bool:
    """The piece names its month in a word ("11 March", "3 septembre"), which a bare day can borrow."""
    return any(role in ("mon", "fmon") for _, _, role, _ in piece.layout.parts)


def _run_sources(pieces: list[_Piece]) -> tuple[list[int], list[int | None]]:
    """For every piece, the piece its month comes from and the piece its year comes from (None: no year).

    A day without a month takes it from the nearest later date written day first ("7 and 11
    March"), else from the nearest earlier one ("March 7 through 11"); a date without a year takes
    the nearest later year, else the nearest earlier one.
    """
    months: list[int] = []
    years: list[int | None] = []
    for i, p in enumerate(pieces):
        src = (
            i if p.month is not None else _nearest(pieces, i, lambda q: _names_month(q) and _day_first(q.layout), True)
        )
        if src is None:
            src = _nearest(pieces, i, _names_month, False)
        if src is None:
            raise _bad("E410", "no date of the range names a month")
        months.append(src)
        years.append(i if p.year is not None else _nearest(pieces, i, lambda q: q.year is not None, True))
    return months, years


def _run_dates(pieces: list[_Piece], reference_year: int | None) -> tuple[list[date], list[int], list[int | None]]:
    """The date each piece names, and where its month and year come from (:func:`_run_sources`).

    A year taken from a later date is one less when the day lies after that date ("28 December
    to 3 January 2020"), one more when taken from an earlier date it lies before.  Without any
    year the dates lie in ``reference_year`` as a month + day does.
    """
    months, years = _run_sources(pieces)
    ry = reference_year or DEFAULT_REFERENCE_YEAR
    if any((pieces[months[i]].month, p.day) == (2, 29) for i, p in enumerate(pieces)) and not _leap(ry):
        ry = DEFAULT_REFERENCE_YEAR
    out = []
    for i, p in enumerate(pieces):
        month, src = date_part(pieces[months[i]].month), years[i]
        year = ry
        if src is not None:
            year = date_part(pieces[src].year)
            there = (date_part(pieces[months[src]].month), pieces[src].day)
            year += -1 if src > i and (month, p.day) > there else 1 if src < i and (month, p.day) < there else 0
        try:
            out.append(date(year, month, p.day))
        except ValueError:
            raise _bad("E411", "a date of the range is not a valid calendar date") from None
    return out, months, years


def _shift_run(pieces: list[_Piece], offset: int, reference_year: int | None) -> list[str]:
    """Every piece shifted by ``offset`` and written in its own layout.

    A piece writes the month (and year) it took from a neighbour when its shifted date no longer
    shares it ("between 29 March and 2 April"), or when it would otherwise read as written.
    """
    days, months, years = _run_dates(pieces, reference_year)
    with_year = any(p.year is not None for p in pieces)
    if with_year and not _in_range(*days):
        raise _out_of_range()
    try:
        new = [d + timedelta(days=offset) for d in days]
    except OverflowError:
        raise _out_of_range() from None
    if with_year and not _in_range(*new):
        raise _out_of_range()
    out = []
    for i, p in enumerate(pieces):
        ysrc = years[i]
        add_year = p.year is None and ysrc is not None and new[i].year != new[ysrc].year
        add_month = p.month is None and (add_year or new[i].month != new[months[i]].month)
        text = _render_piece(pieces, i, new[i], add_month, add_year, months[i], ysrc)
        if p.month is None and not add_month and text.strip().casefold() == p.layout.core.casefold():
            text = _render_piece(pieces, i, new[i], True, add_year, months[i], ysrc)
        out.append(text)
    return out


def _render_piece(
    pieces: list[_Piece], i: int, new: date, add_month: bool, add_year: bool, msrc: int, ysrc: int | None
) -> str:
    """Piece ``i`` written for ``new``, with the month and year of its sources added where asked."""
    layout = pieces[i].layout
    day = _part_span(layout, _DAY_ROLES)
    if day is None:  # every piece names a day
        raise _bad("E410", "date span is no day")
    inserts: list[tuple[int, str]] = []
    at = day[1]
    if add_month:
        src = pieces[msrc].layout
        s, e, role, orig = next(p for p in src.parts if p[2] in _MONTH_ROLES)
        month = _render_part(role, orig, new, src)
        src_day = _part_span(src, _DAY_ROLES) or (e, e)
        if _day_first(src):  # "7" -> "7 April" like "11 April"
            inserts.append((day[1], src.core[src_day[1] : s] + month))
        elif any(r in ("ord", "dword") for _, _, r, _ in layout.parts):  # "the 11th" -> "the 2nd of April"
            inserts.append((day[1], " of " + month))
        else:  # "11, 2019" -> "April 2, 2019" like "March 7"
            joint = src.core[e : src_day[0]]
            inserts.append((day[0], month + (" " if "the" in joint.lower() or not joint else joint)))
    elif add_year:
        at = max(day[1], (_part_span(layout, _MONTH_ROLES) or day)[1])
    if add_year and ysrc is not None:
        ylay = pieces[ysrc].layout
        s, e, role, orig = next(p for p in ylay.parts if p[2] in _YEAR_ROLES)
        before = max((pe for _, pe, r, _ in ylay.parts if pe <= s and r not in _YEAR_ROLES), default=s)
        inserts.append((at, ylay.core[before:s] + _render_part(role, orig, new, ylay)))
    return _render(layout, new, tuple(inserts))


def anonymize_date_run_by(
    values: Sequence[str], offset: Callable[[], int], reference_year: int | None = None
) -> list[tuple[str, str]] | None:
    """Shift the dates of one range or list, written as separate spans, as one: ``["7", "11 March"]``.

    Each end moves by the patient's ``offset()``; a day written alone takes its month and year
    from its neighbours (:func:`_run_sources`), so the interval between the ends is kept and
    both ends are written in their own layout.  Returns one (surrogate, ``date.shift``) per value,
    or None when the values do not read as one range that needs reading together (the caller keeps
    each value's own result: a day alone stays masked).
    """
    try:
        pieces = [_piece(v) for v in values]
        if len(pieces) < 2 or not _needs_neighbours(pieces):
            return None
        return [(text, "date.shift") for text in _shift_run(pieces, offset(), reference_year)]
    except AnonymizationError:
        return None


def date_runs(text: str, spans: Sequence[tuple[int, int]]) -> list[list[int]]:
    """Runs of two or more of ``spans`` (date offsets in ``text``, in text order) that read as one range or list.

    Two neighbouring dates belong to one run when only a range or list separator lies between
    them ("7" and "11 March" in "between 7 and 11 March": " and ").
    """
    runs: list[list[int]] = []
    current: list[int] = []
    for i, (start, _) in enumerate(spans):
        gap = text[spans[i - 1][1] : start] if i > 0 else ""
        joined = 0 < len(gap) <= _MAX_GAP and _RUN_SEPARATOR.fullmatch(normalize_surface(gap)) is not None
        if not joined:
            if len(current) > 1:
                runs.append(current)
            current = []
        current.append(i)
    if len(current) > 1:
        runs.append(current)
    return runs


def _segments(body: str) -> list[tuple[str, str]] | None:
    """``body`` split into dates and the separators after them (the last one's is ""), or None.

    The first date is the longest that leaves a readable rest ("March 7, 2019 to March 11, 2019").
    """
    seps = list(_RUN_SEPARATOR.finditer(body))
    if not seps or len(seps) > _MAX_RANGE_SEPARATORS:
        return None
    readable: dict[str, bool] = {}

    def is_piece(s: str) -> bool:
        """``s`` reads as one end of a range."""
        if s not in readable:
            try:
                _piece(s)
                readable[s] = bool(s.strip())
            except AnonymizationError:
                readable[s] = False
        return readable[s]

    @functools.cache
    def split(start: int) -> tuple[tuple[str, str], ...] | None:
        """``body[start:]`` as (date, separator) pairs, or None."""
        if start > 0 and is_piece(body[start:]):
            return ((body[start:], ""),)
        for m in reversed(seps):
            if m.start() > start and is_piece(body[start : m.start()]):
                rest = split(m.end())
                if rest is not None:
                    return ((body[start : m.start()], m.group()), *rest)
        return None

    found = split(0)
    return list(found) if found else None


def _shift_range_text(text: str, offset: Callable[[], int], reference_year: int | None, exc: AnonymizationError) -> str:
    """A range or list of dates written as one span ("between 7 and 11 March 2019"), shifted as one.

    Raises ``exc`` (the span is in no supported format) when ``text`` reads as no such range.
    """
    norm = normalize_surface(text)
    core = norm.strip()
    lead = _RANGE_LEAD.match(core)
    body = core[lead.end() if lead else 0 :]
    segments = _segments(body)
    if segments is None:
        raise exc
    pieces = [_piece(s) for s, _ in segments]
    shifted = _shift_run(pieces, offset(), reference_year)
    head = norm[: len(norm) - len(norm.lstrip())] + core[: len(core) - len(body)]
    return head + "".join(t + sep for t, (_, sep) in zip(shifted, segments, strict=True)) + norm[len(norm.rstrip()) :]


def dates_named(text: str, reference_year: int | None = None) -> list[date]:
    """The days a date span names: one date, or every end of a range or list ("7-11 March 2019").

    A date without a year lies in ``reference_year`` (2000 when None), as the shift reads it.
    Raises a coded AnonymizationError for a span that names no day (a year, a month + year).
    """
    try:
        kind, y, mo, d, _ = _parse_single(text)
    except AnonymizationError as exc:
        if exc.code != "E410":
            raise
        core = normalize_surface(text).strip()
        lead = _RANGE_LEAD.match(core)
        segments = _segments(core[lead.end() if lead else 0 :])
        if segments is None:
            raise
        return _run_dates([_piece(s) for s, _ in segments], reference_year)[0]
    if kind not in ("full", "md"):
        raise _bad("E410", "date span names no day")
    if kind == "md":  # the day a shift of this month + day starts from (2/29 in a leap year)
        return [_shifted(kind, y, mo, d, 0, reference_year)]
    return [date(date_part(y), date_part(mo), date_part(d))]
