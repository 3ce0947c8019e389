"""Span matching and metrics: exact values on gold corpora perturbed in known ways."""

from __future__ import annotations

import random

import pytest

from tide_core.errors import InputError
from tide_core.evaluation.decomposition import decompose_recall_drop
from tide_core.evaluation.evaluate import corpus_counts, evaluate
from tide_core.evaluation.gold_io import GoldDoc
from tide_core.evaluation.matching import match_document, overlap_ratio
from tide_core.spans import Span

FIRST = ["Maria", "John", "Aiko", "Samuel", "Fatima", "Lars", "Priya", "Tomas"]
LAST = ["Okafor", "Lindqvist", "Nakamura", "Rodriguez", "Chen", "Baptiste", "Kowalski"]
HOSP = ["St. Mary's Medical Center", "Valley General Hospital", "Northside Clinic"]


def make_doc(i: int, rnd: random.Random) -> GoldDoc:
    """A note assembled from parts, so every gold span's offsets are known by construction."""
    parts = [
        ("Patient ", None),
        (f"{rnd.choice(FIRST)} {rnd.choice(LAST)}", "PATIENT"),
        (", a ", None),
        (str(rnd.randint(20, 89)), "AGE"),
        ("-year-old, seen by Dr. ", None),
        (f"{rnd.choice(FIRST)} {rnd.choice(LAST)}", "DOCTOR"),
        (" on ", None),
        (f"{rnd.randint(1, 12):02d}/{rnd.randint(1, 28):02d}/20{rnd.randint(10, 24)}", "DATE"),
        (" at ", None),
        (rnd.choice(HOSP), "HOSPITAL"),
        (".\nMRN: ", None),
        (str(rnd.randint(10**7, 10**8 - 1)), "ID"),
        ("\nCall ", None),
        (f"({rnd.randint(200, 999)}) {rnd.randint(200, 999)}-{rnd.randint(1000, 9999)}", "PHONE"),
        (" with questions.\n", None),
    ]
    if i % 3 == 0:
        parts += [
            ("Lives at ", None),
            (f"{rnd.randint(10, 9999)} Oak Street", "LOCATION"),
            (", ", None),
            ("Springfield", "LOCATION"),
            (".\n", None),
        ]
    text, spans, pos = "", [], 0
    nid = f"note-{i:03d}"
    for surface, label in parts:
        if label:
            spans.append(Span(nid, pos, pos + len(surface), label, 1.0, "gold@1"))
        text += surface
        pos += len(surface)
    return GoldDoc(
        nid,
        f"pat-{i // 2:03d}",
        text,
        tuple(spans),
        {"note_type": ["progress", "discharge"][i % 2], "source": "epic", "site": "A"},
    )


def corpus(n: int = 60, seed: int = 3) -> list[GoldDoc]:
    rnd = random.Random(seed)
    return [make_doc(i, rnd) for i in range(n)]


def with_spans(doc: GoldDoc, spans) -> GoldDoc:
    return GoldDoc(doc.note_id, doc.patient_id, doc.text, tuple(spans), doc.metadata)


def pred_span(s: Span, start=None, end=None, label=None, score=0.9) -> Span:
    return Span(
        s.note_id, s.start if start is None else start, s.end if end is None else end, label or s.label, score, "test@1"
    )


@pytest.fixture(scope="module")
def gold() -> list[GoldDoc]:
    return corpus()


def test_overlap_ratio_is_intersection_over_union():
    a = Span("n", 0, 10, "DATE")
    assert overlap_ratio(a, Span("n", 0, 8, "DATE")) == pytest.approx(0.8)
    assert overlap_ratio(a, Span("n", 5, 15, "DATE")) == pytest.approx(5 / 15)
    assert overlap_ratio(a, Span("n", 10, 12, "DATE")) == 0.0


def test_perfect_predictions_score_one(gold):
    rep = evaluate(gold, [with_spans(d, [pred_span(s) for s in d.spans]) for d in gold], n_resamples=0)
    o = rep.primary.point["overall"]
    assert o["micro_recall"] == o["micro_precision"] == o["char_recall"] == 1.0
    assert o["fp"] == 0 and o["fn"] == 0 and o["tp"] == sum(len(d.spans) for d in gold)


