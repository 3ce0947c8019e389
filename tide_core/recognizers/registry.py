"""Recognizer registry: build any recognizer from a plain dict spec.

A spec is what a configuration file holds: ``{"name": "tide.regex", **options}``.  Builtins are
registered as factories that import their module only when asked, so asking for ``tide.regex``
never imports torch (``tide.hf``) or Presidio (``presidio``).

A site plugs in its own recognizer either with ``register("site.thing", factory)`` or, without
any code change here, by naming a dotted path: ``{"name": "my_pkg.module:Factory", ...}`` calls
``Factory(**options)``, which must return a ``TideRecognizer`` (or a Presidio
``EntityRecognizer``, which is wrapped).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from tide_core.errors import ConfigError
from tide_core.plugins import load_dotted
from tide_core.recognizers.base import TideRecognizer
from tide_core.recognizers.facilities import FacilityRecognizer, OrganisationHeadRecognizer
from tide_core.recognizers.gazetteer import GazetteerRecognizer
from tide_core.recognizers.id_shapes import IdentifierShapeRecognizer
from tide_core.recognizers.known_phi import KnownPHIRecognizer
from tide_core.recognizers.llm import LLMRecognizer
from tide_core.recognizers.organisations import OrganisationRecognizer
from tide_core.recognizers.person_names import PersonNameRecognizer
from tide_core.recognizers.places import PlaceRecognizer
from tide_core.recognizers.presidio_adapter import PresidioRecognizerAdapter, adapter_from_spec
from tide_core.recognizers.regex_recognizer import RegexRecognizer

Factory = Callable[..., TideRecognizer]
_FACTORIES: dict[str, Factory] = {}


def register(name: str, factory: Factory, *, replace: bool = False) -> None:
    """Register ``factory(**options) -> TideRecognizer`` under ``name``."""
    if not name or not isinstance(name, str):
        raise ConfigError(
            "E230", "recognizer name must be a non-empty string", hint='e.g. register("site.ids", make_ids)'
        )
    if name in _FACTORIES and not replace:
        raise ConfigError(
            "E231", f"recognizer {name!r} is already registered", hint="pick another name or pass replace=True"
        )
    _FACTORIES[name] = factory


def names() -> list[str]:
    return sorted(_FACTORIES)


def create(spec: Mapping[str, Any]) -> TideRecognizer:
    """Build a recognizer from ``{"name": ..., **options}``."""
    if not isinstance(spec, Mapping) or "name" not in spec:
        raise ConfigError(
            "E232",
            "a recognizer spec must be a mapping with a 'name'",
            hint=f'e.g. {{"name": "tide.regex"}}; available: {", ".join(names())}',
        )
    options = {k: v for k, v in spec.items() if k != "name"}
    name = str(spec["name"])
    factory = _FACTORIES.get(name)
    if factory is None:
        if ":" in name or (name.count(".") >= 2 and not name.startswith("tide.")):
            factory = load_dotted(name)
        else:
            raise ConfigError(
                "E235",
                f"unknown recognizer {name!r}",
                hint=f"available: {', '.join(names())}; or a dotted path 'package.module:Factory'",
            )
    try:
        rec = factory(**options)
    except TypeError as exc:
        raise ConfigError(
            "E236",
            f"bad options for recognizer {name!r}: {exc}",
            hint="see docs/recognizers.md for each recognizer's options",
        ) from None
    if not isinstance(rec, TideRecognizer):
        try:
            from presidio_analyzer import EntityRecognizer
        except ImportError:  # pragma: no cover
            entity_types: tuple[type, ...] = ()
        else:
            entity_types = (EntityRecognizer,)
        if entity_types and isinstance(rec, entity_types):
            return PresidioRecognizerAdapter(rec)
        raise ConfigError(
            "E237",
            f"recognizer {name!r} built a {type(rec).__name__}, not a TideRecognizer",
            hint="factories must return a TideRecognizer or a presidio EntityRecognizer",
        )
    return rec


# ------------------------------------------------------------------ builtins (lazy imports)
def _regex(**options: Any) -> TideRecognizer:

    return RegexRecognizer(**options)


def _gazetteer(csv: str | None = None, **options: Any) -> TideRecognizer:

    if csv is None:
        raise ConfigError(
            "E238",
            "tide.gazetteer needs csv=PATH",
            hint='e.g. {"name": "tide.gazetteer", "csv": "tide_core/data/gazetteer_demo.csv"}',
        )
    return GazetteerRecognizer(csv, **options)


def _known_phi(rows: Any = None, **options: Any) -> TideRecognizer:

    if rows is None:
        raise ConfigError(
            "E239",
            "tide.known_phi needs rows= (the patients table as a list of dicts)",
            hint="the engine builds it per run from the patients table: KnownPHIRecognizer.from_rows(rows)",
        )
    if hasattr(rows, "to_pylist"):  # a pyarrow Table
        rows = rows.to_pylist()
    return KnownPHIRecognizer.from_rows(rows, **options)


def _hf(**options: Any) -> TideRecognizer:
    module = importlib.import_module("tide_core.recognizers.hf_token_classifier")
    rec: TideRecognizer = module.HFTokenClassifierRecognizer(**options)
    return rec


def _llm(**options: Any) -> TideRecognizer:

    return LLMRecognizer(**options)


def _org(**options: Any) -> TideRecognizer:

    return OrganisationRecognizer(**options)


def _places(**options: Any) -> TideRecognizer:

    return PlaceRecognizer(**options)


def _ids(**options: Any) -> TideRecognizer:

    return IdentifierShapeRecognizer(**options)


def _facilities(**options: Any) -> TideRecognizer:

    return FacilityRecognizer(**options)


def _org_heads(**options: Any) -> TideRecognizer:

    return OrganisationHeadRecognizer(**options)


def _names(**options: Any) -> TideRecognizer:

    return PersonNameRecognizer(**options)


def _presidio(**options: Any) -> TideRecognizer:

    return adapter_from_spec(**options)


for _name, _factory in (
    ("tide.regex", _regex),
    ("tide.gazetteer", _gazetteer),
    ("tide.known_phi", _known_phi),
    ("tide.hf", _hf),
    ("tide.llm", _llm),
    ("tide.org", _org),
    ("tide.places", _places),
    ("tide.ids", _ids),
    ("tide.facilities", _facilities),
    ("tide.org_heads", _org_heads),
    ("tide.names", _names),
    ("presidio", _presidio),
):
    register(_name, _factory)
