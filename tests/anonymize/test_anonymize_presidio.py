"""Our keyed operator inside a stock Presidio AnonymizerEngine (presidio-anonymizer is installed)."""

from __future__ import annotations

import pytest

pytest.importorskip("presidio_anonymizer")

from presidio_anonymizer import AnonymizerEngine
from presidio_anonymizer.entities import OperatorConfig, RecognizerResult

from tide_core.anonymize.engine import Anonymizer
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.anonymize.presidio_operators import keyed_operator_class

KA = keyring_for_tests("study1", "k1", "presidio-a")
TEXT = "John Smith was seen on 03/04/2021, phone (650) 555-1234, SSN 123-45-6789."


def _results():
    def r(value, entity):
        i = TEXT.index(value)
        return RecognizerResult(entity_type=entity, start=i, end=i + len(value), score=0.9)

    return [
        r("John Smith", "PERSON"),
        r("03/04/2021", "DATE_TIME"),
        r("(650) 555-1234", "PHONE_NUMBER"),
        r("123-45-6789", "US_SSN"),
    ]


def test_presidio_engine_runs_our_keyed_operator_with_the_same_surrogates_as_ours():
    engine = AnonymizerEngine()
    engine.add_anonymizer(keyed_operator_class(KA))
    res = engine.anonymize(TEXT, _results(), {"DEFAULT": OperatorConfig("tide_keyed", {"patient_id": "p1"})})
    ours = Anonymizer(KA)
    expected = {
        "PERSON": ours.replace_value("PATIENT", "John Smith", "p1")[0],
        "DATE_TIME": ours.replace_value("DATE", "03/04/2021", "p1")[0],
        "PHONE_NUMBER": ours.replace_value("PHONE", "(650) 555-1234", "p1")[0],
        "US_SSN": ours.replace_value("ID", "123-45-6789", "p1")[0],
    }
    for item in res.items:
        assert item.operator == "tide_keyed"
        assert item.text == expected[item.entity_type]
        assert res.text[item.start : item.end] == item.text
    for original in ("John Smith", "03/04/2021", "555-1234", "123-45-6789"):
        assert original not in res.text
    again = engine.anonymize(TEXT, _results(), {"DEFAULT": OperatorConfig("tide_keyed", {"patient_id": "p1"})})
    assert again.text == res.text  # keyed and deterministic, unlike presidio's hash/encrypt


def test_key_material_is_not_in_operator_params_and_unknown_entities_fail():
    cls = keyed_operator_class(KA, name="tide_keyed_2", patient_id="p1")
    config = OperatorConfig("tide_keyed_2", {"label": "ID"})
    assert KA.subkey("id").hex() not in repr(config)
    engine = AnonymizerEngine()
    engine.add_anonymizer(cls)
    i = TEXT.index("123-45-6789")
    out = engine.anonymize(TEXT, [RecognizerResult("SOMETHING", i, i + 11, 0.9)], {"SOMETHING": config})
    assert "123-45-6789" not in out.text
    from tide_core.errors import AnonymizationError

    with pytest.raises(AnonymizationError):
        engine.anonymize(
            TEXT, [RecognizerResult("SOMETHING", i, i + 11, 0.9)], {"SOMETHING": OperatorConfig("tide_keyed_2", {})}
        )
