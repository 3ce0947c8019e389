"""Synthetic corpus: gold offsets, conventions, hard negatives, determinism, separation, CLI."""

from __future__ import annotations

import argparse
import csv
import random
import re
import time
from collections import Counter, defaultdict
from itertools import pairwise
from pathlib import Path

import pytest

from tide_core.evaluation.gold_io import read_gold
from tide_core.synth import (
    PATIENT_COLUMNS,
    generate_demo_corpus,
    generate_heldout_corpus,
    generate_heldout_dataset,
    generate_training_corpus,
)
from tide_core.synth.builder import NoteBuilder
from tide_core.synth.slots import NoteContext, render_slot
from tide_core.synth.templates import FAMILIES, NOTE_TYPES, all_templates, templates_for
from tide_core.synth.vocab import load_vocabulary, site_facility_names
from tide_core.synth.world import World
from tide_core.types import LABELS

_MONTHS = (
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sep|oct|nov|dec"
)


@pytest.fixture(scope="module")
def demo():
    return generate_demo_corpus(seed=7)


@pytest.fixture(scope="module")
def train():
    return generate_training_corpus(1500, seed=11)


@pytest.fixture(scope="module")
def heldout():
    return generate_heldout_dataset(600, seed=11)


def _facilities() -> set[str]:
    v = load_vocabulary("all")
    return {f.name.lower() for f in v.site_facilities + v.external_facilities}


def _plausible(label: str, s: str) -> bool:
    if label == "DATE":
        rest = re.sub(_MONTHS, "", s.lower())
        rest = re.sub(r"(?<=\d)(st|nd|rd|th)\b|\bof\b|\b[ap]m\b|(?<=\d)t(?=\d)", "", rest)
        return bool(re.search(r"\d", s)) and re.fullmatch(r"[\d/\-.,: ]+", rest) is not None
    if label == "AGE":
        return re.fullmatch(r"\d{1,3}", s) is not None
    if label == "ID":
        return re.fullmatch(r"[A-Z0-9][A-Z0-9-]*", s) is not None and len(re.findall(r"\d", s)) >= 4
    if label == "PHONE":
        main = re.split(r"(?i)\s*(ext\.?|x\.?)\s*\d+$", s)[0]
        return re.fullmatch(r"[\d()+\-. ]+", main) is not None and 5 <= len(re.findall(r"\d", main)) <= 11
    if label == "EMAIL":
        return re.fullmatch(r"[\w.+-]+@[\w-]+(\.[\w-]+)+", s) is not None
    if label == "URL":
        return " " not in s and (
            re.match(r"(?i)(https?://|www\.|portal\.)", s) is not None
            or re.fullmatch(r"\d+\.\d+\.\d+\.\d+", s) is not None
        )
    if label in ("PATIENT", "DOCTOR"):
        tokens = s.split()
        return (
            not re.search(r"\d|\n", s)
            and re.search(r"[A-Za-z]", s) is not None
            and not set(tokens) & {"Dr.", "Dr", "Mr.", "Ms.", "Mrs.", "MD", "RN", "M.D."}
        )
    if label == "LOCATION":
        return "\n" not in s and re.search(r"[A-Za-z0-9]", s) is not None
    if label == "HOSPITAL":
        return s.lower() in _facilities()
    if label == "OTHER":
        v = load_vocabulary("all")
        return s.lower() in {x.lower() for x in v.employers + v.schools}
    return False


def _check_doc(doc) -> None:
    prev_end = -1
    for sp in doc.spans:
        surface = doc.text[sp.start : sp.end]
        assert surface and surface == surface.strip(), (doc.note_id, sp)
        assert sp.start >= prev_end, f"overlapping gold spans in {doc.note_id}"
        prev_end = sp.end
        assert _plausible(sp.label, surface), (doc.note_id, sp.label, surface)
    for a, b in pairwise(doc.spans):  # one name is one span, never two touching ones
        if a.label == b.label and a.label in ("PATIENT", "DOCTOR", "HOSPITAL", "OTHER"):
            assert doc.text[a.end : b.start].strip(" "), (doc.note_id, a, b)


def test_demo_shape(demo):
    assert 140 <= len(demo.notes) <= 160
    assert 30 <= len(demo.patients) <= 55
    assert len(demo.gold) == len(demo.notes)
    for note, gold in zip(demo.notes, demo.gold, strict=True):
        assert note.note_id == gold.note_id and note.text == gold.text
        assert set(note.metadata) == {"note_date", "note_type", "source", "site"}
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", note.metadata["note_date"])
        assert note.metadata["note_type"] in NOTE_TYPES
    assert all(list(p) == list(PATIENT_COLUMNS) for p in demo.patients)
    assert len({n.metadata["note_type"] for n in demo.notes}) >= 9


