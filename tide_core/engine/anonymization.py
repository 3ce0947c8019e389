"""Anonymize a batch of notes from cached spans, failing closed.

A note is released only when every span was replaced and no replaced value equals its
original; otherwise it is quarantined with a coded reason that names no PHI.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from tqdm import tqdm

from tide_core.anonymize.dates import shift_note_date
from tide_core.anonymize.engine import Anonymizer, DatePolicy, pseudonym
from tide_core.errors import TideError
from tide_core.spans import AnonymizedNote, Note, Quarantined, Span
from tide_core.steps.resolve import resolve_spans
from tide_core.text.normalize import normalize_surface

if TYPE_CHECKING:
    from tide_core.anonymize.keys import KeyRing
    from tide_core.config import TideConfig

#: Labels whose operator may legitimately keep the original surface (ages <= 89 are kept).
KEEPS_VALUE = frozenset({"AGE"})


@dataclass(frozen=True)
class ReleasedNote:
    """One note that passed anonymization, with its pseudonymous references and shifted date.

    ``source`` is the original note and stays in the driver; only ``note``, the references and
    ``note_date`` are written to released tables.
    """

    source: Note
    note: AnonymizedNote
    note_ref: str
    patient_ref: str
    note_date: str | None


@dataclass
class AnonymizationBatch:
    """The outcome of :func:`anonymize_notes`: every input note is either released or quarantined.

    ``anonymizer`` is the anonymizer's version, recorded with the released rows.
    """

    anonymizer: str
    released: list[ReleasedNote] = field(default_factory=list)
    quarantined: list[Quarantined] = field(default_factory=list)


def _surfaces_survive(note: Note, out: AnonymizedNote) -> list[int]:
    """Indexes of released spans whose replacement equals the original surface (a leak)."""
    bad = []
    for i, s in enumerate(out.spans):
        if s.label in KEEPS_VALUE:
            continue
        original = note.text[s.start : s.end]
        # compared with the original and with the normalised view recognition saw (a format
        # character inside the original must not hide a replacement equal to it)
        if out.text[s.out_start : s.out_end].casefold() in {
            original.casefold(),
            normalize_surface(original).casefold(),
        }:
            bad.append(i)
    return bad


def anonymize_notes(
    notes: Sequence[Note],
    spans: Mapping[str, Sequence[Span]],
    keyring: KeyRing,
    config: TideConfig | None = None,
    *,
    progress: bool = False,
    desc: str = "anonymize",
) -> AnonymizationBatch:
    """Anonymize ``notes`` with their resolved ``spans`` under ``keyring``; fail closed per note.

    A note whose anonymization raises, or whose replacement equals an original surface (``E405``),
    is quarantined and never released; its neighbours are unaffected.  Quarantine messages name
    the note id, an error code and offsets, never a value from the note.
    """
    policy = cast("DatePolicy", getattr(config, "on_unparseable_date", "mask"))  # checked by Anonymizer
    anonymizer = Anonymizer(keyring, on_unparseable_date=policy)
    batch = AnonymizationBatch(anonymizer.VERSION)
    for note in tqdm(notes, desc=desc, unit="note", disable=not progress, leave=False):
        try:
            note_spans = resolve_spans(list(spans.get(note.note_id, ())))
            out = anonymizer.anonymize(note, note_spans)
            leaks = _surfaces_survive(note, out)
            if leaks:
                batch.quarantined.append(
                    Quarantined(
                        note.note_id,
                        note.patient_id,
                        "anonymization",
                        "E405",
                        f"note {note.note_id}: {len(leaks)} replacement(s) equal the original value "
                        f"(first at offset {out.spans[leaks[0]].start}); not released",
                    )
                )
                continue
            iso = note.metadata.get("note_date")
            note_date = shift_note_date(keyring, note.patient_id, iso) if iso else None
            batch.released.append(
                ReleasedNote(
                    note,
                    out,
                    pseudonym(keyring, "note", note.note_id),
                    pseudonym(keyring, "patient", note.patient_id),
                    note_date,
                )
            )
        except TideError as exc:
            batch.quarantined.append(
                Quarantined(
                    note.note_id, note.patient_id, "anonymization", exc.code, f"note {note.note_id}: {exc.message}"
                )
            )
        except Exception as exc:  # fail closed on any operator bug, without echoing values
            batch.quarantined.append(
                Quarantined(
                    note.note_id,
                    note.patient_id,
                    "anonymization",
                    "E499",
                    f"note {note.note_id}: anonymizer raised {type(exc).__name__}",
                )
            )
    return batch
