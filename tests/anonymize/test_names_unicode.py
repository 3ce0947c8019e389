"""Person names with Latin letters beyond ASCII: "Jan Novák", "Łukasz Żółć", "José Núñez".

The letters come from the Unicode database (``unicodedata``: general category and name over the
Basic Multilingual Plane), not from the recognizer's classes.  The last test runs ``tide run
--preset rules`` on DuckDB, the entity-encoded form ``Nov&aacute;k`` included.
"""

from __future__ import annotations

import unicodedata

import pyarrow as pa
import pytest

from tide_core.anonymize.keys import FileKeyProvider
from tide_core.cli.main import main
from tide_core.io.open import open_warehouse
from tide_core.recognizers.person_names import PersonNameRecognizer


def _latin(*categories: str) -> list[str]:
    """The BMP letters of ``categories`` whose Unicode name says LATIN, ASCII's left out."""
    return [
        chr(i)
        for i in range(0x80, 0x10000)
        if unicodedata.category(chr(i)) in categories and unicodedata.name(chr(i), "").startswith("LATIN ")
    ]


UPPER = _latin("Lu", "Lt")
LOWER = _latin("Ll")


@pytest.fixture(scope="module")
def rec() -> PersonNameRecognizer:
    r = PersonNameRecognizer()
    r.load()
    return r


def _found(rec: PersonNameRecognizer, text: str) -> set[str]:
    return {text[r.start : r.end] for r in rec.analyze(text)}


def test_the_letter_classes_are_the_latin_letters_of_the_unicode_database(rec):
    assert len(UPPER) > 400 and len(LOWER) > 600  # the database, not a hand list
    missed = []
    for c in LOWER:  # a lower-case letter inside a surname, in title case and after a given name
        name = f"Jan Nov{c}k"
        if name not in _found(rec, f"{name} called the clinic about his refill."):
            missed.append(c)
    for c in UPPER:  # an upper-case letter opening the surname, then the same in capitals
        for name in (f"Jan {c}ovak", f"JAN NOVAK{c}"):
            if name not in _found(rec, f"{name} called the clinic about his refill."):
                missed.append(c)
    assert not missed, "".join(missed)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Jan Novák called the clinic about his refill.", "Jan Novák"),
        ("José Núñez reports dizziness since Monday.", "José Núñez"),
        ("Zoë Brontë presented with a dry cough.", "Zoë Brontë"),
        ("Seen with Dr. Łukasz Żółć in cardiology.", "Łukasz Żółć"),
        ("Chart of Novák, Jan reviewed with the team.", "Novák, Jan"),
        ("NÚÑEZ, JOSÉ A was admitted overnight.", "NÚÑEZ, JOSÉ A"),
        ("Nurse Émilie Dubé notified of the result.", "Émilie Dubé"),
        ("Ángel Muñoz, MD reviewed the film.", "Ángel Muñoz"),
        ("Labs are back, all normal.\nBest regards,\nŁukasz\n", "Łukasz"),
        ("Hi Zoë,\nyour labs are back.", "Zoë"),
        ("Refill sent to the pharmacy.\n-- Jiří Dvořák\n", "Jiří Dvořák"),
        ("spoke with josé núñez about the refill", "josé núñez"),
        ("Mail from Ondřej Šťastný <os@example.org> about the bill", "Ondřej Šťastný"),
    ],
)
def test_names_with_diacritics_are_found_in_the_frames_ascii_names_are(rec, text, name):
    assert name in _found(rec, text)


@pytest.mark.parametrize("field", ["Next of kin: Núñez", "Emergency contact: Sepúlveda", "Caller: Garzón"])
def test_a_surname_with_diacritics_is_known_by_its_plain_spelling(rec, field):
    """Labelled fields take only known names; the surname list spells "Nunez", "Sepulveda", "Garzon"."""
    text = f"{field}\nCalled back about the appointment."
    assert field.split(": ")[1] in _found(rec, text)


def test_a_distinctive_town_before_a_country_is_not_surname_given(rec):
    for text in ("Moved from Ratlam, India last year.", "Moved from Fatehābād, India last year."):
        assert not _found(rec, text), text
    assert "Garzón, India" in _found(rec, "Chart of Garzón, India reviewed.")  # a surname, a given name


@pytest.mark.parametrize("role", ["Médecin :", "MÉDECIN:", "Médico:", "Ärztin:"])
def test_a_role_label_with_diacritics_is_not_a_speaker(rec, role):
    """A labelled line "Médecin : Dr. X" names X, not the label (a speaker frame takes a rare word)."""
    found = _found(rec, f"Transfer date: 08-Jan-2022\n{role} Dr. Amara Okonkwo\nPassport no. 372057663")
    assert not any(role.rstrip(" :-") in f for f in found), found


#: Notes for ``tide run --preset rules``: the name words that must not survive in each.
NOTES = {
    "n1": ("Patient Łukasz Żółć was seen today for chest pain.", ["Łukasz", "Żółć"]),
    "n2": ("Patient Jan Nov&aacute;k was seen today for chest pain.", ["Nov&aacute;k", "Nov", "aacute"]),
    "n3": ("Seen with Dr. Łukasz Żółć in cardiology.", ["Łukasz", "Żółć"]),
    "n4": ("Chart of Núñez, José reviewed with the team.", ["Núñez", "José"]),
    "n5": ("Labs are back, all normal.\nBest regards,\nZoë Brontë\n", ["Zoë", "Brontë"]),
    "n6": ("Refill sent to the pharmacy.\n-- Jiří Dvořák\n", ["Jiří", "Dvořák"]),
    "n7": ("Jan Nov&aacute;k called the clinic about his refill.", ["Nov&aacute;k", "Nov", "aacute"]),
}


def test_tide_run_rules_replaces_names_with_diacritics(tmp_path):
    url = f"duckdb:{tmp_path / 'wh.duckdb'}"
    wh = open_warehouse(url)
    rows = [{"note_id": k, "patient_id": "p1", "text": t, "note_date": "2021-03-04"} for k, (t, _) in NOTES.items()]
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
    assert set(released) == set(NOTES)
    leaks = {k: [w for w in words if w in released[k]] for k, (_, words) in NOTES.items()}
    assert not any(leaks.values()), leaks
    # the words around the name are kept: the note is released, not blanked
    assert "chest pain" in released["n1"] and "cardiology" in released["n3"] and "pharmacy" in released["n6"]
