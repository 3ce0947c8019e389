"""Run configuration: which recognizers, where they run, which tables.

``TideConfig.default()`` is the default configuration (the fine-tuned PHI model + regex +
site gazetteer + known-PHI matching).  ``TideConfig.preset("rules")`` drops the model for a
quick, model-free run; it is never chosen silently.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

from tide_core.errors import ConfigError
from tide_core.model_location import default_model_dir, default_model_spec
from tide_core.store.tables import TableNames
from tide_core.types import EXECUTORS


def demo_gazetteer_path() -> str:
    return str(resources.files("tide_core") / "data" / "gazetteer_demo.csv")


def rules_specs() -> list[dict[str, Any]]:
    """Recognizer specs of the ``rules`` preset (the default configuration minus the model)."""
    return [
        {"name": "tide.regex"},
        {"name": "tide.ids"},
        {"name": "tide.cued_ids"},
        {"name": "tide.ages"},
        {"name": "tide.org"},
        {"name": "tide.places"},
        {"name": "tide.facilities"},
        {"name": "tide.org_heads"},
        {"name": "tide.names"},
        {"name": "tide.addresses"},
        {"name": "tide.dates_words"},
        {"name": "tide.phones_intl"},
        {"name": "tide.gazetteer", "csv": os.environ.get("TIDE_GAZETTEER", demo_gazetteer_path())},
        {"name": "tide.known_phi", "patients_table": "patients"},
    ]


def _model_spec() -> dict[str, Any]:

    return default_model_spec(default_model_dir(must_exist=True))


PRESETS = ("default", "rules")
#: the source metadata columns released beside the text, each screened by a vocabulary
METADATA_COLUMNS = ("note_type", "source", "site")


def _vocabulary(raw: object) -> dict[str, tuple[str, ...]]:
    """``metadata_vocabulary`` as column -> values (text), refusing unknown columns (E028) and bad shapes (E029)."""
    if not isinstance(raw, Mapping):
        raise ConfigError(
            "E029",
            f"metadata_vocabulary is a {type(raw).__name__}, not a table",
            hint='write [metadata_vocabulary] with lists of values, e.g. site = ["north", "south"]',
        )
    out: dict[str, tuple[str, ...]] = {}
    for column, values in raw.items():
        if column not in METADATA_COLUMNS:
            raise ConfigError(
                "E028",
                f"metadata_vocabulary names an unknown column {column!r}",
                hint=f"use {', '.join(METADATA_COLUMNS)}",
            )
        if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, (list, tuple, set, frozenset)):
            raise ConfigError(
                "E029",
                f"metadata_vocabulary.{column} is a {type(values).__name__}, not a list of values",
                hint=f'write {column} = ["value", ...]',
            )
        texts = tuple(str(v) for v in values)
        if any(t != t.strip() for t in texts):
            raise ConfigError(
                "E029",
                f"metadata_vocabulary.{column} has a value with surrounding whitespace",
                hint="cells are stripped before they are looked up: list the stripped value",
            )
        out[column] = texts
    return out


@dataclass(frozen=True)
class TideConfig:
    recognizers: tuple[dict[str, Any], ...]
    executor: str = "local"
    ray_address: str | None = None
    tables: TableNames = field(default_factory=TableNames)
    batch_size: int = 64
    max_note_chars: int = 2_000_000
    on_unparseable_date: str = "mask"
    #: note_type/source/site: a value is released only if it is in its column's vocabulary or in the
    #: allowlist (allowed in all three columns); any other value is withheld, and with neither, every value
    metadata_vocabulary: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    metadata_allowlist: tuple[str, ...] = ()
    #: PHI Guard (tide_core.assurance.guard_hold): a trained guard directory holds flagged documents
    #: out of the published release; None: no guard (the release says so).  ``guard_version`` pins
    #: the model (another version fails closed: re-baseline); ``guard_thresholds``: frozen threshold
    #: per released ``source`` value (others use the guard's own threshold).
    guard_dir: str | None = None
    guard_version: str | None = None
    guard_thresholds: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.executor not in EXECUTORS:
            raise ConfigError("E020", f"unknown executor {self.executor!r}", hint=f"use one of {EXECUTORS}")
        if not self.recognizers:
            raise ConfigError("E021", "no recognizers configured", hint="use the default preset or list recognizers")
        for spec in self.recognizers:
            if not isinstance(spec, dict) or "name" not in spec:
                raise ConfigError(
                    "E022",
                    f"recognizer spec {spec!r} has no name",
                    hint='write specs as {"name": "tide.regex", ...options}',
                )
        if self.on_unparseable_date not in ("mask", "quarantine"):
            raise ConfigError(
                "E023", f"on_unparseable_date={self.on_unparseable_date!r}", hint="use 'mask' or 'quarantine'"
            )
        object.__setattr__(self, "metadata_vocabulary", _vocabulary(self.metadata_vocabulary))

    @classmethod
    def preset(cls, name: str = "default", **overrides: Any) -> TideConfig:
        if name == "default":
            specs = [_model_spec(), *rules_specs()]
        elif name == "rules":
            specs = rules_specs()
        else:
            raise ConfigError("E024", f"unknown preset {name!r}", hint=f"use one of {PRESETS} or --config FILE")
        return cls(recognizers=tuple(specs), **overrides)

    @classmethod
    def default(cls, **overrides: Any) -> TideConfig:
        return cls.preset("default", **overrides)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], **overrides: Any) -> TideConfig:
        """Read a TOML or JSON file: ``recognizers = [{name = "tide.regex"}, ...]`` plus options."""
        p = Path(path)
        if not p.is_file():
            raise ConfigError("E025", f"config file {p} not found")
        try:
            data = tomllib.loads(p.read_text()) if p.suffix == ".toml" else json.loads(p.read_text())
        except (ValueError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError("E026", f"config file {p} is not valid {p.suffix[1:] or 'JSON'}: {exc}") from None
        if "preset" in data and "recognizers" not in data:
            base = cls.preset(data.pop("preset"))
            data["recognizers"] = list(base.recognizers)
        tables = data.pop("tables", None)
        if tables is not None:
            data["tables"] = TableNames(**tables)
        data["recognizers"] = tuple(data.get("recognizers", ()))
        if "metadata_allowlist" in data:
            data["metadata_allowlist"] = tuple(str(v) for v in data["metadata_allowlist"])
        data.update(overrides)
        try:
            return cls(**data)
        except TypeError as exc:
            raise ConfigError(
                "E027", f"config file {p}: {exc}", hint="see docs/configuration.md for the keys and an example"
            ) from None

    def with_(self, **changes: Any) -> TideConfig:
        return replace(self, **changes)

    def with_metadata_vocabulary(self, vocabulary: Mapping[str, Any]) -> TideConfig:
        """A copy whose ``metadata_vocabulary`` is ``vocabulary`` (column -> values; replaces the old one)."""
        return replace(self, metadata_vocabulary=vocabulary)

    @cached_property
    def released_metadata(self) -> dict[str, frozenset[str]]:
        """Column -> the values released as they are: the column's vocabulary plus the allowlist."""
        allow = frozenset(self.metadata_allowlist)
        return {c: allow | frozenset(self.metadata_vocabulary.get(c, ())) for c in METADATA_COLUMNS}

    def needs_patients(self) -> bool:
        return any(s["name"] == "tide.known_phi" and "rows" not in s for s in self.recognizers)
