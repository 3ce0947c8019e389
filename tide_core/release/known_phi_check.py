"""A blocking release check fed by known PHI: no patient's registered value survives in their released notes.

:func:`~tide_core.release.checks.no_surface_survives` searches the released text for the surfaces
recognition found (the span cache), so a name recognition missed -- or whose spans were removed
from the cache -- is released in clear and that check still passes.  This check does not depend
on recognition: it reads each patient's own values from the site's ``patients`` table
(``config.tables.patients``) and searches for them in that patient's released notes.

What is searched, per released note of (study, key) in ``tide_deid_notes``:

- the note's patient comes from the source notes table (``config.tables.notes``: ``note_id`` ->
  ``patient_id``), that patient's values from the patients table; patient ids are compared as
  text (``str(value).strip()``), whatever the two columns' types (an INTEGER ``patient_id`` in
  ``patients`` matches the text ``'123'`` in ``notes``);
- the values and their surface variants are those the known-PHI recognizer generates
  (:mod:`tide_core.recognizers.known_phi`, with its minimum lengths and common-word list): names
  (first, middle, last, and their combinations), the MRN and other patient identifier columns
  (SSN, insurance, member, account, policy, licence, passport, chart or record numbers: see
  :data:`_ID_COLUMN`; not ``patient_id`` nor code columns such as ``facility_id``), phone, fax
  and e-mail columns, street, city, ZIP (and the five digits of a ZIP+4) and the date of birth
  in its written forms;
- both sides are compared on the normalised view (:func:`tide_core.text.normalize.normalize`:
  Unicode look-alikes, format characters and fullwidth digits folded), case-folded, with runs
  of whitespace read as one space;
- a hit is a whole token: a value that starts (ends) with a letter must not have a letter just
  before (after) it, one that starts (ends) with a digit no digit; so a name inside a longer
  word, or a ZIP inside a longer digit run, is no hit;
- digit identifiers of at least :data:`MIN_COMPACT_DIGITS` digits (phones, MRNs, ids, numeric
  dates of birth, ZIP+4) are also matched with their separators removed: ``617-555-0199``
  written ``6175550199``, ``617 5550199`` or ``(617)555 0199``; the digits must start and end
  at the start and end of a run of digits in the text.

The surrogates of the released text (``tide_released_spans`` output ranges) are masked before
the scan: a keyed surrogate that happens to equal one of the patient's values (a surrogate city
that is the patient's registered one) was not taken from the note and is not counted.

The check is per patient: another patient's name in a note is not counted here (it is PHI all
the same; the recognizers and the audit look for it).  ``patient_id`` itself is not searched.

The study is read as its source chunks (the chunk size of study runs, or :data:`BATCH_NOTES`
rows at a time; one pass shared with the other chunk-streamed checks when the lifecycle verifies
a release): a chunk's released notes,
and only the patients rows that chunk needs; each chunk's values go into one Aho-Corasick
automaton, scanned once per note.

No patients table, or no patients row for any released note's patient: the check passes and
says it was skipped (``patients_table_found``, ``n_notes_without_patient_row``), because sites
without a patients table must still release.  Inputs that cannot be read fail the check (fail
closed), saying what to run.  The outcome holds counts only: never a value, a note id or a
patient id.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import ahocorasick
import pyarrow as pa

from tide_core.config import TideConfig
from tide_core.engine.validation import _as_str_id
from tide_core.errors import TideError
from tide_core.io.warehouse import Warehouse
from tide_core.recognizers.known_phi import (
    COMMON_WORDS,
    dob_variants,
    mrn_variants,
    name_variants,
    phone_variants,
    street_variants,
)
from tide_core.release.outcome import CheckOutcome
from tide_core.release.scan import ReleaseChunk, scan_release, stream_rows
from tide_core.store.release_store import ReleaseStore
from tide_core.text.normalize import normalize, normalize_surface

#: Source rows per chunk of the check's own pass (released notes read and scanned at a time).
BATCH_NOTES: int | None = None  # None: the default chunk size of study runs
#: Rows of the notes table's id columns streamed at a time.
ID_BATCH_ROWS = 50_000
#: Digit identifiers with at least this many digits are also matched with their separators removed.
MIN_COMPACT_DIGITS = 7
#: The kinds of known values, in the order the metadata lists them.
KINDS = ("name", "mrn", "id", "phone", "email", "street", "city", "zip", "dob")

_NAME_FIELDS = ("first_name", "middle_name", "last_name")
#: Columns of the patients table read as further patient identifiers (besides ``mrn``): a code column
#: (``facility_id``, ``race_id``) is not, nor is ``patient_id`` (the join key).
_ID_COLUMN = re.compile(
    r"(?:^|_)(?:mrn|ssn)(?:_|$)|medicare|medicaid|insurance|member|account|acct|policy|subscriber|beneficiary"
    r"|licen[cs]e|passport|chart|record"
)
_PHONE_COLUMN = re.compile(r"phone|mobile|(?:^|_)(?:fax|cell)(?:_|$)")
#: Columns read by name (names, address, date of birth); never searched as ids.
_FIXED_COLUMNS = frozenset({"first_name", "middle_name", "last_name", "dob", "street", "city", "state", "zip"})
_EMAIL_COLUMN = re.compile(r"e_?mail")
_WS = re.compile(r"\s+")
_DIGIT_VALUE = re.compile(r"[\d\s\-./()+]+")
_NON_DIGIT = re.compile(r"\D")
#: Runs of digits joined by short separators (``(617) 555-0199``): the candidates of compact matching.
_DIGIT_GROUP = re.compile(r"\d+(?:[\s\-./()+]{1,3}\d+)+")
_DIGITS = re.compile(r"\d+")
_INT = re.compile(r"[+-]?\d+")


class _UnreadableError(Exception):
    """An input the check cannot read: the check fails, saying what to run."""

    def __init__(self, what: str, hint: str) -> None:
        super().__init__(what)
        self.what = what
        self.hint = hint


# ------------------------------------------------------------------------------------ views


def _fold(text: str) -> str:
    return _WS.sub(" ", text.casefold())


def text_view(text: str) -> str:
    """A released text as it is searched: normalised view, case-folded, whitespace runs as one space."""
    return _fold(normalize(text).text)


def value_view(value: str) -> str:
    """A known value as it is searched for (the same view as :func:`text_view`, trimmed)."""
    return _fold(normalize_surface(value)).strip()


def _clean(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _bounded(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is a whole token: no letter against a letter, no digit against a digit."""
    first, last = text[start], text[end - 1]
    if start > 0:
        before = text[start - 1]
        if (first.isalpha() and before.isalpha()) or (first.isdigit() and before.isdigit()):
            return False
    if end < len(text):
        after = text[end]
        if (last.isalpha() and after.isalpha()) or (last.isdigit() and after.isdigit()):
            return False
    return True


