"""Dates across many keys (issue 35, row 5): with the study's date secret (``<study>/dates.key``)
a patient's offset is the same under every key version, so k linked releases narrow dates no more
than one; intervals within a patient are kept; studies stay independent."""

from __future__ import annotations

import hashlib
import os
from datetime import date

import pytest

from benchmarks import attacks
from tide_core.anonymize.dates import date_offset_days, parse_date, shift_date
from tide_core.anonymize.keys import DATES_KEY, EnvKeyProvider, FileKeyProvider, KeyRing, install_keys
from tide_core.errors import KeyProviderError
from tide_core.synth import generate_heldout_dataset

PATIENTS = [f"P{i:04d}" for i in range(300)]


@pytest.fixture(scope="module")
def gold():
    return list(generate_heldout_dataset(200, seed=17).gold)


@pytest.fixture
def keys(tmp_path):
    p = FileKeyProvider(tmp_path / "keys")
    for study in ("s1", "s2"):
        for key in ("k1", "k2", DATES_KEY):
            p.create(study, key)
    p.create("s3", "k1")  # no date secret: an offset per key
    p.create("s3", "k2")
    return p


def test_k_linked_releases_narrow_full_and_month_year_dates_no_more_than_one(gold):
    study = attacks.attack_triangulation(gold, 17, study_dates=True, ks=(1, 5))["by_k"]
    assert study[1]["full_dates"] > 200 and study[1]["my_dates"] > 20
    assert study[5]["median_window_days"] == study[1]["median_window_days"] == 361
    assert study[5]["share_window_le_90_days"] == study[1]["share_window_le_90_days"]
    assert study[5]["median_window_months"] == study[1]["median_window_months"]
    assert study[5]["share_within_3_months"] == study[1]["share_within_3_months"] == 0.0
    per_key = attacks.attack_triangulation(gold, 17, study_dates=False, ks=(1, 5))["by_k"]  # what it prevents
    assert per_key[5]["median_window_days"] < 0.5 * per_key[1]["median_window_days"]
    assert per_key[5]["share_within_3_months"] > 0.3


def _pairs(r) -> list[tuple[date, date]]:
    """(true, released) of each full date shifted in a released note."""
    out = []
    for s in r.spans:
        if s.label == "DATE" and s.operator == "date.shift":
            t, d = parse_date(r.original[s.start : s.end]), parse_date(r.text[s.out_start : s.out_end])
            if t.kind == d.kind == "full" and (t.year or 0) >= 1000 and (d.year or 0) >= 1000:
                out.append((date(t.year, t.month, t.day), date(d.year, d.month, d.day)))  # type: ignore[arg-type]
    return out


def test_intervals_within_a_patient_are_kept_and_every_key_gives_the_same_dates(gold):
    rels = [attacks.release(gold, attacks.test_keyring(k, 17, study_dates=True)) for k in ("k1", "k2", "k3")]
    per_patient: dict[str, list[tuple[date, date]]] = {}
    for n, r in rels[0].items():
        assert all(_pairs(other[n]) == _pairs(r) for other in rels[1:])  # every key: the same dates
        per_patient.setdefault(r.patient_id, []).extend(_pairs(r))
    several = [p for p in per_patient.values() if len(p) > 1]
    assert len(several) > 20
    for pairs in several:
        offsets = {(d - t).days for t, d in pairs}
        assert len(offsets) == 1 and 3 <= abs(offsets.pop()) <= 180  # one offset: every interval kept
        (t0, d0), (t1, d1) = pairs[0], pairs[-1]
        assert (t1 - t0) == (d1 - d0)


def test_the_provider_reads_the_study_date_secret_and_studies_stay_independent(keys):
    k1, k2 = keys.keyring("s1", "k1"), keys.keyring("s1", "k2")
    assert k1.study_dates and k2.study_dates
    assert [date_offset_days(k1, p) for p in PATIENTS] == [date_offset_days(k2, p) for p in PATIENTS]
    assert shift_date(k1, "P1", "March 2021") == shift_date(k2, "P1", "March 2021")  # month + year too
    assert k1.mac("name", "x") != k2.mac("name", "x")  # every other domain still changes with the key
    other = keys.keyring("s2", "k1")
    same = sum(date_offset_days(k1, p) == date_offset_days(other, p) for p in PATIENTS)
    assert same < 0.05 * len(PATIENTS)  # chance is 1/356
    # the same date secret bytes in two studies still give independent offsets (study in the derivation)
    secret = bytes(range(32, 64))
    a, b = KeyRing("s1", "k1", secret, secret), KeyRing("s2", "k1", secret, secret)
    assert sum(date_offset_days(a, p) == date_offset_days(b, p) for p in PATIENTS) < 0.05 * len(PATIENTS)
    # without a date secret the offset changes with the key, as before
    n1, n2 = keys.keyring("s3", "k1"), keys.keyring("s3", "k2")
    assert not n1.study_dates
    assert sum(date_offset_days(n1, p) == date_offset_days(n2, p) for p in PATIENTS) < 0.05 * len(PATIENTS)


def test_the_date_secret_is_no_key_version_and_changes_the_fingerprint(keys, tmp_path):
    assert ("s1", DATES_KEY) not in keys.available() and ("s1", "k1") in keys.available()
    plain = KeyRing("s1", "k1", keys.keyring("s1", "k1")._secret)
    assert plain.fingerprint != keys.keyring("s1", "k1").fingerprint
    ring = keys.keyring("s1", "k1")
    assert ring._date_secret is not None and ring._date_secret.hex() not in repr(ring)  # never printed
    installed = install_keys(keys.root, tmp_path / "installed")
    assert ("s1", DATES_KEY) in installed
    copy = FileKeyProvider(tmp_path / "installed").keyring("s1", "k2")
    assert copy.study_dates and date_offset_days(copy, "P7") == date_offset_days(keys.keyring("s1", "k1"), "P7")


def test_a_date_secret_that_fails_the_key_file_checks_is_refused_not_skipped(keys):
    os.chmod(keys.path("s1", DATES_KEY), 0o644)
    with pytest.raises(KeyProviderError) as e:
        keys.keyring("s1", "k1")
    assert e.value.code == "E106"


def test_the_environment_provider_reads_the_study_date_secret():
    env = {
        f"TIDE_KEY_{name}": hashlib.sha256(name.encode()).hexdigest()
        for name in ("S1__K1", "S1__K2", "S1__DATES", "S2__K1")
    }
    p = EnvKeyProvider(env)
    k1, k2, other = p.keyring("s1", "k1"), p.keyring("s1", "k2"), p.keyring("s2", "k1")
    assert k1.study_dates and not other.study_dates
    assert [date_offset_days(k1, x) for x in PATIENTS] == [date_offset_days(k2, x) for x in PATIENTS]
