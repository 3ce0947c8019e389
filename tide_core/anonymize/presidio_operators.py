"""Our keyed operators as a Presidio anonymizer ``Operator``.

Presidio builds operators from a class with no constructor arguments and prints
``OperatorConfig`` params in its ``repr``, so the key ring must never travel in params: it is
bound into a class made by :func:`keyed_operator_class`.  Use it inside a stock engine::

    engine = AnonymizerEngine()
    engine.add_anonymizer(keyed_operator_class(keyring))
    engine.anonymize(text, results, {"DEFAULT": OperatorConfig("tide_keyed", {"patient_id": "p1"})})

Presidio entity types are mapped to TIDE labels (``PERSON`` -> ``PATIENT``, ``DATE_TIME`` ->
``DATE`` ...); params may also give ``label`` explicitly.  ``patient_id`` (params or the factory)
selects the date offset; it is a pseudonymous id, never key material.
"""

from __future__ import annotations

from typing import Any

from presidio_anonymizer.operators import Operator, OperatorType

from tide_core.anonymize.engine import Anonymizer, DatePolicy
from tide_core.anonymize.keys import KeyRing
from tide_core.errors import AnonymizationError
from tide_core.presidio_labels import PRESIDIO_TO_TIDE
from tide_core.types import LABELS


def keyed_operator_class(
    keyring: KeyRing, name: str = "tide_keyed", patient_id: str = "", on_unparseable_date: DatePolicy = "mask"
) -> type[Operator]:
    """Return a Presidio ``Operator`` subclass bound to ``keyring`` (register with ``add_anonymizer``)."""
    anonymizer = Anonymizer(keyring, on_unparseable_date=on_unparseable_date)
    bound_patient = patient_id

    class TideKeyedOperator(Operator):
        """Keyed, consistent TIDE surrogates inside Presidio's AnonymizerEngine."""

        def operate(self, text: str, params: dict[str, Any] | None = None) -> str:
            params = params or {}
            label = self._label(params)
            return anonymizer.replace_value(label, text, str(params.get("patient_id", bound_patient)))[0]

        def validate(self, params: dict[str, Any] | None = None) -> None:
            self._label(params or {})

        @staticmethod
        def _label(params: dict[str, Any]) -> str:
            entity_type = params.get("entity_type", "")
            label: str = params.get("label") or PRESIDIO_TO_TIDE.get(entity_type, entity_type)
            if label not in LABELS:
                raise AnonymizationError(
                    "E466",
                    f"entity type {params.get('entity_type')!r} has no TIDE label",
                    hint="pass params={'label': <TIDE label>} in the OperatorConfig",
                )
            return label

        def operator_name(self) -> str:
            return name

        def operator_type(self) -> OperatorType:
            return OperatorType.Anonymize

    TideKeyedOperator.__name__ = f"TideKeyedOperator_{name}"
    return TideKeyedOperator
