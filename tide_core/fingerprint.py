"""Fingerprints of configuration and identity: one helper, one convention.

A fingerprint says "this is the same configuration" (never "this is the same text": content
hashes of notes or files are plain ``sha256`` digests and stay so).  Every fingerprint in TIDE is
:func:`fingerprint` of some JSON-able parts: canonical JSON (sorted keys, no whitespace,
``default=str``), sha256, the first 16 hex digits.

Every step that changes recognition output is a :class:`Step`: it has a versioned name
(``qualified_name``, ``"name@version"``; bump the version when its code changes what it
outputs) and ``config()``, its output-affecting settings only (never batch sizes, executors or
worker counts).  :func:`step_fingerprint` hashes both.  Recognizers, span tidying
(``tide.tidy``), resolution (``tide.resolve``) and within-note propagation (``tide.propagate``)
all follow it, and ``tide_core.engine.recognition.recognition_fingerprint`` combines them.

This module imports nothing from tide_core, so anything may use it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

#: Hex digits kept from the sha256 digest.
LENGTH = 16


def canonical_json(value: Any) -> str:
    """The one JSON form hashed by :func:`fingerprint` (sorted keys, compact, ``str`` for the rest)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str, ensure_ascii=True)


def fingerprint(*parts: Any) -> str:
    """16 hex digits of sha256 over the canonical JSON of ``parts`` (a list, so order counts)."""
    return hashlib.sha256(canonical_json(list(parts)).encode("utf-8")).hexdigest()[:LENGTH]


@runtime_checkable
class Step(Protocol):
    """A step whose output is cached: a versioned name and its output-affecting settings."""

    @property
    def qualified_name(self) -> str: ...  # "name@version"

    def config(self) -> Mapping[str, Any]: ...


def step_identity(step: Step) -> dict[str, Any]:
    """``{"name": "name@version", "config": {...}}``: what :func:`step_fingerprint` hashes."""
    return {"name": step.qualified_name, "config": dict(step.config())}


def step_fingerprint(step: Step) -> str:
    """Fingerprint of one step's versioned name and ``config()``."""
    return fingerprint(step_identity(step))
