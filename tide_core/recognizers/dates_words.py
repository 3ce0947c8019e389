"""Dates written in words, both ends of date ranges, and weekdays tied to an event (``tide.dates_words``).

The regex layer (``tide.regex``) reads dates written with digits and a month name; this
recognizer adds what it leaves:

- days written as ordinal words: "the third of July", "July the third, 2019", "twenty-first of May",
  "the 6th day of May, two thousand and eleven" (a year in words too);
- month names in other languages with a day or a year: "3 septembre 2014", "2010. március 3.";
- holidays tied to an event: "on Christmas Eve", "since Thanksgiving";
- a day alone after a date preposition: "on the twenty-first", "by the 3rd.";
- a month named alone after a time word: "in mid-March 2020", "since August", "early Jan";
- both ends of a range: "between 7 and 11 March", "7–11 March 2019", "from 3 to 5 June",
  "March 7th through the 11th", "7, 8 and 11 March" (hyphen, en dash, em dash, minus sign, "&",
  "to", "and", "or", "through", "until");
- weekdays: with the date they name ("Monday 3 May", "Tuesday the 4th") and alone when a word ties
  them to one event ("last Tuesday", "on Monday", "since Friday", "Sunday night").

HIPAA Safe Harbor removes every element of a date more specific than the year.  A weekday alone
is such an element once tied to an event: with the note's date it gives the day ("seen last
Tuesday").  A weekday that names a recurring schedule ("every Monday", "on Mondays",
"Monday to Friday", "Mon/Wed/Fri") is no date and is left alone, as is a weekday with no word
tying it to an event.

Spans cover the date only, never the preposition or article before it ("on the twenty-first" ->
"twenty-first"); the anonymizer shifts what it can parse and masks the rest (``on_unparseable_date``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tide_core.recognizers.base import TideRecognizer
from tide_core.recognizers.patterns import MONTH_SAFE, word_alternation
from tide_core.spans import RecognizerResult

_UNITS = (
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth "
    "fifteenth sixteenth seventeenth eighteenth nineteenth"
).split()
#: ordinal word -> day of the month ("first" .. "thirty-first", "twenty first" too).
ORDINAL_DAYS: dict[str, int] = {w: i + 1 for i, w in enumerate(_UNITS)}
ORDINAL_DAYS["twentieth"] = 20
ORDINAL_DAYS["thirtieth"] = 30
for _i, _w in enumerate(_UNITS[:9]):
    for _sep in ("-", " ", ""):
        ORDINAL_DAYS[f"twenty{_sep}{_w}"] = 21 + _i
for _sep in ("-", " ", ""):
    ORDINAL_DAYS[f"thirty{_sep}first"] = 31

_ORD_WORD = "(?i:" + word_alternation(ORDINAL_DAYS) + r")(?![\w-])"
_ORD_NUM = r"(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th|ST|ND|RD|TH)(?!\w)"
_DAY_NUM = r"(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th|ST|ND|RD|TH)?(?![\w])"
#: A day of the month, in digits (an ordinal suffix optional) or as an ordinal word.
_DAY = "(?:" + _ORD_WORD + "|" + _DAY_NUM + ")"
_DAY_ORD = "(?:" + _ORD_WORD + "|" + _ORD_NUM + ")"
_YEAR = r"(?:(?:19|20)\d{2}|'\d{2})(?![\w])"
_MONTH = "(?:" + MONTH_SAFE + ")"
_CARD_UNITS = "one two three four five six seven eight nine".split()
_TEENS = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_UNDER_100 = "(?:" + "|".join(_TENS) + r")(?:[- ](?:" + "|".join(_CARD_UNITS) + "))?|" + "|".join(_TEENS + _CARD_UNITS)
#: A year in words: "two thousand and eleven", "nineteen ninety-nine", "nineteen hundred and five".
_YEAR_WORDS = (
    r"(?i:two\s+thousand(?:(?:\s+and)?\s+(?:" + _UNDER_100 + r"))?(?![\w-])"
    r"|nineteen\s+(?:hundred(?:(?:\s+and)?\s+(?:"
    + _UNDER_100
    + r"))?|oh[- ](?:"
    + "|".join(_CARD_UNITS)
    + ")|"
    + "|".join(_TENS[1:])
    + r"(?:[- ](?:"
    + "|".join(_CARD_UNITS)
    + r"))?)(?![\w-]))"
)
_OPT_YEAR = r"(?:,?\s{1,2}" + _YEAR + ")?"
_OPT_YEAR_OR_WORDS = r"(?:,?\s{1,2}(?:" + _YEAR + "|" + _YEAR_WORDS + "))?"
#: What joins the two ends of a range: hyphen, en dash, em dash, minus sign, "&", or a word.
_RANGE_SEP = r"\s*(?:-|\u2013|\u2014|\u2212|&|(?i:to|and|or|through|thru|until|till))\s*(?:(?i:the)\s+)?"
#: Month names in other languages (French, Spanish, Italian, Portuguese, German, Dutch, Polish,
#: Greek and Hungarian, genitive forms included), read only with a day number before them or a year after them.
_FOREIGN_MONTHS = (
    "janvier février fevrier mars avril mai juin juillet août aout septembre octobre novembre décembre decembre "
    "enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre diciembre "
    "gennaio febbraio aprile maggio giugno luglio settembre ottobre dicembre "
    "janeiro fevereiro março marco maio junho julho setembro outubro dezembro "
    "januar februar märz maerz juni juli oktober dezember jänner "
    "januari februari maart mei augustus "
    "stycznia lutego marca kwietnia maja czerwca lipca sierpnia września wrzesnia października pazdziernika "
    "listopada grudnia "
    "ιανουαρίου φεβρουαρίου μαρτίου απριλίου μαΐου μαιου ιουνίου ιουλίου αυγούστου σεπτεμβρίου "
    "οκτωβρίου νοεμβρίου δεκεμβρίου "
    "január február március április május június július augusztus szeptember október november december"
).split()
_FOREIGN_MONTH = "(?i:" + word_alternation(_FOREIGN_MONTHS) + r")(?![\w])"
#: Without a year, month names that are also English words ("10 mayo", "a mars bar") are not read.
_FOREIGN_MONTH_NO_YEAR = (
    "(?i:" + word_alternation(w for w in _FOREIGN_MONTHS if w not in ("mayo", "mars", "marco", "mai")) + r")(?![\w])"
)
#: "3 septembre 2014", "7 de octubre de 2013", "6. Februar 2017", "23 Μαΐου 2022", "septembre 2014",
#: year first as in Hungarian ("2010. március 3."), and "3. April 2017" (a day written with a period,
#: the year required: "3. May be" is a numbered list).
_FOREIGN_DATE = re.compile(
    r"(?<![\w.,/-])(?P<d>(?:19|20)\d{2}\.\s{1,2}"
    + _FOREIGN_MONTH
    + r"\s{1,2}(?:3[01]|[12]\d|0?[1-9])\.?(?!\d)|(?:3[01]|[12]\d|0?[1-9])\.\s{1,2}"
    + _MONTH
    + r",?\s{1,2}"
    + _YEAR
    + r"|(?:(?:3[01]|[12]\d|0?[1-9])(?:\.|(?i:er|º|o))?\s{1,2}(?:(?i:de)\s+)?(?:"
    + _FOREIGN_MONTH
    + r",?\s{1,2}(?:(?i:de)\s+)?(?:19|20)\d{2}(?![\w])|"
    + _FOREIGN_MONTH_NO_YEAR
    + r")|"
    + _FOREIGN_MONTH
    + r"\s{1,2}(?:(?i:de)\s+)?(?:19|20)\d{2}(?![\w])))"
)
_WEEKDAY_WORDS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_WEEKDAY_ABBR = ("Mon", "Tue", "Tues", "Wed", "Thu", "Thur", "Thurs", "Fri", "Sat", "Sun")
#: A full weekday name; a possessive "'s" may follow ("next Wednesday's visit"), a plural may not.
_WEEKDAY_FULL = "(?:" + "|".join(w for d in _WEEKDAY_WORDS for w in (d, d.upper())) + r")(?![\w])(?!'(?!s\b))"
_WEEKDAY_ANY = (
    "(?:"
    + "|".join(sorted({w for d in _WEEKDAY_WORDS + _WEEKDAY_ABBR for w in (d, d.upper())}, key=lambda w: (-len(w), w)))
    + r")(?![\w'])\.?"
)
_MONTH_FULL = (
    "(?:January|February|March|April|May|June|July|August|September|October|November|December|"
    r"Jan|Feb|Aug|Sept|Oct|Nov|Dec)(?![\w])"
)

# ------------------------------------------------------------------ single dates
#: "third of July", "21st of March 2019", "third July", "the 6th day of May, two thousand and eleven".
_ORD_OF_MONTH = re.compile(
    r"(?<![\w-])(?P<d>"
    + _DAY_ORD
    + r"(?:\s+(?i:day))?(?:\s+(?i:of))?\s{1,2}"
    + _MONTH
    + _OPT_YEAR_OR_WORDS
    + r")(?![\w])"
)
#: "July the third, 2019", "July third", "March the 7th".
_MONTH_THE_ORD = re.compile(
    r"(?<![\w-])(?P<d>" + _MONTH + r"\s{1,2}(?:(?i:the)\s+)?" + _DAY_ORD + _OPT_YEAR + r")(?![\w])"
)
#: "on the twenty-first", "by the 3rd": a day alone, only where a clause or phrase ends after it
#: (after "by" in digits only: "ranked by the fifth" is no date).
_CUED_DAY = re.compile(
    r"\b(?P<cue>(?i:on|by|since|until|till|starting))\s+(?i:the)\s+(?P<d>" + _DAY_ORD + r")"
    r"(?=\s*(?:[.,;:!?)]|$|\n)|\s+(?i:at|when|and|or|but|then|in\s+the\s+(?:morning|afternoon|evening)|"
    r"of\s+(?:this|next|last|the)\s+month)\b)"
)
#: "in mid-March 2020", "since August", "early Jan": a month alone after a time word.
_CUED_MONTH = re.compile(
    r"(?:\b(?i:in|since|during|until|till|through|by|from|before|after|early|late|mid|end\s+of|"
    r"beginning\s+of|start\s+of|middle\s+of)\s+(?:(?i:early|late|mid)(?:-|\s+))?|\b(?i:mid|early|late)-)"
    r"(?P<d>" + _MONTH_FULL + r"(?:,?\s{1,2}(?:of\s+)?" + _YEAR + r")?)(?![\w-])"
)

# ------------------------------------------------------------------ ranges
#: "between 7 and 11 March", "7–11 March 2019", "from 3 to 5 June", "the 7th to the 11th of March".
_RANGE_DAY_FIRST = re.compile(
    r"(?<![\w.,/:\-\u2013])(?P<d1>"
    + _DAY
    + r")(?:\s+(?i:of))?"
    + _RANGE_SEP
    + r"(?P<d2>"
    + _DAY
    + r"(?:\s+(?i:of))?\s{1,2}"
    + _MONTH
    + _OPT_YEAR
    + r")(?![\w])"
)
#: "March 7th through the 11th", "March 7–11, 2019", "July the third to the fifth".
_RANGE_MONTH_FIRST = re.compile(
    r"(?<![\w-])(?P<d1>"
    + _MONTH
    + r"\s{1,2}(?:(?i:the)\s+)?"
    + _DAY
    + r")"
    + _RANGE_SEP
    + r"(?P<d2>"
    + _DAY
    + r"(?:,?\s{1,2}(?P<y>"
    + _YEAR
    + r"))?)(?![\w]|[.,/:]\d)"
)
#: The earlier days of a list that ends in a range or pair: "7, 8 and 11 March" -> "7", "8".
_LIST_HEAD = re.compile(
    r"(?<![\w.,/:\-\u2013])(?P<d>"
    + _DAY
    + r")(?=,\s*(?:"
    + _DAY
    + r",\s*){0,5}"
    + _DAY
    + r",?\s*(?i:and|&|or)\s+"
    + _DAY
    + r"(?:\s+(?i:of))?\s{1,2}"
    + _MONTH
    + r"(?![\w]))"
)
#: After a day that follows its month: a unit or a counted noun means it was no day
#: ("March 3 - 5 episodes", "Jan 2 to 4 times", "May the second dose").
_NOT_DAY_AFTER = re.compile(
    r"\s*(?:%|/|(?!(?i:and|at|in|on|when|while|for|with|then|the|to|of|or|but|from|until|we|he|she|they|pt)\b)[a-z]+)"
)

# ------------------------------------------------------------------ weekdays
#: "Monday 3 May", "Monday, May 3rd", "Tuesday the 4th", "Fri the twenty-first".
_WEEKDAY_DATE = re.compile(
    r"(?<![\w])(?P<d>"
    + _WEEKDAY_ANY
    + r",?\s{1,2}(?:"
    + _DAY
    + r"(?:\s+(?i:of))?\s{1,2}"
    + _MONTH
    + _OPT_YEAR
    + "|"
    + _MONTH
    + r"\s{1,2}(?:(?i:the)\s+)?"
    + _DAY
    + _OPT_YEAR
    + r"|(?i:the)\s+"
    + _DAY_ORD
    + "|"
    + _ORD_NUM
    + r"))(?![\w])"
)
#: "last Tuesday", "on Monday", "since Friday", "next Wednesday's visit".
_WEEKDAY_CUED = re.compile(
    r"\b(?i:last|next|this|on|since|until|till|by|before|after|past|coming|following|previous|that)\s+"
    r"(?P<d>" + _WEEKDAY_FULL + r")"
)
#: "Sunday night", "Tuesday morning": a weekday that names a moment.
_WEEKDAY_MOMENT = re.compile(
    r"(?<![\w])(?P<d>" + _WEEKDAY_FULL + r")(?=\s+(?i:morning|afternoon|evening|night|overnight)\b)"
)
#: A schedule, not a date: another weekday follows in a list or range ("Monday to Friday", "Mon/Wed").
_SCHEDULE_AFTER = re.compile(
    r"\s*(?:,|/|&|-|\u2013|\u2014|(?i:and|or|to|through|thru|till|until))\s*(?:(?i:and|or)\s+)?" + _WEEKDAY_ANY
)
_SCHEDULE_BEFORE = re.compile(
    _WEEKDAY_ANY + r"\s*(?:,|/|&|-|\u2013|\u2014|(?i:and|or|to|through|thru|till|until))\s*(?:(?i:and|or)\s+)?$"
)


#: Holidays are dates too ("on Christmas Eve", "since Thanksgiving 2019"): after a word that
#: ties them to an event, so "Easter egg" or "Christmas tree" stay unmarked.
_HOLIDAY = re.compile(
    r"\b(?i:on|since|over|before|after|until|till|by|during|last|this|next|at|for|around|from)\s+"
    r"(?P<d>(?:Christmas(?:\s+(?:Eve|Day))?|New\s+Year's(?:\s+(?:Eve|Day))?|Thanksgiving(?:\s+Day)?|Easter(?:\s+(?:Sunday|Monday))?|"
    r"Boxing\s+Day|Independence\s+Day|Memorial\s+Day|Labor\s+Day|Labour\s+Day|Veterans\s+Day|Halloween|"
    r"Valentine's\s+Day|Mother's\s+Day|Father's\s+Day|Good\s+Friday|Hanukkah|Diwali|Eid(?:\s+al-(?:Fitr|Adha))?)"
    r"(?:,?\s{1,2}"
    + _YEAR
    + r")?)(?![\w'])(?!\s+(?i:tree|party|card|cards|gift|gifts|present|presents|break|holidays?|"
    r"dinner|lunch|egg|eggs|decorations?|lights|music|songs?|carols?|market|shopping|sale|bonus|season)\b)"
)


def day_number(token: str) -> int | None:
    """The day of the month ``token`` names ("3rd", "07", "twenty-first"), or None."""
    t = token.strip().lower()
    digits = re.match(r"\d+", t)
    if digits:
        return int(digits.group())
    return ORDINAL_DAYS.get(re.sub(r"\s+", " ", t))


def _first_day(span_text: str) -> int | None:
    """The day of the month in the first end of a range ("7", "March 7th", "the third")."""
    m = re.search(r"\d+|" + _ORD_WORD, span_text)
    return day_number(m.group()) if m else None


class WordDateRecognizer(TideRecognizer):
    """Dates in words, both ends of ranges, and weekdays tied to an event (label DATE)."""

    name = "tide.dates_words"
    version = "1"
    supported_entities = ("DATE",)

    def __init__(self, score: float = 0.8, weekday_score: float = 0.6, weekdays: bool = True):
        self.score = float(score)
        self.weekday_score = float(weekday_score)
        self.weekdays = bool(weekdays)

    def config(self) -> dict[str, Any]:
        return {"score": self.score, "weekday_score": self.weekday_score, "weekdays": self.weekdays}

    def analyze(
        self, text: str, entities: Sequence[str] | None = None, nlp_artifacts: Any = None
    ) -> list[RecognizerResult]:
        if entities and "DATE" not in entities:
            return []
        found: list[tuple[int, int, float]] = []
        for rx in (_ORD_OF_MONTH, _MONTH_THE_ORD, _CUED_DAY, _CUED_MONTH, _LIST_HEAD, _HOLIDAY, _FOREIGN_DATE):
            for m in rx.finditer(text):
                if rx is _MONTH_THE_ORD and _NOT_DAY_AFTER.match(text, m.end("d")):
                    continue  # "May the second dose", "March third floor"
                if rx is _CUED_DAY and m.group("cue").lower() == "by" and not m.group("d")[0].isdigit():
                    continue  # "classified by the fifth": a rank; "by the 5th" is a deadline
                found.append((m.start("d"), m.end("d"), self.score))
        for rx in (_RANGE_DAY_FIRST, _RANGE_MONTH_FIRST):
            for m in rx.finditer(text):
                if rx is _RANGE_MONTH_FIRST and m.group("y") is None and _NOT_DAY_AFTER.match(text, m.end("d2")):
                    continue
                d1, d2 = _first_day(m.group("d1")), _first_day(m.group("d2"))
                if d1 is None or d2 is None or not 1 <= d1 < d2 <= 31:
                    continue
                found += [(m.start("d1"), m.end("d1"), self.score), (m.start("d2"), m.end("d2"), self.score)]
        if self.weekdays:
            found += [(m.start("d"), m.end("d"), self.score) for m in _WEEKDAY_DATE.finditer(text)]
            for rx in (_WEEKDAY_CUED, _WEEKDAY_MOMENT):
                for m in rx.finditer(text):
                    s, e = m.start("d"), m.end("d")
                    if _SCHEDULE_AFTER.match(text, e) or _SCHEDULE_BEFORE.search(text, max(0, s - 24), s):
                        continue
                    found.append((s, e, self.weekday_score))
        return [
            RecognizerResult(
                "DATE", s, e - _trailing_period(text, s, e), score, {"recognizer_name": self.qualified_name}
            )
            for s, e, score in _longest_first(found)
        ]


def _trailing_period(text: str, start: int, end: int) -> int:
    """1 when the span ends in "May." (read as an abbreviation with its period): the period ends the sentence."""
    return 1 if text[max(start, end - 4) : end].lower() == "may." else 0


def _longest_first(found: list[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    """Non-overlapping spans in text order; of two that overlap the longer one is kept."""
    kept: list[tuple[int, int, float]] = []
    for s, e, score in sorted(found, key=lambda t: (-(t[1] - t[0]), t[0])):
        if all(e <= ks or s >= ke for ks, ke, _ in kept):
            kept.append((s, e, score))
    return sorted(kept)
