"""Recognizer set-up: the configured recognizers of a study run, with one known-PHI rule.

Every recognizer of ``config.recognizers`` is created once per run, except a known-PHI spec
without ``rows``: it is created per chunk from the patients table's rows of that chunk's
patients only (all rows when it sets ``match_any_patient``).  Study runs, the drift monitor's
residual screen and every other reader follow this one rule (:func:`recognizer_set`, then
:meth:`RecognizerSet.for_patients`); a missing patients table turns known-PHI matching off for
the run, with a warning.  Patient ids are compared as :func:`patient_key` whatever their types.

A study may have its recognizer set-up replaced by a registered factory
(:func:`register_setup`): recognizer objects and a resolution policy built in code, used by
experiments and tests in place of the configuration's specs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from tide_core.config import TideConfig
from tide_core.engine.recognition import recognition_fingerprint
from tide_core.io.warehouse import Warehouse
from tide_core.recognizers.known_phi import patient_key
from tide_core.recognizers.registry import create
from tide_core.spans import Note
from tide_core.steps.resolve import ResolutionPolicy

#: A patient key an INTEGER (BIGINT, INT64) column can hold.
_INT_ID = re.compile(r"-?[1-9][0-9]{0,17}|0")

#: The known-PHI spec key that names its patients table until the chunk's rows replace it.
_TABLE = "_patients_table"

NO_PATIENTS_TABLE = "patients table not found: known-PHI matching is off for this run"


def _keys(patient_ids: Iterable[object]) -> set[str]:
    """The :func:`patient_key` of each id (empty ones left out)."""
    return {k for k in map(patient_key, patient_ids) if k is not None}


def _patient_rows_for(wh: Warehouse, table: str, patient_ids: set[str], everyone: bool) -> list[dict[str, Any]]:
    """The patients rows of ``patient_ids``, ids compared as :func:`patient_key` whatever the types.

    A filtered read when the id column is text (the notes' ids as written and their keys) or an
    integer (the keys that are integers); all rows when ``everyone`` or for any other column type.
    A text id stored with other zero padding or surrounding spaces than the notes' is not found
    by the filtered read: ``known_phi_patients_matched`` in the run report counts who was.
    """
    keys = _keys(patient_ids)
    if not everyone:
        kind = wh.read_table(table, ["patient_id"], where={"patient_id": []}).schema.field("patient_id").type
        pushed: list[str] | list[int] | None = None
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            pushed = sorted(keys | set(patient_ids))
        elif pa.types.is_integer(kind):
            pushed = sorted(int(k) for k in keys if _INT_ID.fullmatch(k))
        if pushed is not None:
            if not pushed:
                return []
            rows = wh.read_table(table, where={"patient_id": pushed}).to_pylist()
            return [r for r in rows if patient_key(r.get("patient_id")) in keys]
    rows = wh.read_table(table).to_pylist()
    return rows if everyone else [r for r in rows if patient_key(r.get("patient_id")) in keys]


@dataclass
class KnownPHIMatches:
    """Which patients known-PHI matching looked up, and which of them the patients table had.

    Both are patient keys (:func:`patient_key`) of the notes looked at and of the patients table's
    rows (keys only, never values).
    """

    looked_up: set[str] = field(default_factory=set)
    matched: set[str] = field(default_factory=set)

    def add(self, patient_ids: set[str], rows: Sequence[dict[str, Any]]) -> None:
        """Record one lookup: the patients of a chunk's notes, and the patients table's ``rows`` for them."""
        keys = _keys(patient_ids)
        self.looked_up |= keys
        self.matched |= keys & _keys(r.get("patient_id") for r in rows)

    def warning(self, table: str) -> str | None:
        """The E624 warning when the patients table matched none of the patients looked up."""
        if not self.looked_up or self.matched:
            return None
        return (
            f"[E624] known-PHI matching found none of the {len(self.looked_up)} patient(s) of the notes "
            f"recognized in this run in the patients table {table!r} (known_phi_patients_matched: 0): "
            "registered names, addresses and numbers are not recognized from it; check that its patient_id "
            "holds the notes' patient ids (compared as text without surrounding spaces; digits without "
            "leading zeros), then rerun recognition with --force"
        )


@dataclass
class RecognizerSet:
    """A run's recognizers: those built once, and the known-PHI specs built per set of patients.

    ``recognizers`` has ``None`` at the place of each per-chunk known-PHI recognizer.  ``specs``
    is ``None`` for a set built from objects (:meth:`of`): nothing to send to Ray workers.
    """

    recognizers: list[Any]
    specs: list[dict[str, Any]] | None
    warnings: list[str] = field(default_factory=list)
    policy: ResolutionPolicy | Mapping[str, Any] | None = None

    @classmethod
    def of(
        cls, recognizers: Sequence[Any], policy: ResolutionPolicy | Mapping[str, Any] | None = None
    ) -> RecognizerSet:
        """A set of ready recognizer objects (a registered factory's), under ``policy``."""
        return cls(list(recognizers), None, [], policy)

    @property
    def patients_tables(self) -> list[str]:
        """The patients table of each per-chunk known-PHI spec."""
        return [s[_TABLE] for s in self.specs or () if _TABLE in s]

    def chunk_specs(
        self, wh: Warehouse, patient_ids: set[str], seen: KnownPHIMatches | None = None
    ) -> list[dict[str, Any]]:
        """Specs for these patients: known-PHI ones carry their rows only (``seen`` counts whom they found)."""
        out: list[dict[str, Any]] = []
        for rec, spec in zip(self.recognizers, self.specs or (), strict=True):
            if rec is not None:
                out.append(spec)
                continue
            chunk_spec = {k: v for k, v in spec.items() if k != _TABLE}
            everyone = bool(chunk_spec.get("match_any_patient"))  # matches any patient's values: needs them all
            chunk_spec["rows"] = _patient_rows_for(wh, spec[_TABLE], patient_ids, everyone)
            if seen is not None:
                seen.add(patient_ids, chunk_spec["rows"])
            out.append(chunk_spec)
        return out

    def for_patients(
        self, wh: Warehouse, patient_ids: set[str], seen: KnownPHIMatches | None = None
    ) -> tuple[list[Any], list[dict[str, Any]]]:
        """The recognizers and specs for these patients (known-PHI recognizers created here)."""
        if self.specs is None:
            return list(self.recognizers), []
        specs = self.chunk_specs(wh, patient_ids, seen)
        recs = [rec if rec is not None else create(spec) for rec, spec in zip(self.recognizers, specs, strict=True)]
        return recs, specs

    def identity(self, wh: Warehouse) -> tuple[str, list[str]]:
        """The recognition fingerprint and the recognizers' qualified names (known-PHI rows are in neither)."""
        probe, _ = self.for_patients(wh, set())
        return recognition_fingerprint(probe, self.policy), [r.qualified_name for r in probe]


def from_config(wh: Warehouse, config: TideConfig) -> RecognizerSet:
    """The configured recognizers: built once, known-PHI specs without ``rows`` left for each chunk."""
    warnings: list[str] = []
    specs: list[dict[str, Any]] = []
    recognizers: list[Any] = []
    for spec in config.recognizers:
        spec = dict(spec)
        if spec["name"] == "tide.known_phi" and "rows" not in spec:
            table = spec.pop("patients_table", config.tables.patients)
            if not wh.table_exists(table):
                warnings.append(NO_PATIENTS_TABLE)
                continue
            spec[_TABLE] = table
            specs.append(spec)
            recognizers.append(None)
            continue
        specs.append(spec)
        recognizers.append(create(spec))
    return RecognizerSet(recognizers, specs, warnings)


SetupFactory = Callable[[Warehouse, TideConfig], RecognizerSet]

#: study -> the factory that replaces its configured recognizer set-up.
_SETUPS: dict[str, SetupFactory] = {}


def register_setup(study: str, factory: SetupFactory) -> None:
    """Build ``study``'s recognizers with ``factory`` instead of the configuration (replaces any earlier one)."""
    _SETUPS[study] = factory


def unregister_setup(study: str) -> None:
    """Return ``study`` to its configured recognizers."""
    _SETUPS.pop(study, None)


def recognizer_set(wh: Warehouse, config: TideConfig, study: str | None = None) -> RecognizerSet:
    """``study``'s recognizer set: its registered factory's, else the configuration's."""
    factory = _SETUPS.get(study) if study is not None else None
    return factory(wh, config) if factory is not None else from_config(wh, config)


def build_recognizers(
    wh: Warehouse, config: TideConfig, notes: Sequence[Note]
) -> tuple[list[Any], list[dict[str, Any]], list[str]]:
    """The configured recognizers for these notes' patients, their specs, and warnings."""
    rset = from_config(wh, config)
    recognizers, specs = rset.for_patients(wh, {n.patient_id for n in notes})
    return recognizers, specs, rset.warnings
