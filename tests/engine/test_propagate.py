from itertools import pairwise

from tide_core.spans import Note, Span
from tide_core.steps.propagate import QUALIFIED, propagate_spans


def spans_of(text, *pairs):
    out = []
    for surface, label in pairs:
        i = text.index(surface)
        out.append(Span("n", i, i + len(surface), label, 0.9, "r@1"))
    return out


def surfaces(text, spans):
    return [(text[s.start : s.end], s.label) for s in spans]


def test_other_mentions_of_a_recognized_name_are_added():
    text = "Theresa Makinen was seen. Ms. Makinen's daughter called; MAKINEN agreed. Makinenberg Rd is not her."
    got = propagate_spans(text, spans_of(text, ("Theresa Makinen", "PATIENT")))
    assert surfaces(text, got) == [("Theresa Makinen", "PATIENT"), ("Makinen", "PATIENT"), ("MAKINEN", "PATIENT")]
    assert [s.recognizer for s in got][1:] == [QUALIFIED, QUALIFIED]


def test_adjacent_given_name_is_absorbed():
    text = "Surrogate: THERESA MAKINEN (sister)."
    got = propagate_spans(text, spans_of(text, ("MAKINEN", "PATIENT")))
    assert surfaces(text, got) == [("THERESA MAKINEN", "PATIENT")]


def test_identifier_surfaces_propagate_but_short_ones_do_not():
    text = "MRN 12345678. Repeat MRN 12345678. Bed 12, ID 12 again 12."
    got = propagate_spans(text, spans_of(text, ("12345678", "ID"), ("12", "ID")))
    assert [t for t, _ in surfaces(text, got)].count("12345678") == 2
    assert [t for t, _ in surfaces(text, got)].count("12") == 1


def test_never_overlaps_existing_spans_and_keeps_them():
    text = "Dr. Rose Hill at Rose Hill Clinic; rose garden."
    base = [Span("n", 4, 13, "DOCTOR", 0.9, "r@1"), Span("n", 17, 33, "HOSPITAL", 0.9, "g@1")]
    got = propagate_spans(text, base)
    assert got == sorted(base)  # nothing to add without overlap
    for a, b in pairwise(got):
        assert a.end <= b.start
    assert propagate_spans(text, []) == []


def test_lowercase_words_are_not_names():
    text = "Rose Smith has a rose rash. Smith smiled; smithing is a hobby."
    got = propagate_spans(text, spans_of(text, ("Rose Smith", "PATIENT")))
    assert surfaces(text, got) == [("Rose Smith", "PATIENT"), ("Smith", "PATIENT")]


def test_engine_drops_spans_without_letters_or_digits():
    from tide_core.engine.recognition import finish_note

    text = "-- ABENA ROSE MD"
    spans = [Span("n", 0, 2, "DOCTOR", 0.8, "m@1"), Span("n", 3, 13, "DOCTOR", 0.9, "m@1")]
    got, record = finish_note("n", spans, None, None, text)
    assert record.ok and [(s.start, s.end) for s in got] == [(3, 13)]


def test_tidy_splits_lines_and_people_and_trims_punctuation():
    from tide_core.steps.span_tidy import tidy_spans

    text = "Dr. Palmer\n\nSurrogate: Seen with Dr Parker and MASON, AMANDA. -- WARD, YURI\nPhone (617) 555-0100"

    def sp(sub, label):
        i = text.index(sub)
        return Span("n", i, i + len(sub), label, 0.9, "m@1")

    got = tidy_spans(
        text,
        [
            sp("Palmer\n\nSurrogate", "DOCTOR"),
            sp("Parker and MASON, AMANDA", "DOCTOR"),
            sp("-- WARD, YURI", "DOCTOR"),
            sp("(617) 555-0100", "PHONE"),
        ],
    )
    assert [text[s.start : s.end] for s in got] == [
        "Palmer",
        "Surrogate",
        "Parker",
        "MASON, AMANDA",
        "WARD, YURI",
        "(617) 555-0100",
    ]


def test_tidy_drops_person_spans_without_letters_but_keeps_numeric_values():
    from tide_core.steps.span_tidy import tidy_spans

    text = "Signed 33709. MRN 33709."
    person = Span("n", 7, 13, "DOCTOR", 0.9, "m@1")  # "33709." as a name: no surrogate possible
    ident = Span("n", 18, 23, "ID", 0.9, "m@1")  # the same digits as an identifier stay
    assert tidy_spans(text, [person, ident]) == [ident]


def test_tidy_trims_ages_to_digits_and_drops_phone_stubs():
    from tide_core.steps.span_tidy import tidy_spans

    text = "Mr. Rosenthal, 39M, call +1\n402 636 1003"
    age = Span("n", 15, 18, "AGE", 0.9, "m@1")
    phone = Span("n", 25, 40, "PHONE", 0.9, "m@1")
    got = [(text[s.start : s.end], s.label) for s in tidy_spans(text, [age, phone])]
    assert got == [("39", "AGE"), ("402 636 1003", "PHONE")]


def test_tidy_trims_credentials_off_names():
    from tide_core.steps.span_tidy import tidy_spans

    text = "| 98.6F | Hamish RN |\nBest,\nYusuf Schoenberg MB ChB MRCP\n"
    a = text.index("Hamish")
    b = text.index("Yusuf")
    spans = [Span("n", a, a + 9, "PATIENT", 0.9, "m@1"), Span("n", b, b + 29, "PATIENT", 0.9, "m@1")]
    assert [text[s.start : s.end] for s in tidy_spans(text, spans)] == ["Hamish", "Yusuf Schoenberg"]


