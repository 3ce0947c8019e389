"""Identifiers with letters and digits of other scripts: a keyed, class-keeping bijection.

Expectations come from the Unicode database (``unicodedata``: category, decimal value, name), not
from the module's alphabets; small domains are enumerated whole, large ones sampled.  The last
test runs ``tide run`` on DuckDB with the rules preset: the notes are released, not quarantined.
"""

from __future__ import annotations

import itertools
import random
import unicodedata

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tide_core.anonymize.engine import Anonymizer
from tide_core.anonymize.identifiers import (
    anonymize_identifier,
    decrypt_identifier,
    encrypt_identifier,
    unicode_alphabet,
)
from tide_core.anonymize.keys import FileKeyProvider, keyring_for_tests
from tide_core.cli.main import main
from tide_core.errors import AnonymizationError
from tide_core.io.open import open_warehouse
from tide_core.spans import Note, Span
from tide_core.text.normalize import normalize_surface

KA = keyring_for_tests("s", "ka", "unicode-ids-a")
KA2 = keyring_for_tests("s", "ka", "unicode-ids-a")  # same material, a fresh object
KB = keyring_for_tests("s", "kb", "unicode-ids-b")

ARABIC_INDIC = "٠١٢٣٤٥٦٧٨٩"
DEVANAGARI = "०१२३४५६७८९"
FULLWIDTH = "０１２３４５６７８９"


def _script(ch: str) -> str:
    return unicodedata.name(ch).split(" ")[0]


def _same_class(a: str, b: str) -> bool:
    """Same class by the Unicode database: a decimal digit of the same run of ten, or a letter of
    the same general category and script word (and both compatibility characters or neither)."""
    if a.isascii() or b.isascii():
        return (a.isdigit(), a.isupper(), a.islower(), a.isascii()) == (
            b.isdigit(),
            b.isupper(),
            b.islower(),
            b.isascii(),
        )
    if unicodedata.category(a) == "Nd":
        da, db = unicodedata.decimal(a), unicodedata.decimal(b, None)
        return db is not None and ord(a) - da == ord(b) - db
    return (
        unicodedata.category(a) == unicodedata.category(b)
        and _script(a) == _script(b)
        and (unicodedata.normalize("NFKC", a) != a) == (unicodedata.normalize("NFKC", b) != b)
    )


def _format_kept(value: str, out: str) -> bool:
    if len(value) != len(out):
        return False
    for a, b in zip(value, out, strict=True):
        if a.isalnum():
            if not b.isalnum() or not _same_class(a, b):
                return False
        elif a != b:
            return False
    return True


SAMPLES = [
    "٣٤٥٦٧٨٩",  # Arabic-Indic MRN
    "١٢٣-٤٥-٦٧٨٩",  # SSN shape in Arabic-Indic digits
    "१२३४५६७८",  # Devanagari
    "ＡＢ１２３４５６",  # fullwidth letters and digits
    "1234５６７8",  # ASCII and fullwidth digits mixed
    "4821-Ж773",  # Cyrillic upper
    "ΑΒΓ/2024/17",  # Greek upper
    "Zoë-4471",  # Latin with a diacritic
    "ملف-١٢٣٤",  # Arabic letters and digits
    "山田-12345",  # CJK
    "홍길동 0042",  # Hangul syllables
    "Ř",  # a single letter: a domain of its class alone
]


@pytest.mark.parametrize("value", SAMPLES)
def test_format_kept_roundtrip_deterministic_and_never_the_original(value):
    out = anonymize_identifier(KA, value)
    assert _format_kept(value, out), (value, out)
    assert out != value
    assert anonymize_identifier(KA2, value) == out  # a pure function of (study, key, value)
    assert decrypt_identifier(KA, out, unicode=True) == value
    # the non-ASCII characters themselves are replaced, not only the ASCII ones
    if any(not c.isascii() and c.isalnum() for c in value) and len(value) > 3:
        assert [c for c in value if not c.isascii()] != [c for c in out if not c.isascii()]