def _contains_token(text: str, token: str) -> bool:
    i = text.find(token)
    while i >= 0:
        if _bounded(text, i, i + len(token)):
            return True
        i = text.find(token, i + 1)
    return False


# ------------------------------------------------------------------------- known values


@dataclass
class KnownValue:
    """One field of one patient row and the keys (searched forms) it is found by."""

    column: str
    kind: str
    keys: set[str] = field(default_factory=set)
    compact: set[str] = field(default_factory=set)  # digit-only forms, matched across separators


def _compact(surface: str) -> str | None:
    """The digits of a digit identifier written with separators, when it has enough of them."""
    if not _DIGIT_VALUE.fullmatch(surface):
        return None
    digits = _NON_DIGIT.sub("", surface)
    return digits if len(digits) >= MIN_COMPACT_DIGITS else None


def _value(column: str, kind: str, surfaces: Iterable[str], compact: bool = False) -> KnownValue:
    """A known value searched by the views of ``surfaces`` (and their digits, for a digit identifier)."""
    value = KnownValue(column, kind)
    for s in surfaces:
        key = value_view(s)
        if not key:
            continue
        value.keys.add(key)
        if compact:
            digits = _compact(key)
            if digits:
                value.compact.add(digits)
    return value


def _zip_surfaces(raw: Any) -> set[str]:
    if isinstance(raw, int) and not isinstance(raw, bool) and 0 <= raw < 100_000:
        return {f"{raw:05d}"}  # an INTEGER zip column lost its leading zero
    z = _clean(raw)
    if re.fullmatch(r"\d{5}(?:[-\s]?\d{4})?", z):
        return {z, z[:5]}
    return set()


def _column_kind(column: str) -> str | None:
    """``phone``, ``email``, ``mrn`` or ``id`` for a patients column searched as such; None for the others."""
    if column == "patient_id" or column in _FIXED_COLUMNS:
        return None
    if _EMAIL_COLUMN.search(column):
        return "email"
    if _PHONE_COLUMN.search(column):
        return "phone"
    if column == "mrn":
        return "mrn"
    return "id" if _ID_COLUMN.search(column) else None