@pytest.mark.parametrize("which", ["demo", "train", "heldout"])
def test_gold_offsets_cover_plausible_values(which, demo, train, heldout):
    docs = {"demo": demo.gold, "train": train, "heldout": heldout.gold}[which]
    for doc in docs:
        _check_doc(doc)


@pytest.mark.parametrize("which", ["demo", "train", "heldout"])
def test_every_label_appears(which, demo, train, heldout):
    docs = {"demo": demo.gold, "train": train, "heldout": heldout.gold}[which]
    counts = Counter(s.label for d in docs for s in d.spans)
    assert set(counts) == set(LABELS), set(LABELS) - set(counts)
    assert min(counts.values()) >= 10


def test_conventions_on_surface_forms(train):
    """Titles and credentials outside name spans, AGE digits only, ranges are two spans, MRN without prefix."""
    titles = ages = ranges = mrns = 0
    for d in train:
        t = d.text
        for s in d.spans:
            before, after = t[max(0, s.start - 4) : s.start], t[s.end : s.end + 10]
            if s.label == "DOCTOR" and before.endswith(("Dr. ", "DR. ")):
                titles += 1
            if s.label == "AGE" and re.match(r"(?i)-year-old| y/o| yo", after):
                ages += 1
            if s.label == "ID" and re.search(r"(?i)mrn[#:]? ?$", t[max(0, s.start - 6) : s.start]):
                mrns += 1
        for a, b in pairwise(d.spans):
            if a.label == b.label == "DATE" and re.fullmatch(r"(?i) ?(-|to|through|and|–) ?", t[a.end : b.start]):
                ranges += 1
    assert titles > 100 and ages > 100 and ranges > 20 and mrns > 100


def test_surface_variety(train):
    surfaces = defaultdict(list)
    for d in train:
        for s in d.spans:
            surfaces[s.label].append(d.text[s.start : s.end])
    dates = surfaces["DATE"]
    patterns = {
        "m/d/yyyy": r"\d{1,2}/\d{1,2}/\d{4}",
        "m/d/yy": r"\d{1,2}/\d{1,2}/\d{2}",
        "iso": r"\d{4}-\d{2}-\d{2}",
        "dashes": r"\d{2}-\d{2}-\d{4}",
        "spelled": r"(?i)[a-z]+ \d{1,2}, \d{4}",
        "ordinal of": r"(?i)\d{1,2}(st|nd|rd|th) of [a-z]+",
        "month year": r"(?i)[a-z]{3,9} \d{4}",
        "partial": r"\d{1,2}/\d{1,2}",
        "year": r"\d{4}",
        "with time": r"\d{1,2}/\d{1,2}/\d{2,4} \d{1,2}:?\d{2}.*",
    }
    for name, pat in patterns.items():
        assert any(re.fullmatch(pat, x) for x in dates), name
    names = surfaces["PATIENT"] + surfaces["DOCTOR"]
    assert any(re.fullmatch(r"[A-Z][a-z'-]+, [A-Z][a-z]+", x) for x in names)  # Last, First
    assert any(re.fullmatch(r"[A-Z][a-z]+ [A-Z]\. [A-Z][a-z'-]+", x) for x in names)  # middle initial
    assert any("-" in x and re.fullmatch(r"[A-Za-z' .,-]+", x) for x in names)  # hyphenated
    assert any(x.isupper() and len(x) > 5 for x in names)  # all caps
    assert any(re.fullmatch(r"([A-Z]\.){2,3}|[A-Z]{2,3}", x) for x in surfaces["PATIENT"])  # initials
    phones = surfaces["PHONE"]
    assert any(re.fullmatch(r"\(\d{3}\) \d{3}-\d{4}", x) for x in phones)
    assert any(re.fullmatch(r"\d{3}\.\d{3}\.\d{4}", x) for x in phones)
    assert any(re.search(r"(?i)(ext\.? ?|x)\d+$", x) for x in phones)
    ids = surfaces["ID"]
    assert any(re.fullmatch(r"\d{3}-\d{2}-\d{4}", x) for x in ids)  # SSN
    assert any(re.fullmatch(r"[A-Z]{2,3}-\d{2}-\d{4}", x) for x in ids)  # AB-12-3456
    locs = surfaces["LOCATION"]
    assert any(re.fullmatch(r"\d+ .+ (Street|Avenue|St\.|Ave\.|Road|Rd\.|Drive|Lane).*", x) for x in locs)
    assert any(re.fullmatch(r"\d{5}(-\d{4})?", x) for x in locs)
    assert any(re.fullmatch(r"[A-Z]{2}", x) for x in locs)
    assert any(x.startswith(("https://", "www.")) for x in surfaces["URL"])
    assert any(re.fullmatch(r"\d+\.\d+\.\d+\.\d+", x) for x in surfaces["URL"])


