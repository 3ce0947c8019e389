"""Presidio's predefined entity names and the TIDE labels they map to: the one map both directions use.

The recognizer adapter (Presidio results -> TIDE spans) and the keyed Presidio operator (a Presidio
entity -> the TIDE operator for it) read :data:`PRESIDIO_TO_TIDE`; a site overrides single entries
through the adapter's ``label_map``.  ``PERSON`` has no patient/provider split in Presidio, so it maps
to PATIENT (``{"PERSON": "DOCTOR"}`` for a staff list).  Every value is one of
:data:`tide_core.types.LABELS` (tests/recognizers/test_recognizers_presidio.py checks it).
"""

from __future__ import annotations

from types import MappingProxyType

PRESIDIO_TO_TIDE = MappingProxyType(
    {
        "PERSON": "PATIENT",
        "EMAIL_ADDRESS": "EMAIL",
        "PHONE_NUMBER": "PHONE",
        "US_SSN": "ID",
        "DATE_TIME": "DATE",
        "LOCATION": "LOCATION",
        "URL": "URL",
        "IP_ADDRESS": "URL",
        "US_DRIVER_LICENSE": "ID",
        "US_PASSPORT": "ID",
        "US_BANK_NUMBER": "ID",
        "US_ITIN": "ID",
        "MEDICAL_LICENSE": "ID",
        "CREDIT_CARD": "ID",
        "IBAN_CODE": "ID",
        "US_MBI": "ID",
        "US_NPI": "ID",
        "ORGANIZATION": "OTHER",
        "NRP": "OTHER",
        "AGE": "AGE",
    }
)
