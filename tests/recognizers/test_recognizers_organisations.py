from tide_core.recognizers.registry import create
from tide_core.spans import Note


def found(text):
    rec = create({"name": "tide.org"})
    return [text[s.start : s.end] for s in rec.recognize(Note("n", "p", text))]


def test_suffix_and_cue_forms():
    text = (
        "Occupation: forklift operator, Keystone Auto Parts. She is enrolled at Cedar Valley State "
        "University. Retired Ironclad Steel Works employee. Works at BrightStar Daycare on weekends. "
        "Letter for the Salvation Army provided."
    )
    assert found(text) == [
        "Keystone Auto Parts",
        "Cedar Valley State University",
        "Ironclad Steel Works",
        "BrightStar Daycare",
        "the Salvation Army",
    ]


def test_all_caps_notes():
    assert found("HE IS ENROLLED AT GARFIELD HIGH SCHOOL. WORKS AT STERLING JEWELERS.") == [
        "GARFIELD HIGH SCHOOL",
        "STERLING JEWELERS",
    ]


def test_medical_facilities_people_and_lines_are_not_organisations():
    text = (
        "Seen at Bayside Pulmonary Associates and Lakeshore University Medical Center. "
        "Daughter Noemi Mills visited. State: MO\nService date 3/4/2021. Admitted to trauma service."
    )
    assert found(text) == []


def test_spans_never_cross_lines_or_keep_trailing_punctuation():
    text = "Employer: Delta Freight Lines.\nPlan: rest."
    assert found(text) == ["Delta Freight Lines"]


def test_employer_cue_overrides_medical_words_but_not_facilities():
    text = (
        "Occupation: coder, Integra Medical Billing. After a shift at Cardinal Health he fell. "
        "Works at Lakeshore General Hospital."
    )
    assert found(text) == ["Integra Medical Billing", "Cardinal Health"]


def test_same_extent_other_beats_hospital_in_resolution():
    from tide_core.spans import Span
    from tide_core.steps.resolve import resolve_spans

    got = resolve_spans([Span("n", 0, 10, "HOSPITAL", 0.9, "m@1"), Span("n", 0, 10, "OTHER", 0.7, "tide.org@1")])
    assert [s.label for s in got] == ["OTHER"]


def test_firms_realtors_and_telecoms_by_their_type_word():
    text = (
        "Payment to Mukherjee & Gallagher LLP was made. Ask Granite Telecom for the bill. "
        "Listed with Fontaine Realty in May. GUERRERO & JABLONSKI LLP sent it."
    )
    spans = found(text)
    for firm in ("Mukherjee & Gallagher LLP", "Granite Telecom", "Fontaine Realty", "GUERRERO & JABLONSKI LLP"):
        assert any(firm in s for s in spans), firm
    assert all(s.endswith(("LLP", "Telecom", "Realty")) for s in spans)


def test_a_new_job_cue_takes_the_employer_but_not_a_dose_or_a_procedure():
    assert found("Her cousin starts at Barraclough Mahlangu next week.") == ["Barraclough Mahlangu"]
    assert found("Attempted LP at bedside. Metformin starts at 500 mg daily.") == []
