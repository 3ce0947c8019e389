"""International phone numbers written without a country code (``tide.phones_intl``).

The regex layer reads North American numbers and numbers that start with "+" or "00".  Numbers
from elsewhere are often written as their own country writes them, with no country code and in
digit groups a US pattern does not know: "78 651 450", "0688 872 49 99", "(99) 645-791",
"06-12345678".  Digit groups are also how doses, lab values, counts and record numbers are
written, so this recognizer asks for a sign that the number is a phone:

- a phone cue before the number on the same line ("Tel: 78 651 450", "call her on 0688 872 49 99",
  "mobile +36 1 234 5678", "T: 22 123 45 67") or a phone word right after it
  ("78 651 450 (mobile)"): 7 to 13 digits in groups;
- a weak cue ("on", "at", "via" right before it, or a name and "(") and a grouped look: three
  groups or more, or a first "(", "+" or "0" ("Sowerby on 30 717 523"); 8 to 13 digits;
- a national trunk prefix: a first group "0" + a non-zero digit, then digit groups, 9 to 12
  digits in all ("0688 872 49 99", "06-12345678", "030/78028538", "06 1 158 0208"); drug codes
  (NDC 4-4-2, 5-3-2, 5-4-1) and numbers after an identifier word are left out;
- an area code in parentheses before digit groups, 8 to 12 digits ("(99) 645-791",
  "(06-20) 404 7075"); a round range ("(10) 150-200"), a year or a unit after it is left out;
- a run of "+" and 10 to 14 digits, or of ten digits starting with a trunk "0".

Shapes that are dates ("12 03 2019", "06/07/12 0515"), SSNs, ZIP+4 codes, IPv4 addresses and
numbers followed by a unit ("2 500 000 units") are never phones.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tide_core.recognizers.base import TideRecognizer
from tide_core.spans import RecognizerResult

#: Words and field labels that say a phone number follows.
_CUE = (
    r"(?:\b(?i:phone|telephone|tel|t[ée]l[ée]fono|telefon|t[ée]l|tlf|ph|mobile|mob|cell|cellphone|cellular|fax|"
    r"whatsapp|sms|text|texted|call|called|calling|ring|rang|reach|reached|reachable|contact|contactable|dial|"
    r"landline|hotline|helpline|switchboard|pager|handy|portable|mobil|m[óo]vil|celular|telefone|telefono)\b\.?"
    r"|\b[TMF]\s?:)"
)
#: A number in digit groups, optionally with "+country" and "(area)" in front.
_NUMBER = (
    r"(?:\+[1-9]\d{0,2}(?:[ .\-]?\(0\))?[ .\-]?)?(?:\(\d{1,5}(?:-\d{1,4})?\)[ .\-]?)?\d{1,15}(?:[ .\-/]\d{1,8}){0,5}"
)
_CUED = re.compile(_CUE + r"[^\d\n]{0,30}?(?<![\w+])(?P<p>" + _NUMBER + r")(?![\w]|[.,/\-]\d)")
_CUE_AFTER = re.compile(r"[ \t]*[(\[,-]?[ \t]*(?i:mobile|mob|cell|home|work|office|tel|phone|fax|landline|whatsapp)\b")
_BARE = re.compile(r"(?<![\w+./:\-])(?P<p>" + _NUMBER + r")(?![\w]|[.,/\-]\d)")
_TRUNK = re.compile(
    r"(?<![\w+./:\-,])(?P<p>(?:0|\(0\))[1-9]\d{0,4}(?:[ .\-/]\d)?(?:[ .\-/]\d{2,8}){1,4})(?![\w]|[.,:/\-]\d)"
)
#: Ten digits with a trunk "0" and no separator ("0810509551"): the identifier recognizers leave
#: this shape to the phone ones.
_TRUNK_RUN = re.compile(r"(?<![\w+./:\-,])(?P<p>0[1-9]\d{8})(?![\w]|[.,:/\-]\d)")
#: "+" and 10 to 14 digits with no separator ("+447935869788").
_PLUS_RUN = re.compile(r"(?<![\w+])(?P<p>\+[1-9]\d{9,13})(?![\w]|[.,:/\-]\d)")
_PAREN = re.compile(
    r"(?<![\w)])(?P<p>\(\d{2,5}(?:-\d{1,4})?\)\s?(?:\d{2,4}(?:[ \-]\d{2,4}){1,3}|\d{5,8}))(?![\w]|[.,/\-]\d)"
)
#: Weak cues: "on", "at", "via" right before the number, or a name and an opening parenthesis
#: ("Hamish Sowerby on 30 717 523", "K.-D. Dietrich (0151 45399502)"); the number must look grouped.
_WEAK_CUED = re.compile(
    r"(?:\b(?i:on|at|via)\s{1,2}|[^\W\d_][\w.'\-]*,?\s\()(?<![\w+])(?P<p>" + _NUMBER + r")(?![\w]|[.,/\-]\d)"
)
#: Dates (a time may follow: "2020-10-24 10", "06/07/12 0515"), SSNs, ZIP+4 codes and IPv4
#: addresses are never phones.
_NOT_PHONE_SHAPE = re.compile(
    r"^(?:\d{1,2}[ .\-/]\d{1,2}[ .\-/](?:19|20)\d{2}|(?:19|20)\d{2}[ .\-/]\d{1,2}[ .\-/]\d{1,2})(?!\d)"
    r"|^\d{1,2}([/.\-])\d{1,2}\1(?:\d{4}|\d{2})(?![\d.\-/])|^[^/]*/[^/]*/"
    r"|^\d{3}-\d{2}-\d{4}$|^\d{5}-\d{4}$|^\d{1,3}(?:\.\d{1,3}){3}$"
)
#: A token holding a digit right before the number: the number is the tail of a longer one
#: ("IBAN ES66 6981 0338 8062 71").
_DIGIT_TOKEN_BEFORE = re.compile(r"[A-Za-z0-9]*\d[A-Za-z0-9]*[ .\-]$")
_NDC = re.compile(r"^\d{4}-\d{4}-\d{2}$|^\d{5}-\d{3}-\d{2}$|^\d{5}-\d{4}-\d$")
_UNIT_AFTER = re.compile(
    r"\s?(?i:mg|mcg|ug|g|kg|lbs?|ml|l|dl|units?|u|iu|mmol|meq|mm|cm|m|km|ft|in|%|cells|copies|x|times|"
    r"hours?|hrs?|minutes?|mins?|days?|weeks?|months?|years?|steps|calories|kcal|per|/|dollars|usd|eur|gbp|"
    r"bpm|mmhg|ms|sec|seconds|patients|people|cases|doses|tablets?|tabs?|pills?|k)\b|\s?%"
)
#: An identifier word right before the number: the ID patterns own it ("Account 0123 456 789").
_ID_BEFORE = re.compile(
    r"(?i:account|acct|a/c|member|policy|mrn|id|claim|ref|reference|card|iban|order|case|invoice|confirmation|"
    r"booking|passport|licen[cs]e|serial|ndc|lot|batch|accession|specimen|record|file|no|nr|number)\W{0,4}$"
)


def _digits(value: str) -> int:
    """Digits of the number proper: a "(0)" trunk digit and a "00" international prefix not counted."""
    n = sum(c.isdigit() for c in value.replace("(0)", ""))
    return n - 2 if value.startswith("00") else n


def _not_a_phone(value: str, text: str, end: int) -> bool:
    return bool(_NOT_PHONE_SHAPE.match(value) or _UNIT_AFTER.match(text, end))


def _valid_trunk(value: str) -> bool:
    groups = re.split(r"[ .\-/]", value)
    if not 9 <= _digits(value) <= 12 or _NDC.match(value):
        return False
    if len(groups) == 2:
        return len(groups[1]) >= 6
    rest = [len(g) for g in groups[1:]]
    # digit groups of 2 to 4, one short area group allowed ("06 1 158 0208"), or a long last one ("06-30/605-4753")
    return sum(n == 1 for n in rest) <= 1 and all(n <= 4 for n in rest[:-1]) and 2 <= rest[-1] <= 8


def _valid_paren(value: str) -> bool:
    if not 8 <= _digits(value) <= 12 or re.match(r"\((?:19|20)\d{2}\)", value):
        return False  # "(2019) 123 456": a year, as in a law report citation
    groups = re.findall(r"\d+", value)[1:]
    # "(10) 150-200": a count and a round range, not an exchange and a line number
    return not (len(groups) == 2 and groups[0].endswith("0") and groups[1].endswith("0"))


class InternationalPhoneRecognizer(TideRecognizer):
    """Phone numbers without a country code: after a phone cue, with a trunk prefix or an area code (PHONE)."""

    name = "tide.phones_intl"
    version = "1"
    supported_entities = ("PHONE",)

    def __init__(self, score: float = 0.85, shape_score: float = 0.6):
        self.score = float(score)
        self.shape_score = float(shape_score)

    def config(self) -> dict[str, Any]:
        return {"score": self.score, "shape_score": self.shape_score}

    def analyze(
        self, text: str, entities: Sequence[str] | None = None, nlp_artifacts: Any = None
    ) -> list[RecognizerResult]:
        if entities and "PHONE" not in entities:
            return []
        found: list[tuple[int, int, float]] = []
        for m in _CUED.finditer(text):
            self._cued(m, text, found)
        for m in _BARE.finditer(text):
            if _CUE_AFTER.match(text, m.end("p")):
                self._cued(m, text, found)
        for m in _TRUNK.finditer(text):
            value, s, e = m.group("p"), m.start("p"), m.end("p")
            if not _valid_trunk(value) or _not_a_phone(value, text, e):
                continue
            if _ID_BEFORE.search(text, max(0, s - 24), s) or _DIGIT_TOKEN_BEFORE.search(text, max(0, s - 40), s):
                continue
            found.append((s, e, self.shape_score))
        for m in _WEAK_CUED.finditer(text):
            value = m.group("p")
            groups = re.findall(r"\d+", value)
            if all(g.endswith("0") for g in groups):
                continue  # "titrated on 100 200 300": a list of round numbers
            if len(groups) >= 3 and sum(len(g) < 2 for g in groups) <= 1 or value[0] in "(+0":
                self._cued(m, text, found, minimum=8)
        for rx in (_TRUNK_RUN, _PLUS_RUN):
            for m in rx.finditer(text):
                s, e = m.start("p"), m.end("p")
                if not _UNIT_AFTER.match(text, e) and not _ID_BEFORE.search(text, max(0, s - 24), s):
                    found.append((s, e, self.shape_score))
        for m in _PAREN.finditer(text):
            value, s, e = m.group("p"), m.start("p"), m.end("p")
            if not _valid_paren(value) or _not_a_phone(value, text, e):
                continue
            if _ID_BEFORE.search(text, max(0, s - 24), s) or _DIGIT_TOKEN_BEFORE.search(text, max(0, s - 40), s):
                continue
            found.append((s, e, self.shape_score))
        out: list[RecognizerResult] = []
        taken: list[tuple[int, int]] = []
        for s, e, score in sorted(found, key=lambda t: (-(t[1] - t[0]), -t[2], t[0])):
            if all(e <= ts or s >= te for ts, te in taken):
                taken.append((s, e))
                out.append(RecognizerResult("PHONE", s, e, score, {"recognizer_name": self.qualified_name}))
        return sorted(out, key=lambda r: r.start)

    def _cued(self, m: re.Match[str], text: str, found: list[tuple[int, int, float]], minimum: int = 7) -> None:
        value, s, e = m.group("p"), m.start("p"), m.end("p")
        if not minimum <= _digits(value) <= 13 or _not_a_phone(value, text, e):
            return
        if not re.search(r"[ .\-()+]", value) and _digits(value) > 10 and not value.startswith("+"):
            return  # a run of 11+ digits with no grouping is an account or record number
        found.append((s, e, self.score))
