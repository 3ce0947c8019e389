"""Corpus generators: demo, training and held-out.

Notes are composed from templates (header, body, extras, sign-off) whose slots are filled from
a consistent synthetic world; gold spans are recorded while the string is built.

- demo: both template families and the full vocabulary; ~40 patients / ~150 notes.
- train: only ``train`` templates and the ``train`` half of every vocabulary list.
- heldout: only ``heldout`` templates and the ``heldout`` half; about half of the facility
  mentions are the demo site's own facilities (listed in gazetteer_demo.csv), the rest are
  outside facilities the gazetteer does not know.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Literal

from tide_core.evaluation.gold_io import GOLD_RECOGNIZER, GoldDoc
from tide_core.spans import Note, Span
from tide_core.synth.builder import NoteBuilder
from tide_core.synth.slots import NoteContext, render_slot
from tide_core.synth.templates import NOTE_TYPES, Template, templates_for
from tide_core.synth.vocab import load_vocabulary
from tide_core.synth.world import World

Kind = Literal["demo", "train", "heldout"]
SYNTH_VERSION = "tide.synth@1"
TemplateIndex = dict[tuple[str, str], tuple[Template, ...]]  # (note type, section) -> templates

NOTE_TYPE_WEIGHTS = {
    "progress_note": 18,
    "discharge_summary": 10,
    "ed_note": 10,
    "radiology_report": 9,
    "nursing_note": 9,
    "consult_note": 9,
    "telephone_encounter": 8,
    "lab_report": 8,
    "referral_letter": 7,
    "operative_note": 6,
    "pathology_report": 6,
}
#: (min, max) number of shared "extra" sections per note type.
EXTRAS = {
    "progress_note": (1, 3),
    "discharge_summary": (1, 3),
    "ed_note": (1, 2),
    "radiology_report": (0, 1),
    "nursing_note": (0, 1),
    "consult_note": (1, 2),
    "telephone_encounter": (0, 1),
    "lab_report": (0, 0),
    "referral_letter": (0, 1),
    "operative_note": (0, 1),
    "pathology_report": (0, 0),
}


@dataclass(frozen=True)
class KindSettings:
    vocab_part: str
    families: tuple[str, ...]
    site_share: float
    patient_prefix: str
    note_prefix: str
    site: str


KINDS: dict[str, KindSettings] = {
    "demo": KindSettings("all", ("train", "heldout"), 0.75, "DEMO-P", "DEMO-N", "demo_site"),
    "train": KindSettings("train", ("train",), 0.5, "TRN-P", "TRN-N", "synth_train"),
    "heldout": KindSettings("heldout", ("heldout",), 0.5, "HLD-P", "HLD-N", "synth_heldout"),
}


@dataclass
class DemoCorpus:
    """Notes (pipeline input), the patients table rows, and the gold documents."""

    notes: list[Note]
    patients: list[dict[str, Any]]
    gold: list[GoldDoc]


def _source(kind: str) -> str:
    return f"{SYNTH_VERSION}:{kind}"


def _render(ctx: NoteContext, t: Template, b: NoteBuilder) -> None:
    for head, arg in t.expand(ctx.rng):
        if arg is None:
            b.text(head)
        else:
            b.extend(render_slot(ctx, head[1:], arg))


def _pick(index: TemplateIndex, note_type: str, section: str, r: random.Random, p_specific: float = 0.75) -> Template:
    specific = index.get((note_type, section), ())
    generic = index.get(("any", section), ())
    if specific and (not generic or r.random() < p_specific):
        return r.choice(specific)
    return r.choice(generic)


def compose_note(
    ctx: NoteContext, index: TemplateIndex
) -> tuple[str, list[tuple[int, int, str]], list[tuple[int, int, str]], list[str]]:
    """Build one note; returns (text, spans, hard negatives, template ids)."""
    r = ctx.rng
    nt = ctx.note_type
    plan: list[Template] = [_pick(index, nt, "header", r)]
    bodies = index[(nt, "body")]
    plan.append(r.choice(bodies))
    lo, hi = EXTRAS[nt]
    extras = index.get(("any", "extra"), ())
    plan.extend(r.sample(extras, min(len(extras), r.randint(lo, hi))))
    if r.random() < 0.9:
        plan.append(_pick(index, nt, "sign", r, 0.85))
    b = NoteBuilder()
    for i, t in enumerate(plan):
        if i:
            b.text(r.choice(("\n\n", "\n\n", "\n", "\n\n\n")))
        _render(ctx, t, b)
    text = b.build()
    if r.random() < 0.04:
        upper = text.upper()
        if len(upper) == len(text):  # some legacy systems store notes in capitals
            text = upper
    return text, b.spans, b.negatives, [t.template_id for t in plan]


def generate(kind: Kind, n_notes: int, seed: int) -> DemoCorpus:
    """Generate ``n_notes`` notes of ``kind`` (2-6 per patient), deterministic in ``seed``."""
    if kind not in KINDS:
        raise ValueError(f"unknown corpus kind {kind!r}; use demo, train or heldout")
    if n_notes < 0:
        raise ValueError("n_notes must be >= 0")
    cfg = KINDS[kind]
    r = random.Random(f"tide-synth:{kind}:{seed}")
    world = World(load_vocabulary(cfg.vocab_part), r, site_share=cfg.site_share)
    index = templates_for(cfg.families)
    types = list(NOTE_TYPES)
    weights = [NOTE_TYPE_WEIGHTS[t] for t in types]
    notes: list[Note] = []
    gold: list[GoldDoc] = []
    patients: list[dict[str, Any]] = []
    remaining = n_notes
    while remaining > 0:
        k = min(r.randint(2, 6), remaining)
        if remaining - k == 1:
            k = k + 1 if k < 6 else k - 1
        remaining -= k
        pid = f"{cfg.patient_prefix}{len(patients) + 1:05d}"
        patient = world.patient(pid, k)
        row = patient.row()
        patients.append(row)
        for j in range(k):
            facility = patient.home if r.random() < 0.75 else world.facility("hospital")
            nt = r.choices(types, weights)[0]
            ctx = NoteContext(world, patient, j, nt, r, facility)
            text, raw_spans, negatives, tids = compose_note(ctx, index)
            note_id = f"{cfg.note_prefix}{len(notes) + 1:06d}"
            meta = {
                "note_date": patient.note_dates[j].isoformat(),
                "note_type": nt,
                "source": _source(kind),
                "site": cfg.site,
            }
            spans = tuple(Span(note_id, s, e, lab, 1.0, GOLD_RECOGNIZER) for s, e, lab in raw_spans)
            gmeta = dict(
                meta,
                templates=tids,
                families=list(cfg.families),
                facility=facility.name,
                facility_in_gazetteer=facility.pool == "site",
                hard_negatives=[[s, e, kd] for s, e, kd in negatives],
                patient=row,
            )
            notes.append(Note(note_id, pid, text, meta))
            gold.append(GoldDoc(note_id, pid, text, spans, gmeta))
    return DemoCorpus(notes, patients, gold)


def metadata_vocabulary(kind: Kind) -> dict[str, tuple[str, ...]]:
    """Every ``note_type``, ``source`` and ``site`` value :func:`generate` can give a ``kind`` note."""
    if kind not in KINDS:
        raise ValueError(f"unknown corpus kind {kind!r}; use demo, train or heldout")
    return {"note_type": NOTE_TYPES, "source": (_source(kind),), "site": (KINDS[kind].site,)}


def demo_metadata_vocabulary() -> dict[str, tuple[str, ...]]:
    """The demo corpus's metadata values per column, for ``TideConfig.with_metadata_vocabulary``."""
    return metadata_vocabulary("demo")


def generate_demo_corpus(seed: int = 7, n_notes: int = 150) -> DemoCorpus:
    """The demo corpus: ~40 patients / ~150 notes over both template families."""
    return generate("demo", n_notes, seed)


def generate_training_corpus(n_notes: int, seed: int = 0) -> list[GoldDoc]:
    """Training documents: ``train`` templates and vocabulary half only."""
    return generate("train", n_notes, seed).gold


def generate_heldout_dataset(n_notes: int, seed: int = 0) -> DemoCorpus:
    """Held-out notes, their patients table and gold: for the quality benchmark."""
    return generate("heldout", n_notes, seed)


def generate_heldout_corpus(n_notes: int, seed: int = 0) -> list[GoldDoc]:
    """Held-out gold documents (``metadata["patient"]`` is the patient's table row)."""
    return generate_heldout_dataset(n_notes, seed).gold
