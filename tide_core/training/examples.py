"""Gold documents -> training windows (token ids + tag ids).

Each document is tokenized once, its char spans aligned to tokens, and the token sequence cut
with the same windowing as inference (``tide_core.text.windowing``), so training sees exactly
the kind of input the recognizer produces.  Every token of a training window carries a label
(not only its core): overlap tokens are simply seen twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tide_core.text.windowing import special_tokens_of, tokenize_note, windows_from_tokens
from tide_core.training.tags import IGNORE_INDEX, align_tags


@dataclass
class TrainWindow:
    input_ids: list[int]
    labels: list[int]


def build_windows(
    docs: Iterable[Any], tokenizer: Any, tags: Sequence[str], scheme: str = "BIO", window: int = 256, overlap: int = 32
) -> list[TrainWindow]:
    """``docs``: GoldDoc-like objects (``note_id``, ``text``, ``spans``)."""
    special = special_tokens_of(tokenizer)
    index = {t: i for i, t in enumerate(tags)}
    out: list[TrainWindow] = []
    for doc in docs:
        tok = tokenize_note(tokenizer, doc.note_id, doc.text)
        if not tok.input_ids:
            continue
        note_tags = align_tags(tok.offsets, list(doc.spans), index, scheme)
        for w in windows_from_tokens(tok, special, window, overlap):
            n_content = len(w.input_ids) - special.count
            body = note_tags[w.token_start : w.token_start + n_content]
            labels = [IGNORE_INDEX] * len(special.prefix) + body + [IGNORE_INDEX] * len(special.suffix)
            out.append(TrainWindow(w.input_ids, labels))
    return out
