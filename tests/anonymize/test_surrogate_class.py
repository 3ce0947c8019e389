"""Name surrogates carry no class signal: whether a surrogate is a listed name or a spliced one
does not depend on whether the word it replaced was listed (issue 35, row 4)."""

from __future__ import annotations

import random

import pytest

from benchmarks.attacks import attack_name_class
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.anonymize.names import (
    LISTED_PERMILLE,
    generator_shaped,
    is_listed,
    spliced_name,
    surrogate_name,
    surrogate_token,
)
from tide_core.anonymize.surrogates import load_list, norm
from tide_core.synth import generate_heldout_dataset

KR = keyring_for_tests("class-study", "k1", "surrogate-class")
K2 = keyring_for_tests("class-study", "k2", "surrogate-class-2")


def _unlisted_words(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out: set[str] = set()
    while len(out) < n:
        w = "".join(rng.choice("bcdfghklmnprstvwz") + rng.choice("aeiouy") for _ in range(rng.randint(2, 4)))
        if not is_listed(w):
            out.add(w.capitalize())
    return sorted(out)


def test_listed_and_unlisted_words_get_listed_surrogates_equally_often():
    rng = random.Random(11)
    listed = rng.sample(load_list("first_names").entries + load_list("last_names").entries, 3000)
    unlisted = _unlisted_words(3000, 12)
    share_listed = sum(is_listed(surrogate_token(KR, w)) for w in listed) / len(listed)
    share_unlisted = sum(is_listed(surrogate_token(KR, w)) for w in unlisted) / len(unlisted)
    # the old design gave 1.0 and 0.0: the surrogate told the original's class
    assert abs(share_listed - share_unlisted) < 0.04
    assert abs(share_listed - LISTED_PERMILLE / 1000) < 0.04


@pytest.mark.parametrize(
    "words",
    [lambda: _unlisted_words(500, 3), lambda: list(load_list("last_names").entries[:500])],
    ids=["unlisted", "listed"],
)
def test_every_surrogate_word_is_listed_or_spliced_never_itself(words):
    for w in words():
        out = surrogate_token(KR, w)
        assert norm(out) != norm(w)
        assert is_listed(out) or generator_shaped(out)
        assert surrogate_token(KR, w.lower()) == out.lower()
        assert surrogate_token(KR, w.upper()) == out.upper()


def test_spliced_names_are_listed_looking_and_most_real_unlisted_names_could_be_one():
    rng = random.Random(4)
    draws = [spliced_name(rng.getrandbits(256)) for _ in range(3000)]
    made = [d for d in draws if d is not None]
    assert len(made) > 2800 and all(generator_shaped(d) and d.isalpha() and 2 <= len(d) <= 12 for d in made)
    assert len(set(made)) > 0.95 * len(made)
    # real unlisted names of the synthetic corpus (its own vocabulary, not the surrogate lists)
    gold = generate_heldout_dataset(120, seed=21).gold
    real = {
        w
        for d in gold
        for s in d.spans
        if s.label in ("PATIENT", "DOCTOR")
        for w in d.text[s.start : s.end].replace(",", " ").split()
        if w.isalpha() and len(w) > 3 and not w.isupper() and not is_listed(w)
    }
    assert len(real) > 20
    assert sum(generator_shaped(w) for w in real) / len(real) > 0.6


def test_same_name_same_surrogate_and_a_new_key_draws_again():
    names = ["John Smith", "Xavrielle Quondamir", "Mary-Ann O'Brien", "Adebayo Okafor"]
    a = [surrogate_name(KR, n) for n in names]
    assert a == [surrogate_name(KR, n) for n in names]
    assert all(x != y for x, y in zip(a, [surrogate_name(K2, n) for n in names], strict=True))


def test_class_attack_on_the_synthetic_corpus_is_near_chance():
    gold = list(generate_heldout_dataset(200, seed=9).gold)
    r = attack_name_class(gold, 9)
    assert r["surrogate_words"] > 500 and r["real_rare_words"] > 10
    assert r["surrogates_listed_or_shaped_share"] == 1.0
    # before: the surrogate's class equalled the original's for 99.98 % of words (AUC 1.00), and
    # "neither listed nor generator-shaped" singled out real unlisted names at AUC 0.96
    assert r["original_class_auc"] < 0.6
    assert r["auc_rare"] < 0.75
