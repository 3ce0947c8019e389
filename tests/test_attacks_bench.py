"""``python -m tide_core.bench.attacks`` at a small size: figures in [0, 1] and consistent."""

from __future__ import annotations

import math

from tide_core.bench import attacks


def _unit(x: float) -> bool:
    return not math.isnan(x) and 0.0 <= x <= 1.0


def test_attack_bench_small(capsys):
    assert attacks.main(["--notes", "60", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    for part in ("(a) linkage", "(b) frequency", "(c) hiding", "(d) date-shift", "mitigation"):
        assert part in out
    r = attacks.run(60, seed=5)
    a, f, h, d = r["linkage"], r["frequency"], r["hiding"], r["date_shift"]
    for k in ("phi_features", "with_text"):
        assert _unit(a[k]["note_accuracy"]) and _unit(a[k]["patient_accuracy"])
    assert a["chance_note"] == 1 / a["notes"] and a["chance_patient"] == 1 / a["patients"]
    assert a["with_text"]["note_accuracy"] > 10 * a["chance_note"]  # the same notes link at once
    assert 0 < a["dates"]["candidates_two_releases"] <= a["dates"]["candidates_one_release"] == 356
    assert _unit(f["recovered_mention_share"]) and _unit(f["recovered_distinct_share"])
    assert f["chance_mention_share"] == 1 / f["distinct_surnames"]
    assert _unit(h["auc"]) and all(_unit(v["auc"]) for v in h["by_label"].values())
    # a known real date gives the patient's offset: every other date of that patient, by design
    assert d["check_offset_matches_key"] and d["dates"] > 0
    assert d["recovered_share"] == 1.0
    assert d["other_patients_recovered_share"] < 0.05  # per-patient offsets
    assert _unit(d["chance"])


def test_auc_is_exact():
    assert attacks._auc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) == 0.75
    assert attacks._auc([1, 1, 1, 1], [0, 1, 0, 1]) == 0.5
