"""The normalised view recognition runs on (``tide_core.text.normalize``): offset map, recall
under injected format characters, and the issue's two cases end to end through the anonymizer."""

from __future__ import annotations

import random
import re

import pytest

from tide_core.anonymize.engine import Anonymizer
from tide_core.anonymize.keys import KeyRing
from tide_core.assurance.screen import screen_released
from tide_core.config import rules_specs
from tide_core.engine.recognition import recognize_notes
from tide_core.recognizers.registry import create
from tide_core.spans import Note
from tide_core.synth import generate_heldout_dataset
from tide_core.text.normalize import is_format_char, normalize, normalize_surface

ZW = "\u200b"
FORMAT_CHARS = "\u200b\u200c\u200d\u200e\u200f\u2060\ufeff\u00ad"


# -- offset map -------------------------------------------------------------------------------


def test_normal_text_is_the_identity_view():
    for text in ("Pt John Smith, MRN 1234567", "José Müller, 37°C, naïve", ""):
        v = normalize(text)
        assert v.identity and v.text is text and v.starts is None
        assert v.to_original(3, 7) == (3, 7) and v.to_view(3, 7) == (3, 7)


def test_format_characters_are_removed_and_mapped_exactly():
    text = f"(617) 555{ZW}-0199 x\u00ady\u2060z\ufeff"
    v = normalize(text)
    assert v.text == "(617) 555-0199 xyz"
    for i, ch in enumerate(v.text):  # every view char comes from an original extent holding it
        s, e = v.extent(i)
        assert ch in text[s:e]
    # the phone's view span maps to an original extent that swallows the U+200B inside it
    a = v.text.index("555")
    assert v.to_original(a, a + 8) == (6, 15) and text[6:15] == f"555{ZW}-0199"
    assert v.to_view(6, 15) == (a, a + 8)
    # a format character just outside a span stays outside; one alone maps to nothing
    assert v.to_original(a, a + 3) == (6, 9)
    assert v.to_view(9, 10) is None


def test_nfkc_digits_and_expansions():
    v = normalize("MRN \uff14\uff18\uff12\uff11 \ufb01le \u0663\u0664")  # fullwidth, ligature, Arabic-Indic
    assert v.text == "MRN 4821 file 34"
    i = v.text.index("fi")
    assert v.extent(i) == v.extent(i + 1) == (9, 10)  # both letters of the ligature map to it
    assert v.to_original(i, i + 1) == (9, 10)


def test_look_alikes_fold_in_latin_tokens_only():
    assert normalize("Smіth").text == "Smith"  # Cyrillic і in a Latin token
    assert normalize("МRN 12О4").text == "MRN 12O4"  # Cyrillic М and О next to Latin letters / digits
    assert normalize("Дмитрий Петров").identity  # a Cyrillic name is left alone
    assert normalize("Jоhn Ρetrov").text == "John Petrov"  # Greek Ρ


def test_combining_marks_compose_across_removed_characters():
    v = normalize(f"Jose{ZW}\u0301 ok")
    assert v.text == "José ok" and v.to_original(0, 4) == (0, 6)
    assert normalize("Jose\u0301").text == "José"


def test_spans_past_the_view_stay_past_the_original():
    v = normalize(f"ab{ZW}c")
    assert v.to_original(2, 5) == (3, 6)  # the engine's bounds check still rejects it
    assert v.to_original(4, 5) == (5, 6)


def test_random_text_map_is_exact_and_idempotent():
    rng = random.Random(11)
    alphabet = "aB3 -.,\n" + FORMAT_CHARS + "\uff11\u0301é\u00a0оΟ\ufb01"
    for _ in range(400):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        v = normalize(text)
        assert normalize(v.text).text == v.text  # idempotent
        assert all(not is_format_char(c) for c in v.text)
        if v.identity:
            continue
        prev_end = 0
        for i in range(len(v.text)):
            s, e = v.extent(i)
            assert 0 <= s < e <= len(text) and s >= prev_end - (e - s)  # ordered, in range
            prev_end = e
        # every removed character lies in no extent or inside one; every kept one is in an extent
        covered = {k for i in range(len(v.text)) for k in range(*v.extent(i))}
        for k, ch in enumerate(text):
            if not is_format_char(ch):
                assert k in covered
        # a view span round-trips through the original
        if v.text:
            a = rng.randrange(len(v.text))
            b = rng.randint(a + 1, len(v.text))
            s, e = v.to_original(a, b)
            va, vb = v.to_view(s, e)
            assert va <= a and vb >= b


# -- recognition under injected format characters --------------------------------------------


@pytest.fixture(scope="module")
def corpus_and_recognizers():
    data = generate_heldout_dataset(200, seed=23)
    recs = []
    for spec in rules_specs():
        spec = dict(spec)
        if spec["name"] == "tide.known_phi":
            spec.pop("patients_table")
            spec["rows"] = list(data.patients)
        rec = create(spec)
        rec.load()
        recs.append(rec)
    return data, recs


