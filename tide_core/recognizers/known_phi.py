"""Known-PHI recognizer (``tide.known_phi``): find a patient's own registered identifiers in their notes.

The patients table (source schema) already holds each patient's name, MRN, phone, e-mail, date of
birth and address.  Those exact values are the highest-precision evidence there is, but only in
that patient's notes: "Smith" in patient A's note is not evidence about patient B.  So every
surface variant carries the patient ids it belongs to, and ``recognize(note)`` keeps a match only
when ``note.patient_id`` is among them.

Patient ids are compared as :func:`patient_key` (text without surrounding spaces, digits without
leading zeros), so an INTEGER ``patient_id`` in the patients table matches the notes' text ids.

``analyze(text)`` has no patient context; by default it returns nothing (``match_any_patient=
False``), because matching every patient's variants in every note trades precision for nothing
the regex layer does not already find.  Set ``match_any_patient=True`` to match all patients.

Values are never logged or put in ``config()``: the fingerprint holds the row count and a keyed
digest (HMAC-SHA256) of the normalized table contents.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from decimal import Decimal
from typing import Any

from tide_core.recognizers.base import TideRecognizer
from tide_core.recognizers.gazetteer import AhoMatcher
from tide_core.spans import Note, RecognizerResult, Span

COLUMNS = (
    "patient_id",
    "first_name",
    "middle_name",
    "last_name",
    "dob",
    "mrn",
    "phone",
    "email",
    "street",
    "city",
    "state",
    "zip",
)

#: Capitalised words that are also surnames or first names; alone they are too ambiguous.
COMMON_WORDS = frozenset(
    """
a an and the of for to in on at by with is was are be will may can hope joy grace faith rose
mark bill will may june april august summer winter autumn dawn eve sunny page case long young
white black green gray grey brown strong sharp little small short hale hart king knight price
cook baker mason miller hunter fisher fields hill wood woods lane street rivers banks bell
mass pain head chest back hand foot heart lung liver blood bone skin plan note notes history
assessment impression care cares well may said reports denies follows patient doctor nurse
clinic hospital center day days week weeks month year date time home office service unit
normal stable chief major general best good new old rich pace sane wise hand ward wards
""".split()
)

_ABBREV = {
    "street": "st",
    "avenue": "ave",
    "road": "rd",
    "boulevard": "blvd",
    "drive": "dr",
    "lane": "ln",
    "court": "ct",
    "place": "pl",
    "terrace": "ter",
    "circle": "cir",
    "parkway": "pkwy",
    "highway": "hwy",
    "apartment": "apt",
    "suite": "ste",
    "north": "n",
    "south": "s",
    "east": "e",
    "west": "w",
}
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_SALT = b"tide.known_phi.fingerprint.v1"


def _clean(v: Any) -> str:
    return "" if v is None else str(v).strip()


def patient_key(value: Any) -> str | None:
    """A patient id as known-PHI matching compares it, whatever the column's type; ``None`` if empty.

    Text, stripped of surrounding whitespace (UTF-8 bytes decoded).  An id of ASCII digits
    loses its leading zeros, and an integral number is written as an integer, so an INTEGER
    ``patient_id`` (42) in the patients table matches the text ids of the notes ("42",
    "0042", " 42 ").  Zero-padded text ids that differ only in padding are therefore one
    patient to known-PHI matching: an INTEGER column cannot tell them apart anyway, and the
    only cost of merging them is a registered value recognized in one more patient's notes.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (bytes, bytearray, memoryview)):
        try:
            value = bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return None
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        if value.is_integer():
            value = int(value)
    elif isinstance(value, Decimal) and value.is_finite() and value == value.to_integral_value():
        value = int(value)
    text = str(value).strip()
    if text.isascii() and text.isdigit():
        text = text.lstrip("0") or "0"
    return text or None


def name_variants(first: str | None, middle: str | None, last: str | None) -> set[str]:
    out: set[str] = set()
    f, m, la = _clean(first), _clean(middle), _clean(last)
    mi = m[:1]
    if f and la:
        out |= {f"{f} {la}", f"{la}, {f}", f"{la} {f}", f"{f[0]}. {la}", f"{f[0]} {la}", f"{la}, {f[0]}."}
        if m:
            out |= {
                f"{f} {m} {la}",
                f"{f} {mi}. {la}",
                f"{f} {mi} {la}",
                f"{la}, {f} {mi}.",
                f"{la}, {f} {m}",
                f"{f[0]}. {mi}. {la}",
            }
    for single in (f, la):
        if len(single) >= 3 and single.lower() not in COMMON_WORDS:
            out.add(single)
    return out