def _dob_surfaces(raw: Any) -> set[str]:
    """The written forms of a date of birth; an unreadable one only as written, when it has six digits."""
    if isinstance(raw, date):
        return dob_variants(raw)
    s = _clean(raw)
    try:
        date.fromisoformat(s[:10])
    except ValueError:
        return {s} if len(_NON_DIGIT.sub("", s)) >= 6 else set()
    return dob_variants(s)


def known_values(row: Mapping[str, Any], columns: Sequence[str] | None = None) -> list[KnownValue]:
    """The known values of one patients row, with the keys each is searched by.

    ``columns`` (default: the row's keys) decides which further columns are ids, phones or e-mails.
    """
    cols = list(row) if columns is None else list(columns)
    out: list[KnownValue] = []
    # names: every variant the recognizer generates, credited to the name fields it holds in full
    names = {f: value_view(_clean(row.get(f))) for f in _NAME_FIELDS}
    variants = name_variants(row.get("first_name"), row.get("middle_name"), row.get("last_name"))
    middle = _clean(row.get("middle_name"))
    if len(middle) >= 3 and middle.lower() not in COMMON_WORDS:  # the same rule as a first or last name alone
        variants.add(middle)
    by_field = {f: KnownValue(f, "name") for f in _NAME_FIELDS}
    for variant in variants:
        key = value_view(variant)
        if not key:
            continue
        for f, name in names.items():
            if name and _contains_token(key, name):
                by_field[f].keys.add(key)
    out.extend(by_field.values())
    # contacts and ids: the phone, e-mail and MRN columns and any other phone, e-mail or id column
    for col in cols:
        kind = _column_kind(col)
        raw = _clean(row.get(col))
        if kind == "email":
            out.append(_value(col, kind, [raw] if "@" in raw else []))
        elif kind == "phone":
            out.append(_value(col, kind, phone_variants(raw), compact=True))
        elif kind is not None:
            out.append(_value(col, kind, mrn_variants(raw), compact=True))
    city = _clean(row.get("city"))
    out += [
        _value("dob", "dob", _dob_surfaces(row.get("dob")), compact=True),
        _value("street", "street", street_variants(row.get("street"))),
        _value("city", "city", [city] if len(city) >= 3 and city.lower() not in COMMON_WORDS else []),
        _value("zip", "zip", _zip_surfaces(row.get("zip")), compact=True),
    ]
    return [v for v in out if v.keys]


# ------------------------------------------------------------------------------ matcher


class _BatchMatcher:
    """The known values of one batch's patients in one automaton; each key knows whose value it is."""

    def __init__(self) -> None:
        self.kinds: list[str] = []  # field index -> kind
        self.fields: dict[str, list[int]] = {}  # patient id -> its field indexes
        self._plain: dict[str, dict[str, set[int]]] = {}  # key -> patient id -> field indexes
        self._compact: dict[str, dict[str, set[int]]] = {}
        self._automaton: Any = None

    def add_patient(self, patient_id: str, values: Sequence[KnownValue]) -> None:
        own = self.fields.setdefault(patient_id, [])
        for v in values:
            idx = len(self.kinds)
            self.kinds.append(v.kind)
            own.append(idx)
            for key in v.keys:
                self._plain.setdefault(key, {}).setdefault(patient_id, set()).add(idx)
            for key in v.compact:
                self._compact.setdefault(key, {}).setdefault(patient_id, set()).add(idx)

    def build(self) -> None:
        automaton = ahocorasick.Automaton()
        for key in self._plain.keys() | self._compact.keys():
            automaton.add_word(key, key)
        if len(automaton):
            automaton.make_automaton()
        self._automaton = automaton

    def find(self, text: str, patient_ids: Iterable[str]) -> set[int]:
        """Indexes of the fields of ``patient_ids`` whose value survives in ``text``."""
        pids = [p for p in patient_ids if p in self.fields]
        if not pids or self._automaton is None or not len(self._automaton):
            return set()
        view = text_view(text)
        found: set[int] = set()
        for end, key in self._automaton.iter(view):
            hits = [o[p] for o in (self._plain.get(key), self._compact.get(key)) if o for p in pids if p in o]
            if hits and _bounded(view, end - len(key) + 1, end + 1):
                found.update(*hits)
        if self._compact:
            for group in _DIGIT_GROUP.finditer(view):
                if len(_NON_DIGIT.sub("", group.group())) >= MIN_COMPACT_DIGITS:  # "120/80", "5-10 mg": too short
                    found |= self._find_compact(group.group(), pids)
        return found

    def _find_compact(self, group: str, pids: Sequence[str]) -> set[int]:
        """Compact keys in a group of digit runs, starting and ending at run boundaries."""
        digits: list[str] = []
        bounds = {0}
        n = 0
        for m in _DIGITS.finditer(group):
            digits.append(m.group())
            n += m.end() - m.start()
            bounds.add(n)
        found: set[int] = set()
        for end, key in self._automaton.iter("".join(digits)):
            owners = self._compact.get(key)
            if owners is None or (end + 1 - len(key)) not in bounds or (end + 1) not in bounds:
                continue
            for p in pids:
                found |= owners.get(p, set())
        return found


