"""The tag set of TIDE token classifiers and the char-span -> token-tag alignment.

Tags are ``O`` plus ``B-X``/``I-X`` for every PHI label (BIO) or ``X`` for every label (IO).
Alignment uses the tokenizer's character offsets, so it is exact for any tokenizer: a token is
inside a span when their character ranges overlap; the first such token gets ``B-``.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from tide_core.errors import ConfigError
from tide_core.spans import Span
from tide_core.types import LABELS

IGNORE_INDEX = -100  # special tokens and padding: no loss


def tag_names(scheme: str = "BIO", labels: Sequence[str] = LABELS) -> list[str]:
    scheme = scheme.upper()
    if scheme == "BIO":
        return ["O"] + [f"{p}-{lab}" for lab in labels for p in ("B", "I")]
    if scheme == "IO":
        return ["O"] + list(labels)
    raise ConfigError("E330", f"unknown tag scheme {scheme!r}", hint="use BIO or IO")


def align_tags(
    offsets: Sequence[tuple[int, int]], spans: Sequence[Span], tag_index: dict[str, int], scheme: str = "BIO"
) -> list[int]:
    """Tag id per token (``IGNORE_INDEX`` for special tokens with offsets (-1, -1) or empty ones)."""
    out = [0] * len(offsets)
    for i, (a, b) in enumerate(offsets):
        if a < 0 or b <= a:
            out[i] = IGNORE_INDEX
    ordered = sorted(spans, key=lambda s: (s.start, -s.end))
    # tokens are sorted by offset; walk spans with a moving pointer
    starts = [a for a, _ in offsets]

    for s in ordered:
        j = max(0, bisect.bisect_left(starts, s.start) - 1)
        first = True
        while j < len(offsets):
            a, b = offsets[j]
            if a >= s.end:
                break
            if a >= 0 and b > a and a < s.end and b > s.start and out[j] == 0:
                if scheme.upper() == "BIO":
                    out[j] = tag_index[("B-" if first else "I-") + s.label]
                else:
                    out[j] = tag_index[s.label]
                first = False
            j += 1
    return out
