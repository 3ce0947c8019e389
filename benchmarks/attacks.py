"""Attacks on our own releases: ``python -m benchmarks.attacks [--notes N] [--seed S]``.

Every attack runs the real anonymizer (``tide_core.anonymize``) with test keys on the in-house
synthetic corpus (``tide_core.synth`` held-out notes) and its *gold* spans, so the figures
measure the surrogates, not the recognizer.  Each prints its figure, the chance level where one
applies, and the mitigation we ship or document.

(a) **Linkage across two keys of one study.**  An attacker holds the same notes released under
    key ``k1`` and key ``k2`` (say, two recipients who pool their copies).  They link notes (and
    so patient references) with PHI-side features only (note length, which values every key
    leaves unchanged (ages, decades, ``90+``), the intervals between a note's full dates, label
    counts), and with the clinical text as well.  Linked copies then narrow each full date: the
    true date must be reachable from both shifted copies, ``t = d1 - o1 = d2 - o2``.
(b) **Frequency analysis of deterministic surrogates.**  One surname maps to one surrogate in a
    release, so surrogate frequencies mirror original frequencies.  The attacker pairs the i-th
    commonest surrogate with the i-th commonest public surname (a Zipf law over the shipped
    surname list stands in for census ranks).
(c) **Hiding in plain sight.**  PHI the pipeline missed stays real among realistic surrogates.
    Can a classifier (character n-gram logistic regression; naive Bayes without scikit-learn)
    tell residual real values from surrogates?  AUC on held-out notes, 0.5 = no.
    The class attack: name surrogate words against real name words the pipeline missed, scored by
    "listed or generator-shaped" (an attacker who knows the lists and the generator); and whether a
    surrogate tells if the word it replaced was listed.
(d) **Date-shift recovery from one known real date.**  Every date of a patient moves by one
    keyed offset, so one known true date gives the offset and with it every date of that patient.
(e) **Dates across k linked releases.**  The same notes under k = 1, 2, 3, 5, 10 keys, linked: the
    consistent true-date window of full dates, and of month + year dates read with the patient's
    full dates; with an offset per key, and with the study's date secret (the same offset under
    every key), and how well dates alone link two releases under each.

Values never leave this process: the report holds rates and counts only.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from importlib import resources
from typing import Any

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from tide_core.anonymize.dates import ParsedDate, date_offset_days, date_part, parse_date
from tide_core.anonymize.engine import Anonymizer
from tide_core.anonymize.keys import KeyRing
from tide_core.anonymize.names import KEEP, generator_shaped, is_listed, name_words, surrogate_token
from tide_core.errors import TideError
from tide_core.evaluation.gold_io import GoldDoc
from tide_core.spans import Note, ReleasedSpan, Span
from tide_core.synth import generate_heldout_dataset

STUDY = "attackbench"
OFFSETS = [o for o in range(-180, 181) if abs(o) >= 3]  # the date-shift range (dates.py)


def test_keyring(key: str, seed: int, study_dates: bool = False, study: str = STUDY) -> KeyRing:
    """A deterministic *test* key (never use outside benchmarks); ``study_dates``: with the study's
    date secret (``<study>/dates.key``), as a provider that has one gives it."""
    rng = random.Random(f"{seed}|{study}|{key}" if study != STUDY else f"{seed}|{key}")
    secret = bytes(rng.randrange(256) for _ in range(32))
    if not study_dates:
        return KeyRing(study, key, secret)
    drng = random.Random(f"{seed}|{study}|dates")
    return KeyRing(study, key, secret, bytes(drng.randrange(256) for _ in range(32)))


@dataclass
class Released:
    note_id: str
    patient_id: str
    text: str
    spans: list[ReleasedSpan]
    gold: list[Span]
    original: str


def release(gold_docs: Sequence[GoldDoc], keyring: KeyRing) -> dict[str, Released]:
    """Anonymize every gold document under ``keyring`` (quarantined notes are left out)."""
    anon = Anonymizer(keyring)
    out = {}
    for d in gold_docs:
        note = Note(d.note_id, d.patient_id, d.text, d.metadata)
        try:
            a = anon.anonymize(note, d.spans)
        except TideError:
            continue
        out[d.note_id] = Released(d.note_id, d.patient_id, a.text, list(a.spans), list(d.spans), d.text)
    return out


def _auc(scores: Sequence[float], labels: Sequence[int]) -> float:
    """Area under the ROC curve (Mann-Whitney, ties count half)."""
    pairs = sorted(zip(scores, labels, strict=True))
    n_pos = sum(labels)
    n_neg = len(labels) - n_pos
    if not n_pos or not n_neg:
        return float("nan")
    rank_sum, i = 0.0, 0
    while i < len(pairs):
        j = i
        while j < len(pairs) and pairs[j][0] == pairs[i][0]:
            j += 1
        avg = (i + j + 1) / 2  # ranks are 1-based
        rank_sum += avg * sum(lab for _, lab in pairs[i:j])
        i = j
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


# -- (a) linkage across two keys ---------------------------------------------------------------


def _full_dates(r: Released) -> list[date]:
    out = []
    for s in r.spans:
        if s.label != "DATE" or s.operator != "date.shift":
            continue
        try:
            p = parse_date(r.text[s.out_start : s.out_end])
        except TideError:
            continue
        if p.kind == "full":
            out.append(date(date_part(p.year), date_part(p.month), date_part(p.day)))
    return out


def _signature(r: Released) -> tuple[tuple[tuple[str, int], ...], tuple[str, ...], tuple[int, ...]]:
    """PHI-side features: label counts, values no key changes, intervals between full dates."""
    kept = sorted(
        r.text[s.out_start : s.out_end].lower()
        for s in r.spans
        if s.operator in ("age.keep", "age.aggregate", "date.decade", "date.mask")
    )
    labels = sorted(Counter(s.label for s in r.spans).items())
    ds = sorted(_full_dates(r))
    gaps = tuple((b - a).days for a, b in zip(ds, ds[1:], strict=False))
    return (tuple(labels), tuple(kept), gaps)


def _skeleton_shingles(r: Released, k: int = 4) -> set[int]:
    words = r.text.split()
    return {hash(tuple(words[i : i + k])) for i in range(max(0, len(words) - k + 1))}


def _link(
    a: dict[str, Released], b: dict[str, Released], score: Callable[[Released, Released], tuple[Any, ...]]
) -> dict[str, str]:
    """Greedy best match of every note of ``a`` to a note of ``b`` under ``score(ra, rb)``."""

    def best(ra: Released) -> str:
        return max(b, key=lambda nb: score(ra, b[nb]))

    return {na: best(ra) for na, ra in a.items()}


def attack_linkage(gold_docs: Sequence[GoldDoc], seed: int) -> dict[str, Any]:
    ra = release(gold_docs, test_keyring("k1", seed))
    rb = release(gold_docs, test_keyring("k2", seed))
    common = sorted(set(ra) & set(rb))
    ra = {n: ra[n] for n in common}
    rng = random.Random(seed)
    shuffled = common[:]
    rng.shuffle(shuffled)
    rb = {n: rb[n] for n in shuffled}  # the attacker sees B in another order, with other refs

    sig_a = {n: _signature(r) for n, r in ra.items()}
    sig_b = {n: _signature(r) for n, r in rb.items()}

    def phi_score(x: Released, y: Released) -> tuple[bool, int, float]:
        return (sig_a[x.note_id] == sig_b[y.note_id], -abs(len(x.text) - len(y.text)), rng.random())

    sh_b = {n: _skeleton_shingles(r) for n, r in rb.items()}
    index: dict[int, list[str]] = defaultdict(list)
    for n, shs in sh_b.items():
        for h in shs:
            index[h].append(n)

    def text_links() -> dict[str, str]:
        out = {}
        for n, r in ra.items():
            votes: Counter[str] = Counter()
            for h in _skeleton_shingles(r):
                for m in index.get(h, ()):
                    votes[m] += 1
            out[n] = max(votes, key=lambda m: (votes[m], -abs(len(r.text) - len(rb[m].text)))) if votes else n
        return out

    res: dict[str, Any] = {"notes": len(common), "patients": len({ra[n].patient_id for n in common})}
    for name, links in (("phi_features", _link(ra, rb, phi_score)), ("with_text", text_links())):
        note_acc = sum(1 for n, m in links.items() if n == m) / len(links)
        # patient references: each A patient goes to the B patient most of its notes link to
        votes: dict[str, Counter[str]] = defaultdict(Counter)
        for n, m in links.items():
            votes[ra[n].patient_id][rb[m].patient_id] += 1
        pat_acc = sum(1 for p, c in votes.items() if c.most_common(1)[0][0] == p) / len(votes)
        res[name] = {"note_accuracy": note_acc, "patient_accuracy": pat_acc}
    res["chance_note"] = 1 / len(common)
    res["chance_patient"] = 1 / res["patients"]
    res["unique_phi_signature_share"] = sum(1 for c in Counter(sig_b.values()).values() if c == 1) / len(sig_b)

    # what linking buys: candidate true dates for each full date, one release vs two linked ones
    cand_one, cand_two, pinned = [], [], 0
    offsets = set(OFFSETS)
    for n in common:
        for d1, d2 in zip(_full_dates(ra[n]), _full_dates(rb[n]), strict=False):
            # t = d1 - o1 = d2 - o2 with o1, o2 in OFFSETS: o1 is a candidate when d2 - d1 + o1 is one
            gap = (d2 - d1).days
            cands = sum(1 for o in OFFSETS if (gap + o) in offsets)
            cand_one.append(len(OFFSETS))
            cand_two.append(cands)
            pinned += cands <= 30
    res["dates"] = {
        "full_dates": len(cand_two),
        "candidates_one_release": (sum(cand_one) / len(cand_one)) if cand_one else float("nan"),
        "candidates_two_releases": (sum(cand_two) / len(cand_two)) if cand_two else float("nan"),
        "share_within_30_candidates": pinned / len(cand_two) if cand_two else float("nan"),
    }
    return res


# -- (b) frequency analysis ---------------------------------------------------------------------


def attack_frequency(seed: int, n_people: int = 2000, zipf_s: float = 1.0) -> dict[str, Any]:
    """Population surnames ~ Zipf over a public ranking of the shipped surname list."""
    names = _read_list("last_names")
    rng = random.Random(seed)
    public = names[:]
    rng.shuffle(public)  # the "census" ranking: rank r has probability ~ 1 / r**s
    weights = [1 / (r + 1) ** zipf_s for r in range(len(public))]
    people = rng.choices(public, weights=weights, k=n_people)
    mentions = [s for s in people for _ in range(rng.randint(1, 6))]
    kr = test_keyring("k1", seed)
    sur = {s: surrogate_token(kr, s) for s in set(mentions)}
    counts = Counter(sur[s] for s in mentions)
    # attacker: i-th commonest surrogate <- i-th public surname (ties broken at random)
    ranked = sorted(counts, key=lambda x: (-counts[x], rng.random()))
    guess = {x: public[i] for i, x in enumerate(ranked)}
    truth = {v: k for k, v in sur.items()}
    ok_m = sum(c for x, c in counts.items() if guess[x] == truth[x])
    ok_d = sum(1 for x in counts if guess[x] == truth[x])
    top = ranked[:10]
    return {
        "people": n_people,
        "mentions": len(mentions),
        "distinct_surnames": len(counts),
        "recovered_mention_share": ok_m / len(mentions),
        "recovered_distinct_share": ok_d / len(counts),
        "top10_recovered": sum(1 for x in top if guess[x] == truth[x]) / len(top),
        "chance_mention_share": 1 / len(counts),
    }


def _read_list(name: str) -> list[str]:
    path = resources.files("tide_core") / "data" / "surrogates" / f"{name}.txt"
    return [w.strip() for w in path.read_text(encoding="utf-8").splitlines() if w.strip()]


# -- (c) hiding in plain sight ------------------------------------------------------------------


def _ngrams(value: str, n_max: int = 3) -> list[str]:
    v = f"^{value.lower()}$"
    return [v[i : i + n] for n in range(1, n_max + 1) for i in range(len(v) - n + 1)]


def _classifier_scores(train: list[tuple[str, int]], test: list[str]) -> tuple[list[float], str]:
    vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 3), lowercase=True)
    x = vec.fit_transform([v for v, _ in train])
    y = [lab for _, lab in train]
    if len(set(y)) < 2:
        return [0.0] * len(test), "none"
    clf = LogisticRegression(max_iter=1000, class_weight="balanced").fit(x, y)
    return list(clf.decision_function(vec.transform(test))), "logistic regression, char 1-3-grams"


def attack_hiding(gold_docs: Sequence[GoldDoc], seed: int, miss_rate: float = 0.1) -> dict[str, Any]:
    """Drop ``miss_rate`` of the gold spans (what the pipeline missed) and classify surfaces."""
    rng = random.Random(seed)
    anon = Anonymizer(test_keyring("k1", seed))
    items: dict[str, list[tuple[str, int, int]]] = defaultdict(list)  # label -> (value, residual, fold)
    for d in gold_docs:
        kept = [s for s in d.spans if rng.random() >= miss_rate]
        missed = [s for s in d.spans if s not in kept]
        try:
            a = anon.anonymize(Note(d.note_id, d.patient_id, d.text, d.metadata), kept)
        except TideError:
            continue
        fold = rng.randrange(2)  # split by note
        for r in a.spans:
            if r.operator not in ("age.keep", "date.decade", "date.mask"):  # unchanged by design
                items[r.label].append((a.text[r.out_start : r.out_end], 0, fold))
        for s in missed:
            if s.label != "AGE":
                items[s.label].append((d.text[s.start : s.end], 1, fold))
    out: dict[str, Any] = {"miss_rate": miss_rate, "by_label": {}}
    all_scores, all_labels = [], []
    method = ""
    for label, rows in sorted(items.items()):
        train = [(v, y) for v, y, f in rows if f == 0]
        test = [(v, y) for v, y, f in rows if f == 1]
        if sum(y for _, y in train) < 3 or sum(y for _, y in test) < 3:
            continue
        scores, method = _classifier_scores(train, [v for v, _ in test])
        auc = _auc(scores, [y for _, y in test])
        out["by_label"][label] = {"auc": auc, "residual": sum(y for _, y in test), "surrogates": len(test)}
        # pool per-label ranks into one AUC (scores are per-label; ranks make them comparable)
        order = sorted(range(len(scores)), key=lambda i: scores[i])
        for rank, i in enumerate(order):
            all_scores.append(rank / max(1, len(order) - 1))
            all_labels.append(test[i][1])
    out["auc"] = _auc(all_scores, all_labels) if all_scores else float("nan")
    out["method"] = method
    return out


def _name_words(value: str) -> list[str]:
    """The words of a name span that get a word surrogate (no initials, titles or digits)."""
    return [
        w
        for w in name_words(value)
        if len(w) > 1
        and not w.isdigit()
        and w.casefold() not in KEEP
        and not (len(w) <= 3 and w.isupper() and not is_listed(w))  # a cluster of initials
    ]


def attack_name_class(
    gold_docs: Sequence[GoldDoc],
    seed: int,
    miss_rate: float = 0.1,
    shaped: Callable[[str], bool] = generator_shaped,
) -> dict[str, Any]:
    """The class attack on name surrogates: released name words that are surrogates (0) against
    real name words the pipeline missed (1).  The attacker knows the lists and the generator
    (``shaped``) and scores a word 1 when it is neither listed nor generator-shaped: a real rare
    name.  Also: does a surrogate word tell whether the word it replaced was listed?"""
    rng = random.Random(seed)
    anon = Anonymizer(test_keyring("k1", seed))
    surrogates: list[str] = []
    replaced_listed: list[int] = []  # per surrogate word: 1 when the original word was listed
    real: list[str] = []
    for d in gold_docs:
        kept = [s for s in d.spans if rng.random() >= miss_rate]
        missed = [s for s in d.spans if s not in kept]
        try:
            a = anon.anonymize(Note(d.note_id, d.patient_id, d.text, d.metadata), kept)
        except TideError:
            continue
        for r in a.spans:
            if r.label not in ("PATIENT", "DOCTOR"):
                continue
            out_words = name_words(a.text[r.out_start : r.out_end])
            in_words = name_words(d.text[r.start : r.end])
            if len(out_words) != len(in_words):
                continue
            for w_in, w_out in zip(in_words, out_words, strict=True):
                if _name_words(w_in) and _name_words(w_out):
                    surrogates.append(w_out)
                    replaced_listed.append(int(is_listed(w_in)))
        for s in missed:
            if s.label in ("PATIENT", "DOCTOR"):
                real.extend(_name_words(d.text[s.start : s.end]))

    def neither(w: str) -> float:
        return 0.0 if is_listed(w) or shaped(w) else 1.0

    rare = [w for w in real if not is_listed(w)]
    s_scores = [neither(w) for w in surrogates]
    out: dict[str, Any] = {
        "surrogate_words": len(surrogates),
        "real_words": len(real),
        "real_rare_words": len(rare),
        "surrogates_listed_or_shaped_share": 1 - sum(s_scores) / len(s_scores) if s_scores else float("nan"),
        "real_rare_neither_share": sum(neither(w) for w in rare) / len(rare) if rare else float("nan"),
        "auc_rare": _auc(s_scores + [neither(w) for w in rare], [0] * len(s_scores) + [1] * len(rare)),
        "auc_all_real": _auc(s_scores + [neither(w) for w in real], [0] * len(s_scores) + [1] * len(real)),
        "chance": 0.5,
    }
    # the original's class read off its surrogate: "surrogate listed" as a score for "original listed"
    out["original_class_auc"] = _auc([float(is_listed(w)) for w in surrogates], replaced_listed)
    same = sum(1 for w, y in zip(surrogates, replaced_listed, strict=True) if is_listed(w) == bool(y))
    out["same_class_share"] = same / len(surrogates) if surrogates else float("nan")
    return out


# -- (e) dates across k linked releases -----------------------------------------------------------

K_VALUES = (1, 2, 3, 5, 10)


def _my_dates(r: Released) -> list[tuple[int, int, int, int]]:
    """(true year, true month, released year, released month) of each month + year date."""
    out = []
    for s in r.spans:
        if s.label != "DATE" or s.operator != "date.shift":
            continue
        try:
            t = parse_date(r.original[s.start : s.end])
            p = parse_date(r.text[s.out_start : s.out_end])
        except TideError:
            continue
        if t.kind == "my" and p.kind == "my":
            out.append((date_part(t.year), date_part(t.month), date_part(p.year), date_part(p.month)))
    return out


def _month_shift(offset: int) -> int:
    sign = -1 if offset < 0 else 1
    return sign * max(1, round(abs(offset) / 30.44))


def _median(values: Sequence[float]) -> float:
    v = sorted(values)
    if not v:
        return float("nan")
    mid = len(v) // 2
    return float(v[mid]) if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def attack_triangulation(
    gold_docs: Sequence[GoldDoc],
    seed: int,
    study_dates: bool = False,
    ks: Sequence[int] = K_VALUES,
) -> dict[str, Any]:
    """The same notes released under k keys of one study and linked (attack (a) links them all):
    which true dates stay consistent with every copy?  ``study_dates``: the keys share the study's
    date secret (``<study>/dates.key``).  Also measured: how well dates alone link two releases.

    Full dates: a patient's dates share one offset per release, so linked full dates give the
    differences of the k offsets exactly (``d_i - d_1 = o_i - o_1``); the offsets that keep all k
    in the shift range are the candidates, and the consistent true dates ``d_1 - o_1`` form a
    window whose width (days, first to last) is reported.  Month + year dates of the same patient
    are then read with those candidate offsets: the consistent true months."""
    k_max = max(ks)
    rels = [release(gold_docs, test_keyring(f"k{i + 1}", seed, study_dates)) for i in range(k_max)]
    common = sorted(set.intersection(*(set(r) for r in rels)))
    offsets = set(OFFSETS)
    out: dict[str, Any] = {"notes": len(common), "by_k": {}}
    by_patient: dict[str, list[str]] = defaultdict(list)
    for n in common:
        by_patient[rels[0][n].patient_id].append(n)
    for k in ks:
        widths: list[int] = []
        my_widths: list[int] = []
        for notes in by_patient.values():
            # per patient: the k-tuples of released full dates (one per date, linked by position)
            tuples: list[tuple[date, ...]] = []
            for n in notes:
                per_rel = [_full_dates(rels[i][n]) for i in range(k)]
                if len({len(x) for x in per_rel}) == 1:
                    tuples.extend(zip(*per_rel, strict=True))
            cands = sorted(offsets)
            for tup in tuples:
                deltas = [(d - tup[0]).days for d in tup]
                cands = [o for o in cands if all((o + dl) in offsets for dl in deltas)]
            if not tuples or not cands:
                continue
            span = cands[-1] - cands[0] + 1
            widths.extend([span] * len(tuples))
            deltas0 = [(d - tuples[0][0]).days for d in tuples[0]]
            for n in notes:
                per_rel_my = [_my_dates(rels[i][n]) for i in range(k)]
                if len({len(x) for x in per_rel_my}) != 1:
                    continue
                for tup_my in zip(*per_rel_my, strict=True):
                    months = set()
                    for o in cands:  # release i moved the month by the month shift of o_1 + delta_i
                        got = {
                            (ry * 12 + rm - 1) - _month_shift(o + dl)
                            for (_, _, ry, rm), dl in zip(tup_my, deltas0, strict=True)
                        }
                        if len(got) == 1:
                            months |= got
                    if months:
                        my_widths.append(max(months) - min(months) + 1)
        out["by_k"][k] = {
            "full_dates": len(widths),
            "median_window_days": _median(widths),
            "share_window_le_90_days": sum(w <= 90 for w in widths) / len(widths) if widths else float("nan"),
            "my_dates": len(my_widths),
            "median_window_months": _median(my_widths),
            "share_exact_month": sum(w == 1 for w in my_widths) / len(my_widths) if my_widths else float("nan"),
            "share_within_3_months": sum(w <= 3 for w in my_widths) / len(my_widths) if my_widths else float("nan"),
        }
    out["linkage_by_dates"] = _date_linkage(rels[0], rels[1], common) if k_max > 1 else {}
    return out


def _date_linkage(a: dict[str, Released], b: dict[str, Released], common: Sequence[str]) -> dict[str, Any]:
    """Notes of release A linked to release B by their released full dates alone: exact dates when
    they agree, else the intervals between them; share of notes with full dates linked right."""
    with_dates = [n for n in common if _full_dates(a[n])]
    exact_b: dict[tuple[date, ...], list[str]] = defaultdict(list)
    gaps_b: dict[tuple[int, ...], list[str]] = defaultdict(list)
    for n in common:
        ds = tuple(sorted(_full_dates(b[n])))
        if ds:
            exact_b[ds].append(n)
            gaps_b[tuple((y - x).days for x, y in zip(ds, ds[1:], strict=False))].append(n)
    ok_exact = ok_gaps = 0
    for n in with_dates:
        ds = tuple(sorted(_full_dates(a[n])))
        ok_exact += exact_b.get(ds) == [n]
        ok_gaps += gaps_b.get(tuple((y - x).days for x, y in zip(ds, ds[1:], strict=False))) == [n]
    total = len(with_dates)
    return {
        "notes_with_full_dates": total,
        "linked_by_exact_dates": ok_exact / total if total else float("nan"),
        "linked_by_intervals": ok_gaps / total if total else float("nan"),
    }


# -- (d) date-shift recovery ---------------------------------------------------------------------


def attack_date_shift(gold_docs: Sequence[GoldDoc], seed: int) -> dict[str, Any]:
    """Per patient: one known true full date -> the offset -> every other date of the patient."""
    kr = test_keyring("k1", seed)
    rel = release(gold_docs, kr)
    per_patient: dict[str, list[tuple[str, str, int | None]]] = defaultdict(list)  # (true, released, ref)
    for rl in rel.values():
        doc_ref = None
        nd = (next(d for d in gold_docs if d.note_id == rl.note_id).metadata or {}).get("note_date")
        if isinstance(nd, str) and nd[:4].isdigit():
            doc_ref = int(nd[:4])
        for s in rl.spans:
            if s.label == "DATE" and s.operator == "date.shift":
                per_patient[rl.patient_id].append(
                    (rl.original[s.start : s.end], rl.text[s.out_start : s.out_end], doc_ref)
                )
    recovered = total = other_ok = other_total = 0
    patients = 0
    kinds: Counter[str] = Counter()
    kind_ok: Counter[str] = Counter()
    known_offsets = []
    for pid, dates in per_patient.items():
        parsed: list[tuple[ParsedDate, ParsedDate]] = []
        refs: list[tuple[str, str, int | None]] = []
        for true_s, rel_s, ref in dates:
            try:
                parsed.append((parse_date(true_s, ref), parse_date(rel_s, ref)))
            except TideError:
                continue
            refs.append((true_s, rel_s, ref))
        fulls = [(t, r) for t, r in parsed if t.kind == "full"]
        if len(parsed) < 2 or not fulls:
            continue
        patients += 1
        known = fulls[0]  # the one date the attacker knows
        t0, r0 = known
        offset = (
            date(date_part(r0.year), date_part(r0.month), date_part(r0.day))
            - date(date_part(t0.year), date_part(t0.month), date_part(t0.day))
        ).days
        known_offsets.append((pid, offset))
        for (t, r), (_, _, ref) in zip(parsed, refs, strict=True):
            if (t, r) is known:
                continue
            total += 1
            hit = _invert(t, r, offset, ref)
            recovered += hit
            kinds[t.kind] += 1
            kind_ok[t.kind] += hit
    # the same leaked offset applied to *other* patients' dates (per-patient offsets contain it)
    rng = random.Random(seed)
    for pid, offset in known_offsets:
        others = [p for p in per_patient if p != pid]
        if not others:
            continue
        q = rng.choice(others)
        for true_s, rel_s, ref in per_patient[q]:
            try:
                t, r = parse_date(true_s, ref), parse_date(rel_s, ref)
            except TideError:
                continue
            if t.kind == "full":
                other_total += 1
                other_ok += _invert(t, r, offset, ref)
    return {
        "patients": patients,
        "dates": total,
        "kinds": dict(kinds),
        "recovered_share": recovered / total if total else float("nan"),
        "recovered_share_by_kind": {k: kind_ok[k] / kinds[k] for k in sorted(kinds)},
        "other_patients_recovered_share": other_ok / other_total if other_total else float("nan"),
        "chance": 1 / len(OFFSETS),
        "check_offset_matches_key": all(date_offset_days(kr, p) == o for p, o in known_offsets),
    }


def _invert(true_p: ParsedDate, rel_p: ParsedDate, offset: int, reference_year: int | None = None) -> int:
    """1 when undoing ``offset`` on the released date gives the true date (at its precision).

    Month + day dates were shifted inside the note's reference year, which the attacker reads
    off the released note date with the same offset."""
    if true_p.kind != rel_p.kind:
        return 0
    if true_p.kind == "full":
        # a 2-digit year is read with the %y pivot, so a shift across it (68 -> 69) reads back a
        # century off; the attacker knows the century of the date they hold: compare within it
        y = date_part(rel_p.year)
        y += 100 * round((date_part(true_p.year) - y) / 100)
        try:
            guess = date(y, date_part(rel_p.month), date_part(rel_p.day)) - timedelta(days=offset)
        except ValueError:
            return 0
        return int(guess == date(date_part(true_p.year), date_part(true_p.month), date_part(true_p.day)))
    if true_p.kind == "md":
        ry = reference_year or 2000
        for y in (ry - 1, ry, ry + 1):
            try:
                guess = date(y, date_part(rel_p.month), date_part(rel_p.day)) - timedelta(days=offset)
            except ValueError:  # 29 February in a common year
                continue
            if guess.year in (ry, 2000) and (guess.month, guess.day) == (true_p.month, true_p.day):
                return 1
        return 0
    if true_p.kind == "my":
        sign = -1 if offset < 0 else 1
        months = sign * max(1, round(abs(offset) / 30.44))
        total = date_part(rel_p.year) * 12 + date_part(rel_p.month) - 1 - months
        return int((total // 12, total % 12 + 1) == (true_p.year, true_p.month))
    return 0


# -- driver -------------------------------------------------------------------------------------

MITIGATIONS = {
    "linkage": "Never give one recipient (or colluding recipients) two keys' releases of the same notes: "
    "the clinical text links them at once. Key rotation protects later releases from being joined by "
    "surrogate values, not copies of the same notes; one key per recipient, and release only the rows "
    "each needs (README, Security).",
    "frequency": "Deterministic surrogates are needed for consistency; a per-study key means frequencies "
    "are only comparable within one release. What frequency analysis recovers is the head of the "
    "distribution (the commonest surnames, the least identifying); documented, not prevented.",
    "hiding": "Residual PHI is caught by recall (known-PHI matching, the residual screen, the audit), not by "
    "blending in; keep tide_released_spans (surrogate offsets) internal: with it, anything PHI-like "
    "outside a surrogate is residual by construction.",
    "name_class": "Every name word takes one keyed draw into one mixed space (a listed name, or a "
    "listed-looking splice of listed names) whatever its own class, so a surrogate says nothing about the "
    "word it replaced; a real rare name that no splice can spell still stands out: recall, not blending in.",
    "triangulation": "Put a date secret in the study (`tide keys new --study S --key dates`): every key "
    "version then gives a patient the same offset, so k linked releases narrow no date beyond one, at "
    "the price of releases that the dates themselves link, and of an offset that outlives key rotation "
    "once leaked (docs/anonymizer.md).",
    "date_shift": "By design (intervals preserved): one known real date reveals that patient's offset and "
    "so all of that patient's dates, never another patient's (per-patient offsets). Treat exact dates as "
    "quasi-identifiers: release to recipients under a data-use agreement, rotate keys per release, and "
    "generalise (years -> decades) where timelines are not needed.",
}


def run(n_notes: int = 600, seed: int = 7) -> dict[str, Any]:

    t0 = time.perf_counter()
    data = generate_heldout_dataset(n_notes, seed=seed)
    gold = list(data.gold)
    report = {
        "notes": len(gold),
        "seed": seed,
        "linkage": attack_linkage(gold, seed),
        "frequency": attack_frequency(seed, n_people=max(200, 4 * n_notes)),
        "hiding": attack_hiding(gold, seed),
        "name_class": attack_name_class(gold, seed),
        "date_shift": attack_date_shift(gold, seed),
        "triangulation": {
            "per_key": attack_triangulation(gold, seed, study_dates=False),
            "study_dates": attack_triangulation(gold, seed, study_dates=True),
        },
        "mitigations": MITIGATIONS,
    }
    report["seconds"] = time.perf_counter() - t0
    return report


def format_report(r: dict[str, Any]) -> str:
    a, f, h, d = r["linkage"], r["frequency"], r["hiding"], r["date_shift"]
    c, tri = r["name_class"], r["triangulation"]
    lines = [
        f"Attacks on our own releases ({r['notes']} in-house synthetic notes, gold spans, seed {r['seed']})",
        "",
        f"(a) linkage across two keys: {a['notes']} notes, {a['patients']} patients",
        f"    PHI-side features only: notes {a['phi_features']['note_accuracy']:.1%}, "
        f"patients {a['phi_features']['patient_accuracy']:.1%} "
        f"(chance {a['chance_note']:.2%} / {a['chance_patient']:.2%}; "
        f"{a['unique_phi_signature_share']:.1%} of notes have a unique PHI signature)",
        f"    with the clinical text: notes {a['with_text']['note_accuracy']:.1%}, "
        f"patients {a['with_text']['patient_accuracy']:.1%}",
        f"    linked copies narrow a full date from {a['dates']['candidates_one_release']:.0f} to "
        f"{a['dates']['candidates_two_releases']:.0f} candidate days on average "
        f"({a['dates']['share_within_30_candidates']:.1%} to <= 30 days)",
        f"    mitigation: {r['mitigations']['linkage']}",
        "",
        f"(b) frequency analysis: {f['mentions']} surname mentions, {f['distinct_surnames']} distinct",
        f"    recovered: {f['recovered_mention_share']:.1%} of mentions, {f['recovered_distinct_share']:.1%} "
        f"of distinct surnames, {f['top10_recovered']:.0%} of the top 10 (chance {f['chance_mention_share']:.2%})",
        f"    mitigation: {r['mitigations']['frequency']}",
        "",
        f"(c) hiding in plain sight ({h['method']}, {h['miss_rate']:.0%} of gold spans missed): "
        f"AUC {h['auc']:.3f} (0.5 = indistinguishable)",
    ]
    for label, v in h["by_label"].items():
        lines.append(f"    {label}: AUC {v['auc']:.3f} ({v['residual']} residual vs {v['surrogates']} values)")
    lines += [
        f"    mitigation: {r['mitigations']['hiding']}",
        f"    class attack on name words (listed or generator-shaped = surrogate): AUC {c['auc_rare']:.3f} "
        f"against {c['real_rare_words']} real unlisted names, {c['auc_all_real']:.3f} against all "
        f"{c['real_words']} real name words (chance {c['chance']:.1f}); {c['surrogates_listed_or_shaped_share']:.1%} "
        f"of surrogates are listed or generator-shaped, {c['real_rare_neither_share']:.1%} of real unlisted names "
        f"neither; the original's class read off its surrogate: AUC {c['original_class_auc']:.3f}",
        f"    mitigation: {r['mitigations']['name_class']}",
        "",
        f"(d) date-shift recovery from one known date: {d['patients']} patients, {d['dates']} other dates",
        f"    recovered: {d['recovered_share']:.1%} of that patient's dates ("
        + ", ".join(f"{k} {v:.1%}" for k, v in d["recovered_share_by_kind"].items())
        + "); other patients' dates with the "
        f"same offset: {d['other_patients_recovered_share']:.1%} (chance {d['chance']:.2%})",
        f"    mitigation: {r['mitigations']['date_shift']}",
        "",
        f"(e) dates across k linked releases of {tri['per_key']['notes']} notes "
        "(median consistent window; full dates in days, month + year dates with the patient's full dates in months)",
    ]
    for design, label in (("per_key", "offset per key"), ("study_dates", "study date secret")):
        t = tri[design]
        for k, v in t["by_k"].items():
            lines.append(
                f"    {label:17} k={k:<2}: {v['median_window_days']:.0f} days ({v['share_window_le_90_days']:.1%} "
                f"<= 90), month + year {v['median_window_months']:.0f} months ({v['share_exact_month']:.1%} exact, "
                f"{v['share_within_3_months']:.1%} within 3)"
            )
        lk = t["linkage_by_dates"]
        if lk:
            lines.append(
                f"    {label:17} two releases linked by dates alone: {lk['linked_by_exact_dates']:.1%} by the dates, "
                f"{lk['linked_by_intervals']:.1%} by their intervals ({lk['notes_with_full_dates']} notes)"
            )
    lines += [
        f"    mitigation: {r['mitigations']['triangulation']}",
        "",
        f"({r['seconds']:.0f} s)",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.attacks", description=__doc__.split("\n\n")[0])
    ap.add_argument("--notes", type=int, default=600)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", help="also write the report as JSON to this path")
    args = ap.parse_args(argv)
    report = run(args.notes, args.seed)
    print(format_report(report))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=2, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
