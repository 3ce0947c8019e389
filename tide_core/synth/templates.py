"""Templates: note text with ``{slot}`` and ``{slot:arg}`` fillers and ``[[a|b|c]]`` choices.

Each template belongs to exactly one *family*: ``train`` (the training corpus) or ``heldout``
(the held-out benchmark); the two families share no template (tested), so the benchmark
measures generalisation to note wording the model never saw.  The demo uses both.

A template is parsed once into literal chunks and slots; choices are resolved per use.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from tide_core.synth import templates_heldout, templates_train

NOTE_TYPES = (
    "discharge_summary",
    "progress_note",
    "radiology_report",
    "pathology_report",
    "ed_note",
    "nursing_note",
    "referral_letter",
    "lab_report",
    "telephone_encounter",
    "operative_note",
    "consult_note",
)
SECTIONS = ("header", "body", "extra", "sign")
FAMILIES = ("train", "heldout")

_SLOT = re.compile(r"\{([A-Za-z_0-9]+)(?::([^{}]*))?\}")
_CHOICE = re.compile(r"\[\[((?:(?!\]\]).)*)\]\]", re.S)


@dataclass(frozen=True)
class Template:
    template_id: str
    family: str  # "train" | "heldout"
    note_type: str  # one of NOTE_TYPES, or "any"
    section: str  # header | body | extra | sign
    text: str

    def expand(self, r: random.Random) -> list[tuple[str, str | None]]:
        """Resolve choices, then split into [(literal, None) | (slot, arg)] chunks."""
        text = self.text
        if "[[" in text:
            text = _CHOICE.sub(lambda m: r.choice(m.group(1).split("|")), text)
        return _split(text)


@lru_cache(maxsize=4096)
def _split(text: str) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    pos = 0
    for m in _SLOT.finditer(text):
        if m.start() > pos:
            out.append((text[pos : m.start()], None))
        out.append(("{" + m.group(1), m.group(2) or ""))
        pos = m.end()
    if pos < len(text):
        out.append((text[pos:], None))
    return out


def slot_names(text: str) -> list[str]:
    """Slot names used by a template text (for validation in tests)."""
    text = _CHOICE.sub(lambda m: " ".join(m.group(1).split("|")), text)
    return [m.group(1) for m in _SLOT.finditer(text)]


def _build(family: str, rows: Iterable[tuple[str, str, str]]) -> list[Template]:
    out = []
    for i, (note_type, section, text) in enumerate(rows):
        if note_type != "any" and note_type not in NOTE_TYPES:
            raise ValueError(f"unknown note type {note_type!r}")
        if section not in SECTIONS:
            raise ValueError(f"unknown section {section!r}")
        out.append(Template(f"{family}.{note_type}.{section}.{i:03d}", family, note_type, section, text.strip("\n")))
    return out


@lru_cache(maxsize=1)
def all_templates() -> tuple[Template, ...]:

    return tuple(_build("train", templates_train.ROWS) + _build("heldout", templates_heldout.ROWS))


@lru_cache(maxsize=8)
def templates_for(families: tuple[str, ...]) -> dict[tuple[str, str], tuple[Template, ...]]:
    """Index (note_type, section) -> templates of the given families."""
    index: dict[tuple[str, str], list[Template]] = {}
    for t in all_templates():
        if t.family in families:
            index.setdefault((t.note_type, t.section), []).append(t)
    return {k: tuple(v) for k, v in index.items()}
