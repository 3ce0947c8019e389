"""Presidio compatibility, both directions.

* ``PresidioRecognizerAdapter(entity_recognizer, label_map)`` runs any
  ``presidio_analyzer.EntityRecognizer`` (a ``PatternRecognizer``, a predefined recognizer such as
  ``EmailRecognizer``, a site's own) as a ``TideRecognizer``: Presidio entity names are mapped to
  TIDE labels and unmapped entities are dropped.
* ``as_presidio_recognizer(tide_recognizer)`` returns a ``presidio_analyzer.EntityRecognizer``
  instance that an ``AnalyzerEngine`` / ``RecognizerRegistry`` accepts like any other.

Offline use: ``AnalyzerEngine()`` with defaults tries to download a spaCy model.  Build it with
``presidio_analyzer.nlp_engine.NoOpNlpEngine(models=[{"lang_code": "en", "model_name": "none"}])``
and an explicit ``RecognizerRegistry`` (``presidio_engine(...)`` below does this).  This module
sets ``TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS=""`` (unless set) before it imports Presidio, whose
e-mail/URL recognizers otherwise try the network.  Importing Presidio costs seconds: the recognizer
registry reaches this module by its dotted path, only for a ``presidio`` spec.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")  # before tldextract is imported (by Presidio)

from presidio_analyzer import AnalyzerEngine, EntityRecognizer, RecognizerRegistry
from presidio_analyzer import RecognizerResult as PresidioResult
from presidio_analyzer.nlp_engine import NoOpNlpEngine

from tide_core.errors import ConfigError
from tide_core.fingerprint import fingerprint
from tide_core.plugins import load_dotted
from tide_core.presidio_labels import PRESIDIO_TO_TIDE
from tide_core.recognizers.base import TideRecognizer
from tide_core.spans import RecognizerResult, Span
from tide_core.types import LABELS

#: Presidio's predefined entity names -> TIDE labels (one map for the adapter and the operator).
DEFAULT_LABEL_MAP: Mapping[str, str] = PRESIDIO_TO_TIDE


class PresidioRecognizerAdapter(TideRecognizer):
    """A Presidio ``EntityRecognizer`` seen through the TIDE recognizer interface."""

    version = "1"

    def __init__(self, entity_recognizer: Any, label_map: Mapping[str, str] | None = None, name: str | None = None):
        self.recognizer = entity_recognizer
        merged = dict(DEFAULT_LABEL_MAP)
        merged.update(label_map or {})
        for k, v in (label_map or {}).items():
            if v not in LABELS:
                raise ConfigError(
                    "E240",
                    f"presidio label_map maps {k!r} to unknown label {v!r}",
                    hint=f"map to one of {', '.join(LABELS)}",
                )
        # Identity for entities that already use TIDE names (a PatternRecognizer written for TIDE).
        self.label_map = {**{lab: lab for lab in LABELS}, **merged}
        self.name = name or f"presidio.{getattr(entity_recognizer, 'name', type(entity_recognizer).__name__)}"
        self.version = str(getattr(entity_recognizer, "version", "1") or "1")
        self._presidio_entities = list(entity_recognizer.supported_entities)
        self.supported_entities = sorted({self.label_map[e] for e in self._presidio_entities if e in self.label_map})

    def load(self) -> None:
        """Presidio recognizers load in their constructor; nothing to do."""

    def config(self) -> dict[str, Any]:
        rec = self.recognizer
        try:
            described = rec.to_dict()
        except Exception:  # some recognizers cannot serialise themselves
            described = {}
        return {
            "class": f"{type(rec).__module__}.{type(rec).__qualname__}",
            "entities": sorted(self._presidio_entities),
            "label_map": {k: self.label_map[k] for k in sorted(self._presidio_entities) if k in self.label_map},
            "definition": fingerprint(described),
        }

    def analyze(
        self, text: str, entities: Sequence[str] | None = None, nlp_artifacts: Any = None
    ) -> list[RecognizerResult]:
        wanted = set(entities) if entities else None
        ask = [
            e
            for e in self._presidio_entities
            if e in self.label_map and (wanted is None or self.label_map[e] in wanted)
        ]
        if not ask:
            return []
        out = []
        for r in self.recognizer.analyze(text, ask, nlp_artifacts) or []:
            label = self.label_map.get(r.entity_type)
            if label is None or r.end <= r.start:
                continue
            out.append(
                RecognizerResult(
                    label,
                    int(r.start),
                    int(r.end),
                    min(1.0, max(0.0, float(r.score))),
                    {"recognizer_name": self.qualified_name, "presidio_entity": r.entity_type},
                )
            )
        return out


def adapter_from_spec(**options: Any) -> PresidioRecognizerAdapter:
    """Registry factory: ``{"name": "presidio", "class": "presidio_analyzer.predefined_recognizers.EmailRecognizer",
    "label_map": {...}, "options": {...}}``."""
    dotted = options.pop("class", None)
    label_map = options.pop("label_map", None)
    kwargs = options.pop("options", None) or {}
    if options:
        raise ConfigError(
            "E241",
            f"unknown presidio spec option(s): {', '.join(sorted(options))}",
            hint="valid: class, label_map, options",
        )
    if not dotted:
        raise ConfigError(
            "E242",
            "the presidio spec needs class=DOTTED.PATH of an EntityRecognizer",
            hint='e.g. {"name": "presidio", "class": "presidio_analyzer.predefined_recognizers.EmailRecognizer"}',
        )
    cls = load_dotted(dotted)
    try:
        rec = cls(**kwargs)
    except TypeError as exc:
        raise ConfigError(
            "E243",
            f"cannot build presidio recognizer {dotted}: {exc}",
            hint="pass its constructor arguments under 'options'",
        ) from None
    return PresidioRecognizerAdapter(rec, label_map)


class TideEntityRecognizer(EntityRecognizer):
    """A TIDE recognizer inside Presidio; entity names are TIDE labels."""

    def __init__(self, tide_recognizer: TideRecognizer, supported_language: str = "en") -> None:
        self.tide_recognizer = tide_recognizer
        super().__init__(
            supported_entities=list(tide_recognizer.supported_entities),
            name=tide_recognizer.qualified_name,
            supported_language=supported_language,
            version=str(tide_recognizer.version),
        )

    def load(self) -> None:
        self.tide_recognizer.load()

    def analyze(self, text: str, entities: list[str], nlp_artifacts: Any = None) -> list[PresidioResult]:
        results = self.tide_recognizer.analyze(text, entities or None, nlp_artifacts)
        return [
            PresidioResult(
                entity_type=r.entity_type,
                start=r.start,
                end=r.end,
                score=float(r.score),
                recognition_metadata={
                    PresidioResult.RECOGNIZER_NAME_KEY: self.name,  # type: ignore[has-type]  # set untyped by Presidio
                    PresidioResult.RECOGNIZER_IDENTIFIER_KEY: self.id,
                },
            )
            for r in results
        ]


def as_presidio_recognizer(tide_recognizer: TideRecognizer, supported_language: str = "en") -> EntityRecognizer:
    """Wrap a TIDE recognizer as a ``presidio_analyzer.EntityRecognizer`` instance."""
    return TideEntityRecognizer(tide_recognizer, supported_language)


def presidio_engine(recognizers: Sequence[Any], language: str = "en") -> AnalyzerEngine:
    """An offline ``AnalyzerEngine``: no-op NLP engine, only the given recognizers.

    ``recognizers`` may mix Presidio recognizers and TIDE recognizers (wrapped automatically).
    """
    registry = RecognizerRegistry(supported_languages=[language])
    for rec in recognizers:
        registry.add_recognizer(as_presidio_recognizer(rec, language) if isinstance(rec, TideRecognizer) else rec)
    nlp = NoOpNlpEngine(models=[{"lang_code": language, "model_name": "none"}])
    return AnalyzerEngine(registry=registry, nlp_engine=nlp, supported_languages=[language])


def span_to_presidio(span: Span) -> PresidioResult:
    """A TIDE ``Span`` as a ``presidio_analyzer.RecognizerResult`` (the recognizer name in its metadata)."""
    return PresidioResult(
        entity_type=span.label,
        start=span.start,
        end=span.end,
        score=float(span.score),
        recognition_metadata={"recognizer_name": span.recognizer},
    )
