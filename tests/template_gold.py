"""Tiny template corpora for model tests: gold spans recorded while each text is built."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from tide_core.evaluation.gold_io import GoldDoc
from tide_core.spans import Span


def template_corpus(
    templates: Sequence[str],
    value: Callable[[str, random.Random], str],
    n: int,
    seed: int,
    prefix: str,
    sentences: tuple[int, int],
) -> list[GoldDoc]:
    """``n`` documents of ``sentences`` (min, max) random templates; ``{LABEL}`` slots get ``value``."""
    r = random.Random(seed)
    docs = []
    for i in range(n):
        note_id = f"{prefix}{seed}-{i}"
        text, spans = "", []
        for _ in range(r.randint(*sentences)):
            tpl = r.choice(templates)
            pos = 0
            while "{" in tpl[pos:]:
                a = tpl.index("{", pos)
                b = tpl.index("}", a)
                text += tpl[pos:a]
                label = tpl[a + 1 : b]
                v = value(label, r)
                spans.append(Span(note_id, len(text), len(text) + len(v), label))
                text += v
                pos = b + 1
            text += tpl[pos:] + " "
        docs.append(GoldDoc(note_id, f"p{i}", text, tuple(spans), {}))
    return docs
