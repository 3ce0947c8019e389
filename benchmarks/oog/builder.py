"""Piecewise document builder: every PHI span and clinical term is recorded as it is appended.

Noise that changes lengths (doubled spaces, hyphenated line breaks) is applied only to plain text
while appending; noise applied afterwards (line wrapping, casing) is strictly length-preserving,
so gold offsets stay exact by construction.  :meth:`DocBuilder.finish` re-checks everything.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence

from tide_core.spans import Span

TERM = "TERM"  # pseudo-label: clinical vocabulary (recorded in metadata, never a PHI span)

Piece = tuple[str, str | None]  # (surface, label); label None is plain text
Pieces = list[Piece]
SlotValue = Piece | Pieces | Callable[[], Piece | Pieces]
_SLOT = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class OffsetError(RuntimeError):
    """The generator produced an inconsistent document (a bug in the generator)."""


class DocBuilder:
    def __init__(self, note_id: str, rng: random.Random, *, double_space: float = 0.0, hyphenate: float = 0.0) -> None:
        self.note_id = note_id
        self.rng = rng
        self.parts: list[str] = []
        self.pos = 0
        self.spans: list[tuple[int, int, str]] = []
        self.terms: list[tuple[int, int]] = []
        self.tags: set[str] = set()
        self.double_space = double_space
        self.hyphenate = hyphenate

    # -- appending ---------------------------------------------------------------------------
    def raw(self, s: str) -> DocBuilder:
        self.parts.append(s)
        self.pos += len(s)
        return self

    def t(self, s: str) -> DocBuilder:
        """Plain (non-PHI) text, with optional length-changing noise."""
        if not s:
            return self
        if self.double_space and " " in s:
            s = re.sub(r" ", lambda m: "  " if self.rng.random() < self.double_space else " ", s)
        if self.hyphenate:
            s = re.sub(
                r"\b([a-z]{4,})([a-z]{4,})\b",
                lambda m: m.group(1) + "-\n" + m.group(2) if self.rng.random() < self.hyphenate else m.group(0),
                s,
            )
        return self.raw(s)

    def e(self, s: str, label: str | None) -> DocBuilder:
        """A PHI span (``label``), a clinical term (``TERM``) or plain text (``None``)."""
        if label is None:
            return self.t(s)
        if not s or s != s.strip():
            raise OffsetError(f"bad entity surface {s!r} ({label})")
        start = self.pos
        self.raw(s)
        if label == TERM:
            self.terms.append((start, self.pos))
        else:
            self.spans.append((start, self.pos, label))
        return self

    def c(self, s: str) -> DocBuilder:
        return self.e(s, TERM)

    def nl(self, k: int = 1) -> DocBuilder:
        return self.raw("\n" * k)

    def fill(self, template: str, slots: Mapping[str, SlotValue]) -> DocBuilder:
        """Render ``template``; ``{NAME}`` slots are (surface, label) tuples or callables."""
        last = 0
        for m in _SLOT.finditer(template):
            self.t(template[last : m.start()])
            val = slots[m.group(1)]
            if callable(val):
                val = val()
            self._put(val)
            last = m.end()
        self.t(template[last:])
        return self

    def _put(self, val: Piece | Pieces) -> None:
        # a value is (surface, label) or a list of such pieces
        if isinstance(val, list):
            for piece in val:
                self._put(piece)
        else:
            self.e(val[0], val[1])

    def tag(self, *names: str) -> None:
        self.tags.update(names)

    def tagged(self, name: str, piece: Piece) -> Piece:
        """Tag the document and return ``piece`` (for slot lambdas that tag what they place)."""
        self.tag(name)
        return piece

    # -- finishing -----------------------------------------------------------------------------
    def text(self) -> str:
        return "".join(self.parts)

    def finish(
        self, *, casing: str = "as_is", wrap: int | None = None
    ) -> tuple[str, tuple[Span, ...], list[list[int]]]:
        text = self.text()
        if wrap:
            text = _wrap(text, wrap, self.rng)
        if casing == "upper":
            text = "".join(ch.upper() if len(ch.upper()) == 1 else ch for ch in text)
        elif casing == "lower":
            text = "".join(ch.lower() if len(ch.lower()) == 1 else ch for ch in text)
        spans = tuple(Span(self.note_id, s, e, lab, 1.0, "gold@1") for s, e, lab in sorted(self.spans))
        terms = [list(t) for t in sorted(self.terms)]
        check_offsets(text, spans, terms)
        return text, spans, terms


def _wrap(text: str, width: int, rng: random.Random) -> str:
    """Replace spaces by newlines once a line passes ``width`` (length-preserving)."""
    chars = list(text)
    col = 0
    limit = width + rng.randint(-8, 8)
    for i, ch in enumerate(chars):
        if ch == "\n":
            col = 0
            continue
        col += 1
        if ch == " " and col >= limit:
            chars[i] = "\n"
            col = 0
            limit = width + rng.randint(-8, 8)
    return "".join(chars)


def check_offsets(text: str, spans: Sequence[Span], terms: Sequence[Sequence[int]]) -> None:
    """Self-check: non-empty, whitespace-trimmed, in-bounds, non-overlapping spans and terms."""
    prev_end = -1
    for sp in spans:
        surface = text[sp.start : sp.end]
        if sp.end > len(text) or not surface.strip() or surface != surface.strip():
            raise OffsetError(f"{sp.note_id}: bad span [{sp.start},{sp.end}) {sp.label}")
        if sp.start < prev_end:
            raise OffsetError(f"{sp.note_id}: overlapping spans at {sp.start}")
        prev_end = sp.end
    prev_end = -1
    for s, e in terms:
        surface = text[s:e]
        if e > len(text) or not surface.strip() or surface != surface.strip():
            raise OffsetError(f"bad clinical term offsets [{s},{e})")
        if s < prev_end:
            raise OffsetError(f"overlapping clinical terms at {s}")
        prev_end = e
        for sp in spans:
            if sp.start < e and s < sp.end:
                raise OffsetError(f"{sp.note_id}: clinical term [{s},{e}) overlaps a PHI span")
