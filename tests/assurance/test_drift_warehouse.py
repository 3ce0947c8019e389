"""Drift results in the warehouse (``tide_drift``) and the release gate reading them.

Real components throughout: a DuckDB warehouse with the synthetic demo corpus, the rules
recognizers, the keyed anonymizer, the residual screen, the drift monitor, audit frames and
rounds, and the release gate (``tide_core.release.lifecycle.gate``) that ``release_summary``
evaluates.  A second study ("shift") is the demo corpus made into one note type with upper-cased
text: a batch the reference has never seen.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pyarrow as pa
import pytest

from tests.release_helpers import audit_every_frame
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.assurance.drift import check_drift, freeze_reference
from tide_core.assurance.drift_table import (
    DRIFT,
    TABLE_NAME,
    assert_aggregate_result,
    latest_drift,
    record_drift,
    warehouse_drift_inputs,
)
from tide_core.cli.cmd_demo import load_demo
from tide_core.cli.main import main
from tide_core.config import TideConfig
from tide_core.errors import InputError
from tide_core.io.open import open_warehouse
from tide_core.release.lifecycle import gate
from tide_core.runner import anonymize_study, recognize_study

KEY = "k1"
N_NOTES = 100  # notes per study (at 60 the calibrated noise levels are too wide for "shift" to reach drift)


def _fps(inp):
    return {"recognizer_fingerprint": inp["recognizer_fingerprint"], "screen_fingerprint": inp["screen_fingerprint"]}


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """Warehouse with studies 'demo' (as generated) and 'shift' (one note type, upper-cased), both released."""
    tmp = tmp_path_factory.mktemp("driftwh")
    url = f"duckdb:{tmp / 'wh.duckdb'}"
    config = TideConfig.preset("rules")
    keys = FileKeyProvider(tmp / "keys")
    wh = open_warehouse(url)
    try:
        load_demo(wh, seed=7, n_notes=N_NOTES)
        rows = wh.read_table("notes").to_pylist()
        demo = [dict(r, study="demo") for r in rows]
        shift = [
            dict(r, study="shift", note_id="S" + r["note_id"], text=r["text"].upper(), note_type="progress_note")
            for r in rows
        ]
        wh.replace_table("notes", pa.Table.from_pylist(demo + shift))
        for study in ("demo", "shift"):
            keys.create(study, KEY)
            recognize_study(wh, study, config, progress=False)
            anonymize_study(wh, study, KEY, keys, config, progress=False)
        ref_inp = warehouse_drift_inputs(wh, "demo", KEY, config)
        reference = freeze_reference(
            ref_inp["notes"], ref_inp["spans"], ref_inp["residual"], name="demo-validated", **_fps(ref_inp)
        )
    finally:
        wh.close()
    return {"url": url, "tmp": tmp, "config": config, "reference": reference, "n_notes": len(rows)}


DRIFT_REASON = "drift monitor band is 'drift': the batch differs from the validated reference"


def _passing_audits(wh, config, study):
    """A clean round of every audit frame of the release (its planned sample): the audit evidence passes."""
    assert audit_every_frame(wh, config, study, KEY)


def test_inputs_come_from_the_warehouse(env):
    wh = open_warehouse(env["url"])
    try:
        inp = warehouse_drift_inputs(wh, "demo", KEY, env["config"])
    finally:
        wh.close()
    assert len(inp["notes"]) == env["n_notes"]
    assert sum(len(v) for v in inp["spans"].values()) > env["n_notes"]  # the span cache was read
    assert inp["residual"].n_notes == env["n_notes"]  # every released note screened
    assert inp["recognizer_fingerprint"] and inp["screen_fingerprint"]
    # the reference measured every lens, residual included (not "no residual screen results given")
    assert env["reference"]["profile"]["residual"] is not None
    assert env["reference"]["profile"]["spans"] is not None


def test_record_and_gate(env):
    config, ref = env["config"], env["reference"]
    wh = open_warehouse(env["url"])
    try:
        assert latest_drift(wh, "demo", KEY) is None
        for study in ("demo", "shift"):
            _passing_audits(wh, config, study)
        # no drift verdict recorded: not blocking, as before
        before = gate(wh, config, "demo", KEY)
        assert before.passed, before.reasons

        # same study against its own reference: not drift; recorded, the gate passes
        demo_inp = warehouse_drift_inputs(wh, "demo", KEY, config)
        same = check_drift(ref, demo_inp["notes"], demo_inp["spans"], demo_inp["residual"], **_fps(demo_inp))
        assert same.band in ("stable", "watch"), same.lenses
        row = record_drift(wh, "demo", KEY, same, ref["name"], forbidden=demo_inp["forbidden"])
        got = latest_drift(wh, "demo", KEY)
        assert got["band"] == same.band and got["n_docs"] == env["n_notes"]
        assert got["reference_name"] == "demo-validated" and got["result"]["band"] == same.band
        assert got["n_components"] == len(same.components) and got["worst_component"] == row["worst_component"]
        assert got["checked_at"].tzinfo is not None
        ok = gate(wh, config, "demo", KEY)
        assert ok.passed, ok.reasons

        # the shifted batch: drift, recorded; the gate blocks although every audit passes
        shift_inp = warehouse_drift_inputs(wh, "shift", KEY, config)
        moved = check_drift(ref, shift_inp["notes"], shift_inp["spans"], shift_inp["residual"], **_fps(shift_inp))
        assert moved.band == "drift", moved.lenses
        assert moved.lenses["mix"] == "drift"
        record_drift(wh, "shift", KEY, moved, ref["name"], forbidden=shift_inp["forbidden"])
        assert latest_drift(wh, "shift", KEY)["band"] == "drift"
        assert latest_drift(wh, "demo", KEY)["band"] == same.band  # per (study, key)
        blocked = gate(wh, config, "shift", KEY)
        assert not blocked.passed and not blocked.awaiting_audit  # drift is an error, not a want of audit
        assert blocked.reasons == [DRIFT_REASON]  # audits alone would pass
        assert all(b["passed"] for b in blocked.batches.values())
        assert gate(wh, config, "demo", KEY).passed  # per (study, key)

        # re-baselined on the validated shifted batch, a newer stable verdict: the newest row wins
        new_ref = freeze_reference(
            shift_inp["notes"], shift_inp["spans"], shift_inp["residual"], name="shift-validated", **_fps(shift_inp)
        )
        again = check_drift(new_ref, shift_inp["notes"], shift_inp["spans"], shift_inp["residual"], **_fps(shift_inp))
        assert again.band in ("stable", "watch")
        record_drift(
            wh,
            "shift",
            KEY,
            again,
            new_ref["name"],
            forbidden=shift_inp["forbidden"],
            checked_at=datetime.now(UTC) + timedelta(seconds=1),
        )
        assert latest_drift(wh, "shift", KEY)["reference_name"] == "shift-validated"
        assert gate(wh, config, "shift", KEY).passed
        assert wh.count(TABLE_NAME, where={"study": "shift", "key": KEY}) == 2

        # the table holds aggregates only: no note id, patient id or note text anywhere
        stored = wh.read_table(TABLE_NAME)
        assert stored.schema.names == DRIFT.names
        blob = json.dumps(stored.to_pylist(), default=str)
        for n in shift_inp["notes"][:40] + demo_inp["notes"][:40]:
            assert n.note_id not in blob and n.patient_id not in blob
            assert n.text[:30] not in blob
    finally:
        wh.close()


def test_result_check_rejects_identifiers(env):
    bad = {"band": "drift", "components": [{"name": "x", "reason": "N0001 leaked"}], "note": "N0001"}
    with pytest.raises(InputError) as e:
        assert_aggregate_result(bad, forbidden=["N0001"])
    assert e.value.code == "E755" and "N0001" not in str(e.value)
    with pytest.raises(InputError):
        assert_aggregate_result({"band": "drift", "reason": "x" * 500})
    assert_aggregate_result({"band": "watch", "lenses": {"mix": "watch"}, "new_categories": {"note_type": ["a"]}})


def _tide(capsys, *args):
    """``tide drift ARGS`` in process (the same entry point as the console script; tests/cli/test_cli.py
    covers the subprocess): its exit status and what it printed."""
    capsys.readouterr()
    code = main(["drift", *args])
    out, err = capsys.readouterr()
    return SimpleNamespace(returncode=code, stdout=out, stderr=err)


def test_cli_warehouse_mode(env, capsys):
    url, tmp = env["url"], env["tmp"]
    ref_path = tmp / "cli_ref.json"
    f = _tide(
        capsys,
        "freeze",
        "--warehouse",
        url,
        "--study",
        "demo",
        "--key",
        KEY,
        "--out",
        str(ref_path),
        "--splits",
        "10",
        "--name",
        "cli-ref",
    )
    assert f.returncode == 0, f.stderr
    ref = json.loads(ref_path.read_text())
    assert ref["profile"]["residual"] is not None and ref["name"] == "cli-ref"

    c = _tide(
        capsys, "check", "--warehouse", url, "--study", "shift", "--key", KEY, "--reference", str(ref_path), "--record"
    )
    assert c.returncode == 1, c.stderr  # --fail-on drift (default)
    assert "overall: drift" in c.stdout
    wh = open_warehouse(url)
    try:
        got = latest_drift(wh, "shift", KEY)
        assert got["band"] == "drift" and got["reference_name"] == "cli-ref"
    finally:
        wh.close()

    none = _tide(capsys, "check", "--reference", str(ref_path))
    assert none.returncode != 0 and "E757" in (none.stderr + none.stdout)
