"""Out-of-generator (OOG) benchmark corpora with exact gold PHI spans.

Written independently of the project's synthetic generator, recognizers and their vocabulary
(see README.md in this folder).  Usage::

    from benchmarks.oog import generate_oog
    corpus = generate_oog("clinical", n_docs=300, seed=7)   # or "messages", "world"
    corpus.gold        # list[GoldDoc]
    corpus.patients    # patients-table rows
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from typing import Any

from benchmarks.oog.builder import DocBuilder, OffsetError, check_offsets
from benchmarks.oog.clinical import NOTE_TYPES
from benchmarks.oog.common import Ctx, Patient, make_patient
from benchmarks.oog.messages import MESSAGE_TYPES
from benchmarks.oog.phi import Fake
from benchmarks.oog.vocab import load_vocab
from benchmarks.oog.world import DOC_TYPES as WORLD_TYPES
from benchmarks.oog.world import world_doc
from tide_core.evaluation.gold_io import GoldDoc

__all__ = [
    "OOG_CORPORA",
    "OOGCorpus",
    "generate_oog",
    "OffsetError",
    "check_offsets",
    "NOTE_TYPES",
    "MESSAGE_TYPES",
    "WORLD_TYPES",
]

OOG_CORPORA = ("clinical", "messages", "world")

_SPEC = {
    #            id prefix, types,         size range,  source
    "clinical": ("OOGC", NOTE_TYPES, (300, 6000), "oog.clinical@1"),
    "messages": ("OOGM", MESSAGE_TYPES, (50, 800), "oog.messages@1"),
}
_SITES = ("oog-north", "oog-south", "oog-east", "oog-west", "oog-abroad")


@dataclass
class OOGCorpus:
    name: str
    seed: int
    gold: list[GoldDoc] = field(default_factory=list)
    patients: list[dict[str, Any]] = field(default_factory=list)


def _patient(corpus: str, seed: int, j: int, cache: dict[int, Patient]) -> Patient:
    if j not in cache:
        rng = random.Random(f"oog:{corpus}:{seed}:patient:{j}")
        prefix = _SPEC[corpus][0]
        lo = (1 if rng.random() < 0.08 else 18) if corpus == "clinical" else 16
        cache[j] = make_patient(f"{prefix}-P{j + 1:06d}", Fake(rng, load_vocab()), lo, 97)
    return cache[j]


def _noise(corpus: str, note_type: str, rng: random.Random) -> dict[str, Any]:
    x = rng.random()
    if corpus == "clinical":
        lower_p = 0.3 if note_type == "portal_message" else 0.06
        casing = "upper" if x < 0.09 else "lower" if x < 0.09 + lower_p else "as_is"
        wrap = rng.randint(45, 95) if rng.random() < 0.22 else None
        double = 0.06 if rng.random() < 0.2 else 0.0
        hyph = 0.05 if wrap and rng.random() < 0.4 else 0.0
    else:
        lower_p = 0.25 if note_type in ("chat", "sms") else 0.05
        casing = "upper" if x < 0.04 else "lower" if x < 0.04 + lower_p else "as_is"
        wrap, hyph = None, 0.0
        double = 0.08 if rng.random() < 0.1 else 0.0
    return {"casing": casing, "wrap": wrap, "double_space": double, "hyphenate": hyph}


def _one(corpus: str, seed: int, i: int, pcache: dict[int, Patient]) -> GoldDoc:
    prefix, types, (lo, hi), source = _SPEC[corpus]
    vocab = load_vocab()
    note_id = f"{prefix}-{i + 1:06d}"
    pick = random.Random(f"oog:{corpus}:{seed}:{i}")
    j = i if i == 0 or pick.random() >= 0.25 else pick.randrange(i)
    pat = _patient(corpus, seed, j, pcache)
    names = sorted(types)
    note_type = names[i % len(names)] if i < len(names) else pick.choice(names)
    doc = None
    for attempt in range(12):
        rng = random.Random(f"oog:{corpus}:{seed}:{i}:{attempt}")
        f = Fake(rng, vocab)
        dob = pat.person.dob
        assert dob is not None  # patients are made with a date of birth
        earliest = max(dt.date(2015, 1, 1), dob + dt.timedelta(days=40))
        span_days = max(1, (dt.date(2024, 6, 30) - earliest).days)
        note_date = earliest + dt.timedelta(days=rng.randrange(span_days))
        noise = _noise(corpus, note_type, rng)
        b = DocBuilder(note_id, rng, double_space=noise["double_space"], hyphenate=noise["hyphenate"])
        ctx = Ctx(rng, f, b, pat, note_date, [f.person(26, 70) for _ in range(3)])
        types[note_type](ctx)
        text, spans, terms = b.finish(casing=noise["casing"], wrap=noise["wrap"])
        meta = {
            "note_date": note_date.isoformat(),
            "note_type": note_type,
            "source": source,
            "site": rng.choice(_SITES),
            "clinical_terms": terms,
            "phenomena": sorted(b.tags),
            "casing": noise["casing"],
            "wrapped": bool(noise["wrap"]),
            "generator": "oog@1",
        }
        doc = GoldDoc(note_id, pat.pid, text, spans, meta)
        if lo <= len(text) <= hi:
            break
    assert doc is not None
    return doc


def generate_oog(corpus: str, n_docs: int, seed: int) -> OOGCorpus:
    """Generate ``n_docs`` documents of ``corpus`` ("clinical", "messages" or "world"), deterministically.

    Document ``i`` depends only on (corpus, seed, i), so a longer corpus extends a shorter one.
    """
    if corpus not in OOG_CORPORA:
        raise ValueError(f"unknown OOG corpus {corpus!r}; choose one of {', '.join(OOG_CORPORA)}")
    if n_docs < 0:
        raise ValueError("n_docs must be >= 0")
    if corpus == "world":
        docs = [world_doc(seed, i) for i in range(n_docs)]
        return OOGCorpus(corpus, seed, [d for d, _ in docs], [row for _, row in docs])
    pcache: dict[int, Patient] = {}
    gold = [_one(corpus, seed, i, pcache) for i in range(n_docs)]
    seen: dict[str, dict[str, Any]] = {}
    for d in gold:
        if d.patient_id not in seen:
            j = int(d.patient_id.rsplit("P", 1)[1]) - 1
            seen[d.patient_id] = pcache[j].row()
    return OOGCorpus(corpus, seed, gold, list(seen.values()))
