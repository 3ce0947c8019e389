"""End to end on the embedded DuckDB warehouse: recognize -> span cache -> anonymize -> release."""

import logging

import pyarrow as pa
import pytest

from tide_core.cli.cmd_demo import load_demo
from tide_core.config import TideConfig
from tide_core.io.open import open_warehouse
from tide_core.runner import anonymize_study, recognize_study
from tide_core.store.span_cache import SpanCache


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from tide_core.anonymize.keys import FileKeyProvider

    root = tmp_path_factory.mktemp("runner")
    wh = open_warehouse(f"duckdb:{root / 'w.duckdb'}")
    corpus = load_demo(wh, seed=7)
    keys = FileKeyProvider(root / "keys")
    for k in ("k1", "k2"):
        keys.create("s1", k)
    config = TideConfig.preset("rules")
    rec = recognize_study(wh, "s1", config, progress=False)
    a1 = anonymize_study(wh, "s1", "k1", keys, config, progress=False)
    a2 = anonymize_study(wh, "s1", "k2", keys, config, progress=False)
    yield wh, corpus, keys, config, rec, a1, a2
    wh.close()


def _released(wh, key):
    return {r["note_id"]: r for r in wh.read_table("tide_deid_notes", where={"study": "s1", "key": key}).to_pylist()}


def _spans(wh, key):
    out = {}
    for r in wh.read_table("tide_released_spans", where={"study": "s1", "key": key}).to_pylist():
        out.setdefault(r["note_id"], []).append(r)
    return out


def _span_rows(wh, key):
    cols = ("note_id", "start", "end", "out_start", "out_end", "label", "operator", "recognizer")
    return sorted(tuple(r[c] for c in cols) for rows in _spans(wh, key).values() for r in rows)


def test_every_row_released_or_quarantined(demo):
    wh, corpus, keys, config, rec, a1, a2 = demo
    n = len(corpus.notes)
    assert rec.n_rows == n and rec.n_spans > 0
    for a in (a1, a2):
        assert a.n_rows == n
        assert a.n_released + a.n_quarantined == n
        assert wh.count("tide_deid_notes", {"study": "s1", "key": a.key}) == a.n_released
        assert wh.count("tide_quarantine", {"study": "s1", "key": a.key}) == a.n_quarantined
    assert a1.n_released >= 0.9 * n


def test_released_offsets_and_untouched_text(demo):
    wh, corpus, *_ = demo
    originals = {d.note_id: d.text for d in corpus.notes}
    rel, spans = _released(wh, "k1"), _spans(wh, "k1")
    assert rel
    for nid, row in rel.items():
        src, out = originals[nid], row["text"]
        pos_in = pos_out = 0
        for s in sorted(spans.get(nid, []), key=lambda r: r["start"]):
            assert 0 <= s["out_start"] <= s["out_end"] <= len(out)
            assert src[pos_in : s["start"]] == out[pos_out : s["out_start"]]  # text between spans unchanged
            if s["label"] != "AGE":
                assert out[s["out_start"] : s["out_end"]].casefold() != src[s["start"] : s["end"]].casefold()
            pos_in, pos_out = s["end"], s["out_end"]
        assert src[pos_in:] == out[pos_out:]


def test_new_key_reuses_cached_spans_and_changes_surrogates(demo):
    wh, corpus, keys, config, rec, a1, a2 = demo
    runs = wh.read_table("tide_runs", where={"study": "s1", "stage": "recognition"}).to_pylist()
    assert len(runs) == 1 and runs[0]["n_recognized"] == len(corpus.notes)
    assert a1.fingerprint == a2.fingerprint == rec.fingerprint
    r1, r2 = _released(wh, "k1"), _released(wh, "k2")
    common = set(r1) & set(r2)
    differing = sum(r1[n]["text"] != r2[n]["text"] for n in common)
    assert differing >= 0.9 * len(common)
    assert {r["patient_ref"] for r in r1.values()}.isdisjoint({r["patient_ref"] for r in r2.values()})
    # a second recognition run is all cache hits
    again = recognize_study(wh, "s1", config, progress=False)
    assert again.n_recognized == 0 and again.n_cached == rec.n_valid and again.n_spans == rec.n_spans


def test_rerun_is_idempotent(demo):
    wh, corpus, keys, config, rec, a1, a2 = demo
    before = {t: wh.count(t) for t in ("tide_deid_notes", "tide_released_spans", "tide_spans", "tide_quarantine")}
    texts_before = {n: r["text"] for n, r in _released(wh, "k1").items()}
    spans_before = _span_rows(wh, "k1")
    again = anonymize_study(wh, "s1", "k1", keys, config, progress=False)
    after = {t: wh.count(t) for t in before}
    assert before == after
    texts_after = {n: r["text"] for n, r in _released(wh, "k1").items()}
    assert texts_before and texts_after == texts_before  # the rerun reproduces the release byte for byte
    assert spans_before and _span_rows(wh, "k1") == spans_before
    assert again.n_released == a1.n_released


