"""The out-of-generator (OOG) benchmark corpora: determinism, exact offsets, coverage."""

from __future__ import annotations

import datetime as dt
import re
import time
from collections import Counter

import pytest

from benchmarks.oog import OOG_CORPORA, OOGCorpus, check_offsets, generate_oog
from benchmarks.oog.builder import DocBuilder, OffsetError
from tide_core.evaluation.gold_io import GoldDoc
from tide_core.spans import Span
from tide_core.types import LABELS

CUE_WORDS = re.compile(
    r"(mrn|record|unit|chart|acc|specimen|case|ssn|social|licen|passport|member|id\b|"
    r"no\.|number|#|ref|hosp|serial|encounter|visit|account|acct|ticket|order|iban|card)",
    re.IGNORECASE,
)


@pytest.fixture(scope="module")
def clinical() -> OOGCorpus:
    return generate_oog("clinical", 300, 11)


@pytest.fixture(scope="module")
def messages() -> OOGCorpus:
    return generate_oog("messages", 600, 11)


def test_exports():
    assert OOG_CORPORA == ("clinical", "messages", "world")
    with pytest.raises(ValueError):
        generate_oog("nope", 3, 1)


@pytest.mark.parametrize("corpus", OOG_CORPORA)
def test_deterministic_and_prefix_stable(corpus):
    a = generate_oog(corpus, 25, 3)
    b = generate_oog(corpus, 25, 3)
    assert [d.to_dict() for d in a.gold] == [d.to_dict() for d in b.gold]
    assert a.patients == b.patients
    c = generate_oog(corpus, 10, 3)
    assert [d.to_dict() for d in c.gold] == [d.to_dict() for d in a.gold[:10]]
    other = generate_oog(corpus, 25, 4)
    assert [d.text for d in other.gold] != [d.text for d in a.gold]


def _check_doc(d: GoldDoc, prefix: str) -> None:
    assert isinstance(d, GoldDoc) and d.note_id.startswith(prefix)
    prev = -1
    for s in d.spans:
        assert isinstance(s, Span) and s.label in LABELS and s.recognizer == "gold@1"
        assert s.note_id == d.note_id
        surface = d.text[s.start : s.end]
        assert surface and surface == surface.strip(), (d.note_id, s)
        assert s.start >= prev, "spans sorted and non-overlapping"
        prev = s.end
    for key in ("note_date", "note_type", "source", "site", "clinical_terms"):
        assert key in d.metadata
    dt.date.fromisoformat(d.metadata["note_date"])
    check_offsets(d.text, d.spans, d.metadata["clinical_terms"])


def test_clinical_offsets_labels_and_sizes(clinical):
    assert len(clinical.gold) == 300
    ids = [d.note_id for d in clinical.gold]
    assert ids[0] == "OOGC-000001" and len(set(ids)) == 300
    for d in clinical.gold:
        _check_doc(d, "OOGC-")
        assert d.metadata["source"] == "oog.clinical@1"
        assert 300 <= len(d.text) <= 6000, (d.note_id, len(d.text))


def test_messages_offsets_labels_and_sizes(messages):
    for d in messages.gold:
        _check_doc(d, "OOGM-")
        assert 50 <= len(d.text) <= 800, (d.note_id, len(d.text))
    labels = Counter(s.label for d in messages.gold for s in d.spans)
    for lab in ("PATIENT", "LOCATION", "OTHER", "PHONE", "EMAIL", "URL", "ID", "DATE", "AGE"):
        assert labels[lab] > 20, lab
    assert len({d.metadata["note_type"] for d in messages.gold}) >= 6


def test_clinical_coverage(clinical):
    labels = Counter(s.label for d in clinical.gold for s in d.spans)
    assert set(labels) == set(LABELS), set(LABELS) - set(labels)
    types = Counter(d.metadata["note_type"] for d in clinical.gold)
    assert len(types) >= 6
    phen = Counter(p for d in clinical.gold for p in d.metadata["phenomena"])
    assert phen["id_no_cue"] >= 10 and phen["place_alone"] >= 10
    casings = Counter(d.metadata["casing"] for d in clinical.gold)
    assert casings["upper"] and casings["lower"] and casings["as_is"]
    assert any(d.metadata["wrapped"] for d in clinical.gold)


