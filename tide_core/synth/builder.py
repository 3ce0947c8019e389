"""Build a note string while recording gold spans by construction.

Every PHI value is appended through :meth:`NoteBuilder.phi`, which records the offsets of the
characters it has just written.  Nothing is ever searched for afterwards, so a value that also
occurs elsewhere in the text (a surname that is also a street name, a date inside a lab line)
is only labelled where it was inserted as PHI.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tide_core.types import LABELS


@dataclass(frozen=True)
class Piece:
    """A fragment of rendered text: ``label`` None is plain text, ``neg`` marks a hard negative."""

    text: str
    label: str | None = None
    neg: str | None = None


def lit(text: str) -> Piece:
    return Piece(text)


def phi(text: str, label: str) -> Piece:
    return Piece(text, label)


def neg(text: str, kind: str) -> Piece:
    return Piece(text, None, kind)


class NoteBuilder:
    """Accumulates text; ``spans`` and ``negatives`` hold (start, end, label/kind) triples."""

    __slots__ = ("_parts", "_len", "spans", "negatives")

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._len = 0
        self.spans: list[tuple[int, int, str]] = []
        self.negatives: list[tuple[int, int, str]] = []

    def __len__(self) -> int:
        return self._len

    def text(self, s: str) -> None:
        if s:
            self._parts.append(s)
            self._len += len(s)

    def phi(self, s: str, label: str) -> None:
        if label not in LABELS:
            raise ValueError(f"unknown label {label!r}")
        if not s or s != s.strip():
            raise ValueError(f"a {label} value must be non-empty and not padded with whitespace")
        start = self._len
        self.text(s)
        self.spans.append((start, self._len, label))

    def neg(self, s: str, kind: str) -> None:
        start = self._len
        self.text(s)
        self.negatives.append((start, self._len, kind))

    def add(self, piece: Piece) -> None:
        if piece.label is not None:
            self.phi(piece.text, piece.label)
        elif piece.neg is not None:
            self.neg(piece.text, piece.neg)
        else:
            self.text(piece.text)

    def extend(self, pieces: Iterable[Piece]) -> None:
        for p in pieces:
            self.add(p)

    def tail(self, n: int = 1) -> str:
        """The last ``n`` characters written (for separator decisions)."""
        out = ""
        for part in reversed(self._parts):
            out = part + out
            if len(out) >= n:
                break
        return out[-n:]

    def build(self) -> str:
        return "".join(self._parts)
