"""Token windows over a whole note, built from the real tokenizer's offset mapping.

A transformer sees at most ``window`` tokens (512 for BERT-style encoders, special tokens
included).  Long notes are therefore cut into overlapping windows; each window is run
separately and the per-token predictions are stitched back into one sequence per note.

Why it is done this way:

* The note is tokenized **once** (fast tokenizer, ``return_offsets_mapping``) and windows are
  slices of that one id sequence.  Re-tokenizing per window would cost O(windows x note) and
  could split words differently at window edges; slicing cannot.  A 100k-character note is one
  tokenizer call (~0.3 s) and a few hundred slices.
* Every token of the note is *owned* by exactly one window (its *core*).  Neighbours share
  ``overlap`` tokens; the shared run is split at its midpoint, so each window keeps the
  tokens where it has the most context on both sides.  Ownership is a pure function of
  (number of tokens, window, overlap): deterministic across runs and machines.
* Nothing is truncated: the last window always reaches the last token.
* Offsets are character offsets into the original note text (end-exclusive), so stitched
  predictions map straight back to spans in the note; no text normalisation is involved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tide_core.errors import ConfigError

#: Offsets given to special tokens ([CLS], [SEP]): they cover no text.
SPECIAL_OFFSET: tuple[int, int] = (-1, -1)


@dataclass
class Window:
    """One model input cut from one note.

    ``input_ids`` includes the tokenizer's special tokens.  ``offsets`` and ``word_ids`` are
    aligned with ``input_ids``; special tokens have offsets ``(-1, -1)`` and word id ``-1``.
    ``core_start``/``core_end`` are positions *in this window* (indexes into ``input_ids``):
    the tokens this window owns after overlap resolution.  ``token_start`` is the note-level
    index of the window's first content token, so window position ``p`` is note token
    ``token_start + p - n_prefix``.
    """

    note_id: str
    index: int
    input_ids: list[int]
    offsets: list[tuple[int, int]]
    core_start: int
    core_end: int
    token_start: int = 0
    n_prefix: int = 0
    word_ids: list[int] | None = None
    n_windows: int = 1

    def __len__(self) -> int:
        return len(self.input_ids)

    @property
    def core_note_tokens(self) -> range:
        """Note-level token indexes owned by this window."""
        base = self.token_start - self.n_prefix
        return range(base + self.core_start, base + self.core_end)


@dataclass(frozen=True)
class TokenizedNote:
    """The whole note tokenized once, without special tokens."""

    note_id: str
    input_ids: list[int]
    offsets: list[tuple[int, int]]
    word_ids: list[int]


@dataclass(frozen=True)
class SpecialTokens:
    """Ids the tokenizer puts before and after a sequence (``[CLS]`` ... ``[SEP]`` for BERT)."""

    prefix: tuple[int, ...]
    suffix: tuple[int, ...]

    @property
    def count(self) -> int:
        return len(self.prefix) + len(self.suffix)


def special_tokens_of(tokenizer: Any) -> SpecialTokens:
    """Find the special tokens a tokenizer adds, by encoding one plain token both ways."""
    plain = tokenizer("a", add_special_tokens=False)["input_ids"]
    full = tokenizer("a", add_special_tokens=True)["input_ids"]
    n = len(plain)
    for i in range(len(full) - n + 1):
        if list(full[i : i + n]) == list(plain):
            return SpecialTokens(tuple(full[:i]), tuple(full[i + n :]))
    raise ConfigError(
        "E351",
        "cannot determine the tokenizer's special tokens",
        hint="use a Hugging Face fast tokenizer (tokenizer.json) with the model",
    )


def tokenize_note(tokenizer: Any, note_id: str, text: str) -> TokenizedNote:
    """Tokenize ``text`` once with offsets.  Requires a fast tokenizer."""
    if not getattr(tokenizer, "is_fast", False):
        raise ConfigError(
            "E352",
            "the model's tokenizer is not a fast tokenizer; offsets are unavailable",
            hint="save the tokenizer with tokenizer.json (PreTrainedTokenizerFast)",
        )
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    ids = list(enc["input_ids"])
    offsets = [(int(a), int(b)) for a, b in enc["offset_mapping"]]
    try:
        words = [(-1 if w is None else int(w)) for w in enc.word_ids()]
    except Exception:  # tokenizers without word ids: every token is its own word
        words = list(range(len(ids)))
    return TokenizedNote(note_id, ids, offsets, words)


def window_starts(n_tokens: int, content: int, overlap: int) -> list[int]:
    """Start token of each window: stride ``content - overlap``; the last window reaches the end."""
    if n_tokens <= 0:
        return []
    if n_tokens <= content:
        return [0]
    stride = content - overlap
    starts = list(range(0, n_tokens - content, stride))
    starts.append(n_tokens - content)  # last window flush with the end: no truncation
    # the flush window may sit closer to its neighbour than the stride; drop a redundant one
    if len(starts) >= 2 and starts[-1] <= starts[-2]:
        starts.pop(-2)
    return starts


def core_bounds(starts: Sequence[int], n_tokens: int, content: int) -> list[tuple[int, int]]:
    """Note-level [start, end) token range owned by each window: shared runs split at their midpoint."""
    bounds: list[tuple[int, int]] = []
    for k, s in enumerate(starts):
        lo = 0 if k == 0 else bounds[-1][1]
        if k + 1 < len(starts):
            nxt = starts[k + 1]
            shared_end = s + content  # first token the next window has but this one lacks
            hi = nxt + (shared_end - nxt) // 2
        else:
            hi = n_tokens
        bounds.append((lo, hi))
    return bounds


def check_window_settings(window: int, overlap: int, n_special: int) -> int:
    """Validate settings and return the content-token budget per window."""
    content = window - n_special
    if content < 2:
        raise ConfigError(
            "E353",
            f"window={window} leaves no room for text after {n_special} special tokens",
            hint="use a window of at least 8 tokens (512 for BERT-style models)",
        )
    if overlap < 0 or overlap >= content:
        raise ConfigError(
            "E354",
            f"overlap={overlap} must be >= 0 and smaller than the window's {content} content tokens",
            hint="the default is overlap=40 with window=512",
        )
    return content


def windows_from_tokens(
    tok: TokenizedNote, special: SpecialTokens, window: int = 512, overlap: int = 40
) -> list[Window]:
    """Cut a tokenized note into windows (pure; no tokenizer needed)."""
    content = check_window_settings(window, overlap, special.count)
    n = len(tok.input_ids)
    starts = window_starts(n, content, overlap)
    bounds = core_bounds(starts, n, content)
    pre, suf = list(special.prefix), list(special.suffix)
    np_ = len(pre)
    out: list[Window] = []
    for k, (s, (lo, hi)) in enumerate(zip(starts, bounds, strict=True)):
        e = min(n, s + content)
        ids = pre + tok.input_ids[s:e] + suf
        offs = [SPECIAL_OFFSET] * np_ + tok.offsets[s:e] + [SPECIAL_OFFSET] * len(suf)
        words = [-1] * np_ + tok.word_ids[s:e] + [-1] * len(suf)
        out.append(
            Window(
                note_id=tok.note_id,
                index=k,
                input_ids=ids,
                offsets=offs,
                core_start=np_ + (lo - s),
                core_end=np_ + (hi - s),
                token_start=s,
                n_prefix=np_,
                word_ids=words,
                n_windows=len(starts),
            )
        )
    return out


def make_windows(
    tokenizer: Any, note_id: str, text: str, window: int = 512, overlap: int = 40, special: SpecialTokens | None = None
) -> list[Window]:
    """Tokenize ``text`` once and cut it into windows of at most ``window`` tokens."""
    special = special or special_tokens_of(tokenizer)
    return windows_from_tokens(tokenize_note(tokenizer, note_id, text), special, window, overlap)


def stitch(windows: Sequence[Window], per_window: Sequence[Sequence[Any]]) -> list[Any]:
    """Concatenate per-token values of each window's core into one note-level sequence.

    ``per_window[i]`` is aligned with ``windows[i].input_ids``.  Windows are taken in index
    order, so the result is deterministic whatever order predictions came back in.
    """
    order = sorted(range(len(windows)), key=lambda i: windows[i].index)
    out: list[Any] = []
    for i in order:
        w = windows[i]
        out.extend(per_window[i][w.core_start : w.core_end])
    return out


def stitched_offsets(windows: Sequence[Window]) -> list[tuple[int, int]]:
    return stitch(windows, [w.offsets for w in windows])


def stitched_word_ids(windows: Sequence[Window]) -> list[int]:
    return stitch(
        windows,
        [
            w.word_ids
            if w.word_ids is not None
            else list(range(w.token_start - w.n_prefix, w.token_start - w.n_prefix + len(w)))
            for w in windows
        ],
    )