# ------------------------------------------------------------------------------- reading


def _check_notes_table(wh: Warehouse, config: TideConfig) -> None:
    """The notes table exists and has the id columns each note's patient is read from."""
    name = config.tables.notes
    if not wh.table_exists(name):
        raise _UnreadableError(
            f"the notes table {name!r} was not found",
            "load the notes table (or set tables.notes) and rerun the release checks",
        )
    cols = wh.columns(name)
    if "note_id" not in cols or "patient_id" not in cols:
        raise _UnreadableError(
            f"the notes table {name!r} lacks note_id or patient_id", "map the notes table's columns with a view"
        )


@dataclass(frozen=True)
class _Patients:
    """How the patients table is read: its name, the columns that hold values, its id column's type."""

    table: str
    columns: list[str]
    id_type: pa.DataType

    def rows(self, wh: Warehouse, patient_ids: set[str]) -> dict[str, list[dict[str, Any]]]:
        """patient id (as text) -> that patient's rows; only the rows of ``patient_ids`` are read.

        The filter goes to the warehouse in the id column's own type (text, or integers for an
        INTEGER column); other types are read whole and filtered here.
        """
        if not patient_ids:
            return {}
        t = self.id_type
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            batches: Iterable[list[dict[str, Any]]] = [
                wh.read_table(self.table, self.columns, where={"patient_id": sorted(patient_ids)}).to_pylist()
            ]
        elif pa.types.is_integer(t):
            ints = sorted({int(p) for p in patient_ids if _INT.fullmatch(p)})
            batches = [wh.read_table(self.table, self.columns, where={"patient_id": ints}).to_pylist()] if ints else []
        else:
            batches = stream_rows(wh, self.table, self.columns, None, ID_BATCH_ROWS)
        out: dict[str, list[dict[str, Any]]] = {}
        for rows in batches:
            for row in rows:
                pid = _as_str_id(row.get("patient_id"))
                if pid is not None and pid in patient_ids:
                    out.setdefault(pid, []).append(row)
        return out


def _open_patients(wh: Warehouse, config: TideConfig) -> _Patients | None:
    name = config.tables.patients
    if not wh.table_exists(name):
        return None
    cols = wh.columns(name)
    if "patient_id" not in cols:
        raise _UnreadableError(
            f"the patients table {name!r} has no patient_id column", "map the patients table's columns with a view"
        )
    wanted = [
        c for c in cols if c == "patient_id" or (c in _FIXED_COLUMNS and c != "state") or _column_kind(c) is not None
    ]
    probe = wh.read_table(name, ["patient_id"], where={"patient_id": []})
    return _Patients(name, wanted, probe.schema.field("patient_id").type)


# -------------------------------------------------------------------------------- check


@dataclass
class _Tally:
    n_notes: int = 0
    n_notes_checked: int = 0
    n_notes_without_source: int = 0
    n_notes_without_patient_row: int = 0
    n_values_checked: int = 0
    n_surviving: int = 0
    n_notes_with_survivors: int = 0
    patients: set[str] = field(default_factory=set)
    checked_by_kind: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    surviving_by_kind: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))

    def metadata(self, table_found: bool) -> dict[str, Any]:
        return {
            "patients_table_found": table_found,
            "n_notes": self.n_notes,
            "n_notes_checked": self.n_notes_checked,
            "n_notes_without_patient_row": self.n_notes_without_patient_row,
            "n_notes_without_source": self.n_notes_without_source,
            "n_patients_with_known_values": len(self.patients),
            "n_values_checked": self.n_values_checked,
            "n_known_values_surviving": self.n_surviving,
            "n_notes_with_survivors": self.n_notes_with_survivors,
            "values_checked_by_kind": dict(self.checked_by_kind),
            "surviving_by_kind": dict(self.surviving_by_kind),
        }


