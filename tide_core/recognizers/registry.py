"""Recognizer registry: build any recognizer from a plain dict spec.

A spec is what a configuration file holds: ``{"name": "tide.regex", **options}``.  Builtins are
registered by the dotted path of their factory and loaded through the one plugin loader
(:func:`tide_core.plugins.load_dotted`) only when asked, so asking for ``tide.regex`` never
imports torch (``tide.hf``) or Presidio (``presidio``), and importing the registry imports no
recognizer at all.

A site plugs in its own recognizer either with ``register("site.thing", factory)`` or, without
any code change here, by naming a dotted path: ``{"name": "my_pkg.module:Factory", ...}`` calls
``Factory(**options)``, which must return a ``TideRecognizer`` (or a Presidio
``EntityRecognizer``, which is wrapped).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tide_core.errors import ConfigError
from tide_core.plugins import load_dotted
from tide_core.recognizers.base import TideRecognizer

Factory = Callable[..., TideRecognizer]
#: name -> factory, or the dotted path of one (``package.module:Attr``), loaded on first use.
_FACTORIES: dict[str, Factory | str] = {}
_PRESIDIO_ADAPTER = "tide_core.recognizers.presidio_adapter:PresidioRecognizerAdapter"


def register(name: str, factory: Factory | str, *, replace: bool = False) -> None:
    """Register ``factory(**options) -> TideRecognizer`` (or its dotted path) under ``name``."""
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
    registered = _FACTORIES.get(name)
    factory: Factory
    if isinstance(registered, str):
        factory = load_dotted(registered)
    elif registered is not None:
        factory = registered
    else:
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
        if _is_presidio_recognizer(rec):
            adapter: TideRecognizer = load_dotted(_PRESIDIO_ADAPTER)(rec)
            return adapter
        raise ConfigError(
            "E237",
            f"recognizer {name!r} built a {type(rec).__name__}, not a TideRecognizer",
            hint="factories must return a TideRecognizer or a presidio EntityRecognizer",
        )
    return rec


def _is_presidio_recognizer(obj: Any) -> bool:
    """``obj`` is a ``presidio_analyzer.EntityRecognizer`` (checked by class name: Presidio need not be imported)."""
    return any(
        c.__name__ == "EntityRecognizer" and c.__module__.startswith("presidio_analyzer") for c in type(obj).__mro__
    )


# ------------------------------------------------------------------ builtins (loaded by dotted path)
def _gazetteer(csv: str | None = None, **options: Any) -> TideRecognizer:
    if csv is None:
        raise ConfigError(
            "E238",
            "tide.gazetteer needs csv=PATH",
            hint='e.g. {"name": "tide.gazetteer", "csv": "tide_core/data/gazetteer_demo.csv"}',
        )
    rec: TideRecognizer = load_dotted("tide_core.recognizers.gazetteer:GazetteerRecognizer")(csv, **options)
    return rec


def _known_phi(rows: Any = None, **options: Any) -> TideRecognizer:
    if rows is None:
        raise ConfigError(
            "E239",
            "tide.known_phi needs rows= (the patients table as a list of dicts)",
            hint="the engine builds it per run from the patients table: KnownPHIRecognizer.from_rows(rows)",
        )
    if hasattr(rows, "to_pylist"):  # a pyarrow Table
        rows = rows.to_pylist()
    rec: TideRecognizer = load_dotted("tide_core.recognizers.known_phi:KnownPHIRecognizer.from_rows")(rows, **options)
    return rec


for _name, _factory in (
    ("tide.regex", "tide_core.recognizers.regex_recognizer:RegexRecognizer"),
    ("tide.gazetteer", _gazetteer),
    ("tide.known_phi", _known_phi),
    ("tide.hf", "tide_core.recognizers.hf_token_classifier:HFTokenClassifierRecognizer"),
    ("tide.llm", "tide_core.recognizers.llm:LLMRecognizer"),
    ("tide.org", "tide_core.recognizers.organisations:OrganisationRecognizer"),
    ("tide.places", "tide_core.recognizers.places:PlaceRecognizer"),
    ("tide.ids", "tide_core.recognizers.id_shapes:IdentifierShapeRecognizer"),
    ("tide.cued_ids", "tide_core.recognizers.cued_ids:CuedIdentifierRecognizer"),
    ("tide.ages", "tide_core.recognizers.ages:ApposedAgeRecognizer"),
    ("tide.facilities", "tide_core.recognizers.facilities:FacilityRecognizer"),
    ("tide.org_heads", "tide_core.recognizers.facilities:OrganisationHeadRecognizer"),
    ("tide.names", "tide_core.recognizers.person_names:PersonNameRecognizer"),
    ("tide.addresses", "tide_core.recognizers.addresses:WorldAddressRecognizer"),
    ("tide.dates_words", "tide_core.recognizers.dates_words:WordDateRecognizer"),
    ("tide.phones_intl", "tide_core.recognizers.phones_intl:InternationalPhoneRecognizer"),
    ("presidio", "tide_core.recognizers.presidio_adapter:adapter_from_spec"),
):
    register(_name, _factory)
