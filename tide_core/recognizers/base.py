"""The recognizer interface.

A recognizer follows Presidio's ``EntityRecognizer.analyze(text, entities, nlp_artifacts=None)``
contract and returns Presidio-shaped results.  ``recognize(note)`` wraps that into typed Spans
carrying the recognizer's versioned name, which is what the span cache stores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from tide_core.fingerprint import step_fingerprint
from tide_core.spans import Note, RecognizerResult, Span


@runtime_checkable
class Recognizer(Protocol):
    name: str
    version: str
    supported_entities: Sequence[str]

    def analyze(
        self, text: str, entities: Sequence[str] | None = None, nlp_artifacts: Any = None
    ) -> list[RecognizerResult]: ...

    def recognize(self, note: Note) -> list[Span]: ...

    def fingerprint(self) -> str: ...


class TideRecognizer:
    """Base class: subclasses implement ``analyze`` and ``config()``."""

    name: str = "tide.base"
    version: str = "1"
    supported_entities: Sequence[str] = ()

    @property
    def qualified_name(self) -> str:
        return f"{self.name}@{self.version}"

    def analyze(
        self, text: str, entities: Sequence[str] | None = None, nlp_artifacts: Any = None
    ) -> list[RecognizerResult]:
        raise NotImplementedError

    def load(self) -> None:
        """Load heavy resources (models, automata).  Called once per worker."""

    def config(self) -> dict[str, Any]:
        """Output-affecting settings only (never batch size or worker counts)."""
        return {}

    def fingerprint(self) -> str:
        """``tide_core.fingerprint.step_fingerprint``: ``name@version`` and ``config()``."""
        return step_fingerprint(self)

    def recognize(self, note: Note) -> list[Span]:
        results = self.analyze(note.text, None)
        return [
            Span(note.note_id, r.start, r.end, r.entity_type, min(1.0, max(0.0, float(r.score))), self.qualified_name)
            for r in results
            if r.end > r.start
        ]

    def recognize_many(self, notes: Sequence[Note]) -> list[list[Span]]:
        """Batch entry point; model-backed recognizers override it to batch forward passes."""
        return [self.recognize(n) for n in notes]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.qualified_name}>"
