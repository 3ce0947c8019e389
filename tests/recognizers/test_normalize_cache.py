"""The fast paths of ``tide_core.text.normalize``: the suspect-character set lookup, the bulk copy
of ASCII runs in the full path, and the bounded, thread-safe cache of full-path views.

The cache exposes no statistics, so these tests read its private structure
(``normalize._VIEWS._views``, an OrderedDict keyed by note text, least recently used first, and
``normalize._VIEWS._chars``, the characters it holds) and the bounds it was built with
(``max_views``, ``max_chars``).  Every test starts and ends with an empty cache.
"""

from __future__ import annotations

import random
import re
import sys
import threading
import time
import unicodedata
from collections import OrderedDict

import pytest

from tide_core.text import normalize as nz
from tide_core.text.normalize import CONFUSABLES, NormalizedText, normalize, normalize_surface

CACHE = nz._VIEWS


@pytest.fixture(autouse=True)
def _empty_cache():
    CACHE.clear()
    yield
    CACHE.clear()


def _cached() -> list[str]:
    return list(CACHE._views)  # private: the cache exposes no listing


def _assert_within_bounds() -> None:
    views = CACHE._views  # private: see the module docstring
    assert len(views) <= 64
    assert CACHE._chars == sum(len(t) for t in views) <= 500_000
    assert all(v.original == t for t, v in views.items())


def _non_normal(i: int, size: int = 0) -> str:
    """A distinct text that takes the full path (a zero-width space and a Cyrillic look-alike)."""
    head = f"Pt Sm\u0456th {i} MRN 12\u200b34"
    return head + "x" * max(0, size - len(head))


def test_bounds_are_the_documented_ones():
    assert (CACHE.max_views, CACHE.max_chars) == (64, 500_000)


def test_the_same_text_twice_is_one_cache_hit_with_an_equal_view():
    text = "Pt Sm\u0456th, MRN 12\u200b34, ｔｅｌ ５５５"
    first = normalize(text)
    assert _cached() == [text]
    second = normalize(text)
    assert second is first  # the cached object: a hit
    assert second == nz._full_view(text)  # and what the full path computes
    assert first.text == "Pt Smith, MRN 1234, tel 555"
    CACHE.clear()
    third = normalize(text)
    assert third == first and third is not first  # a miss computes the same view again


def test_texts_already_normal_are_never_cached():
    for text in ("John Smith MRN 1234", "", "José Müller, 東京, Ωμέγ", "Straße 5 \u00e9", "naïve café"):
        assert nz._is_normal(text)
        view = normalize(text)
        assert view.identity and view.text is text
    assert _cached() == []
    # a text wholly in Cyrillic holds look-alikes, so it takes the full path (which leaves it alone)
    text = "Привет мир"
    assert not nz._is_normal(text)
    assert normalize(text).text == text and normalize(text).identity


def test_the_cache_never_holds_more_than_64_views_and_drops_the_least_recently_used():
    texts = [_non_normal(i) for i in range(200)]
    for text in texts:
        normalize(text)
        _assert_within_bounds()
    assert _cached() == texts[-64:]
    normalize(texts[-64])  # a hit makes it the most recently used ...
    normalize(_non_normal(1000))  # ... so the next new view drops the one after it
    assert texts[-64] in CACHE._views and texts[-63] not in CACHE._views
    assert _cached()[-2:] == [texts[-64], _non_normal(1000)]
    _assert_within_bounds()


def test_the_cache_never_holds_more_than_500000_characters():
    texts = [_non_normal(i, 40_000) for i in range(30)]
    for text in texts:
        normalize(text)
        _assert_within_bounds()
    assert _cached() == texts[-12:]  # 12 * 40,000 <= 500,000 < 13 * 40,000
    assert CACHE._chars == 480_000


def test_a_text_longer_than_the_character_bound_is_not_cached():
    small = [_non_normal(i) for i in range(5)]
    for text in small:
        normalize(text)
    too_long = _non_normal(99, 500_001)
    view = normalize(too_long)
    assert view.text.startswith("Pt Smith 99 MRN 1234") and len(view.text) == 500_001 - 1
    assert _cached() == small  # not cached, and nothing evicted for it
    exactly = _non_normal(98, 500_000)
    normalize(exactly)
    assert _cached() == [exactly]  # the bound itself fits, alone
    _assert_within_bounds()


def test_concurrent_use_gives_the_views_of_sequential_use():
    texts = [_non_normal(i, random.Random(i).randint(20, 400)) for i in range(100)]  # more than 64
    texts += [f"Dr Lee {i}" for i in range(20)]  # normal texts in between
    expected = {t: normalize(t) for t in texts}  # sequential
    CACHE.clear()
    n_threads = 8
    barrier = threading.Barrier(n_threads)
    errors: list[str] = []

    def work(seed: int) -> None:
        order = texts * 2
        random.Random(seed).shuffle(order)
        barrier.wait()
        for t in order:
            if normalize(t) != expected[t]:
                errors.append(t)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=work, args=(seed,)) for seed in range(n_threads)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors
    _assert_within_bounds()
    for text, view in CACHE._views.items():
        assert view == expected[text]


class _SlowViews(OrderedDict):
    """The cache's dict, made to give up the interpreter inside every update (a race window)."""

    def __setitem__(self, key, value):
        time.sleep(0.0002)
        super().__setitem__(key, value)

    def popitem(self, last=True):
        time.sleep(0.0002)
        return super().popitem(last=last)


