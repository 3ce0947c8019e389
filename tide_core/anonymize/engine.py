"""The keyed, table-free anonymizer: resolved spans in, released text and span metadata out.

Each label has one operator family (one key domain each, via ``KeyRing.subkey``):

=========  ===========================  ===================================================
label      operator(s)                  rule
=========  ===========================  ===================================================
PATIENT    ``name.surrogate``           :mod:`names` (keyed list derangement / generated)
DOCTOR     ``name.surrogate``           same, same key domain (one person, one surrogate)
DATE       ``date.shift``/``date.mask`` :mod:`dates` (per-patient offset, same format;
           ``date.decade``             a year alone -> its decade)
AGE        ``age.keep``/``age.aggregate`` :mod:`ages` (> 89 -> ``90+``)
ID         ``id.fpe``                   :mod:`identifiers` (FF3-1 / exact small domain)
PHONE      ``phone.fpe``                :mod:`contacts`
EMAIL      ``email.surrogate``          :mod:`contacts`
URL        ``url.surrogate``/``ip.fpe`` :mod:`contacts`
LOCATION   ``location.<subtype>``       :mod:`locations` (street/city/state/zip/country/address)
HOSPITAL   ``hospital.surrogate``       :mod:`facilities`
OTHER      ``org.surrogate``            :mod:`facilities`
=========  ===========================  ===================================================

Nothing is stored: every surrogate is a pure function of the (study, key) secret and the value
(and the patient id for dates), so a rerun reproduces a release and a new key gives an
unlinkable one.  Any span that cannot be replaced raises a coded :class:`AnonymizationError`
naming the note id, offsets and label (never the value): the caller quarantines the note.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from datetime import date
from operator import attrgetter
from typing import Any, Literal

from tide_core.anonymize import ages, contacts, facilities, identifiers, locations, names
from tide_core.anonymize.dates import (  # noqa: F401  (re-export)
    anonymize_date,
    anonymize_date_by,
    anonymize_date_run_by,
    date_offset_days,
    date_runs,
    shift_date,
    shift_note_date,
)
from tide_core.anonymize.keys import KeyRing
from tide_core.errors import AnonymizationError, ConfigError, TideError
from tide_core.spans import AnonymizedNote, Note, ReleasedSpan, Span
from tide_core.text.normalize import normalize_surface

#: @3: a LOCATION of unit words only ("Rm", "NW") gets a place surrogate (was E405); @4: a month/day
#: date with a time or a weekday ("5/7 1045", "Mon 5/29", "Feb 23 0550") is shifted (was masked, or E413)
#: @6: dates in words, in other languages and ranges ("third of July", "3 septembre 2014", "7" + "11 March")
#: are shifted (were masked)
VERSION = "tide.anonymizer@6"
DATE_MASK = "[DATE]"
UNPARSEABLE_DATE_CODES = frozenset({"E410", "E411"})
DatePolicy = Literal["mask", "quarantine"]
DATE_POLICIES = ("mask", "quarantine")
PSEUDONYM_PREFIX = {"patient": "P", "note": "N"}
#: Replacements an :class:`Anonymizer` remembers (value -> surrogate, in process memory only, like
#: the note texts themselves); when full it starts again empty.  Names, places and identifiers
#: recur across a patient's notes, so a chunk re-derives each of them once.
MEMO_ENTRIES = 65536


def pseudonym(keyring: KeyRing, kind: str, value: str) -> str:
    """Stable opaque reference (``P`` + 12 base32 characters = 60 keyed bits) for patient_ref / note_ref.

    One-way (HMAC); a new key gives new references.  Expected collisions among 10^6 values: ~4e-7.
    """
    digest = keyring.mac("id", "pseudonym", kind, str(value))
    prefix = PSEUDONYM_PREFIX.get(kind, (kind[:1] or "X").upper())
    return prefix + base64.b32encode(digest[:8]).decode("ascii")[:12]


_OFFSETS = attrgetter("start", "end")


def _where(note: Note, span: Span) -> str:
    """Where a span is, for error messages: note id, label and offsets, never the value."""
    return f"note {note.note_id}: {span.label} span [{span.start}, {span.end})"


def _reference_year(note: Note) -> int | None:
    raw = (note.metadata or {}).get("note_date")
    if isinstance(raw, date):
        return raw.year
    if isinstance(raw, str) and len(raw) >= 4 and raw[:4].isdigit():
        return int(raw[:4])
    return None


class Anonymizer:
    """Apply keyed operators to resolved spans of one note at a time (thread-safe, picklable)."""

    VERSION = VERSION

    def __init__(self, keyring: KeyRing, on_unparseable_date: DatePolicy = "mask"):
        if on_unparseable_date not in DATE_POLICIES:
            raise ConfigError(
                "E470",
                f"unknown on_unparseable_date policy {on_unparseable_date!r}",
                hint=f"use one of {', '.join(DATE_POLICIES)}",
            )
        self.keyring = keyring
        self.on_unparseable_date = on_unparseable_date
        self._memo: dict[tuple[str, str, str, int | None], tuple[str, str]] = {}
        self._offsets: dict[str, int] = {}  # patient -> date offset (memoised like ``_memo``)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_memo"] = {}  # surrogates of values never travel with a pickled anonymizer
        state["_offsets"] = {}
        return state

    def config(self) -> dict[str, Any]:
        """Output-affecting settings (for fingerprints); never key material."""
        return {"version": VERSION, "on_unparseable_date": self.on_unparseable_date}

    # -- one value ---------------------------------------------------------------------------
    def replace_value(
        self, label: str, value: str, patient_id: str = "", reference_year: int | None = None
    ) -> tuple[str, str]:
        """(surrogate, operator) for one span value; raises AnonymizationError (coded).

        A pure function of the key, the value and (dates only) the patient and reference year,
        so successful results are memoised per anonymizer; failures are recomputed and raise again.
        The surrogate comes from the normalised value (what the recognizers saw,
        :func:`normalize_surface`): ``555<U+200B>-0199``, ``555&#45;0199`` and ``555-0199`` get the
        same one, and a name written ``John&nbsp;Novak`` is replaced as ``John Novak``, never with
        the letters of its reference mapped as a name (``&nbsp;`` would come out as ``&tucu;``).
        """
        value = normalize_surface(value)
        memo_key = (label, value, patient_id, reference_year) if label == "DATE" else (label, value, "", None)
        hit = self._memo.get(memo_key)
        if hit is not None:
            return hit
        result = self._replace(label, value, patient_id, reference_year)
        if len(self._memo) >= MEMO_ENTRIES:
            self._memo.clear()
        self._memo[memo_key] = result
        return result

    def _date_offset(self, patient_id: str) -> int:
        """The patient's date offset, derived once per anonymizer (bounded like the memo)."""
        offset = self._offsets.get(patient_id)
        if offset is None:
            offset = date_offset_days(self.keyring, patient_id)
            if len(self._offsets) >= MEMO_ENTRIES:
                self._offsets.clear()
            self._offsets[patient_id] = offset
        return offset

    def _replace(self, label: str, value: str, patient_id: str, reference_year: int | None) -> tuple[str, str]:
        kr = self.keyring
        if label in ("PATIENT", "DOCTOR"):
            return names.surrogate_name(kr, value), "name.surrogate"
        if label == "DATE":
            try:
                return anonymize_date_by(value, lambda: self._date_offset(patient_id), reference_year)
            except AnonymizationError as exc:
                if exc.code in UNPARSEABLE_DATE_CODES and self.on_unparseable_date == "mask":
                    return DATE_MASK, "date.mask"
                raise
        if label == "AGE":
            return ages.anonymize_age(value)
        if label == "ID":
            return identifiers.anonymize_identifier(kr, value), "id.fpe"
        if label == "PHONE":
            return contacts.surrogate_phone(kr, value), "phone.fpe"
        if label == "EMAIL":
            return contacts.surrogate_email(kr, value), "email.surrogate"
        if label == "URL":
            return contacts.surrogate_url(kr, value)
        if label == "LOCATION":
            sur, kind = locations.surrogate_location(kr, value)
            return sur, f"location.{kind}"
        if label == "HOSPITAL":
            return facilities.surrogate_hospital(kr, value), "hospital.surrogate"
        if label == "OTHER":
            return facilities.surrogate_organisation(kr, value), "org.surrogate"
        raise AnonymizationError(
            "E465", f"no operator for label {label!r}", hint="use a label from tide_core.types.LABELS"
        )

    # -- one note ----------------------------------------------------------------------------
    def _check(self, note: Note, spans: Sequence[Span]) -> list[Span]:
        ordered = sorted(spans, key=_OFFSETS)
        prev: Span | None = None
        for s in ordered:  # messages are built only on the error path
            if s.note_id != note.note_id:
                raise AnonymizationError(
                    "E460", f"{_where(note, s)} belongs to another note", hint="pass the spans of this note only"
                )
            if s.end > len(note.text):
                raise AnonymizationError(
                    "E461",
                    f"{_where(note, s)} lies past the end of the text (length {len(note.text)})",
                    hint="the note text changed since recognition; rerun recognition",
                )
            if prev is not None and s.start < prev.end:
                raise AnonymizationError(
                    "E462",
                    f"{_where(note, s)} overlaps {prev.label} span [{prev.start}, {prev.end})",
                    hint="resolve spans first (tide_core.steps.resolve.resolve_spans)",
                )
            prev = s
        return ordered

    def anonymize(self, note: Note, spans: Sequence[Span]) -> AnonymizedNote:
        """Replace every span; returns the released text and one ReleasedSpan per span."""
        ordered = self._check(note, spans)
        replaced = self._replace_spans(note, ordered)
        text, note_id = note.text, note.note_id
        out: list[str] = []
        released: list[ReleasedSpan] = []
        cursor = pos = 0
        for s, (rep, op) in zip(ordered, replaced, strict=True):
            start = s.start
            out.append(text[cursor:start])
            out.append(rep)
            pos += start - cursor
            released.append(ReleasedSpan(note_id, start, s.end, pos, pos + len(rep), s.label, op, s.recognizer))
            pos += len(rep)
            cursor = s.end
        out.append(text[cursor:])
        return AnonymizedNote(note_id, note.patient_id, "".join(out), tuple(released))

    def _replace_spans(self, note: Note, ordered: list[Span]) -> list[tuple[str, str]]:
        """(surrogate, operator) of each span of ``ordered``.

        Raises the coded error of the first span, in text order, that has no non-empty surrogate
        (the note is then quarantined).

        The spans are replaced label by label (text order within a label): one operator family's
        code and tables stay in the CPU caches, which is faster than alternating families span by
        span.  Every surrogate is a pure function of its value, so the order changes nothing else.
        """
        ref_year = _reference_year(note)
        text, patient_id = note.text, note.patient_id
        results: list[tuple[str, str]] = [("", "")] * len(ordered)
        failed: dict[int, Exception | None] = {}  # span index -> what it raised (None: an empty surrogate)
        labels = [s.label for s in ordered]
        for k in sorted(range(len(ordered)), key=labels.__getitem__):
            s = ordered[k]
            try:
                # the whole original extent, format characters, character references ("&nbsp;")
                # and tags inside it included, is replaced (replace_value reads it normalised)
                result = self.replace_value(s.label, text[s.start : s.end], patient_id, ref_year)
            except Exception as exc:  # reported below, for the first failing span in text order
                failed[k] = exc
                continue
            results[k] = result
            if not result[0]:
                failed[k] = None
        if "DATE" in labels:
            self._shift_date_runs(note, ordered, results, failed)
        if failed:
            first = min(failed)
            refusal, empty = _refusal(note, ordered[first], failed[first]), failed[first] is None
            failed.clear()  # the operators' own exceptions (and their frames) do not travel with the refusal
            if empty:
                raise refusal
            raise refusal from None
        return results

    def _shift_date_runs(
        self,
        note: Note,
        ordered: list[Span],
        results: list[tuple[str, str]],
        failed: dict[int, Exception | None],
    ) -> None:
        """Replace the dates of a range or list written as separate spans ("between 7 and 11 March") as one.

        A day written alone takes its month and year from its neighbours and every end moves by
        the patient's offset (:func:`tide_core.anonymize.dates.anonymize_date_run_by`).  A run that
        does not read as one range keeps each span's own result (a day alone stays masked).
        """
        text, ref_year = note.text, _reference_year(note)
        index = [k for k, s in enumerate(ordered) if s.label == "DATE"]
        for run in date_runs(text, [(ordered[k].start, ordered[k].end) for k in index]):
            ks = [index[i] for i in run]
            values = [text[ordered[k].start : ordered[k].end] for k in ks]
            shifted = anonymize_date_run_by(values, lambda: self._date_offset(note.patient_id), ref_year)
            for k, result in zip(ks, shifted or (), strict=False):
                results[k] = result
                failed.pop(k, None)


def _refusal(note: Note, s: Span, exc: Exception | None) -> AnonymizationError:
    """The coded error that quarantines ``note`` because span ``s`` raised ``exc``.

    ``exc`` is ``None`` when its surrogate is empty.  The error names the note, label and offsets,
    never the value.
    """
    where = _where(note, s)
    if exc is None:
        return AnonymizationError("E464", f"{where}: operator returned an empty surrogate", hint="report this as a bug")
    if isinstance(exc, AnonymizationError):
        if s.label == "DATE" and exc.code in UNPARSEABLE_DATE_CODES:
            return AnonymizationError(
                "E463",
                f"{where}: unparseable date ({exc.code}); policy is quarantine",
                hint="set on_unparseable_date='mask' or fix the date format",
            )
        return AnonymizationError(exc.code, f"{where}: {exc.message}", exc.hint)
    if isinstance(exc, TideError):
        return AnonymizationError(exc.code, f"{where}: {exc.message}", exc.hint)
    # an operator bug must never release the note
    return AnonymizationError(
        "E469",
        f"{where}: operator raised {type(exc).__name__}",
        hint="report this as a bug; the note is quarantined",
    )
