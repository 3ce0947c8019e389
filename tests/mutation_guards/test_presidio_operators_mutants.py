"""The keyed Presidio operator (``tide_core/anonymize/presidio_operators.py``), checked call by call in a second.

``keyed_operator_class(keyring, name="tide_keyed", patient_id="", on_unparseable_date="mask")`` makes an
``Operator`` subclass named ``TideKeyedOperator_<name>``: ``operate`` returns exactly the surrogate of our
own ``Anonymizer.replace_value`` for the TIDE label of the span (``params["label"]`` if given and not
empty, else Presidio's entity type mapped through ``PRESIDIO_TO_TIDE``, else the entity type itself) and
the patient id of the params (as text) or the bound one; ``validate`` refuses a span without a TIDE label
with E466.  Each negative case differs from a positive one in exactly one property.
"""

from __future__ import annotations

import pytest

pytest.importorskip("presidio_anonymizer")

from presidio_anonymizer.operators import Operator, OperatorType

from tide_core.anonymize.engine import DATE_MASK, Anonymizer
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.anonymize.presidio_operators import keyed_operator_class
from tide_core.errors import AnonymizationError

KR = keyring_for_tests("guard-presidio", "k1", "guard-presidio-seed")
OURS = Anonymizer(KR)
DATE = "03/04/2021"
NAME = "John Smith"
SSN = "123-45-6789"


def _date(pid: str) -> str:
    return OURS.replace_value("DATE", DATE, pid)[0]


def test_the_patient_ids_used_below_shift_dates_differently():
    assert len({_date(""), _date("p1"), _date("p2"), _date("7")}) == 4  # else the tests below prove nothing


def test_the_class_is_an_anonymize_operator_with_its_name():
    cls = keyed_operator_class(KR)
    assert issubclass(cls, Operator)
    op = cls()
    assert op.operator_name() == "tide_keyed"
    assert op.operator_type() == OperatorType.Anonymize
    assert cls.__name__ == "TideKeyedOperator_tide_keyed"
    other = keyed_operator_class(KR, name="site_op")
    assert other().operator_name() == "site_op"
    assert other.__name__ == "TideKeyedOperator_site_op"


def test_operate_returns_our_surrogate_for_the_params_patient():
    op = keyed_operator_class(KR, patient_id="p2")()
    assert op.operate(DATE, {"entity_type": "DATE_TIME", "patient_id": "p1"}) == _date("p1")
    assert op.operate(DATE, {"entity_type": "DATE_TIME", "patient_id": 7}) == _date("7")  # read as text


def test_without_a_params_patient_the_bound_one_is_used():
    assert keyed_operator_class(KR, patient_id="p2")().operate(DATE, {"label": "DATE"}) == _date("p2")
    assert keyed_operator_class(KR)().operate(DATE, {"label": "DATE"}) == _date("")  # default: the empty id


@pytest.mark.parametrize(
    "params, label",
    [
        ({"entity_type": "PERSON"}, "PATIENT"),  # Presidio's entity, mapped
        ({"entity_type": "US_SSN"}, "ID"),
        ({"entity_type": "DOCTOR"}, "DOCTOR"),  # already a TIDE label: kept
        ({"entity_type": "PERSON", "label": "ID"}, "ID"),  # an explicit label wins
        ({"entity_type": "US_SSN", "label": ""}, "ID"),  # an empty label is no label
        ({"label": "ID"}, "ID"),  # no entity type at all
    ],
)
def test_the_label_of_a_span(params, label):
    value = NAME if label in ("PATIENT", "DOCTOR") else SSN
    op = keyed_operator_class(KR)()
    assert op.operate(value, dict(params)) == OURS.replace_value(label, value, "")[0]
    assert op.operate(value, dict(params)) != value
    op.validate(dict(params))  # accepted


@pytest.mark.parametrize("params", [None, {}, {"entity_type": "SOMETHING"}, {"label": "PERSON"}, {"label": "id"}])
def test_a_span_without_a_tide_label_is_e466(params):
    op = keyed_operator_class(KR, patient_id="p1")()
    for call in (lambda: op.validate(params), lambda: op.operate(SSN, params)):
        with pytest.raises(AnonymizationError) as e:
            call()
        assert e.value.code == "E466"
        entity = (params or {}).get("entity_type")
        assert e.value.message == f"entity type {entity!r} has no TIDE label"
        assert e.value.hint == "pass params={'label': <TIDE label>} in the OperatorConfig"


def test_unparseable_dates_follow_the_policy():
    assert keyed_operator_class(KR)().operate("sometime", {"label": "DATE"}) == DATE_MASK  # default: mask
    masked = keyed_operator_class(KR, on_unparseable_date="mask")()
    assert masked.operate("sometime", {"label": "DATE"}) == DATE_MASK
    strict = keyed_operator_class(KR, on_unparseable_date="quarantine")()
    with pytest.raises(AnonymizationError) as e:
        strict.operate("sometime", {"label": "DATE"})
    assert e.value.code != "E466"
    assert strict.operate(DATE, {"label": "DATE"}) == _date("")  # a parseable date is shifted either way


def test_the_keyring_decides_the_surrogate():
    other = keyring_for_tests("guard-presidio", "k1", "another-seed")
    a = keyed_operator_class(KR)().operate(SSN, {"label": "ID"})
    b = keyed_operator_class(other)().operate(SSN, {"label": "ID"})
    assert a == OURS.replace_value("ID", SSN)[0]
    assert a != b