# characters of many classes (ASCII, digits of four scripts, Latin with diacritics, Greek,
# Cyrillic, Arabic, CJK, Hangul, fullwidth) and separators
UNICODE_ID_CHARS = (
    "0123456789AZaz" + ARABIC_INDIC + DEVANAGARI + FULLWIDTH + "ÀÉßéøŠžΑΩαωЖЯжяبيح山田김홍ＡＺｂ" + "-/. :#"
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(alphabet=UNICODE_ID_CHARS, min_size=1, max_size=40), min_size=2, max_size=2).filter(
        lambda vs: all(any(c.isalnum() for c in v) for v in vs)
    )
)
def test_property_format_roundtrip_and_injective(values):
    a, b = values
    oa, ob = anonymize_identifier(KA, a), anonymize_identifier(KA, b)
    assert _format_kept(a, oa) and oa != a
    assert decrypt_identifier(KA, oa, unicode=True) == a and anonymize_identifier(KA2, a) == oa
    assert (oa == ob) == (a == b)  # injective: distinct values never share a surrogate


@pytest.mark.parametrize(
    ("digits", "width"), [(ARABIC_INDIC, 3), (DEVANAGARI, 3), (FULLWIDTH, 3), (ARABIC_INDIC, 6), (FULLWIDTH, 7)]
)
def test_a_digit_class_is_a_bijection_of_its_whole_domain(digits, width):
    """Every value of width ``width`` over one script's digits (up to 10^7: sampled above 10^6)."""
    rng = random.Random(width)
    if width <= 3:
        values = ["".join(p) for p in itertools.product(digits, repeat=width)]
    else:
        values = list({"".join(rng.choice(digits) for _ in range(width)) for _ in range(3000)})
    out = [anonymize_identifier(KA, v) for v in values]
    assert len(set(out)) == len(values)
    assert all(set(o) <= set(digits) for o in out)
    if width <= 3:  # the whole domain: a permutation of it, with no fixed point
        assert set(out) == set(values) and all(o != v for o, v in zip(out, values, strict=True))


def _letters(category: str, script: str) -> list[str]:
    """Letters of one class assigned in the Unicode 3.2 basic plane, by the database (not the module)."""
    ucd = unicodedata.ucd_3_2_0
    return [
        chr(c)
        for c in range(0x80, 0x10000)
        if ucd.category(chr(c)) != "Cn"
        and unicodedata.category(chr(c)) == category
        and ucd.name(chr(c), "").split(" ")[0] == script
        and unicodedata.normalize("NFKC", chr(c)) == chr(c)
    ]


@pytest.mark.parametrize(("category", "script"), [("Lu", "CYRILLIC"), ("Ll", "GREEK"), ("Ll", "LATIN")])
def test_a_letter_class_is_a_bijection_of_its_alphabet(category, script):
    letters = _letters(category, script)
    assert len(letters) > 50
    one = [anonymize_identifier(KA, c) for c in letters]  # one position: the alphabet itself
    assert sorted(one) == sorted(letters) and all(o != c for o, c in zip(one, letters, strict=True))
    pairs = ["".join(p) for p in itertools.product(letters[:40], repeat=2)]  # two positions
    out = [anonymize_identifier(KA, v) for v in pairs]
    assert len(set(out)) == len(pairs) and all(_format_kept(v, o) for v, o in zip(pairs, out, strict=True))


def test_different_keys_give_different_surrogates():
    rng = random.Random(3)
    values = list({"".join(rng.choice(ARABIC_INDIC) for _ in range(8)) for _ in range(500)})
    values += [f"Ж{rng.randrange(10**6):06d}" for _ in range(200)]
    a = [anonymize_identifier(KA, v) for v in values]
    b = [anonymize_identifier(KB, v) for v in values]
    assert sum(x != y for x, y in zip(a, b, strict=True)) >= 0.99 * len(values)


def test_ascii_identifiers_encrypt_exactly_as_before():
    """Values without non-ASCII letters or digits take the same permutation with or without the
    Unicode classes: releases made before keep their surrogates."""
    rng = random.Random(5)
    values = ["123-45-6789", "AB12cd", "MRN 00042", "x", *(f"{rng.randrange(10**9):09d}" for _ in range(200))]
    for v in values:
        assert anonymize_identifier(KA, v) == encrypt_identifier(KA, v, "id", "id")


@pytest.mark.parametrize(
    "value",
    [
        "MRN \U00010400123",  # Deseret capital letter: outside the basic plane
        "ID-\u1e9e42",  # LATIN CAPITAL LETTER SHARP S: assigned after Unicode 3.2
    ],
)
def test_a_letter_without_an_alphabet_still_fails_closed(value):
    ch = next(c for c in value if not c.isascii())
    assert unicode_alphabet(ch) is None
    with pytest.raises(AnonymizationError) as e:
        anonymize_identifier(KA, value)
    assert e.value.code == "E406" and ch not in str(e.value) and ch not in (e.value.hint or "")


