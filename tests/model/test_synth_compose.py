"""The compositional training-data generator (tide_core.synth.compose)."""

from __future__ import annotations

import re
import time
from collections import Counter

import pytest

from tide_core.synth.compose import (
    SOURCE,
    check_document,
    fill,
    generate_compositional_corpus,
    generate_mixed_training_corpus,
)
from tide_core.synth.compose.document import wrap
from tide_core.synth.compose.frames import PROFESSIONS
from tide_core.synth.compose.sources import load_sources
from tide_core.types import LABELS

ID_CUE_WORDS = re.compile(
    r"(mrn|mr#|record|accession|acc\b|acc#|specimen|account|acct|fin\b|identifier|\bid\b|ref|case|encounter|csn|"
    r"visit|order|req|requisition|member|subscriber|policy|group|medicaid|claim|auth|serial|s/n|\bsn\b|lot|"
    r"licen[cs]e|lic|dl#|npi|dea|ssn|social|hosp #|unit no|#)\W*$",
    re.I,
)


@pytest.fixture(scope="module")
def corpus():
    return generate_compositional_corpus(500, seed=11)


def test_deterministic_and_prefix_stable():
    a = generate_compositional_corpus(40, seed=3)
    b = generate_compositional_corpus(40, seed=3)
    assert [d.to_dict() for d in a] == [d.to_dict() for d in b]
    c = generate_compositional_corpus(10, seed=3)
    assert [d.to_dict() for d in c] == [d.to_dict() for d in a[:10]]
    other = generate_compositional_corpus(10, seed=4)
    assert [d.text for d in other] != [d.text for d in c]


def test_offsets_exact_and_clean(corpus):
    for d in corpus:
        assert 200 <= len(d.text) <= 4000
        prev = 0
        for s in d.spans:
            value = d.text[s.start : s.end]
            assert value and value == value.strip(), (d.note_id, s)
            assert s.start >= prev, (d.note_id, s)
            prev = s.end
        check_document(d.text, [(s.start, s.end, s.label) for s in d.spans])
        meta = d.metadata
        assert meta["source"] == SOURCE and meta["site"] and meta["note_type"]
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", meta["note_date"])
        note = d.to_note()
        assert note.metadata["source"] == SOURCE


def test_every_label_present(corpus):
    counts = Counter(s.label for d in corpus for s in d.spans)
    for label in LABELS:
        assert counts[label] >= 20, (label, counts)


def test_label_shapes(corpus):
    for d in corpus:
        for label, value in d.surfaces():
            if label == "AGE":
                assert value.isdigit(), value
            elif label == "ID":
                assert 4 <= len(value) <= 16 and any(c.isdigit() for c in value), value
            elif label == "DOCTOR":
                assert not value.startswith(("Dr.", "Dr ", "DR.")) and not value.endswith((" MD", ", MD", " RN")), value
            elif label == "PATIENT":
                assert not value.startswith(("Mr.", "Mrs.", "Ms.", "Mr ", "Mrs ", "Ms ")), value


def test_ids_without_cue_words(corpus):
    uncued = 0
    for d in corpus:
        for s in d.spans:
            if s.label != "ID":
                continue
            before = d.text[max(0, s.start - 25) : s.start]
            line_before = before.split("\n")[-1]
            if not ID_CUE_WORDS.search(line_before.rstrip(" :=|-\t(")) and not ID_CUE_WORDS.search(line_before):
                uncued += 1
    assert uncued >= 100, uncued


def test_places_named_alone(corpus):
    alone = 0
    for d in corpus:
        for i, s in enumerate(d.spans):
            if s.label != "LOCATION":
                continue
            prev_loc = i and d.spans[i - 1].label == "LOCATION" and s.start - d.spans[i - 1].end <= 3
            nxt_loc = i + 1 < len(d.spans) and d.spans[i + 1].label == "LOCATION" and d.spans[i + 1].start - s.end <= 3
            if not prev_loc and not nxt_loc and not d.text[s.start].isdigit():
                alone += 1
    assert alone >= 200, alone
    text = "\n".join(d.text for d in corpus)
    for frame in ("moved from ", "lives in ", " native", "drove in from ", "back in "):
        assert frame in text.lower(), frame


def test_negatives_present_and_unlabelled(corpus):
    kinds = Counter()
    for d in corpus:
        negs = d.metadata["hard_negatives"]
        assert negs, d.note_id
        for s, e, kind in negs:
            kinds[kind] += 1
            for sp in d.spans:
                assert sp.end <= s or sp.start >= e, (d.note_id, d.text[s:e], sp)
    for kind in ("profession", "med", "eponym", "time", "room"):
        assert kinds[kind] > 0, kinds
    labelled = {v for d in corpus for _, v in d.surfaces()}  # lower-case professions are never PHI
    assert not labelled & set(PROFESSIONS)


def test_facility_variety(corpus):
    values = [v for d in corpus for lab, v in d.surfaces() if lab == "HOSPITAL"]
    assert any(v.isupper() and " " in v for v in values)
    assert any(v.isupper() and " " not in v and len(v) <= 6 for v in values)  # initialisms
    assert any(
        w in v
        for v in values
        for w in (
            "Hospital General",
            "Clínica",
            "Hôpital",
            "Klinikum",
            "Ospedale",
            "Krankenhaus",
            "Centre Hospitalier",
            "CHU de",
        )
    )


def test_real_world_lists_loaded():
    src = load_sources()
    assert src.real_lists
    assert len(src.us) > 10_000 and len(src.world) > 10_000
    heldout_cities = {
        c.city.lower() for c in __import__("tide_core.synth.vocab", fromlist=["x"]).load_vocabulary("heldout").cities
    }
    assert not heldout_cities & {u.city.lower() for u in src.us}


def test_wrap_keeps_offsets():
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
    spans = [(6, 16, "X")]
    out = wrap(text, spans, 12, into_spans=False)
    assert len(out) == len(text) and "\n" in out and out[6:16] == "beta gamma"
    assert out.replace("\n", " ") == text


def test_id_shapes():
    import random

    r = random.Random(0)
    for kind in (
        "mrn",
        "accession",
        "specimen",
        "account",
        "encounter",
        "order",
        "member",
        "claim",
        "serial",
        "lot",
        "licence",
        "npi",
        "dea",
        "ssn",
        "case",
        "generic",
        "any",
    ):
        for _ in range(50):
            v = fill.id_value(r, kind)
            assert 4 <= len(v) <= 16 and v == v.strip(), (kind, v)


def test_mixed_corpus():
    mixed = generate_mixed_training_corpus(20, seed=2, compositional_share=0.5)
    assert len(mixed) == 20
    sources = [d.metadata["source"] for d in mixed]
    assert sources.count(SOURCE) == 10
    assert SOURCE in sources[:4] and any(s != SOURCE for s in sources[:4])  # interleaved
    again = generate_mixed_training_corpus(20, seed=2, compositional_share=0.5)
    assert [d.to_dict() for d in again] == [d.to_dict() for d in mixed]
    assert len({d.note_id for d in mixed}) == 20
    assert all(d.metadata["source"] == SOURCE for d in generate_mixed_training_corpus(5, 1, 1.0))
    assert all(d.metadata["source"] != SOURCE for d in generate_mixed_training_corpus(5, 1, 0.0))


def test_speed_bound():
    load_sources()
    t0 = time.perf_counter()
    docs = generate_compositional_corpus(1000, seed=99)
    assert len(docs) == 1000
    assert time.perf_counter() - t0 < 20
