"""Coded, picklable errors.

Every error carries a stable code (``E123``), a message saying what was wrong and a hint
saying how to fix it.  Messages never contain note text, identifiers or key material:
callers pass note ids and offsets, never surface strings.

``terminal`` errors will fail again on retry (bad input, bad configuration); transient
ones (a lost worker, an out-of-memory batch, a flaky network) may succeed when retried.
"""

from __future__ import annotations

from typing import Any


class TideError(Exception):
    """Base class of all TIDE errors."""

    terminal: bool = True

    def __init__(self, code: str, message: str, hint: str = "", terminal: bool | None = None):
        self.code = code
        self.message = message
        self.hint = hint
        if terminal is not None:
            self.terminal = terminal
        super().__init__(str(self))

    def __str__(self) -> str:
        text = f"[{self.code}] {self.message}"
        if self.hint:
            text += f" -- {self.hint}"
        return text

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:  # picklable across Ray workers
        return (_rebuild, (type(self), self.code, self.message, self.hint, self.terminal))


def _rebuild(cls: type[TideError], code: str, message: str, hint: str, terminal: bool) -> TideError:
    return cls(code, message, hint, terminal)


class ConfigError(TideError):
    """The configuration is invalid (unknown recognizer, bad option, missing model)."""


class KeyProviderError(TideError):
    """Key material is missing, malformed or insecurely stored."""


class InputError(TideError):
    """An input row or file is malformed."""


class RecognitionError(TideError):
    """A recognizer failed on a note."""


class AnonymizationError(TideError):
    """A span could not be anonymized; the note is quarantined (fail closed)."""


class WarehouseError(TideError):
    """Reading or writing the warehouse failed."""


class TransientError(TideError):
    """A failure that may succeed on retry (OOM, lost worker, network)."""

    terminal = False