def test_hard_negatives_present_and_unannotated(train):
    kinds = Counter()
    for d in train:
        for s, e, kind in d.metadata["hard_negatives"]:
            kinds[kind] += 1
            assert not any(sp.start < e and s < sp.end for sp in d.spans), (d.note_id, kind)
    kinds["eponym"] = sum(v for k, v in kinds.items() if k.startswith("eponym"))
    for kind in (
        "eponym",
        "eponym_device",
        "eponym_disease",
        "eponym_sign",
        "eponym_position",
        "eponym_procedure",
        "med",
        "vitals",
        "labs",
        "lab",
        "time",
        "score",
        "ratio",
        "room",
        "page",
        "version",
        "icd",
        "bp",
        "measure",
        "duration",
    ):
        assert kinds[kind] >= 10, kind
    # independent of the metadata: look for the phrases themselves
    phrases = [
        "Parkinson's disease",
        "Foley catheter",
        "Glasgow Coma Scale",
        "Babinski",
        "Apgar",
        "Whipple",
        "Bell's palsy",
        "Hodgkin",
        "NIHSS",
        "BP ",
        "Na ",
    ]
    big = generate_training_corpus(5000, seed=3)
    found = Counter()
    for d in big:
        for ph in phrases:
            for m in re.finditer(re.escape(ph), d.text):
                found[ph] += 1
                assert not any(sp.start < m.end() and m.start() < sp.end for sp in d.spans), (d.note_id, ph)
    assert all(found[ph] > 0 for ph in phrases), found


def test_deterministic():
    a = [d.to_dict() for d in generate_training_corpus(200, seed=5)]
    b = [d.to_dict() for d in generate_training_corpus(200, seed=5)]
    c = [d.to_dict() for d in generate_training_corpus(200, seed=6)]
    assert a == b
    assert a != c
    assert generate_demo_corpus().gold[0].to_dict() == generate_demo_corpus().gold[0].to_dict()


def test_template_families_disjoint():
    templates = all_templates()
    by_family = {f: [t for t in templates if t.family == f] for f in FAMILIES}
    assert all(len(v) >= 30 for v in by_family.values())
    texts = {f: {re.sub(r"\s+", " ", t.text) for t in v} for f, v in by_family.items()}
    assert not texts["train"] & texts["heldout"]
    for nt in NOTE_TYPES:  # every note type has a body in both families
        for f in FAMILIES:
            assert templates_for((f,)).get((nt, "body")), (nt, f)


def test_corpora_use_only_their_family(train, heldout):
    assert all(t.startswith("train.") for d in train for t in d.metadata["templates"])
    assert all(t.startswith("heldout.") for d in heldout.gold for t in d.metadata["templates"])


def test_vocabulary_halves_disjoint(train, heldout):
    tv, hv = load_vocabulary("train"), load_vocabulary("heldout")
    for attr in ("first_f", "first_m", "last", "streets", "cities", "external_facilities", "employers", "schools"):
        assert not set(getattr(tv, attr)) & set(getattr(hv, attr)), attr
    train_last = {d.metadata["patient"]["last_name"] for d in train}
    held_last = {p["last_name"] for p in heldout.patients}
    assert not {n for n in train_last if "-" not in n} & {n for n in held_last if "-" not in n}
    ext_train = {d.metadata["facility"] for d in train if not d.metadata["facility_in_gazetteer"]}
    ext_held = {d.metadata["facility"] for d in heldout.gold if not d.metadata["facility_in_gazetteer"]}
    assert ext_train and ext_held and not ext_train & ext_held


def test_heldout_gazetteer_share_and_file(heldout):
    path = Path(__file__).resolve().parents[2] / "tide_core" / "data" / "gazetteer_demo.csv"
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    assert [r["term"] for r in rows] == site_facility_names()
    assert {r["label"] for r in rows} == {"HOSPITAL"}
    terms = {r["term"] for r in rows}
    hosp = [d.text[s.start : s.end] for d in heldout.gold for s in d.spans if s.label == "HOSPITAL"]
    share = sum(h in terms for h in hosp) / len(hosp)
    assert 0.3 < share < 0.8, share


