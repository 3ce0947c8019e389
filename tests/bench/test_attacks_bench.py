"""``python -m benchmarks.attacks`` at a small size: figures in [0, 1] and consistent."""

from __future__ import annotations

import math

from benchmarks import attacks


def _unit(x: float) -> bool:
    return not math.isnan(x) and 0.0 <= x <= 1.0


def test_attack_bench_small(capsys):
    assert attacks.main(["--notes", "60", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    parts = ("(a) linkage", "(b) frequency", "(c) hiding", "class attack", "(d) date-shift", "(e) dates", "mitigation")
    for part in parts:
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
    c = r["name_class"]
    assert c["chance"] == 0.5 and _unit(c["auc_all_real"]) and _unit(c["original_class_auc"])
    assert c["surrogates_listed_or_shaped_share"] == 1.0  # every surrogate word: listed or spliced
    per_key, study = r["triangulation"]["per_key"]["by_k"], r["triangulation"]["study_dates"]["by_k"]
    assert sorted(per_key) == sorted(study) == [1, 2, 3, 5, 10]
    assert per_key[1]["median_window_days"] == study[10]["median_window_days"] == 361  # +-180 days, 3..180
    assert per_key[10]["median_window_days"] < per_key[2]["median_window_days"] < 361  # per-key offsets narrow
    assert all(study[k] == study[1] for k in study)  # a study date secret: k releases reveal what one does
    assert r["triangulation"]["study_dates"]["linkage_by_dates"]["linked_by_exact_dates"] == 1.0


def test_auc_is_exact():
    assert attacks._auc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) == 0.75
    assert attacks._auc([1, 1, 1, 1], [0, 1, 0, 1]) == 0.5