def test_ids_without_cue_word_exist(clinical):
    """Some ID spans have no cue word in the 25 characters before them."""
    bare = 0
    for d in clinical.gold:
        for s in d.spans:
            if s.label == "ID" and not CUE_WORDS.search(d.text[max(0, s.start - 25) : s.start]):
                bare += 1
    assert bare >= 10


def test_places_alone_in_running_text(clinical):
    """Cities named alone inside prose ("moved here from X in 1994")."""
    alone = 0
    for d in clinical.gold:
        spans = list(d.spans)
        for i, s in enumerate(spans):
            if s.label != "LOCATION":
                continue
            after = d.text[s.end : s.end + 3]
            nxt = spans[i + 1] if i + 1 < len(spans) else None
            followed_by_loc = nxt is not None and nxt.label == "LOCATION" and nxt.start - s.end <= 3
            prev = spans[i - 1] if i else None
            preceded_by_loc = prev is not None and prev.label == "LOCATION" and s.start - prev.end <= 3
            before = d.text[max(0, s.start - 6) : s.start].lower()
            if (
                not followed_by_loc
                and not preceded_by_loc
                and re.search(r"\b(from|in|to|of)\s+$", before)
                and not after.startswith(",")
            ):
                alone += 1
    assert alone >= 20


def test_clinical_terms_are_clinical_words(clinical):
    total = 0
    for d in clinical.gold:
        for start, end in d.metadata["clinical_terms"]:
            surface = d.text[start:end]
            assert surface == surface.strip() and surface
            total += 1
    assert total > 500
    words = " ".join(d.text[s:e].lower() for d in clinical.gold for s, e in d.metadata["clinical_terms"])
    for needle in ("mg", "catheter", "disease", "scale"):
        assert needle in words


def test_age_spans_are_digits_and_phi_free_of_titles(clinical, messages):
    for corpus in (clinical, messages):
        for d in corpus.gold:
            for s in d.surfaces():
                label, surface = s
                if label == "AGE":
                    assert surface.isdigit(), surface
                if label in ("PATIENT", "DOCTOR"):
                    assert not re.match(r"(?i)(dr|mr|mrs|ms)\.?\s", surface), surface
                    assert not re.search(r",\s*(md|rn|do)$", surface, re.IGNORECASE), surface
                if label == "EMAIL":
                    assert "@" in surface


def test_patients_table(clinical):
    keys = {
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
    }
    pids = {d.patient_id for d in clinical.gold}
    rows = {r["patient_id"]: r for r in clinical.patients}
    assert set(rows) == pids
    for r in clinical.patients:
        assert set(r) == keys
        dt.date.fromisoformat(r["dob"])
        assert r["first_name"] and r["last_name"] and r["mrn"]
    # the patient's MRN shows up verbatim (as an ID span) in some documents
    hits = sum(1 for d in clinical.gold for lab, s in d.surfaces() if lab == "ID" and s == rows[d.patient_id]["mrn"])
    assert hits > 50


def test_generation_speed():
    generate_oog("clinical", 5, 0)  # warm the vocabulary cache
    t0 = time.perf_counter()
    generate_oog("clinical", 300, 99)
    assert time.perf_counter() - t0 < 5.0


def test_builder_self_check_rejects_bad_offsets():
    import random

    b = DocBuilder("X-1", random.Random(0))
    with pytest.raises(OffsetError):
        b.e(" padded", "PATIENT")
    b.t("Seen by ").e("Ann Lee", "DOCTOR").t(" today.")
    text, spans, terms = b.finish()
    assert text[spans[0].start : spans[0].end] == "Ann Lee"
    with pytest.raises(OffsetError):
        check_offsets(text, (Span("X-1", 0, 5, "PATIENT"), Span("X-1", 3, 9, "DATE")), [])
    with pytest.raises(OffsetError):
        check_offsets(text, (Span("X-1", 7, 12, "PATIENT"),), [])  # leading space