class KnownPhiScan:
    """The check as a rider on the release's chunk pass (:func:`tide_core.release.scan.scan_release`):
    each source chunk's released notes are scanned for their own patients' values."""

    def __init__(self, wh: Warehouse, config: TideConfig, study: str, key: str) -> None:
        self.wh, self.config, self.study, self.key = wh, config, study, key
        self.tally = _Tally()
        self.failure: BaseException | None = None
        self.patients: _Patients | None = None
        try:
            if not wh.table_exists(config.tables.deid_notes):
                raise _UnreadableError(
                    f"the released notes table {config.tables.deid_notes!r} was not found",
                    f"materialize deidentified_notes for {study}/{key}",
                )
            self.patients = _open_patients(wh, config)
            if self.patients is not None:
                _check_notes_table(wh, config)
        except Exception as exc:  # reported by outcome(): fail closed
            self.failure = exc

    def add(self, rc: ReleaseChunk, known_rows: Mapping[str, list[dict[str, Any]]] | None = None) -> None:
        """Scan one chunk's released notes (``known_rows``: its patients' rows, when already read)."""
        if self.failure is not None or self.patients is None:
            return
        try:
            note_patients = chunk_note_patients(rc)
            surrogates: dict[str, list[tuple[int, int]]] = {}
            for s in rc.spans:
                if s["out_start"] is not None and s["out_end"] is not None:
                    surrogates.setdefault(s["note_id"], []).append((int(s["out_start"]), int(s["out_end"])))
            _scan_notes(self.wh, self.patients, note_patients, rc.released, surrogates, self.tally, known_rows)
        except Exception as exc:
            self.failure = exc

    def outcome(self) -> CheckOutcome:
        try:
            if self.failure is not None:
                raise self.failure
            return self._outcome()
        except _UnreadableError as exc:
            return CheckOutcome(
                False, f"known patient values could not be checked: {exc.what}; {exc.hint}", {"unreadable": True}
            )
        except TideError as exc:  # the message may quote a value: the code only
            return CheckOutcome(
                False,
                f"known patient values could not be checked ({type(exc).__name__} {exc.code}); check the notes, "
                f"patients and released tables of {self.study}/{self.key} and rerun the release checks",
                {"unreadable": True},
            )
        except Exception as exc:  # fail closed on any unreadable input; the message may quote a value
            return CheckOutcome(
                False,
                f"known patient values could not be checked ({type(exc).__name__}); check the notes, patients and "
                f"released tables of {self.study}/{self.key} and rerun the release checks",
                {"unreadable": True},
            )

    def _outcome(self) -> CheckOutcome:
        study, key, names, tally = self.study, self.key, self.config.tables, self.tally
        store = ReleaseStore(self.wh, names)
        n_released = store.count("deid_notes", study, key)
        if self.patients is None:
            tally.n_notes = tally.n_notes_without_patient_row = n_released
            return CheckOutcome(
                True,
                f"skipped: no patients table ({names.patients!r}), so no known patient value was checked in the "
                f"{tally.n_notes} released notes of {study}/{key}; load the patients table to enable this check",
                tally.metadata(False),
            )
        # released rows of note ids no source chunk owns have no source row to check them against
        tally.n_notes_without_source += max(0, n_released - tally.n_notes)
        tally.n_notes = n_released
        return _verdict(tally, study, key)


def chunk_note_patients(rc: ReleaseChunk) -> dict[str, set[str]]:
    """note id -> its patient ids, for the note ids a chunk owns (valid and quarantined rows)."""
    note_patients: dict[str, set[str]] = {}
    for n in rc.chunk.notes:
        note_patients.setdefault(n.note_id, set()).add(n.patient_id)
    for q in rc.chunk.quarantined:
        if q.note_id is not None:
            ids = note_patients.setdefault(q.note_id, set())
            if q.patient_id:
                ids.add(q.patient_id)
    return note_patients


def released_patients(note_patients: Mapping[str, set[str]], released: Sequence[Mapping[str, Any]]) -> set[str]:
    """The patients of the released rows (note_id, ...) whose values are searched."""
    pids: set[str] = set()
    for r in released:
        nid = _as_str_id(r["note_id"])
        pids |= note_patients.get(nid, set()) if nid is not None else set()
    return pids


