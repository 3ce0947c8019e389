"""The demo's gold-answered audit counts a surface only outside the surrogates."""

from __future__ import annotations

from tide_core.evaluation.gold_io import GoldDoc
from tide_core.release.gold_audit import leaked
from tide_core.spans import Span

TEXT = "Lives in Florida. Moved from Ohio."
GOLD = GoldDoc("n1", "p1", TEXT, (Span("n1", 9, 16, "LOCATION"), Span("n1", 29, 33, "LOCATION")))


def test_a_surrogate_equal_to_another_mention_is_no_leak():
    released = "Lives in Texas. Moved from Florida."  # Ohio's surrogate happens to be Florida
    assert not leaked(GOLD, released, [(9, 14), (27, 34)])
    assert leaked(GOLD, released, [(9, 14)])  # the same text outside a surrogate is a leak


def test_a_missed_mention_is_a_leak():
    assert leaked(GOLD, "Lives in Florida. Moved from Utah.", [(29, 33)])
