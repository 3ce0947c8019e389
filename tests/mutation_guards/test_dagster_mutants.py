"""The Dagster release uses the PHI Guard: release_job holds what it flags, and says so in counts.

In process, on DuckDB, with the guard configured through the config file (``guard_dir``).  The
guard is a real ``GuardModel`` with hand-set weights (the word "zorblax" is certain PHI to it and
unknown to the recognizers: residual PHI they miss), so which note is held is known.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import dagster as dg
import numpy as np
import pyarrow as pa

from tide_core.anonymize.keys import FileKeyProvider
from tide_core.assurance.guard_hold import HELD_CODE, NO_GUARD
from tide_core.assurance.guard_model import N_FEATURES, GuardModel, _hash
from tide_core.io.open import open_warehouse
from tide_core.store.release_store import ReleaseStore

warnings.filterwarnings("ignore", category=dg.BetaWarning)
warnings.filterwarnings("ignore", category=dg.PreviewWarning)

S, K = "s", "k"
BASE = {"study": S, "site": "site1", "source": "ehr", "note_type": "progress", "note_date": "2021-03-04"}
NOTES = [
    dict(BASE, note_id="a", patient_id="p1", text="Maria Stonebridge seen 03/04/2021 for follow-up, stable."),
    dict(BASE, note_id="b", patient_id="p2", text="Call 617-555-0100 re: Robert Ashdown, well."),
    dict(BASE, note_id="c", patient_id="p3", text="Seen with zorblax today; plan unchanged."),
]
PATIENTS = [
    {"patient_id": "p1", "first_name": "Maria", "last_name": "Stonebridge"},
    {"patient_id": "p2", "first_name": "Robert", "last_name": "Ashdown"},
    {"patient_id": "p3", "first_name": "Ann", "last_name": "Lee"},
]


def _run(tmp_path: Path, guard: bool) -> tuple[dg.ExecuteInProcessResult, str]:
    from tide_etl import build_defs
    from tide_etl.partitions import release_key
    from tide_etl.resources import KeyProviderResource, ReleaseGateResource, TideConfigResource, WarehouseResource

    url = f"duckdb:{tmp_path / 'wh.duckdb'}"
    with open_warehouse(url) as wh:
        wh.replace_table("notes", pa.Table.from_pylist(NOTES))
        wh.replace_table("patients", pa.Table.from_pylist(PATIENTS))
    FileKeyProvider(tmp_path / "keys").create(S, K)
    options: dict[str, object] = {"preset": "rules", "metadata_allowlist": ["ehr"]}
    if guard:
        coef = np.zeros(N_FEATURES, dtype=np.float32)
        coef[_hash("w=zorblax")] = 20.0
        GuardModel(coef, -10.0, threshold=0.5).save(tmp_path / "guard")
        options["guard_dir"] = str(tmp_path / "guard")
    (tmp_path / "tide.json").write_text(json.dumps(options))
    defs = build_defs(
        {
            "warehouse": WarehouseResource(url=url),
            "tide_config": TideConfigResource(config_file=str(tmp_path / "tide.json")),
            "key_provider": KeyProviderResource(key_dir=str(tmp_path / "keys")),
            "gate": ReleaseGateResource(),
        }
    )
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("study", [S])
    instance.add_dynamic_partitions("key", [K])
    rec = defs.resolve_job_def("recognition_job").execute_in_process(
        partition_key=S, instance=instance, raise_on_error=False
    )
    assert rec.success
    result = defs.resolve_job_def("release_job").execute_in_process(
        partition_key=release_key(S, K), instance=instance, raise_on_error=False
    )
    return result, url


def _summary_metadata(result: dg.ExecuteInProcessResult) -> dict[str, object]:
    for e in result.get_asset_materialization_events():
        if e.asset_key.to_user_string() == "release_summary":
            return {k: v.value for k, v in e.materialization.metadata.items()}
    raise AssertionError("release_summary did not materialize")


def test_release_job_holds_what_the_guard_flags_and_reports_counts_only(tmp_path):
    result, url = _run(tmp_path, guard=True)
    assert result.success
    md = _summary_metadata(result)
    assert md["guard/n_held"] == 1 and md["n_released"] == 2
    assert md["guard/flag_rate_by_source"] == {"ehr": round(1 / 3, 4)}
    assert str(md["guard/guard_version"]).startswith("tide.guard@1+")
    dumped = json.dumps(md, default=str)
    assert not any(w in dumped for n in NOTES for w in n["text"].split() if len(w) > 5)  # no text
    with open_warehouse(url) as wh:
        store = ReleaseStore(wh)
        assert sorted(r["note_id"] for r in store.deid_notes(S, K, ["note_id"])) == ["a", "b"]
        assert store.review_pile(S, K) == ["c"]
        assert [r["code"] for r in store.quarantine(S, K, note_ids="c")] == [HELD_CODE]
        row = store.release(S, K)
        assert row is not None and row["n_held"] == 1 and row["guard_version"] == md["guard/guard_version"]


def test_release_job_without_a_guard_releases_everything_and_says_so(tmp_path):
    result, url = _run(tmp_path, guard=False)
    assert result.success
    md = _summary_metadata(result)
    assert md["guard/guard_version"] == NO_GUARD and md["n_released"] == 3
    with open_warehouse(url) as wh:
        assert ReleaseStore(wh).review_pile(S, K) == []
