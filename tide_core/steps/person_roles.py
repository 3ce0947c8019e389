"""Person roles from evidence in the note: clinicians are DOCTOR, everyone else PATIENT.

Recognizers disagree about who a person is more often than about whether a word is a name: a
model trained on clinical notes reads a message's sign-off ("Best,\\nTheodora") or a company
agent ("Agent: W. Mendelsohn") as a clinician, and a clinician named without a title ("Follow
up with Noor Falkenrath") as the patient.  The annotation convention is a rule about the
person, not the frame: DOCTOR is a clinician or staff member, PATIENT anyone else.  So after
resolution each person span is relabelled from evidence next to its mentions in the note:

- staff evidence: a title or role word right before a mention ("Dr.", "attending", "RN",
  "signed by", "ordered by", "cc:") or a credential right after it ("…, MD", "… (LCSW)");
- private-person evidence: "Mr./Mrs./Ms." or a relation word right before a mention ("wife",
  "son", "neighbour", "my", "patient").

Evidence is pooled per person over the note (a person is the set of mentions of one name; a
one-word mention joins the longer name it is part of when only one name in the note contains it).
A person with staff evidence and none of the other kind is DOCTOR; one with only private evidence
is PATIENT; a person with no evidence at all keeps the label the recognizers gave, except that a
DOCTOR label becomes PATIENT in a note that names no clinician at all (no "Dr. X", no "X, MD", no
role word: a message or letter between private persons).  Only the label changes, never offsets.

The step is ``tide.roles@VERSION`` (:data:`STEP`), part of the recognition fingerprint.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tide_core.spans import Span
from tide_core.text.anchored import PatternSet

NAME = "tide.roles"
VERSION = "1"
PERSON = frozenset({"PATIENT", "DOCTOR"})

_STAFF_BEFORE = re.compile(
    r"(?i:\b(?:dr|doctor|prof|professor|attending|resident|fellow|intern|hospitalist|surgeon|physician|provider|"
    r"clinician|nurse|rn|lpn|cna|np|pa|md|pcp|therapist|pharmacist|social\s+worker|sw|lcsw|licsw|msw|chaplain|"
    r"case\s+manager|dietitian|midwife|radiologist|pathologist|anesthesiologist|consultant|consulting|referring|"
    r"ordering|signed(?:\s+out)?\s+by|signed|dictated\s+by|authored\s+by|reviewed\s+by|ordered\s+by|"
    r"referred\s+(?:by|to)|seen\s+by|m[ée]dico(?:\s+tratante)?|m[ée]decin|arzt)\.?)[\s:=\-|]*$"
)
_STAFF_AFTER = re.compile(
    r"^(?:,\s*|\s*\(\s*|\s+)(?i:m\.?d\.?|d\.?o\.?|rn|np|pa-c|pa|cnp|aprn|crna|dnp|pharmd|msw|lcsw|licsw|dpt|"
    r"cnm|fnp|facs|facp|mbbs|mb\s?chb|lpn|cna|crnp|rd|rph|rrt|bsn|slp)(?![\w-])"
)
_PRIVATE_BEFORE = re.compile(
    r"(?i:\b(?:mr|mrs|ms|miss|mx|wife|husband|son|daughter|mother|father|mom|dad|brother|sister|spouse|partner|"
    r"friend|neighbou?r|roommate|coworker|co-worker|colleague|boyfriend|girlfriend|fianc[ée]e?|niece|nephew|aunt|"
    r"uncle|cousin|grand(?:mother|father|son|daughter)|guardian|caregiver|landlord|patient|pt|my|customer|"
    r"passenger|member|client|pastor|reverend|rev|regarding|re|this\s+is|from|hi|hello|hey|dear|thanks|"
    r"best|cheers|regards|love)\.?)[\s:,=\-!]*$"
)
#: A clinician is named somewhere in the note (a title or credential next to a capitalised word).
_CLINICAL_NOTE = re.compile(
    r"\b(?:Dr|DR|Doctor)\.?\s+[A-Z]|[A-Za-z],?\s+(?:MD|M\.D\.|DO|RN|NP|PA-C|LCSW|LICSW|MSW|PharmD)\b|"
    r"(?i:\b(?:attending|physician|nurse|resident|provider|clinician)\b)"
)
_TOKEN = re.compile(r"[^\W\d_]{3,}")
#: The evidence patterns before a mention, tried only where one of their words occurs (same matches).
_BEFORE = PatternSet([_STAFF_BEFORE, _PRIVATE_BEFORE])


class RoleStep:
    """The role step as a fingerprintable step (see ``tide_core.fingerprint``)."""

    @property
    def qualified_name(self) -> str:
        return f"{NAME}@{VERSION}"

    def config(self) -> dict[str, Any]:
        return {
            "staff_before": _STAFF_BEFORE.pattern,
            "staff_after": _STAFF_AFTER.pattern,
            "private_before": _PRIVATE_BEFORE.pattern,
            "clinical_note": _CLINICAL_NOTE.pattern,
        }

    def __repr__(self) -> str:
        return f"<RoleStep {self.qualified_name}>"


STEP = RoleStep()


def _evidence(text: str, s: Span) -> tuple[bool, bool]:
    # the 40 characters before and 20 after the mention, within its line (searches are bounded to
    # those windows, so a note with few line breaks stays linear)
    lo = max(0, s.start - 40)
    nl = text.rfind("\n", lo, s.start)
    before = text[nl + 1 if nl >= 0 else lo : s.start]
    nl = text.find("\n", s.end, s.end + 20)
    after = text[s.end : nl if nl >= 0 else min(s.end + 20, len(text))]
    scan = _BEFORE.scan(before)
    staff = bool(scan.search(_STAFF_BEFORE) or _STAFF_AFTER.match(after))
    private = bool(scan.search(_PRIVATE_BEFORE))
    return staff, private


def assign_roles(text: str, spans: Sequence[Span]) -> list[Span]:
    """Relabel person spans PATIENT/DOCTOR from pooled evidence (see the module docstring)."""
    people = [i for i, s in enumerate(spans) if s.label in PERSON]
    if not people:
        return list(spans)
    # group mentions into persons: mentions sharing a name token (case-insensitive) are one person
    parent = {i: i for i in people}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    # a person: mentions with the same name (case-insensitive); a one-word mention ("Okafor") joins
    # the longer name it is part of when exactly one name in the note contains it
    by_name: dict[str, int] = {}
    words: dict[int, list[str]] = {}
    for i in people:
        toks = [t.casefold() for t in _TOKEN.findall(text[spans[i].start : spans[i].end])]
        words[i] = toks
        key = " ".join(toks)
        if key in by_name:
            parent[find(i)] = find(by_name[key])
        else:
            by_name[key] = i
    multi: dict[str, list[int]] = {}  # token -> the multi-word mentions containing it
    for j in people:
        if len(words[j]) > 1:
            for tok in dict.fromkeys(words[j]):
                multi.setdefault(tok, []).append(j)
    for i in people:
        if len(words[i]) != 1:
            continue
        holders = {find(j) for j in multi.get(words[i][0], ())}
        if len(holders) == 1:
            parent[find(i)] = holders.pop()
    staff: dict[int, bool] = {}
    private: dict[int, bool] = {}
    for i in people:
        st, pr = _evidence(text, spans[i])
        root = find(i)
        staff[root] = staff.get(root, False) or st
        private[root] = private.get(root, False) or pr
    clinical = bool(_CLINICAL_NOTE.search(text))
    out = list(spans)
    for i in people:
        root = find(i)
        s = out[i]
        label = s.label
        if staff[root] and not private[root]:
            label = "DOCTOR"
        elif private[root] and not staff[root]:
            label = "PATIENT"
        elif not staff[root] and not private[root] and label == "DOCTOR" and not clinical:
            label = "PATIENT"
        if label != s.label:
            out[i] = Span(s.note_id, s.start, s.end, label, s.score, s.recognizer)
    return out