def phone_variants(phone: str) -> set[str]:
    d = re.sub(r"\D", "", _clean(phone))
    if len(d) == 11 and d.startswith("1"):
        d = d[1:]
    if len(d) != 10:
        return {phone.strip()} if phone and len(phone.strip()) >= 7 else set()
    a, b, c = d[:3], d[3:6], d[6:]
    base = {
        f"({a}) {b}-{c}",
        f"({a}){b}-{c}",
        f"{a}-{b}-{c}",
        f"{a}.{b}.{c}",
        f"{a} {b} {c}",
        d,
        f"{a}/{b}-{c}",
        f"{a} {b}-{c}",
    }
    return base | {f"+1 {v}" for v in base} | {f"1-{a}-{b}-{c}", f"+1-{a}-{b}-{c}", f"+1{d}", f"1{d}"}


def dob_variants(dob: Any) -> set[str]:
    if isinstance(dob, date):
        d = dob
    else:
        s = _clean(dob)[:10]
        try:
            d = date.fromisoformat(s)
        except ValueError:
            return {s} if s else set()
    y, mo, da = d.year, d.month, d.day
    mon = _MONTHS[mo - 1]
    ab = mon[:3]
    suf = "th" if 11 <= da <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(da % 10, "th")
    out = {
        f"{mo:02d}/{da:02d}/{y}",
        f"{mo}/{da}/{y}",
        f"{mo:02d}/{da:02d}/{y % 100:02d}",
        f"{mo}/{da}/{y % 100:02d}",
        f"{mo:02d}-{da:02d}-{y}",
        f"{mo}-{da}-{y}",
        f"{y}-{mo:02d}-{da:02d}",
        f"{y}/{mo:02d}/{da:02d}",
        f"{mo:02d}.{da:02d}.{y}",
    }
    for m in {mon, ab, ab + "."}:
        out |= {f"{m} {da}, {y}", f"{m} {da} {y}", f"{m} {da}{suf}, {y}", f"{da} {m} {y}", f"{m} {da:02d}, {y}"}
    return out


def mrn_variants(mrn: str | None) -> set[str]:
    raw = _clean(mrn)
    if len(raw) < 4:
        return set()
    out = {raw}
    compact = re.sub(r"[\s\-./]", "", raw)
    out.add(compact)
    parts = re.split(r"[\s\-./]+", raw)
    if len(parts) > 1:
        out |= {"-".join(parts), " ".join(parts)}
    return {v for v in out if len(v) >= 4}


def street_variants(street: str | None) -> set[str]:
    """The street line as written, with suffixes abbreviated ("Street" -> "St") and expanded."""
    s = re.sub(r"\s+", " ", _clean(street)).rstrip(".")
    if len(s) < 5:
        return set()
    expand = {v: k for k, v in _ABBREV.items()}

    def swap(table: Mapping[str, str]) -> str:
        words = []
        for w in s.split(" "):
            core = w.rstrip(".,")
            rep = table.get(core.lower())
            if rep is None:
                words.append(w)
            else:
                words.append((rep.capitalize() if core[:1].isupper() else rep) + w[len(core) :].replace(".", ""))
        return " ".join(words)

    out = {s}
    for v in (swap(_ABBREV), swap(expand)):
        out |= {v, v + "."}
    return out