def test_dropping_k_spans_gives_exact_recall(gold):
    n_gold = sum(len(d.spans) for d in gold)
    dropped_id = 0
    preds = []
    for d in gold:  # drop every ID span of even notes and the first span (PATIENT) of every 5th note
        keep = []
        for j, s in enumerate(d.spans):
            idx = int(d.note_id[-3:])
            if (s.label == "ID" and idx % 2 == 0) or (j == 0 and idx % 5 == 0):
                dropped_id += s.label == "ID"
                continue
            keep.append(pred_span(s))
        preds.append(with_spans(d, keep))
    rep = evaluate(gold, preds, n_resamples=0)
    cat = rep.primary.point["category"]
    assert cat["ID"]["tp"] == 30 and cat["ID"]["fn"] == 30 and cat["ID"]["recall"] == 0.5
    assert cat["PATIENT"]["fn"] == 12 and cat["PATIENT"]["recall"] == pytest.approx(48 / 60)
    assert rep.primary.point["overall"]["micro_recall"] == pytest.approx((n_gold - 42) / n_gold)
    assert rep.primary.point["overall"]["micro_precision"] == 1.0
    assert cat["DATE"]["recall"] == 1.0 and cat["EMAIL"]["recall"] is None  # no gold EMAIL: undefined


def test_boundary_shift_past_tau_is_a_miss_at_08_and_a_hit_at_05(gold):
    preds, shrunk, covered = [], 0, 0
    for d in gold:
        spans = []
        for s in d.spans:
            if s.label in ("DOCTOR", "HOSPITAL"):
                new_len = max(1, round(0.65 * s.length))  # IoU = new_len / len in [0.5, 0.8)
                assert 0.5 <= new_len / s.length < 0.8
                spans.append(pred_span(s, end=s.start + new_len))
                shrunk += 1
                covered += new_len
            else:
                spans.append(pred_span(s))
                covered += s.length
        preds.append(with_spans(d, spans))
    rep = evaluate(gold, preds, n_resamples=0)
    cat = rep.primary.point["category"]
    assert cat["DOCTOR"]["recall"] == 0.0 and cat["DOCTOR"]["fp"] == 60
    assert cat["HOSPITAL"]["recall"] == 0.0 and cat["PATIENT"]["recall"] == 1.0
    sens = rep.primary.sensitivity["tau=0.5"]
    assert sens["recall"]["DOCTOR"] == 1.0 and sens["recall"]["HOSPITAL"] == 1.0 and sens["micro_recall"] == 1.0
    n_gold = sum(len(d.spans) for d in gold)
    assert rep.primary.point["overall"]["micro_recall"] == pytest.approx((n_gold - shrunk) / n_gold)
    gold_chars = sum(s.length for d in gold for s in d.spans)
    assert rep.primary.point["overall"]["char_recall"] == pytest.approx(covered / gold_chars)


def test_relabel_is_one_miss_and_one_false_positive(gold):
    preds = [
        with_spans(d, [pred_span(s, label="DOCTOR" if s.label == "PATIENT" else None) for s in d.spans]) for d in gold
    ]
    rep = evaluate(gold, preds, n_resamples=0)
    cat = rep.primary.point["category"]
    assert cat["PATIENT"]["recall"] == 0.0 and cat["PATIENT"]["fn"] == 60
    assert cat["DOCTOR"]["recall"] == 1.0 and cat["DOCTOR"]["fp"] == 60
    assert cat["DOCTOR"]["precision"] == 0.5
    # character recall ignores labels: every gold character is still covered
    assert rep.primary.point["overall"]["char_recall"] == 1.0
    # macro recall: mean over the 8 labels with gold spans, PATIENT is 0, the rest 1
    assert rep.primary.point["overall"]["macro_recall"] == pytest.approx(7 / 8)


def test_each_gold_and_each_prediction_matched_at_most_once():
    g = [Span("n", 0, 10, "DATE"), Span("n", 20, 30, "DATE")]
    dup = [Span("n", 0, 10, "DATE", 0.9, "a@1"), Span("n", 0, 9, "DATE", 0.8, "b@1")]
    m = match_document(g, dup, 0.8)
    assert len(m.pairs) == 1 and m.pairs[0][2] == 1.0 and len(m.spurious()) == 1 and len(m.missed()) == 1
    # a single long prediction cannot satisfy two gold spans
    m2 = match_document([Span("n", 0, 5, "ID"), Span("n", 5, 10, "ID")], [Span("n", 0, 10, "ID")], 0.5)
    assert len(m2.pairs) == 1
    # two overlapping gold spans and two overlapping predictions: both gold spans are matched
    g3 = [Span("n", 0, 10, "ID"), Span("n", 1, 11, "ID")]
    p3 = [Span("n", 1, 10, "ID"), Span("n", 0, 11, "ID")]
    assert len(match_document(g3, p3, 0.8).pairs) == 2


def test_missing_prediction_docs_are_misses_and_unknown_docs_ignored(gold):
    preds = [with_spans(d, [pred_span(s) for s in d.spans]) for d in gold[:30]]
    preds.append(GoldDoc("stranger", "p", "", (Span("stranger", 0, 3, "ID"),), {}))
    rep = evaluate(gold, preds, n_resamples=0)
    assert rep.pairing["A"] == {"n_pred_docs": 31, "gold_without_pred": 30, "pred_not_in_gold": 1, "text_mismatch": 0}
    n_first = sum(len(d.spans) for d in gold[:30])
    assert rep.primary.point["overall"]["tp"] == n_first


