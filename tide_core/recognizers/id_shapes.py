"""Identifiers by shape (``tide.ids``): record numbers written with no cue word before them.

The regex layer finds identifiers after a field word ("MRN: 00451234", "Acct #"), but notes also
carry them bare: "specimen S21-04567 received", "ref A00123456", "card 4111 1111 1111 1111",
"see 0045123 for prior". This recognizer labels ID any token run that looks like a record
number and like nothing else clinical:

- a run of letters and digits, optionally grouped by single ``-``, ``.``, ``_`` or space
  separators between digit groups (``AB-12-3456``, ``4111 1111 1111 1111``);
- at least 6 digits when it is all digits, or at least 4 digits and 6 characters when it mixes
  letters and digits (so "B12", "HbA1c", "COVID-19", "CA-125" and "ICD-10" never qualify);
- not a phone number, a date, a decimal lab value, a dose or count with a unit after it, an
  ICD-10 code ("E11.65"), money, or a number with thousands separators.

Numbers written with slashes, as courts, police and registries write them ("27/159587",
"017023/22", "12345/07", "C/05/123456", "AB/1234/07"), are identifiers too when they hold at least
6 digits with a group of 4 or more, unless they read as a date ("12/03/2015", "03/2015"), a pair of
years ("2003/2004", "2015/16"), a phone number with its trunk prefix ("030/12345678"), a dose pair
with its unit ("875/125 mg") or a statute reference ("Regulation (EU) 2016/679", "Law no.
123/2005", :data:`tide_core.recognizers.cued_ids.NOT_PERSONAL_BEFORE`).

Dates, phones and SSNs keep their own labels: their shapes are left to the regex layer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tide_core.recognizers.base import TideRecognizer
from tide_core.recognizers.cued_ids import NOT_PERSONAL_BEFORE, UNIT_AFTER
from tide_core.spans import RecognizerResult
from tide_core.text.ascii_counts import ASCII_DIGITS, ASCII_LETTERS, count_ascii

_GROUP = r"[A-Za-z0-9]+"
_CANDIDATE = re.compile(r"(?<![\w@$£€/.:+\-])(?P<id>" + _GROUP + r"(?:[-._]" + _GROUP + r"){0,5})(?![\w@]|[-/.:]\w|%)")
#: Maximal runs of the characters a candidate is made of ([A-Za-z0-9._-]) that hold a digit.  Every
#: run character is in the candidate's lookbehind, so a candidate can only start where a run
#: starts; and a candidate without a digit is never an identifier.  So candidates are tried at the
#: starts of these runs only, which finds every candidate that can be kept (in text order).
_DIGIT_RUN = re.compile(r"(?<![A-Za-z0-9._-])[A-Za-z._-]*+[0-9][A-Za-z0-9._-]*+")
#: Digit groups separated by single spaces ("4111 1111 1111 1111", "123 456 789"): 9+ digits.
_SPACED = re.compile(r"(?<![\w@$£€/.:+\-])(?P<id>\d{3,6}(?: \d{2,6}){1,4})(?![\w@]|[-/.:]\w|%)")
#: Digit groups joined by slashes, with an optional letter register in front ("C/05/123456"), a
#: dashed year after ("12/345678-07") and a list letter at the end of a clause ("2018/9512 P;").
_SLASHED = re.compile(
    r"(?<![\w@$£€/.:+\-])(?P<id>(?:[A-Z]{1,3}/)?\d{1,8}(?:/\d{1,8}){1,3}(?:-\d{2,4})?(?:[ ][B-HJ-Z](?=[;,.)\n]|$))?)"
    r"(?![\w/]|[-.:,]\d|%)"
)
_YEAR = re.compile(r"^(?:1[89]|20)\d\d$")
_UNIT_AFTER = re.compile(
    r"^\s?(?i:mg|mcg|ug|g|kg|lb|lbs|ml|l|dl|units?|u|iu|mmol|meq|mm|cm|m|km|mi|miles|ft|in|%|cells|"
    r"copies|k|x|times|hours?|hrs?|minutes?|mins?|days?|weeks?|months?|years?|steps|calories|kcal|"
    r"/|per|dollars|usd|ms|sec|seconds|bpm|mmhg)\b"
)
_PHONE_SHAPES = re.compile(r"^(?:\+?1[-. ]?)?\d{3}[-. ]\d{3}[-. ]\d{4}$|^\d{3}[-. ]\d{4}$|^1?\d{10}$|^\+\d{6,15}$")
_DATE_SHAPES = re.compile(r"^(?:\d{1,2}[-./]\d{1,2}[-./]\d{2,4}|\d{4}[-./]\d{1,2}[-./]\d{1,2})$")
_SSN = re.compile(r"^\d{3}[- ]\d{2}[- ]\d{4}$")
_ICD10 = re.compile(r"^[A-TV-Z]\d{2}(?:\.\d{1,4}[A-Z]?)?$")
_DECIMAL = re.compile(r"^\d+\.\d{1,3}[A-Za-z]{0,2}$")  # 12.5, 100.9F (a value with its unit)
#: Digit groups only, starting with a trunk prefix 0 ("0161 838 3894", "090-8398-0067"), or 4-4: phone numbers.
_PHONE_GROUPS = re.compile(r"^0\d*(?:[ .-]\d+)+$|^\d{4}-\d{4}$")
_IPV4 = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")
_ZIP4 = re.compile(r"^\d{5}-\d{4}$")
_MONTH_WORD = re.compile(
    r"^(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june|"
    r"july|august|september|october|november|december)$"
)


def _digits_and_letters(token: str) -> tuple[int, int]:
    """How many characters of ``token`` are digits, and how many letters (ASCII: by deleting bytes)."""
    if token.isascii():
        raw = token.encode("ascii")
        return count_ascii(raw, ASCII_DIGITS), count_ascii(raw, ASCII_LETTERS)
    return sum(c.isdigit() for c in token), sum(c.isalpha() for c in token)


def _is_identifier(token: str) -> bool:
    digits, letters = _digits_and_letters(token)
    if letters == 0:
        if digits < 6:
            return False
    elif digits < 4 or len(token) < 6 or letters > digits + 4:
        return False
    if " " in token and digits < 9:
        return False
    if (
        _PHONE_SHAPES.match(token)
        or _PHONE_GROUPS.match(token)
        or _DATE_SHAPES.match(token)
        or _SSN.match(token)
        or _ICD10.match(token)
        or _DECIMAL.match(token)
        or _IPV4.match(token)
        or _ZIP4.match(token)
    ):
        return False
    if any(_MONTH_WORD.match(w.lower()) for w in re.findall(r"[A-Za-z]+", token)):
        return False  # "06-Apr-2006", "16APR1981": dates with a month name
    if letters and not any(c.isupper() for c in token) and not token[0].isdigit():
        return False  # lower-case words with digits ("covid19test") are rarely record numbers
    return True


def _is_slashed_identifier(token: str, text: str, start: int) -> bool:
    """A slash-separated number that reads as a file or case number, not a date, years or a phone."""
    token = token.split(" ")[0]
    groups = re.findall(r"\d+", token)
    digits = sum(len(g) for g in groups)
    if digits < 6 or max(len(g) for g in groups) < 4 or _DATE_SHAPES.match(token):
        return False
    if len(groups) == 2 and token[0].isdigit() and "-" not in token:
        first, second = groups
        if len(first) <= 2 and _YEAR.match(second) and int(first) <= 12:
            return False  # "03/2015": a month and its year
        if _YEAR.match(first) and (_YEAR.match(second) or len(second) == 2):
            return False  # "2003/2004", "2015/16": a span of years
    if token[0] == "0" and len(groups[0]) <= 5 and len(groups[-1]) >= 5:
        return False  # "030/12345678": an area code and a subscriber number
    return NOT_PERSONAL_BEFORE.search(text, max(0, start - 40), start) is None


class IdentifierShapeRecognizer(TideRecognizer):
    """Bare identifiers recognised by their shape (label ID)."""

    name = "tide.ids"
    version = "2"
    supported_entities = ("ID",)

    def __init__(self, score: float = 0.6, mixed_score: float = 0.7):
        self.score = float(score)
        self.mixed_score = float(mixed_score)

    def config(self) -> dict[str, Any]:
        return {"score": self.score, "mixed_score": self.mixed_score}

    def analyze(
        self, text: str, entities: Sequence[str] | None = None, nlp_artifacts: Any = None
    ) -> list[RecognizerResult]:
        if entities and "ID" not in entities:
            return []
        out: list[RecognizerResult] = []
        taken_until = -1
        spaced = [m for m in _SPACED.finditer(text) if _keep(m.group("id"), text, m.end("id"))]
        slashed = [
            (m.start("id"), m.end("id"))
            for m in _SLASHED.finditer(text)
            if _is_slashed_identifier(m.group("id"), text, m.start("id")) and not UNIT_AFTER.match(text, m.end("id"))
        ]
        candidates = [(m.start("id"), m.end("id"), True) for m in [*spaced, *_digit_candidates(text)]]
        for start, end, shaped in sorted(
            [*candidates, *((s, e, False) for s, e in slashed)], key=lambda c: (c[0], -c[1])
        ):
            if shaped:
                token, end = _trim(text[start:end], end)
                start = end - len(token)
                if not _keep(token, text, end):
                    continue
            else:
                token = text[start:end]
            if start < taken_until:
                continue
            taken_until = end
            mixed = any(c.isalpha() for c in token)
            out.append(
                RecognizerResult(
                    "ID",
                    start,
                    end,
                    self.mixed_score if mixed else self.score,
                    {"recognizer_name": self.qualified_name},
                )
            )
        return out


def _digit_candidates(text: str) -> list[re.Match[str]]:
    """The matches of ``_CANDIDATE.finditer(text)`` that hold a digit (see ``_DIGIT_RUN``); the
    others are dropped by :func:`_is_identifier` whatever their position."""
    out = []
    for run in _DIGIT_RUN.finditer(text):
        m = _CANDIDATE.match(text, run.start())
        if m is not None:
            out.append(m)
    return out


def _keep(token: str, text: str, end: int) -> bool:
    return _is_identifier(token) and not _UNIT_AFTER.match(text[end : end + 12])


def _trim(token: str, end: int) -> tuple[str, int]:
    """Drop a trailing separator the candidate pattern let through."""
    while token and token[-1] in "-._ ":
        token, end = token[:-1], end - 1
    return token, end
