"""Partial dates across keys, and dates no shift can handle.

* A year alone must not be recoverable by comparing two releases under different keys.  The
  measurement below is generic: for every candidate year it learns, from the real operator, which
  outputs that year can produce under an unknown key, and then asks which candidates explain the
  outputs two keys gave.  Moving a year by one in the patient's direction (the former rule) lets
  the pair pin the year for half the patients; the decade rule leaves ten candidates, always.
* A month + year always changes, moves in the patient's direction, and stays within a month of
  the patient's day offset.
* Dates outside years 1000..9998, or shifted out of them (placeholder note dates 0001-01-01 and
  9999-12-31 included), quarantine the note with E413 under either date policy; never E499.
"""

from __future__ import annotations

import random
from collections import defaultdict
from datetime import date, timedelta

import pytest

from tide_core.anonymize.dates import date_offset_days, shift_date, shift_note_date
from tide_core.anonymize.engine import Anonymizer
from tide_core.anonymize.keys import keyring_for_tests
from tide_core.config import TideConfig
from tide_core.engine.anonymization import anonymize_notes
from tide_core.errors import AnonymizationError
from tide_core.spans import Note, Span

K1 = keyring_for_tests("study-p", "k1", "partial-1")
K2 = keyring_for_tests("study-p", "k2", "partial-2")
PROBE = [keyring_for_tests("study-p", f"probe{i}", f"probe-{i}") for i in range(4)]
YEARS = range(1930, 2031)


def _support(year_text) -> dict[str, set[str]]:
    """For each candidate year: every output the operator gives it under unknown keys and patients."""
    out: dict[str, set[str]] = defaultdict(set)
    for y in YEARS:
        for kr in PROBE:
            for p in range(60):
                out[year_text(y)].add(shift_date(kr, f"probe-patient-{p}", year_text(y)))
    return out


def _linkage(year_text, n: int = 548, seed: int = 15) -> dict[str, float]:
    """Two-key attack on ``n`` year-only dates: share pinned to one year, and a guesser's hit rate
    with one release and with two (uniform guess among the years that explain what was seen)."""
    support = _support(year_text)
    r = random.Random(seed)
    pinned = hits_one = hits_two = 0
    for i in range(n):
        y = r.choice(YEARS[10:-10])
        text, pid = year_text(y), f"patient-{i}"
        o1, o2 = shift_date(K1, pid, text), shift_date(K2, pid, text)
        one = [c for c in support if o1 in support[c]]
        two = [c for c in one if o2 in support[c]]
        assert text in two, "the attack model must always keep the true year"
        pinned += len(two) == 1
        hits_one += 1 / len(one)
        hits_two += 1 / len(two)
    return {"pinned": pinned / n, "guess_one_key": hits_one / n, "guess_two_keys": hits_two / n}


@pytest.mark.parametrize("style", ["yyyy", "'yy"])
def test_two_keys_do_not_give_back_a_year_alone(style):
    year_text = (lambda y: str(y)) if style == "yyyy" else (lambda y: f"'{y % 100:02d}")
    m = _linkage(year_text)
    # No year-only date is pinned by comparing two keys (the former one-year rule: ~46%, 250 of 548).
    assert m["pinned"] == 0.0, m
    # A guesser does no better with two releases than with one: comparing keys adds nothing ...
    assert m["guess_two_keys"] == pytest.approx(m["guess_one_key"]), m
    # ... and no better than chance inside a decade.
    assert m["guess_two_keys"] <= 0.1 + 1e-9, m


def test_a_year_alone_is_its_decade_under_every_key_and_never_unchanged():
    anonymizer = Anonymizer(K1)
    for y in (1999, 2000, 2010, 2019, 2024):
        for pid in ("a", "b", "c"):
            for kr in (K1, K2):
                assert shift_date(kr, pid, str(y)) == f"{y - y % 10}s"
                assert shift_date(kr, pid, f"'{y % 100:02d}") == f"'{(y - y % 10) % 100:02d}s"
        text = f"Appendectomy in {y}."
        span = Span("n1", 16, 20, "DATE")
        out = anonymizer.anonymize(Note("n1", "p1", text, {"note_date": "2021-06-01"}), [span])
        assert out.text == f"Appendectomy in {y - y % 10}s." and out.spans[0].operator == "date.decade"
        assert str(y) not in out.text or y % 10 == 0  # "2010" -> "2010s": the year is no longer a year