def test_every_template_renders():
    """Each template (not just those the RNG happens to pick) fills every slot with valid spans."""
    r = random.Random(1)
    world = World(load_vocabulary("all"), r)
    for t in all_templates():
        patient = world.patient("P1", 3)
        for _ in range(3):
            ctx = NoteContext(
                world, patient, 1, t.note_type if t.note_type != "any" else "progress_note", r, patient.home
            )
            b = NoteBuilder()
            for head, arg in t.expand(r):
                if arg is None:
                    b.text(head)
                else:
                    b.extend(render_slot(ctx, head[1:], arg))
            text = b.build()
            assert "{" not in text and "[[" not in text, t.template_id
            for s, e, label in b.spans:
                assert _plausible(label, text[s:e]), (t.template_id, label, text[s:e])


def test_patient_consistency(heldout):
    notes_of = defaultdict(list)
    for d in heldout.gold:
        notes_of[d.patient_id].append(d)
    rows = {p["patient_id"]: p for p in heldout.patients}
    assert set(notes_of) == set(rows)
    with_mrn = 0
    for pid, docs in notes_of.items():
        row = rows[pid]
        assert 2 <= len(docs) <= 6 or pid == heldout.patients[-1]["patient_id"]
        dates = [d.metadata["note_date"] for d in docs]
        assert dates == sorted(dates) and all(dates[0] > row["dob"] for _ in dates)
        assert all(d.metadata["patient"] == row for d in docs)
        ids = {d.text[s.start : s.end].upper() for d in docs for s in d.spans if s.label == "ID"}
        if row["mrn"].upper() in ids:
            with_mrn += 1
        for d in docs:  # wherever the MRN is written, it is annotated as ID
            for m in re.finditer(re.escape(row["mrn"]), d.text, flags=re.I):
                assert any(s.start <= m.start() and m.end() <= s.end and s.label == "ID" for s in d.spans)
    assert with_mrn / len(notes_of) > 0.9
    # names in the table are what the notes say
    hits = sum(
        any(
            d.text[s.start : s.end].lower().find(rows[pid]["last_name"].lower()) >= 0
            for d in docs
            for s in d.spans
            if s.label == "PATIENT"
        )
        for pid, docs in notes_of.items()
    )
    assert hits / len(notes_of) > 0.9


def test_heldout_corpus_matches_dataset():
    a = generate_heldout_corpus(40, seed=2)
    b = generate_heldout_dataset(40, seed=2)
    assert [d.to_dict() for d in a] == [d.to_dict() for d in b.gold]
    assert all(set(d.metadata["patient"]) == set(PATIENT_COLUMNS) for d in a)


def test_training_runtime():
    t0 = time.perf_counter()
    docs = generate_training_corpus(5000, seed=0)
    elapsed = time.perf_counter() - t0
    assert len(docs) == 5000
    assert elapsed < 30, elapsed


def _check_cli_output(out: Path, n: int) -> None:
    docs = read_gold(out / "notes.jsonl")
    assert len(docs) == n
    for d in docs:
        _check_doc(d)
    with (out / "patients.csv").open(encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames) == PATIENT_COLUMNS
        rows = list(reader)
    assert {r["patient_id"] for r in rows} == {d.patient_id for d in docs}


def test_cli_register_run(tmp_path):
    from tide_core.cli import cmd_synth

    parser = argparse.ArgumentParser()
    cmd_synth.register(parser.add_subparsers())
    args = parser.parse_args(["synth", "--out", str(tmp_path / "h"), "--kind", "heldout", "--n", "30", "--seed", "4"])
    assert args.func(args) == 0
    _check_cli_output(tmp_path / "h", 30)


def test_cli_main(tmp_path, capsys):
    from tide_core.cli import main

    assert main.main(["synth", "--out", str(tmp_path / "t"), "--kind", "train", "--n", "25", "--seed", "1"]) == 0
    _check_cli_output(tmp_path / "t", 25)
    assert main.main(["synth", "--out", str(tmp_path / "x"), "--kind", "demo", "--n", "0"]) == 2
    assert "E612" in capsys.readouterr().err


def test_deterministic_across_processes():
    """Same seed, different PYTHONHASHSEED: identical corpus (no salted hash() or set order leaks in)."""
    import os
    import subprocess
    import sys

    code = (
        "import hashlib, json; from tide_core.synth import generate_training_corpus as g; "
        "print(hashlib.sha256(json.dumps([d.to_dict() for d in g(150, 9)]).encode()).hexdigest())"
    )
    digests = set()
    for hash_seed in ("1", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        out = subprocess.run(
            [sys.executable, "-c", code],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        digests.add(out.stdout.strip())
    assert len(digests) == 1
