"""Windowing over the real MiniLM fast tokenizer: cores partition tokens, bounds, offsets."""

from __future__ import annotations

import random
import time
from itertools import pairwise

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tide_core.errors import ConfigError
from tide_core.text.windowing import (
    SpecialTokens,
    TokenizedNote,
    core_bounds,
    make_windows,
    special_tokens_of,
    stitch,
    stitched_offsets,
    tokenize_note,
    window_starts,
    windows_from_tokens,
)


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from tide_core.model_location import pretrained_encoder_dir

    return AutoTokenizer.from_pretrained(str(pretrained_encoder_dir()), local_files_only=True)


def _fake_tokens(n: int) -> TokenizedNote:
    return TokenizedNote("n", list(range(1000, 1000 + n)), [(2 * i, 2 * i + 1) for i in range(n)], list(range(n)))


@settings(max_examples=300, deadline=None)
@given(n=st.integers(0, 3000), window=st.integers(6, 600), overlap=st.integers(0, 300))
def test_cores_partition_tokens_and_windows_are_bounded(n, window, overlap):
    special = SpecialTokens((101,), (102,))
    content = window - 2
    if overlap >= content:
        with pytest.raises(ConfigError):
            windows_from_tokens(_fake_tokens(n), special, window, overlap)
        return
    ws = windows_from_tokens(_fake_tokens(n), special, window, overlap)
    owned = [t for w in ws for t in w.core_note_tokens]
    assert owned == list(range(n))  # every token exactly once, in order
    for w in ws:
        assert len(w.input_ids) <= window
        assert w.input_ids[0] == 101 and w.input_ids[-1] == 102
        assert 1 <= w.core_start <= w.core_end <= len(w.input_ids) - 1  # cores never include specials
        # the window really holds the tokens it owns
        body = w.input_ids[w.core_start : w.core_end]
        assert body == [1000 + t for t in w.core_note_tokens]
    for a, b in pairwise(ws):
        shared = a.token_start + (len(a.input_ids) - 2) - b.token_start
        assert shared >= min(overlap, n)  # neighbours share at least `overlap` tokens
    if n:
        assert ws[-1].token_start + len(ws[-1].input_ids) - 2 == n  # no truncation


def test_window_starts_examples():
    assert window_starts(0, 510, 40) == []
    assert window_starts(510, 510, 40) == [0]
    assert window_starts(511, 510, 40) == [0, 1]
    starts = window_starts(2000, 510, 40)
    assert starts[:3] == [0, 470, 940] and starts[-1] == 2000 - 510
    bounds = core_bounds(starts, 2000, 510)
    assert bounds[0] == (0, 470 + 20)  # split at the midpoint of the 40 shared tokens


_pieces = list("abcXYZ019 .,-:/\n\téü") + ["Smith", "MRN", " 12/03/2021 ", "\u00a0", "😀"]
texts = st.lists(st.sampled_from(_pieces), max_size=150).map("".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts, window=st.integers(8, 64), overlap=st.integers(0, 5))
def test_real_tokenizer_offsets_map_back_into_text(tokenizer, text, window, overlap):
    ws = make_windows(tokenizer, "n1", text, window=window, overlap=overlap)
    tok = tokenize_note(tokenizer, "n1", text)
    offs = stitched_offsets(ws)
    assert offs == tok.offsets  # stitching cores recovers the note's tokens
    for w in ws:
        assert len(w.input_ids) <= window
        for (a, b), tid in zip(w.offsets, w.input_ids, strict=True):
            if (a, b) == (-1, -1):
                assert tid in (tokenizer.cls_token_id, tokenizer.sep_token_id)
                continue
            assert 0 <= a < b <= len(text)
            piece = text[a:b]
            assert piece.strip() == piece and piece  # tokens never cover whitespace


def test_long_note_is_tokenized_once_and_fully_covered(tokenizer):
    rng = random.Random(3)
    words = [
        "Patient",
        "John",
        "Smith",
        "seen",
        "on",
        "03/04/2021",
        "MRN:",
        "12345678",
        "at",
        "St.",
        "Mary's",
        "Medical",
        "Center,",
        "follow-up",
        "in",
        "2",
        "weeks.",
    ]
    text = " ".join(rng.choice(words) for _ in range(20000))
    assert len(text) > 100_000
    t0 = time.perf_counter()
    ws = make_windows(tokenizer, "long", text, window=512, overlap=40)
    elapsed = time.perf_counter() - t0
    n = len(tokenize_note(tokenizer, "long", text).input_ids)
    assert len(ws) > 50 and all(len(w.input_ids) <= 512 for w in ws)
    assert sum(w.core_end - w.core_start for w in ws) == n
    assert max(b for w in ws for _, b in w.offsets) == len(text.rstrip())  # last character reached
    assert elapsed < 10.0


def test_stitch_ignores_arrival_order(tokenizer):
    text = "Seen by Dr. Alice Brown on 2020-01-02. " * 40
    ws = make_windows(tokenizer, "n", text, window=32, overlap=6)
    values = [[(w.index, p) for p in range(len(w.input_ids))] for w in ws]
    forward = stitch(ws, values)
    rev = list(reversed(range(len(ws))))
    assert stitch([ws[i] for i in rev], [values[i] for i in rev]) == forward


def test_special_tokens_of_bert(tokenizer):
    sp = special_tokens_of(tokenizer)
    assert sp.prefix == (tokenizer.cls_token_id,) and sp.suffix == (tokenizer.sep_token_id,)


def test_empty_text_has_no_windows(tokenizer):
    assert make_windows(tokenizer, "e", "") == []
    assert make_windows(tokenizer, "e", "   \n ") == []
