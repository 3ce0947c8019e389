"""The regex layer's fast path returns exactly the reference path's spans; FF3 fast path = library.

The fast path (``RegexRecognizer(fast=True)``, the default) enters each pattern only at the
characters that can begin a match and replays ``finditer``; the reference (``fast=False``) scans
every position.  They must agree span for span (label, offsets, score, pattern) on the benchmark
corpora and on adversarial strings.
"""

from __future__ import annotations

import random
import re

import pytest
from ff3 import FF3Cipher

from benchmarks.corpora import load_corpus
from tide_core.anonymize.identifiers import DIGITS, LOWER, UPPER, _FastFF3
from tide_core.recognizers.regex_recognizer import RegexRecognizer, fast_finditer, prefilter_regex


@pytest.fixture(scope="module")
def recognizers():
    fast, ref = RegexRecognizer(fast=True), RegexRecognizer(fast=False)
    fast.load()
    ref.load()
    return fast, ref


def _key(results):
    return [(r.entity_type, r.start, r.end, r.score, r.recognition_metadata["pattern"]) for r in results]


def _assert_same(recognizers, texts):
    fast, ref = recognizers
    for i, text in enumerate(texts):
        assert _key(fast.analyze(text)) == _key(ref.analyze(text)), f"text #{i} differs"


def test_most_patterns_have_a_prefilter(recognizers):
    fast, _ = recognizers
    with_prefilter = [c for c in fast._compiled if c.fast is not None]
    assert len(with_prefilter) >= len(fast._compiled) - 5


@pytest.mark.parametrize("name,n", [("inhouse", 120), ("oog-clinical", 120), ("oog-messages", 300)])
def test_fast_equals_reference_on_corpora(recognizers, name, n):
    corpus = load_corpus(name, n, seed=5)
    _assert_same(recognizers, [d.text for d in corpus.gold])


ADVERSARIAL = [
    "",
    " ",
    "\n\n",
    "1",
    "٣/٤/٢٠٢٠ and ۱۲/۳۰/۱۹۹۹ are Arabic-Indic dates; 12/30/1999 is not",
    "DOB:09/30/1958 1/2/3/4/2020 3/4-3/6 2015, 2017 and 2019 between 11/28 and 12/03/2018",
    "Dr. Dr. Dr. Smith, MD and Mr. KOZLOV AMBULATED; İstanbul, Kelvin \u212a, \u017fam",
    "call (650) 555-1234 x123 or +44 (0)20 7946 0958; 02 7623 0792; 555-1234; 250-1000",
    "MRN: 12345678, MRN#A1234567, ID 83658, Nampa, ID 83658, SSN 123-45-6789, 000-12-3456",
    "e-mail a.b@c.de <mailto:x_y@z.org> http://www.example.com/a?b=1 10.0.0.1 fe80::1",
    "He is 66 and she turns 72 on Monday. 45 yo M, 3 y/o F, (M, 54), (67 F), aged 101 years",
    "Lives in Palo Alto, CA 94304-1234. 1234 Oak Street Apt 4B, PO Box 12, RR 5 Box 410",
    "Seen by Dr. Ana-María O'Neil-Smith; cc: Jones, Mary A.; Resident: Łukasz Żółw",
    "\ud800 lone surrogate 12/12/2012 \udfff",
    "a" * 500 + " 01/02/2003 " + "9" * 300 + " Jan 5, 2020 " + "Mr" * 100,
    "\t12/29\t| Mar 3 | Dec 26\t",
    "JAN 1ST 2020, january 2nd, 2021, may 6, MAY 6, Wed 6/22, friday, april 7, 2017",
    "St. Mary's Hospital of the Good Shepherd; Klinikum Schwabing; Pain Clinic",
]