def _scan_notes(
    wh: Warehouse,
    patients: _Patients,
    note_patients: Mapping[str, set[str]],
    released: Sequence[Mapping[str, Any]],
    surrogates: Mapping[str, Sequence[tuple[int, int]]],
    tally: _Tally,
    known_rows: Mapping[str, list[dict[str, Any]]] | None = None,
) -> None:
    """Scan released rows (note_id, text) for the values of each note's own patients
    (``known_rows``: the patients' rows when the caller read them already, else read here)."""
    pids = released_patients(note_patients, released)
    matcher = _BatchMatcher()
    if known_rows is None:
        by_patient = patients.rows(wh, pids)
    else:
        by_patient = {p: known_rows[p] for p in sorted(pids) if p in known_rows}
    for pid, rows in by_patient.items():
        values = [v for row in rows for v in known_values(row, patients.columns)]
        if values:
            matcher.add_patient(pid, values)
            tally.patients.add(pid)
    matcher.build()
    for r in released:
        tally.n_notes += 1
        nid = _as_str_id(r["note_id"])
        owners = note_patients.get(nid) if nid is not None else None
        if owners is None:
            tally.n_notes_without_source += 1
            continue
        fields = [i for p in sorted(owners) for i in matcher.fields.get(p, ())]
        if not fields:
            tally.n_notes_without_patient_row += 1
            continue
        tally.n_notes_checked += 1
        tally.n_values_checked += len(fields)
        for i in fields:
            tally.checked_by_kind[matcher.kinds[i]] += 1
        found = matcher.find(mask_surrogates(r["text"] or "", surrogates.get(r["note_id"], ())), owners)
        if found:
            tally.n_notes_with_survivors += 1
            tally.n_surviving += len(found)
            for i in found:
                tally.surviving_by_kind[matcher.kinds[i]] += 1


#: What a surrogate's characters become before the scan: neither a letter, a digit, a space nor a
#: separator of a digit group, so nothing matches inside a surrogate or joins across it.
MASK = "#"


def mask_surrogates(text: str, ranges: Iterable[tuple[int, int]]) -> str:
    """``text`` with every surrogate range masked: a surrogate that happens to equal one of the
    patient's values (a keyed city that is the patient's own) reveals nothing and is not counted."""
    chars = list(text)
    for start, end in ranges:
        for i in range(max(0, start), min(len(chars), end)):
            chars[i] = MASK
    return "".join(chars)


def _by_kind(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{k} {n}" for k, n in counts.items() if n)


def _verdict(tally: _Tally, study: str, key: str) -> CheckOutcome:
    md = tally.metadata(True)
    if tally.n_surviving or tally.n_notes_without_source:
        parts = []
        if tally.n_surviving:
            parts.append(
                f"{tally.n_surviving} known patient values ({_by_kind(tally.surviving_by_kind)}) survive in "
                f"{tally.n_notes_with_survivors} released notes"
            )
        if tally.n_notes_without_source:
            parts.append(f"{tally.n_notes_without_source} released notes have no source row to check them against")
        return CheckOutcome(
            False,
            "; ".join(parts) + f" of {study}/{key}; block this release, review the notes (tide review) and rerun",
            md,
        )
    if tally.n_notes_checked == 0:
        return CheckOutcome(
            True,
            f"skipped: the patients table has no row for the patients of the {tally.n_notes} released notes of "
            f"{study}/{key}, so no known patient value was checked",
            md,
        )
    unchecked = (
        f"; {tally.n_notes_without_patient_row} notes have no patients row and were not checked"
        if tally.n_notes_without_patient_row
        else ""
    )
    return CheckOutcome(
        True,
        f"no known patient value survives in the {tally.n_notes_checked} released notes checked{unchecked}",
        md,
    )


def known_phi_survives(wh: Warehouse, config: TideConfig, study: str, key: str) -> CheckOutcome:
    """No patient's known value (the patients table) appears in that patient's released notes.

    See the module docstring.  Passes, saying it was skipped, without a patients table; fails
    when an input cannot be read.  Counts only in the outcome.  One streamed pass over the
    study's chunks (:func:`tide_core.release.scan.scan_release`).
    """
    scan = KnownPhiScan(wh, config, study, key)
    if scan.failure is None and scan.patients is not None:
        try:
            scan_release(wh, config, study, key, (), extra=[scan.add], chunk_rows=BATCH_NOTES)
        except Exception as exc:  # an unreadable source: reported by the outcome, fail closed
            scan.failure = exc
    return scan.outcome()