def test_prediction_on_a_different_text_is_refused(gold):
    bad = [with_spans(d, ()) for d in gold]
    bad[4] = GoldDoc(bad[4].note_id, "", bad[4].text + " changed", (), {})
    with pytest.raises(InputError) as exc:
        evaluate(gold, bad, n_resamples=0)
    assert exc.value.code == "E716" and "changed" not in str(exc.value)


def test_shift_share_decomposition_sums_to_the_drop_and_splits_mix_from_recall(gold):
    perfect = [with_spans(d, [pred_span(s) for s in d.spans]) for d in gold]
    # corpus B: same documents, ID recall halved -> pure within-category drop
    b_preds = [
        with_spans(d, [pred_span(s) for s in d.spans if not (s.label == "ID" and int(d.note_id[-3:]) % 2)])
        for d in gold
    ]
    ta, tb = corpus_counts(gold, perfect), corpus_counts(gold, b_preds)
    dec = decompose_recall_drop(ta, tb)
    assert dec.drop == pytest.approx(dec.within + dec.mix)
    assert dec.mix == pytest.approx(0.0, abs=1e-12)
    n_gold = sum(len(d.spans) for d in gold)
    assert dec.drop == pytest.approx(30 / n_gold)
    assert dec.share_of_drop("ID") == pytest.approx(1.0)
    # corpus C: only the notes without LOCATION spans, ID never found -> mix and recall both move
    c_gold = [d for d in gold if int(d.note_id[-3:]) % 3]
    c_pred = [with_spans(d, [pred_span(s) for s in d.spans if s.label != "ID"]) for d in c_gold]
    dec2 = decompose_recall_drop(ta, corpus_counts(c_gold, c_pred))
    assert dec2.drop == pytest.approx(dec2.within + dec2.mix)
    loc = next(c for c in dec2.categories if c.label == "LOCATION")
    assert loc.share_b == 0.0 and loc.within == 0.0 and loc.mix > 0
    idc = next(c for c in dec2.categories if c.label == "ID")
    shares = {c.label: c for c in dec2.categories}
    s_id = 0.5 * (shares["ID"].share_a + shares["ID"].share_b)
    assert idc.within == pytest.approx(s_id * 1.0)
    assert sum(dec2.share_of_drop(c.label) for c in dec2.categories) == pytest.approx(1.0)


def test_demo_corpus_perturbations_and_a_real_recognizer():
    from tide_core.recognizers.regex_recognizer import RegexRecognizer
    from tide_core.synth import generate_demo_corpus

    gold = generate_demo_corpus(seed=7).gold
    n_by_label: dict[str, int] = {}
    for d in gold:
        for s in d.spans:
            n_by_label[s.label] = n_by_label.get(s.label, 0) + 1
    # drop every PHONE span, shift every 2nd DATE's end past tau, relabel every HOSPITAL as OTHER
    preds, shifted_dates = [], 0
    for d in gold:
        spans, k = [], 0
        for s in d.spans:
            if s.label == "PHONE":
                continue
            if s.label == "DATE" and s.length >= 4:
                k += 1
                if k % 2 == 0:
                    spans.append(pred_span(s, end=s.start + max(1, int(0.7 * s.length))))
                    shifted_dates += 1
                    continue
            spans.append(pred_span(s, label="OTHER" if s.label == "HOSPITAL" else None))
        preds.append(with_spans(d, spans))
    rep = evaluate(gold, preds, n_resamples=200)
    cat = rep.primary.point["category"]
    assert cat["PHONE"]["recall"] == 0.0 and cat["PHONE"]["fn"] == n_by_label["PHONE"]
    assert cat["DATE"]["fn"] == shifted_dates > 0
    assert cat["HOSPITAL"]["recall"] == 0.0 and cat["OTHER"]["fp"] == n_by_label["HOSPITAL"]
    assert cat["OTHER"]["recall"] == 1.0 and cat["PATIENT"]["recall"] == 1.0
    n_gold = sum(n_by_label.values())
    lost = n_by_label["PHONE"] + shifted_dates + n_by_label["HOSPITAL"]
    assert rep.recall() == pytest.approx((n_gold - lost) / n_gold)
    # the real regex recognizer: a plausible, bounded score with intervals around it
    regex = RegexRecognizer()
    regex.load()
    notes = [d.to_note() for d in gold]
    predicted = dict(zip([n.note_id for n in notes], regex.recognize_many(notes), strict=True))
    real = evaluate(gold, predicted, n_resamples=500)
    o = real.primary.to_dict()["overall"]
    lo, hi = o["ci"]["micro_recall"]
    assert 0.0 < o["micro_recall"] < 1.0 and lo <= o["micro_recall"] <= hi
    assert real.recall("PHONE") > 0.5 and o["char_recall"] >= o["micro_recall"] * 0.5