def _fuzz(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    atoms = [
        "1",
        "12",
        "2020",
        "/",
        "-",
        ".",
        ":",
        " ",
        "\n",
        ",",
        "(",
        ")",
        "+",
        "#",
        "Dr",
        "Mr.",
        "MRN",
        "age",
        "yo",
        "Jan",
        "may",
        "March",
        "Smith",
        "JOHN",
        "O'Neil",
        "St",
        "Street",
        "CA",
        "New York",
        "94304",
        "x",
        "ext",
        "@",
        "www.",
        ".com",
        "Hospital",
        "Clinic",
        "on",
        "since",
        "é",
        "٣",
        "\u212a",
        "I'm",
        "is",
        "turns",
        "MD",
    ]
    return ["".join(rng.choice(atoms) for _ in range(rng.randint(1, 60))) for _ in range(n)]


def test_fast_equals_reference_on_adversarial_strings(recognizers):
    _assert_same(recognizers, ADVERSARIAL)


def test_fast_equals_reference_on_fuzzed_strings(recognizers):
    _assert_same(recognizers, _fuzz(400, seed=3))


@pytest.mark.parametrize(
    "pattern,flags",
    [
        (r"(?<![\w.])\d{1,3}\s?(?:yo|y/o)", 0),
        (r"\b(?:Dr|Doctor)\.? [A-Z][a-z]+", 0),
        (r"\bmrn\s*\d+", re.IGNORECASE),
        (r"(?:\d\d)+", 0),
        (r"(?<=a)b+|c", 0),
        # a broad FIRST set after a lookbehind or \b
        (r"(?<![\w.@/-])[A-Za-z0-9][A-Za-z0-9-]*\.(?:com|org)", 0),
        (r"\b[A-Za-z]+\d+", 0),
        (r"(?<![\w])(?:[a-z]+|[A-Z][a-z]*)\s+(?i:by|of)\b", re.IGNORECASE),
    ],
)
def test_fast_finditer_is_finditer(pattern, flags):
    rx = re.compile(pattern, flags)
    pre = prefilter_regex(pattern, flags)
    assert pre is not None
    extra = ["ab abb cab 1234567 MRN 12 mrn12 Dr. Who 12yo 5 y/o", "x.com a1 seen by Dr", "ab2 cd3 ef4", " a.org"]
    for text in ADVERSARIAL + _fuzz(200, seed=11) + extra:
        assert [m.span() for m in fast_finditer(rx, pre, text)] == [m.span() for m in rx.finditer(text)]
        lo, hi = len(text) // 4, 3 * len(text) // 4
        assert [m.span() for m in fast_finditer(rx, pre, text, lo, hi)] == [m.span() for m in rx.finditer(text, lo, hi)]


def test_nullable_pattern_has_no_prefilter():
    assert prefilter_regex(r"\d*") is None
    assert prefilter_regex(r"(a)\1") is not None  # the back-reference comes after the first character


@pytest.mark.parametrize("alphabet", [DIGITS, UPPER, LOWER, "23456789", "0123456789ABCDEF"])
def test_fast_ff3_equals_library(alphabet):
    rng = random.Random(len(alphabet))
    for _ in range(60):
        key = bytes(rng.randrange(256) for _ in range(32)).hex()
        lib = FF3Cipher.withCustomAlphabet(key, "00000000000000", alphabet)
        fast = _FastFF3(lib, alphabet)
        for _ in range(5):
            n = rng.randint(lib.minLen, lib.maxLen)
            text = "".join(rng.choice(alphabet) for _ in range(n))
            tweak = bytes(rng.randrange(256) for _ in range(7)).hex()
            assert fast.encrypt(text, tweak) == lib.encrypt_with_tweak(text, tweak)


def test_keyword_patterns_are_tried_only_at_their_leading_words(recognizers):
    """Most whole-text scans start with literal words and go through the note's one Aho-Corasick
    pass; a word-less pattern (a date that starts with a digit) keeps its FIRST-set prefilter."""
    fast, ref = recognizers
    assert ref._words is None
    by_name = {c.pattern.name: c for c in fast._compiled}
    text = "MRN: 12345678. Her daughter Ann Lee called on 3/4/2021."
    scan = fast._words.scan(text)
    covered = {rx for rx in fast._words.patterns if scan.covers(rx)}
    assert len(covered) >= 40
    assert by_name["id_prefixed"].regex in covered and by_name["relative"].anchor in covered
    assert by_name["date_mdy"].regex not in covered and by_name["date_mdy"].fast is not None
    assert [m.span() for m in scan.finditer(by_name["id_prefixed"].regex)] == [
        m.span() for m in by_name["id_prefixed"].regex.finditer(text)
    ]