def test_month_year_changes_follows_the_offset_and_separates_keys():
    r = random.Random(5)
    pinned = 0
    n = 1000
    for i in range(n):
        pid = f"patient-{i}"
        y, m = r.randint(1950, 2030), r.randint(1, 12)
        value = f"{y}-{m:02d}"
        out = shift_date(K1, pid, value)
        assert out != value
        oy, om = int(out[:4]), int(out[5:])
        months = (oy * 12 + om) - (y * 12 + m)
        off = date_offset_days(K1, pid)
        assert (months > 0) == (off > 0)
        assert abs(months * 30.44 - off) <= 31  # within a month of the patient's full dates
        o2 = shift_date(K2, pid, value)
        m2 = int(o2[:4]) * 12 + int(o2[5:]) - (y * 12 + m)
        pinned += abs(months - m2) == 12  # only (-6, +6) pins the month: both offsets >= 168 days
    assert pinned / n < 0.02


# --- extreme dates --------------------------------------------------------------------------------
def _patient(kr, sign: int) -> str:
    return next(f"p{i}" for i in range(1000) if date_offset_days(kr, f"p{i}") * sign > 0)


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("note_date", ["0001-01-01", "0001-01-02", "9999-12-31", "9999-12-20", "0999-06-01"])
@pytest.mark.parametrize("policy", ["mask", "quarantine"])
def test_placeholder_note_dates_quarantine_with_a_code_never_e499(note_date, sign, policy):
    pid = _patient(K1, sign)
    text = "Pt Mary Lee seen."
    note = Note("n1", pid, text, {"note_date": note_date})
    spans = {"n1": [Span("n1", 3, 11, "PATIENT")]}
    batch = anonymize_notes([note], spans, K1, TideConfig.preset("rules", on_unparseable_date=policy))
    assert batch.released == [] and len(batch.quarantined) == 1
    q = batch.quarantined[0]
    assert q.code == "E413", q
    assert note_date not in q.reason and "Mary" not in q.reason
    with pytest.raises(AnonymizationError) as e:
        shift_note_date(K1, pid, note_date)
    assert e.value.code == "E413" and note_date not in str(e.value)


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize(
    "value", ["12/31/9999", "9999-12-31", "Dec 31, 9999", "01/01/0001", "0001-01-01", "Dec 9999", "01/1000"]
)
@pytest.mark.parametrize("policy", ["mask", "quarantine"])
def test_span_dates_no_shift_can_handle_quarantine_under_either_policy(value, sign, policy):
    pid = _patient(K1, sign)
    text = f"Valid until {value}."
    spans = {"n1": [Span("n1", 12, 12 + len(value), "DATE")]}
    cfg = TideConfig.preset("rules", on_unparseable_date=policy)
    batch = anonymize_notes([Note("n1", pid, text, {"note_date": "2021-06-01"})], spans, K1, cfg)
    if value == "01/1000" and sign > 0:  # Jan 1000 moved forwards is still in range
        assert len(batch.released) == 1
        return
    assert batch.released == [] and [q.code for q in batch.quarantined] == ["E413"]
    assert value not in batch.quarantined[0].reason


def test_ordinary_dates_near_the_range_edges_still_shift():
    pid = _patient(K1, 1)
    off = date_offset_days(K1, pid)
    assert shift_note_date(K1, pid, "1000-07-01") == (date(1000, 7, 1) + timedelta(days=off)).isoformat()
    assert shift_date(K1, pid, "9998-01-15") == (date(9998, 1, 15) + timedelta(days=off)).isoformat()