def _inject(text: str, spans, rng: random.Random) -> tuple[str, list[int]]:
    """Insert 1-2 format characters at random positions strictly inside every gold span;
    returns the new text and the new index of every original character."""
    at: dict[int, int] = {}
    for s in spans:
        if s.end - s.start >= 2:
            for _ in range(rng.randint(1, 2)):
                p = rng.randint(s.start + 1, s.end - 1)
                at[p] = at.get(p, 0) + 1
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        out.extend(rng.choice(FORMAT_CHARS) for _ in range(at.get(i, 0)))
        where.append(len(out))
        out.append(ch)
    return "".join(out), where


def _covered_gold(gold, batch, where=None) -> int:
    n = 0
    for doc in gold:
        cov = {k for s in batch.spans.get(doc.note_id, []) for k in range(s.start, s.end)}
        idx = where[doc.note_id] if where else None
        for g in doc.spans:
            n += sum(1 for k in range(g.start, g.end) if (idx[k] if idx else k) in cov)
    return n


def test_format_characters_inside_gold_spans_change_no_recall(corpus_and_recognizers):
    data, recs = corpus_and_recognizers
    rng = random.Random(7)
    plain = [Note(d.note_id, d.patient_id, d.text, d.metadata) for d in data.gold]
    injected, where = [], {}
    for d in data.gold:
        text, idx = _inject(d.text, d.spans, rng)
        injected.append(Note(d.note_id, d.patient_id, text, d.metadata))
        where[d.note_id] = idx
    n_injected = sum(len(n.text) for n in injected) - sum(len(n.text) for n in plain)
    assert n_injected > 1000

    base = recognize_notes(plain, recs)
    hard = recognize_notes(injected, recs)
    assert not base.failed() and not hard.failed()
    covered = _covered_gold(data.gold, base)
    assert covered > 0.9 * sum(g.end - g.start for d in data.gold for g in d.spans)
    assert _covered_gold(data.gold, hard, where) == covered  # exactly the same gold characters
    # and the same spans, up to the swallowed format characters
    for d in data.gold:
        idx = where[d.note_id]
        a = [(idx[s.start], s.label) for s in base.spans[d.note_id]]
        b = [(s.start, s.label) for s in hard.spans[d.note_id]]
        assert a == b


# -- the two cases end to end ---------------------------------------------------------


PHONE = "(617) 555-0199"
MRN = "48213907"


@pytest.fixture(scope="module")
def case_recognizers():
    row = {"patient_id": "p1", "first_name": "Wendell", "last_name": "Okonkwo", "mrn": MRN, "phone": PHONE}
    recs = [create({"name": "tide.regex"}), create({"name": "tide.known_phi", "rows": [row]})]
    for r in recs:
        r.load()
    return recs


def test_zero_width_phone_and_mrn_are_replaced(case_recognizers):
    text = f"Mr. Okonkwo called from (617) 555{ZW}-0199 today. MRN: 4821{ZW}3907. Follow up in 2 weeks."
    note = Note("n1", "p1", text, {"note_date": "2024-05-01"})
    batch = recognize_notes([note], case_recognizers)
    spans = batch.spans["n1"]
    phone_at, mrn_at = text.index("(617)"), text.index("4821")
    phone_end, mrn_end = phone_at + len(PHONE) + 1, mrn_at + len(MRN) + 1
    assert any(s.start <= phone_at and s.end >= phone_end for s in spans)  # whole extent, U+200B included
    assert any(s.start <= mrn_at and s.end >= mrn_end for s in spans)

    anon = Anonymizer(KeyRing("study", "k1", bytes(range(1, 33))))
    released = anon.anonymize(note, spans)
    out = released.text
    assert ZW not in out and "Okonkwo" not in out
    for run in ("(617)", "555-0199", "0199", "4821", "3907", "48213907"):  # no original digit run survives
        assert run not in out
    assert re.sub(r"\D", "", out).count("6175550199") == 0
    labels = {r.label for r in released.spans}
    assert {"PHONE", "ID"} <= labels


def test_surrogate_is_computed_from_the_normalised_surface(case_recognizers):
    anon = Anonymizer(KeyRing("study", "k1", bytes(range(1, 33))))
    plain = Note("n1", "p1", f"call {PHONE} now", {})
    split = Note("n1", "p1", f"call (617) 555{ZW}-0199 now", {})
    outs = []
    for note in (plain, split):
        spans = recognize_notes([note], case_recognizers).spans["n1"]
        outs.append(anon.anonymize(note, spans).text)
    assert outs[0] == outs[1]  # same surrogate, and the U+200B went with the value
    assert normalize_surface("\uff14\uff18\uff12\uff11") == "4821"


def test_residual_screen_sees_through_format_characters(case_recognizers):
    released = Note("r1", "p1", f"reach me at (617) 555{ZW}-0199", {})
    result = screen_released([released], case_recognizers[:1], surrogate_aware=False)
    assert result.hits_by_label.get("PHONE") == 1 and result.flagged_note_ids == ["r1"]
