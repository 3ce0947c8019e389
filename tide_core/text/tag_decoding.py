"""Token tags -> character spans (BIO and IO schemes).

Decoding works on one note-level token sequence (the stitched cores of all windows), so an
entity that straddles a window boundary is decoded once, as one span: there is nothing to
merge afterwards, and the result does not depend on where the windows were cut.

Word rule: a sub-token that continues a letter run or a digit run of the same word ("smi" +
"##th", "123" + "##45") takes the tag of the sub-token before it (the usual first-sub-token
convention of WordPiece classifiers), so a span never ends inside a name or a number; a switch
between digits and letters ("67" + "##yo") is left to the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

Scheme = str  # "BIO" | "IO"


@dataclass(frozen=True)
class TagInfo:
    """What one model tag means: a prefix (B, I or O) and our PHI label (None for O / ignored)."""

    prefix: str
    label: str | None


@dataclass(frozen=True)
class DecodedSpan:
    start: int
    end: int
    label: str
    score: float


def parse_tag(raw: str) -> tuple[str, str | None]:
    """Split a model label such as ``B-PATIENT``, ``I_PER``, ``O`` or ``DATE`` into (prefix, entity)."""
    raw = str(raw).strip()
    if raw.upper() in ("O", "OUTSIDE", "NONE", ""):
        return "O", None
    for sep in ("-", "_"):
        if len(raw) > 2 and raw[1] == sep and raw[0].upper() in ("B", "I", "E", "S", "L", "U"):
            p = raw[0].upper()
            # BIOES/BILOU: S/U start and end; E/L continue
            p = {"S": "B", "U": "B", "E": "I", "L": "I"}.get(p, p)
            return p, raw[2:]
    return "I", raw  # IO scheme: a bare entity name


def _same_class(text: str, a: int) -> bool:
    """True when the characters on both sides of offset ``a`` are both letters or both digits
    ("Smi|th", "123|45"), i.e. a sub-token split inside one run, not "67|yo"."""
    if a <= 0 or a >= len(text):
        return False
    x, y = text[a - 1], text[a]
    return (x.isalpha() and y.isalpha()) or (x.isdigit() and y.isdigit())


def detect_scheme(raw_labels: Sequence[str]) -> Scheme:
    return "BIO" if any(parse_tag(r)[0] == "B" for r in raw_labels) else "IO"


def decode(
    tags: Sequence[TagInfo],
    probs: Sequence[float],
    offsets: Sequence[tuple[int, int]],
    word_ids: Sequence[int],
    text: str,
    scheme: Scheme = "BIO",
) -> list[DecodedSpan]:
    """Decode aligned per-token tags into character spans in ``text``.

    ``scheme="BIO"``: a span starts at B-X, or at I-X that does not continue an X span
    (lenient, so a missed B never loses an entity); a B-X touching the open X span with no
    character between them continues it.  ``scheme="IO"``: maximal runs of the
    same label; two adjacent entities of one label cannot be told apart, which is the
    scheme's known limit.  Score = mean probability of the span's tokens.  When the tokens of
    one span disagree on the label, the label with the largest summed probability wins.
    """
    spans: list[DecodedSpan] = []
    cur_label: str | None = None
    cur_start = cur_end = 0
    cur_probs: list[float] = []
    votes: dict[str, float] = {}
    prev_word = -2
    prev_tag: TagInfo | None = None

    def close() -> None:
        nonlocal cur_label, cur_probs
        if cur_label is not None:
            s, e = cur_start, cur_end
            while s < e and text[s].isspace():
                s += 1
            while e > s and text[e - 1].isspace():
                e -= 1
            if e > s:
                label = max(sorted(votes), key=lambda k: votes[k]) if votes else cur_label
                spans.append(DecodedSpan(s, e, label, sum(cur_probs) / len(cur_probs)))
        cur_label, cur_probs = None, []
        votes.clear()

    for i, tag in enumerate(tags):
        a, b = offsets[i]
        if a < 0 or b <= a:
            continue
        w = word_ids[i]
        if w == prev_word and w >= 0 and prev_tag is not None and _same_class(text, a):
            tag = prev_tag  # continuation sub-token inherits its word's first tag
            if cur_label is not None:
                cur_end = b
                cur_probs.append(float(probs[i]))
            prev_word = w
            continue
        prev_word, prev_tag = w, tag
        if tag.label is None:
            close()
            continue
        # A B- tag glued to an open span (no character between, e.g. "9/" + "9/1992") continues
        # it: gold spans never touch without a separator.  The tokens vote on the label.
        glued = cur_label is not None and a == cur_end
        # I-Y right after an open X span (only whitespace between) is the same entity with a
        # wavering label: continue it and let the tokens vote on the label.
        inside = (
            scheme == "BIO"
            and tag.prefix == "I"
            and cur_label is not None
            and text[cur_end:a].strip() == ""
            and a - cur_end <= 1
        )
        if inside or glued:
            starts_new = False
        else:
            starts_new = (cur_label != tag.label) or (scheme == "BIO" and tag.prefix == "B" and not glued)
        if starts_new:
            close()
            cur_label, cur_start = tag.label, a
        cur_end = b
        cur_probs.append(float(probs[i]))
        votes[tag.label] = votes.get(tag.label, 0.0) + float(probs[i])
    close()
    return spans
