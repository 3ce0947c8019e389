"""The "world" out-of-generator corpus: determinism, exact offsets, coverage of labels and formats."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from test_import_graph import benchmark_rule_breaches

from benchmarks.oog import OOG_CORPORA, OOGCorpus, check_offsets, generate_oog
from benchmarks.oog.world import DOC_TYPES, SIZE
from benchmarks.oog.world_phi import LOCAL_MONTHS, ORDINAL_WORDS
from benchmarks.oog.world_vocab import ADDRESS_COUNTRIES, script_of
from tide_core.types import LABELS

N = 180


@pytest.fixture(scope="module")
def world() -> OOGCorpus:
    return generate_oog("world", N, 11)


def _surfaces(corpus: OOGCorpus, label: str) -> list[str]:
    return [d.text[s.start : s.end] for d in corpus.gold for s in d.spans if s.label == label]


def test_registered_and_deterministic_with_prefix_property(world):
    assert "world" in OOG_CORPORA
    again = generate_oog("world", N, 11)
    assert [d.to_dict() for d in again.gold] == [d.to_dict() for d in world.gold]
    assert again.patients == world.patients
    short = generate_oog("world", 25, 11)
    assert [d.to_dict() for d in short.gold] == [d.to_dict() for d in world.gold[:25]]
    other = generate_oog("world", 25, 12)
    assert sum(a.text != b.text for a, b in zip(other.gold, short.gold, strict=True)) >= 24
    assert len({d.note_id for d in world.gold}) == N


def test_offsets_exact_and_sizes(world):
    for d in world.gold:
        check_offsets(d.text, d.spans, d.metadata["clinical_terms"])
        assert SIZE[0] <= len(d.text) <= SIZE[1], (d.note_id, len(d.text))
        for sp in d.spans:
            assert sp.label in LABELS
            surface = d.text[sp.start : sp.end]
            assert surface and surface == surface.strip() and sp.end <= len(d.text)
        for s, e in d.metadata["negatives"]:
            assert d.text[s:e].strip() == d.text[s:e]
            assert not any(sp.start < e and s < sp.end for sp in d.spans), d.note_id
    sizes = sorted(len(d.text) for d in world.gold)
    assert sizes[len(sizes) // 2] > 2500 and sizes[-1] > 5000


def test_every_label_and_type_and_country_represented(world):
    labels = Counter(s.label for d in world.gold for s in d.spans)
    assert set(labels) == set(LABELS), set(LABELS) - set(labels)
    assert min(labels.values()) >= 20, labels
    assert Counter(d.metadata["note_type"] for d in world.gold).keys() == DOC_TYPES.keys()
    assert set(Counter(d.metadata["country"] for d in world.gold)) == set(ADDRESS_COUNTRIES)


def test_scripts_and_diacritics(world):
    names = _surfaces(world, "PATIENT") + _surfaces(world, "DOCTOR")
    places = _surfaces(world, "LOCATION")
    assert sum(script_of(n) == "greek" for n in names) >= 20
    assert sum(script_of(n) == "cyrillic" for n in names) >= 20
    assert sum(script_of(p) in ("greek", "cyrillic") for p in places) >= 20
    assert sum(not n.isascii() and script_of(n) == "latin" for n in names) >= 200
    ids = _surfaces(world, "ID")
    assert any(not i.isascii() for i in ids)  # Greek and Cyrillic letters in identity card numbers


def test_dates_in_words_ranges_and_local_languages(world):
    dates = _surfaces(world, "DATE")
    text = "\n".join(d.text for d in world.gold)
    assert (
        sum(bool(re.fullmatch(r"(twenty-|thirty-)?[a-z]+(st|nd|rd|th) of [A-Z][a-z]+( \d{4})?", x)) for x in dates)
        >= 30
    )
    assert any("two thousand" in x for x in dates)
    assert len(re.findall(r"\bbetween (the )?\w+ and (the )?\w", text)) >= 20
    assert sum(bool(re.fullmatch(r"\d{1,2}", x)) for x in dates) >= 50  # first halves of "7 and 11 March"
    assert (
        sum(
            x.split(",")[0] in ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
            or x.split(" ")[0] in ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
            for x in dates
        )
        >= 50
    )
    assert sum(bool(re.fullmatch(r"(19|20)\d\d", x)) for x in dates) >= 100  # years in running text
    for cc, months in LOCAL_MONTHS.items():
        if cc != "UA":
            assert any(m in x for x in dates for m in months.split()), cc


def test_local_formats_phones_addresses_ids(world):
    ids = _surfaces(world, "ID")
    assert sum("/" in i for i in ids) >= 100  # case and application numbers such as 30326/03
    phones = _surfaces(world, "PHONE")
    assert sum(p.startswith(("+", "00")) for p in phones) >= 50
    assert sum(not p.startswith(("+", "00")) for p in phones) >= 100
    assert sum(p.isdigit() for p in phones) >= 10  # no punctuation at all
    places = _surfaces(world, "LOCATION")
    assert {"APO", "FPO", "DPO"} & set(places) and {"AE", "AP", "AA"} & set(places)
    assert any(re.fullmatch(r"(PSC|Unit|CMR) \d+,? Box \d+", p) for p in places)
    assert any(re.fullmatch(r"[A-Z]{1,2}\d[A-Z\d]? \d[A-Z]{2}", p) for p in places)  # UK postcode
    assert any(re.fullmatch(r"\d{2}-\d{3}", p) for p in places)  # Polish postcode
    assert any(re.fullmatch(r"\d{4} ?[A-Z]{2}", p) for p in places)  # Dutch postcode
    assert any(re.search(r" u\. \d+\.$|utca \d+\.", p) for p in places)  # Hungarian street line


def test_hard_negatives_are_recorded_and_not_phi(world):
    negs = [d.text[s:e] for d in world.gold for s, e in d.metadata["negatives"]]
    assert sum(bool(re.search(r"€|EUR|£|euros|HUF|PLN|zł|Ft", n)) for n in negs) >= 50
    assert sum(bool(re.search(r"\b(km|kg|cm|m²|metres|km/h|mph)\b|m²", n)) for n in negs) >= 50
    assert any("Protocol No." in n or "Law no." in n for n in negs)


def test_names_with_particles_suffixes_and_family_first_order(world):
    names = _surfaces(world, "PATIENT")
    assert any(re.search(r"\b(van|von|de|ter)\b", n) for n in names)
    assert any(re.search(r" (Jr\.?|II|III|Sr\.)$", n) for n in names)
    assert any(re.fullmatch(r"[A-ZÁÉÍÓÖŐÚÜŰ]{3,} [A-Z][a-zé]+", n) for n in names)  # KOVÁCS Gábor


def test_patient_rows_match_the_subject(world):
    assert len(world.patients) == N
    for d, row in zip(world.gold, world.patients, strict=True):
        assert row["patient_id"] == d.patient_id
        names = {s for _, s in d.surfaces()}
        assert any(row["last_name"].casefold() in n.casefold() for n in names), d.note_id


def test_generation_does_not_import_the_recognizers_or_the_generator():
    assert benchmark_rule_breaches() == []


SHAPES = {
    "EMAIL": r"[\w.+-]+@[\w-]+(\.[\w-]+)+",
    "PHONE": r"[+(]?\d[\d\s()/.-]*\d",
    "AGE": r"\d{1,3}",
    "URL": r"www\.[\w-]+\.[a-z]{2}",
    "ID": r"\S(.*\S)?",
}


def test_span_surfaces_have_their_shape_and_whole_words(world):
    """Offsets land on whole values: each surface has its label's shape and never cuts a word."""
    for d in world.gold:
        for sp in d.spans:
            surface = d.text[sp.start : sp.end]
            if sp.label in SHAPES:
                assert re.fullmatch(SHAPES[sp.label], surface, re.S), (d.note_id, sp.label, surface)
            if sp.label == "ID":
                assert any(ch.isdigit() for ch in surface), (d.note_id, surface)
            if sp.label == "DATE":
                words = any(ch.isdigit() for ch in surface) or re.search(r"\sof\s", surface)
                assert words or surface in ORDINAL_WORDS, (d.note_id, surface)
            before = d.text[sp.start - 1] if sp.start else " "
            after = d.text[sp.end] if sp.end < len(d.text) else " "
            assert not before.isalnum(), (d.note_id, sp.label, surface)
            assert not after.isalnum() or (sp.label == "AGE" and d.text[sp.end : sp.end + 2] == "th"), (
                d.note_id,
                sp.label,
                surface,
            )