def test_cache_updates_are_atomic_under_contention(monkeypatch):
    """With the dict slowed down, unlocked updates would lose counts or pop from an emptied dict;
    the lock keeps the character count exact and the bounds held."""
    monkeypatch.setattr(CACHE, "_views", _SlowViews())  # private: see the module docstring
    texts = [_non_normal(i, 50 + 7 * i) for i in range(90)]
    errors: list[Exception] = []
    barrier = threading.Barrier(6)

    def work(seed: int) -> None:
        order = list(texts)
        random.Random(seed).shuffle(order)
        barrier.wait()
        try:
            for t in order:
                if seed % 2:
                    CACHE.put(nz._full_view(t))
                else:
                    normalize(t)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    _assert_within_bounds()


def test_normalize_surface_equals_the_view_text_and_bypasses_the_cache():
    rng = random.Random(5)
    alphabet = "aZ5 -.\u200b\u00ad\u00a0\u0456\u043e\uff11\ufb01e\u0301\u0663ı\u2060é"
    values = ["", "555-0199", "555\u200b-0199", "Sm\u0456th", "Ｍｒ ５", "ﬁle", "Ⅻ", "e\u0301", "\u0663\u0664"]
    values += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 20))) for _ in range(300)]
    surfaces = [normalize_surface(v) for v in values]
    assert _cached() == []
    for value, surface in zip(values, surfaces, strict=True):
        assert surface == normalize(value).text, repr(value)


# --- the suspect check and the full path -------------------------------------------------------


#: The minus, separator-dot and slash look-alikes the view folds besides categories Pd/Zs/Zl/Zp.
FOLDED_EXTRA = "\u2212\u2796\u02d7\u2043\u00b7\u2027\u30fb\u2219\u22c5\u2e31\u2044\u2215"


def test_suspect_check_agrees_with_the_regular_expression_it_replaced():
    """Before the set lookup the check was this character class plus non-ASCII ``\\d``."""
    chars = sorted(nz._ignorable() | set(CONFUSABLES))
    old = re.compile("[" + "".join(re.escape(c) for c in chars) + "]|(?![0-9])\\d")
    code_points = [*range(0x80, 0x10000), *range(0x1D7CE, 0x1D800), *range(0x104A0, 0x104AA)]
    code_points += [*range(0xE0000, 0xE0080), *range(0xE0100, 0xE01F0), 0x1F600, 0x1D400]
    for cp in code_points:
        c = chr(cp)
        if 0xD800 <= cp <= 0xDFFF:
            continue
        folded = unicodedata.category(c) in ("Pd", "Zs", "Zl", "Zp") or c in FOLDED_EXTRA  # tide.normalize@2
        assert nz._has_suspect("ab " + c + " 9") == (old.search(c) is not None or folded), hex(cp)
    assert not nz._has_suspect("plain ASCII 0123456789")


def test_text_is_normal_exactly_when_it_is_ascii_or_stable_without_suspects():
    samples = ["abc", "José", "Sm\u0456th", "x\u200by", "\u0663", "ﬁ", "e\u0301", "Ωμέγα", "東京", "\u00a0"]
    for text in samples:
        stable = unicodedata.is_normalized("NFKC", text) and not any(c in nz._suspects() for c in text)
        assert nz._is_normal(text) == (text.isascii() or stable), text
        if nz._is_normal(text):
            assert normalize(text).identity


def _cluster_by_cluster(text: str) -> NormalizedText:
    """The full path without the bulk copy of ASCII runs: every cluster on its own."""
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    nz._add_clusters(text, 0, len(text), chars, starts, ends)
    view = "".join(chars)
    if nz._fold_confusables(chars):
        chars, starts, ends = nz._recompose(chars, starts, ends)
        view = "".join(chars)
    if nz._SPACED.search(view):  # spaced-out runs are joined after folding (tide.normalize@2)
        chars, starts, ends = nz._join_spaced(view, chars, starts, ends)
        view = "".join(chars)
    if view == text:
        return NormalizedText(text, text)
    return NormalizedText(text, view, tuple(starts), tuple(ends))


def test_bulk_copy_of_ascii_runs_equals_the_cluster_by_cluster_path():
    cases = [
        "e\u0301",  # a mark after the last character of an ASCII run composes with it
        "cafe\u0301 ok",
        "e\u200b\u0301x",  # a removed character between a letter and its mark
        "abc\u200b",
        "\u200babc",
        "o\u0301\u0456",
        "\u043e\u0301x1",  # a folded look-alike composes with its mark
        "\u1100\u1161\u11a8 ab",
        "a\u0308\u0301b\u0327",
        "x" * 300 + "\u0301",
    ]
    rng = random.Random(5)
    alphabet = [*"abcXYZ019 -.,\n\t", "\u0301", "\u0308", "\u0327", "\u200b", "\u00ad", "\u00a0", "\u0456"]
    alphabet += ["\u043e", "\uff11", "\ufb01", "\u0663", "\u1100", "\u1161", "\u11a8", "\ufe0f", "é", "\U0001f600"]
    cases += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(1500)]
    for text in cases:
        assert nz._full_view(text) == _cluster_by_cluster(text), repr(text)
    view = nz._full_view("e\u0301")
    assert (view.text, view.starts, view.ends) == ("é", (0,), (2,))
