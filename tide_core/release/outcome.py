"""The result of one release check: passed or not, a description and counts-only metadata."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CheckOutcome:
    """What a release check found; ``description`` and ``metadata`` never hold source values."""

    passed: bool
    description: str
    metadata: dict[str, Any] = field(default_factory=dict)