def row_variants(row: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(surface, label) pairs for one patient row; order is deterministic."""
    pairs: set[tuple[str, str]] = set()
    for v in name_variants(row.get("first_name"), row.get("middle_name"), row.get("last_name")):
        pairs.add((v, "PATIENT"))
    for v in mrn_variants(row.get("mrn")):
        pairs.add((v, "ID"))
    for v in phone_variants(_clean(row.get("phone"))):
        pairs.add((v, "PHONE"))
    for v in dob_variants(row.get("dob")):
        pairs.add((v, "DATE"))
    for v in street_variants(row.get("street")):
        pairs.add((v, "LOCATION"))
    email = _clean(row.get("email"))
    if "@" in email:
        pairs.add((email, "EMAIL"))
    city = _clean(row.get("city"))
    if len(city) >= 3 and city.lower() not in COMMON_WORDS:
        pairs.add((city, "LOCATION"))
    zip_code = _clean(row.get("zip"))
    if re.fullmatch(r"\d{5}(-\d{4})?", zip_code):
        pairs.add((zip_code, "LOCATION"))
    return sorted(pairs)


class KnownPHIRecognizer(TideRecognizer):
    """Match each patient's registered values in that patient's notes."""

    name = "tide.known_phi"
    version = "1"
    supported_entities = ("PATIENT", "ID", "PHONE", "DATE", "LOCATION", "EMAIL")
    _NAME_LABELS = frozenset({"PATIENT", "LOCATION"})

    def __init__(self, rows: Iterable[Mapping[str, Any]] = (), *, score: float = 0.95, match_any_patient: bool = False):
        self.score = float(score)
        self.match_any_patient = bool(match_any_patient)
        self._matcher = AhoMatcher()
        # lowered surface -> {patient_id: labels}; the automaton only finds surfaces, this says whose they are
        self._owners: dict[str, dict[str, set[str]]] = {}
        digest = hmac.new(_SALT, digestmod=hashlib.sha256)
        n = 0
        for row in rows:
            pid = patient_key(row.get("patient_id"))
            if pid is None:
                continue
            n += 1
            digest.update(("\x1e".join(_clean(row.get(c)) for c in COLUMNS) + "\x1d").encode())
            for surface, label in row_variants(row):
                key = surface.strip().lower()
                if key not in self._owners:
                    self._matcher.add(surface, key)
                self._owners.setdefault(key, {}).setdefault(pid, set()).add(label)
        self._n_rows = n
        self._digest = digest.hexdigest()[:32]

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[str, Any]], **options: Any) -> KnownPHIRecognizer:
        return cls(rows, **options)

    @property
    def n_patients(self) -> int:
        return self._n_rows

    def load(self) -> None:
        self._matcher.build()

    def config(self) -> dict[str, Any]:
        """Output-affecting settings.  The patients table itself is deliberately left out: the
        recognizer is rebuilt per run from the study's current rows, and folding their digest into
        the recognition fingerprint would invalidate every cached note of a study whenever one
        patient row changes.  ``table_info()`` records which table a run used; rerun recognition
        with ``--force`` after correcting patient identifiers."""
        return {"score": self.score, "match_any_patient": self.match_any_patient}

    def table_info(self) -> dict[str, Any]:
        return {"n_rows": self._n_rows, "table_digest": self._digest}

    def analyze_for_patient(
        self, text: str, patient_id: str | None, entities: Sequence[str] | None = None
    ) -> list[RecognizerResult]:
        """Matches of ``patient_id``'s variants in ``text`` (``None``: any patient's)."""
        wanted = set(entities) if entities else None
        key = None if patient_id is None else patient_key(patient_id) or ""
        out = []
        for m in self._matcher.find_all(text):
            owners = self._owners.get(m.payload[0], {})
            if key is None:
                labels = set().union(*owners.values()) if owners else set()
            else:
                labels = owners.get(key, set())
            if not labels:
                continue
            label = sorted(labels)[0] if len(labels) > 1 else next(iter(labels))
            if wanted is not None and label not in wanted:
                continue
            surface = text[m.start : m.end]
            letters = [c for c in surface if c.isalpha()]
            if label in self._NAME_LABELS and letters and not letters[0].isupper():
                continue  # "will", "brown stool": names must be capitalised in the text
            out.append(RecognizerResult(label, m.start, m.end, self.score, {"recognizer_name": self.qualified_name}))
        return _longest_first(out)

    def analyze(
        self, text: str, entities: Sequence[str] | None = None, nlp_artifacts: Any = None
    ) -> list[RecognizerResult]:
        if not self.match_any_patient:
            return []
        return self.analyze_for_patient(text, None, entities)

    def recognize(self, note: Note) -> list[Span]:
        results = self.analyze_for_patient(note.text, note.patient_id)
        return [Span(note.note_id, r.start, r.end, r.entity_type, r.score, self.qualified_name) for r in results]


def _longest_first(results: list[RecognizerResult]) -> list[RecognizerResult]:
    ordered = sorted(results, key=lambda r: (-(r.end - r.start), r.start, r.entity_type))
    kept: list[RecognizerResult] = []
    for r in ordered:
        if all(r.end <= k.start or r.start >= k.end for k in kept):
            kept.append(r)
    return sorted(kept, key=lambda r: r.start)
