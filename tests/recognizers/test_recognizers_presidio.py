"""Presidio compatibility in both directions, with real Presidio objects (offline, no spaCy model)."""

from __future__ import annotations

import os

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")

import pytest

presidio_analyzer = pytest.importorskip("presidio_analyzer")

from presidio_analyzer import AnalyzerEngine, EntityRecognizer, Pattern, PatternRecognizer, RecognizerRegistry  # noqa: E402
from presidio_analyzer.nlp_engine import NoOpNlpEngine  # noqa: E402
from presidio_analyzer.predefined_recognizers import EmailRecognizer, UsSsnRecognizer  # noqa: E402

from tide_core.errors import ConfigError  # noqa: E402
from tide_core.recognizers import registry  # noqa: E402
from tide_core.recognizers.presidio_adapter import PresidioRecognizerAdapter, as_presidio_recognizer, presidio_engine  # noqa: E402
from tide_core.recognizers.regex_recognizer import RegexRecognizer  # noqa: E402
from tide_core.spans import Note  # noqa: E402

TEXT = "Mail john.doe@example.com or call 555-123-4567 on 03/04/2021. MRN: 12345678. SSN 078-05-1120."


def test_presidio_builtin_recognizer_as_tide():
    rec = PresidioRecognizerAdapter(EmailRecognizer())
    assert rec.supported_entities == ["EMAIL"] and rec.name == "presidio.EmailRecognizer"
    spans = rec.recognize(Note("n1", "p1", TEXT))
    assert [(TEXT[s.start : s.end], s.label) for s in spans] == [("john.doe@example.com", "EMAIL")]
    assert spans[0].recognizer.startswith("presidio.EmailRecognizer@")
    assert rec.analyze(TEXT, ["PHONE"]) == []


def test_pattern_recognizer_with_label_map_and_fingerprint():
    pr = PatternRecognizer(supported_entity="SITE_MRN", patterns=[Pattern("mrn", r"\b\d{8}\b", 0.6)])
    rec = PresidioRecognizerAdapter(pr, {"SITE_MRN": "ID"})
    assert [(r.entity_type, TEXT[r.start : r.end]) for r in rec.analyze(TEXT)] == [("ID", "12345678")]
    pr2 = PatternRecognizer(supported_entity="SITE_MRN", patterns=[Pattern("mrn", r"\b\d{7}\b", 0.6)])
    assert PresidioRecognizerAdapter(pr2, {"SITE_MRN": "ID"}).fingerprint() != rec.fingerprint()
    # an entity with no TIDE label is dropped
    assert PresidioRecognizerAdapter(pr).analyze(TEXT) == []
    with pytest.raises(ConfigError):
        PresidioRecognizerAdapter(pr, {"SITE_MRN": "MRN"})


def test_tide_recognizer_inside_presidio_registry_and_engine():
    tide_in_presidio = as_presidio_recognizer(RegexRecognizer())
    assert isinstance(tide_in_presidio, EntityRecognizer)
    reg = RecognizerRegistry(supported_languages=["en"])
    reg.add_recognizer(tide_in_presidio)
    reg.add_recognizer(UsSsnRecognizer())
    engine = AnalyzerEngine(
        registry=reg,
        nlp_engine=NoOpNlpEngine(models=[{"lang_code": "en", "model_name": "none"}]),
        supported_languages=["en"],
    )
    results = engine.analyze(TEXT, language="en")
    got = {(r.entity_type, TEXT[r.start : r.end]) for r in results}
    assert {
        ("EMAIL", "john.doe@example.com"),
        ("PHONE", "555-123-4567"),
        ("DATE", "03/04/2021"),
        ("ID", "12345678"),
    } <= got
    names = {r.recognition_metadata.get("recognizer_name") for r in results}
    assert f"tide.regex@{RegexRecognizer.version}" in names
    only = engine.analyze(TEXT, language="en", entities=["DATE"])
    assert {r.entity_type for r in only} == {"DATE"}


def test_presidio_engine_helper_mixes_both_kinds():
    engine = presidio_engine([RegexRecognizer(labels=["DATE"]), EmailRecognizer()])
    got = {(r.entity_type, TEXT[r.start : r.end]) for r in engine.analyze(TEXT, language="en")}
    assert ("DATE", "03/04/2021") in got and ("EMAIL_ADDRESS", "john.doe@example.com") in got


def test_registry_presidio_spec():
    rec = registry.create({"name": "presidio", "class": "presidio_analyzer.predefined_recognizers.EmailRecognizer"})
    assert [TEXT[r.start : r.end] for r in rec.analyze(TEXT)] == ["john.doe@example.com"]
    rec = registry.create(
        {
            "name": "presidio",
            "class": "presidio_analyzer.PatternRecognizer",
            "label_map": {"SITE_MRN": "ID"},
            "options": {"supported_entity": "SITE_MRN", "patterns": [Pattern("mrn", r"\b\d{8}\b", 0.6)]},
        }
    )
    assert [(r.entity_type, TEXT[r.start : r.end]) for r in rec.analyze(TEXT)] == [("ID", "12345678")]
    with pytest.raises(ConfigError) as e:
        registry.create({"name": "presidio"})
    assert e.value.code == "E242"
    with pytest.raises(ConfigError) as e:
        registry.create({"name": "presidio", "class": "presidio_analyzer.NoSuchRecognizer"})
    assert e.value.code == "E234"


def test_dotted_factory_returning_presidio_recognizer_is_wrapped():
    rec = registry.create({"name": "presidio_analyzer.predefined_recognizers:EmailRecognizer"})
    assert isinstance(rec, PresidioRecognizerAdapter)


def test_one_presidio_label_map_for_adapter_and_operator():
    """The adapter and the keyed operator read the same map; every entity maps to a TIDE label, and
    the operator replaces an entity the map knows (US_NPI, once missing from the operator's copy)."""
    from presidio_anonymizer import AnonymizerEngine
    from presidio_anonymizer.entities import OperatorConfig, RecognizerResult

    from tide_core.anonymize import presidio_operators
    from tide_core.anonymize.keys import keyring_for_tests
    from tide_core.presidio_labels import PRESIDIO_TO_TIDE
    from tide_core.recognizers import presidio_adapter
    from tide_core.types import LABELS

    assert presidio_adapter.DEFAULT_LABEL_MAP is PRESIDIO_TO_TIDE is presidio_operators.PRESIDIO_TO_TIDE
    assert set(PRESIDIO_TO_TIDE.values()) <= set(LABELS)
    engine = AnonymizerEngine()
    engine.add_anonymizer(presidio_operators.keyed_operator_class(keyring_for_tests("s", "k", 1)))
    text = "NPI 1234567893 on file"
    out = engine.anonymize(
        text, [RecognizerResult("US_NPI", 4, 14, 0.9)], {"DEFAULT": OperatorConfig("tide_keyed", {"patient_id": "p1"})}
    )
    assert "1234567893" not in out.text and out.text.startswith("NPI ") and out.text.endswith(" on file")