def test_non_ascii_digits_stay_quarantined_where_the_caller_does_not_opt_in():
    with pytest.raises(AnonymizationError) as e:
        encrypt_identifier(KA, "12\u0663456")
    assert e.value.code == "E406"


TEXT = "Pt MRN ٣٤٥٦٧٨٩, acct ＡＢ１２３４５６, ref 4821-Ж773 and ΑΒΓ/2024/17 seen."
IDS = ["٣٤٥٦٧٨٩", "ＡＢ１２３４５６", "4821-Ж773", "ΑΒΓ/2024/17"]


def test_engine_round_trip_keeps_offsets_and_the_text_between():
    spans = [Span("n1", TEXT.index(v), TEXT.index(v) + len(v), "ID") for v in IDS]
    out = Anonymizer(KA).anonymize(Note("n1", "p1", TEXT, {"note_date": "2021-03-04"}), spans)
    assert len(out.spans) == len(IDS)
    prev_out, prev_in = 0, 0
    for r, s, v in zip(out.spans, spans, IDS, strict=True):
        assert (r.start, r.end) == (s.start, s.end)
        assert out.text[prev_out : r.out_start] == TEXT[prev_in : s.start]
        sur = out.text[r.out_start : r.out_end]
        # the engine encrypts the normalised value (NFKC, digits of every script read as ASCII)
        nv = normalize_surface(v)
        assert sur == anonymize_identifier(KA, nv) and _format_kept(nv, sur) and sur != nv
        prev_out, prev_in = r.out_end, s.end
    assert out.text[prev_out:] == TEXT[prev_in:]


# identifiers with Greek, Cyrillic, Latin-with-diacritics and CJK letters after a record-number cue:
# before the Unicode classes, each of these notes was quarantined (E406)
ROWS = {
    "greek": "Medical record number: ΩΨ123456.",
    "mixed": "MRN: ΕΚ55Ж10293 seen today.",
    "latin": "Account no. ŠK-83920011 closed.",
    "suffix": "Patient ID: 12345ÄB.",
    "cjk": "MRN: 山田-12345 reviewed.",
    "ascii": "Medical record number: AB123456.",
}
SECRETS = {
    "greek": "ΩΨ123456",
    "mixed": "ΕΚ55Ж10293",
    "latin": "ŠK-83920011",
    "suffix": "12345ÄB",
    "cjk": "山田-12345",
    "ascii": "AB123456",
}


def test_tide_run_releases_notes_with_non_ascii_identifiers(tmp_path):
    url = f"duckdb:{tmp_path / 'wh.duckdb'}"
    wh = open_warehouse(url)
    rows = [{"note_id": k, "patient_id": "p1", "text": t, "note_date": "2021-03-04"} for k, t in ROWS.items()]
    wh.replace_table("notes", pa.Table.from_pylist(rows))
    wh.close()
    FileKeyProvider(tmp_path / "keys").create("s", "k1")
    argv = ["run", "--warehouse", url, "--study", "s", "--key", "k1", "--preset", "rules"]
    assert main([*argv, "--key-dir", str(tmp_path / "keys"), "--no-progress"]) == 0
    wh = open_warehouse(url)
    try:
        out = wh.read_table("tide_deid_notes", ["note_id", "text"], where={"study": "s", "key": "k1"}).to_pylist()
    finally:
        wh.close()
    released = {r["note_id"]: r["text"] for r in out}
    assert set(released) == set(ROWS)
    for note_id, text in released.items():
        secret = SECRETS[note_id]
        assert secret not in text and len(text) == len(ROWS[note_id])
        i = ROWS[note_id].index(secret)
        sur = text[i : i + len(secret)]
        # the class of each character of the normalised value (confusable Greek/Cyrillic capitals
        # beside Latin ones read as Latin, as the recognizers saw them)
        assert _format_kept(normalize_surface(secret), sur), (note_id, sur)
        assert text[:i] == ROWS[note_id][:i] and text[i + len(secret) :] == ROWS[note_id][i + len(secret) :]
        # no letter or digit of the identifier survives in place as a run of 4
        assert not any(secret[j : j + 4] == sur[j : j + 4] for j in range(len(secret) - 3)), (note_id, sur)
