"""Tidy recognizer spans before resolution: no PHI span crosses a line break.

Model spans sometimes run across a blank line ("Palmer\\n\\nSurrogate"), join two people
("Parker and MASON, AMANDA") or carry list punctuation ("-- WARD, YURI").  Under the annotation
conventions no span crosses a newline and each person is a span of its own, so spans are split
at newlines (all labels) and at " and " / " & " / " / " (people), trimmed of punctuation that is
never part of a value, and dropped when no letter or digit is left (for people: no letter, since
a name without letters cannot be replaced by a name surrogate and would quarantine the note).
A person span takes in a one-letter initial right before it ("P. Falkenrath").
AGE spans are trimmed to their digits ("39M" -> "39") and a PHONE piece with fewer than three
digits (the "+1" a line break left behind) is dropped, for the same reason.  An AGE piece of four
or more digits is not an age (a clock time, a year, a number the model took for one): it is kept as
an ``ID`` span, so whatever it is gets a format-preserving surrogate instead of quarantining the
note.  A LOCATION piece made only of unit words or directions ("Rm", "NW", "FL") is kept: a state
code or the first word of "South Hadley" looks the same, and a span dropped here is text released
as it stands (the location anonymizer gives such a word a place-name surrogate instead).

The step is ``tide.tidy@VERSION``; :data:`STEP` exposes it (``qualified_name``, ``config()``) to
the recognition fingerprint, so cached spans are recomputed when these rules change.  Bump
:data:`VERSION` when a code change here changes which spans come out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tide_core.spans import Span

NAME = "tide.tidy"
VERSION = "5"

PERSON = frozenset({"PATIENT", "DOCTOR"})
_PERSON_SPLIT = re.compile(r"\s+(?:and|AND|&)\s+|\s*/\s*")
_LEAD = "-\u2013\u2014*\u2022:;,.)]}>|"
_TRAIL = ",;:([{<|-\u2013\u2014"
_KEEPS_LEAD = frozenset({"PHONE", "URL"})  # "(617) ...", "+1 ..." and similar stay whole
AGE_ID_DIGITS = 4  # an AGE span of this many digits or more is no age: replaced as an ID


#: Credentials a model sometimes takes into a name ("Hamish RN", "Yusuf Schoenberg MB ChB"): trimmed
#: off, so the name is the span and the credential stays as evidence of the person's role.
_CREDENTIAL_TAIL = re.compile(
    r"(?:,?\s+(?:M\.?D\.?|D\.?O\.?|RN|LPN|CNA|NP|PA-C|PA|APRN|CRNA|DNP|PharmD|PhD|MSW|LCSW|LICSW|DPT|CNM|FNP|"
    r"FACS|FACP|MBBS|MB|ChB|MRCP|FRCP|BSN|RD|RPh|RRT|SLP|OT|PT))+$"
)
#: A one-letter initial just before a name ("P. Falkenrath", "d. valdivia"): taken into the name,
#: so the initial is replaced with it rather than left beside the surrogate.
_INITIAL_BEFORE = re.compile(r"(?<![\w.])[A-Za-z]\. ")
_LINE_SPLIT = re.compile(r"\n")
_PERSON_LINE_SPLIT = re.compile(r"\n|" + _PERSON_SPLIT.pattern)


#: A splitter cannot match a span that holds none of these (``_PERSON_LINE_SPLIT`` needs one of them).
_PERSON_SPLIT_MARKS = ("\n", "/", "&", "and", "AND")


def _pieces(text: str, s: Span) -> list[tuple[int, int]]:
    if s.label in PERSON:
        splitter = _PERSON_LINE_SPLIT
        surface = text[s.start : s.end]
        if not any(mark in surface for mark in _PERSON_SPLIT_MARKS):
            return [(s.start, s.end)]
    else:
        splitter = _LINE_SPLIT
        if text.find("\n", s.start, s.end) < 0:
            return [(s.start, s.end)]
    out, pos = [], s.start
    for m in splitter.finditer(text, s.start, s.end):
        out.append((pos, m.start()))
        pos = m.end()
    out.append((pos, s.end))
    return out


class TidyStep:
    """The tidy step as a fingerprintable step (see ``tide_core.fingerprint``).

    Its rules are this module's constants; they are read when asked, so the fingerprint follows
    any change to them.
    """

    @property
    def qualified_name(self) -> str:
        return f"{NAME}@{VERSION}"

    def config(self) -> dict[str, Any]:
        """Output-affecting rules: the splitters in use, the trimmed characters, the labels."""
        return {
            "person_labels": sorted(PERSON),
            "line_split": _LINE_SPLIT.pattern,
            "person_line_split": _PERSON_LINE_SPLIT.pattern,
            "lead": _LEAD,
            "trail": _TRAIL,
            "keeps_lead": sorted(_KEEPS_LEAD),
            "person_needs_letter": True,
            "age_digits_only": True,
            "phone_min_digits": 3,
            "credential_tail": _CREDENTIAL_TAIL.pattern,
            "age_min_id_digits": AGE_ID_DIGITS,
            "person_initial_before": _INITIAL_BEFORE.pattern,
        }

    def __repr__(self) -> str:
        return f"<TidyStep {self.qualified_name}>"


#: The tidy step, for the recognition fingerprint.
STEP = TidyStep()


def initial_start(text: str, start: int) -> int:
    """``start`` moved back over a one-letter initial right before it ("P. Falkenrath"), else
    ``start`` (used here for recognizer spans and by propagation for the mentions it adds)."""
    if 3 <= start < len(text) and text[start].isalpha() and _INITIAL_BEFORE.match(text, start - 3, start):
        return start - 3
    return start


def tidy_spans(text: str, spans: Sequence[Span]) -> list[Span]:
    out: list[Span] = []
    for s in spans:
        for a, b in _pieces(text, s):
            while a < b and (text[a].isspace() or (text[a] in _LEAD and s.label not in _KEEPS_LEAD)):
                a += 1
            while b > a and (text[b - 1].isspace() or text[b - 1] in _TRAIL):
                b -= 1
            if s.label in PERSON:
                tail = _CREDENTIAL_TAIL.search(text, a, b)
                if tail and tail.start() > a:
                    b = tail.start()
                if a < b:
                    a = initial_start(text, a)
            if s.label == "AGE":  # "39M", "67yo": the age is the digits (annotation convention)
                while a < b and not text[a].isdigit():
                    a += 1
                while b > a and not text[b - 1].isdigit():
                    b -= 1
            if s.label == "PHONE" and sum(ch.isdigit() for ch in text[a:b]) < 3:
                continue  # "+1" left on the line above a wrapped number: not a phone number by itself
            label = s.label
            if label == "AGE" and sum(ch.isdigit() for ch in text[a:b]) >= AGE_ID_DIGITS:
                label = "ID"
            keep = str.isalpha if s.label in PERSON else str.isalnum
            if b > a and (keep(text[a]) or any(keep(ch) for ch in text[a + 1 : b])):
                same = (a, b, label) == (s.start, s.end, s.label)
                out.append(s if same else Span(s.note_id, a, b, label, s.score, s.recognizer))
    return out