def test_tidy_takes_an_initial_into_the_name_after_it():
    from tide_core.steps.span_tidy import tidy_spans

    text = "98%\t36.7\tP. Falkenrath 05/17\n-- d. valdivia\nAX. Reyes, e.g. Lopez, A.  Winter, MRN. Diaz"
    spans = [
        Span("n", text.index(w), text.index(w) + len(w), "DOCTOR", 0.9, "m@1")
        for w in ("Falkenrath", "valdivia", "Reyes", "Lopez", "Winter", "Diaz")
    ]
    got = [text[s.start : s.end] for s in tidy_spans(text, spans)]
    # one letter, a period and one space right before the name; not the end of a word or an abbreviation
    assert got == ["P. Falkenrath", "d. valdivia", "Reyes", "Lopez", "Winter", "Diaz"]
    place = Span("n", text.index("Falkenrath"), text.index("Falkenrath") + 10, "LOCATION", 0.9, "r@1")
    assert tidy_spans(text, [place]) == [place]  # only people take an initial


def test_tidy_turns_four_digit_ages_into_ids_and_the_note_is_released():
    """A model's AGE on a clock time ("Time seen: 1045") is no age: it becomes an ID span, the
    anonymizer gives it a format-preserving surrogate, and the note is not quarantined (E420)."""
    from tide_core.anonymize.engine import Anonymizer
    from tide_core.anonymize.keys import keyring_for_tests
    from tide_core.steps.span_tidy import tidy_spans

    text = "Time seen: 1045\nNaoko Gaines, 32 y/o, 104 yo"
    clock = Span("n", 11, 15, "AGE", 0.9, "m@1")
    age = Span("n", text.index("32"), text.index("32") + 2, "AGE", 0.9, "m@1")
    old = Span("n", text.index("104"), text.index("104") + 3, "AGE", 0.9, "m@1")  # three digits: an age
    got = tidy_spans(text, [clock, age, old])
    assert [(text[s.start : s.end], s.label) for s in got] == [("1045", "ID"), ("32", "AGE"), ("104", "AGE")]
    anon = Anonymizer(keyring_for_tests("s", "k", 1))
    surrogate, _ = anon.replace_value("ID", "1045")
    assert surrogate != "1045" and surrogate.isdigit() and len(surrogate) == 4


def test_tidy_keeps_locations_of_unit_words_and_the_anonymizer_replaces_them():
    """A model's LOCATION on "FL" (Florida, also "floor"), "South" (cut from "South Hadley") or
    "Rm" is kept: dropping it would release the text as it stands.  The location surrogate
    replaces each such word (a state by a state, the rest by a place name), so no note is
    quarantined for a surrogate equal to its original (E405)."""
    from tide_core.anonymize.engine import Anonymizer
    from tide_core.anonymize.keys import keyring_for_tests
    from tide_core.steps.span_tidy import tidy_spans

    text = "Naples, FL 32202. Lives in South\nHadley. Springfield Hospital, Rm 8A; NW; Ave; street"
    words = ("FL", "South", "Rm", "NW", "Ave", "street")
    spans = [Span("n", text.index(w), text.index(w) + len(w), "LOCATION", 0.9, "m@1") for w in words]
    kept = tidy_spans(text, spans)
    assert [text[s.start : s.end] for s in kept] == list(words)
    anon = Anonymizer(keyring_for_tests("s", "k", 1))
    for w in words:
        surrogate, _ = anon.replace_value("LOCATION", w)
        assert surrogate and surrogate.casefold() != w.casefold(), w
    released = anon.anonymize(Note("n", "p", text), kept).text
    for w in ("Rm", "NW", "Ave", "street"):
        assert f" {w};" not in released and not released.endswith(w)


def test_a_propagated_name_takes_the_initial_before_it_where_that_is_free():
    text = "Seen by Falkenrath today.\n98%\t2\tP. Falkenrath 05/17\nAX. Falkenrath\nQ. Falkenrath"
    found = Span("n", 8, 18, "DOCTOR", 0.9, "m@1")
    q = text.rindex("Q.")
    taken = Span("n", q, q + 2, "ID", 0.9, "r@1")  # the initial already belongs to another span
    out = propagate_spans(text, [found, taken])
    got = [(text[s.start : s.end], s.label) for s in out]
    assert ("P. Falkenrath", "DOCTOR") in got  # the mention with its initial
    assert ("Falkenrath", "DOCTOR") in got and ("AX. Falkenrath", "DOCTOR") not in got  # not a word's end
    assert ("Q.", "ID") in got and ("Q. Falkenrath", "DOCTOR") not in got  # never over another span
    spans = sorted((s.start, s.end) for s in out)
    assert all(a[1] <= b[0] for a, b in pairwise(spans))  # still non-overlapping


def test_only_people_take_an_initial_when_propagated():
    text = "Ref AB12345 sent.\nZ. AB12345 again"
    out = propagate_spans(text, [Span("n", 4, 11, "ID", 0.9, "r@1")])
    assert [text[s.start : s.end] for s in out] == ["AB12345", "AB12345"]