def test_same_patient_same_surrogate_across_notes(demo):
    wh, corpus, *_ = demo
    originals = {d.note_id: d for d in corpus.notes}
    rel, spans = _released(wh, "k1"), _spans(wh, "k1")
    seen: dict[tuple[str, str], set[str]] = {}
    for nid, row in rel.items():
        for s in spans.get(nid, []):
            if s["label"] in ("PATIENT", "DOCTOR", "ID", "PHONE", "EMAIL"):
                value = originals[nid].text[s["start"] : s["end"]]
                seen.setdefault((s["label"], value), set()).add(row["text"][s["out_start"] : s["out_end"]])
    repeated = [v for (label, value), v in seen.items()]
    assert len(repeated) > 20
    assert all(len(v) == 1 for v in repeated)


def test_bad_rows_are_quarantined_and_nothing_is_lost(tmp_path, key_provider):
    wh = open_warehouse(f"duckdb:{tmp_path / 'bad.duckdb'}")
    rows = [
        {"note_id": "a", "patient_id": "p1", "text": "Seen 03/04/2021 by Dr. Ramirez, call 617-555-0100."},
        {"note_id": "b", "patient_id": None, "text": "Seen 03/04/2021."},
        {"note_id": "c", "patient_id": "p2", "text": ""},
        {"note_id": "a", "patient_id": "p1", "text": "conflicting duplicate"},
        {"note_id": "d", "patient_id": "p3", "text": "MRN 12345678 admitted 2/2/2020."},
    ]
    wh.replace_table("notes", pa.Table.from_pylist(rows))
    key_provider.create("s", "k")
    config = TideConfig.preset("rules")
    rec = recognize_study(wh, "s", config, progress=False)
    assert rec.n_rows == 5 and rec.n_valid == 1
    a = anonymize_study(wh, "s", "k", key_provider, config, progress=False)
    assert (a.n_released, a.n_quarantined) == (1, 4)
    q = wh.read_table("tide_quarantine", where={"study": "s", "key": "k"}).to_pylist()
    assert sorted(r["code"] for r in q) == ["E602", "E604", "E607", "E607"]
    assert all(r["reason"] for r in q)


def test_fail_closed_when_an_operator_fails(tmp_path, key_provider):
    wh = open_warehouse(f"duckdb:{tmp_path / 'fc.duckdb'}")
    text = "Patient age unknown (see chart); seen 03/04/2021."
    wh.replace_table(
        "notes",
        pa.Table.from_pylist(
            [
                {"note_id": "x", "patient_id": "p", "text": text},
                {"note_id": "y", "patient_id": "p", "text": "seen 03/05/2021"},
            ]
        ),
    )
    key_provider.create("s", "k")
    config = TideConfig.preset("rules")
    recognize_study(wh, "s", config, progress=False)
    cache = SpanCache(wh)
    start = text.index("unknown")
    from tide_core.spans import Note

    cache.add_review("s", Note("x", "p", text), start, start + len("unknown"), "AGE", "add")  # not a number
    a = anonymize_study(wh, "s", "k", key_provider, config, progress=False)
    assert a.n_released == 1 and a.n_quarantined == 1
    released = wh.read_table("tide_deid_notes").to_pylist()
    assert [r["note_id"] for r in released] == ["y"]
    q = wh.read_table("tide_quarantine", where={"key": "k"}).to_pylist()
    assert q[0]["note_id"] == "x" and q[0]["stage"] == "anonymization" and "unknown" not in q[0]["reason"]


def test_missing_key_is_a_clear_error(demo):
    from tide_core.errors import KeyProviderError

    wh, corpus, keys, config, *_ = demo
    with pytest.raises(KeyProviderError) as e:
        anonymize_study(wh, "s1", "nokey", keys, config, progress=False)
    assert "tide keys new" in str(e.value)


def test_no_phi_in_logs(tmp_path, key_provider, caplog):
    wh = open_warehouse(f"duckdb:{tmp_path / 'log.duckdb'}")
    corpus = load_demo(wh, seed=11)
    key_provider.create("s", "k")
    config = TideConfig.preset("rules")
    with caplog.at_level(logging.DEBUG):
        recognize_study(wh, "s", config, progress=False)
        anonymize_study(wh, "s", "k", key_provider, config, progress=False)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    values = {
        str(p[c])
        for p in corpus.patients
        for c in ("first_name", "last_name", "mrn", "phone", "email")
        if p.get(c) and len(str(p[c])) >= 4
    }
    assert values and not [v for v in values if v in logged]
