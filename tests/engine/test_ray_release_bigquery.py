"""Anonymization on Ray against the BigQuery API emulator: every worker loads its chunk's tables
into staging tables with its own client, the driver publishes each chunk in one transaction; the
released rows equal a local run on DuckDB and no staging table is left behind.  The study-copy
test runs first: the staging test's release reuses its pool of release actors."""

# ruff: noqa: F811 - the tests take the imported ``emulator`` fixture as a parameter

from __future__ import annotations

import sys
import tempfile
from dataclasses import replace

import pytest

pytest.importorskip("google.cloud.bigquery")
pytest.importorskip("bqemulator")
pytest.importorskip("ray")

from test_bigquery_warehouse import PROJECT, _open, emulator  # noqa: F401 - the emulator fixture
from test_ray_release import _released  # the released rows, without their timestamps

from tide_core.anonymize.keys import FileKeyProvider
from tide_core.cli.cmd_demo import load_demo
from tide_core.config import TideConfig
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.io.staging import StagingTarget
from tide_core.runner import anonymize_study, recognize_study

N = 12
CHUNK = 4  # 3 chunks (4 with the bad rows of the study-copy test)
OUTPUTS = ("tide_spans", "tide_recognized_notes", "tide_deid_notes", "tide_released_spans", "tide_quarantine")


def _emulator_upload_shim() -> None:
    """The emulator rejects the client's generic upload content type; the same test-only shim as
    the driver's (``test_bigquery_warehouse``), set in every Ray worker process."""
    import google.cloud.bigquery.client as bq_client

    bq_client._GENERIC_CONTENT_TYPE = "application/octet-stream"


@pytest.fixture(scope="module")
def ray_with_shim():
    import ray
    from ray import cloudpickle

    from tide_core.execution.ray_session import WORKER_ENV

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the hook travels by value
    if ray.is_initialized():
        ray.shutdown()  # the workers of this module need the shim
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _temp_dir=tempfile.mkdtemp(prefix="tide-ray-"),  # short: Ray's socket paths must fit 107 bytes
        runtime_env={"env_vars": dict(WORKER_ENV), "worker_process_setup_hook": _emulator_upload_shim},
    )
    yield ray
    ray.shutdown()


def test_workers_read_their_chunks_from_a_study_copy_and_recognize_what_the_local_path_does(
    ray_with_shim, emulator, tmp_path
):
    """Recognition and release on Ray against the emulator, on a study with duplicated, conflicting,
    id-less and empty rows: the driver copies the study once (``open_shards``), reads only note and
    patient ids, and the workers read their chunks from the copy; the span cache and the released
    tables equal a local run on DuckDB (quarantine row numbers aside: the copy numbers rows in
    its own order), and the copy is dropped."""
    import pyarrow as pa

    from tide_core.io.bigquery_warehouse import BigQueryWarehouse

    keys = FileKeyProvider(tmp_path / "keys")
    keys.create("s1", "k1")
    with DuckDBWarehouse() as demo:
        load_demo(demo, seed=5)
        rows = demo.read_table("notes").slice(0, N).to_pylist()
        schema = demo.read_table("notes").schema
        patients = demo.read_table("patients")
    rows += [
        dict(rows[0]),  # exact duplicate (E608)
        dict(rows[7], text=rows[7]["text"] + " (amended)"),  # conflicting duplicate (E607)
        dict(rows[2], note_id=None),  # no id (E601)
        dict(rows[3], note_id="empty-1", text="   "),  # empty text (E604)
    ]
    notes = pa.Table.from_pylist(rows, schema=schema)
    rules = TideConfig.preset("rules")

    def outputs(wh) -> dict[str, list[tuple]]:
        out = {}
        drop = {"created_at", "recognized_at", "released_at", "quarantined_at", "row_number", "reason"}
        for name in OUTPUTS:
            got = wh.read_table(name).to_pylist()
            out[name] = sorted(tuple((k, str(v)) for k, v in sorted(r.items()) if k not in drop) for r in got)
        return out

    with DuckDBWarehouse(tmp_path / "local.duckdb") as local:
        local.replace_table("notes", notes)
        local.replace_table("patients", patients)
        recognize_study(local, "s1", rules, progress=False, chunk_rows=CHUNK)
        anonymize_study(local, "s1", "k1", keys, rules, progress=False, chunk_rows=CHUNK)
        expected = outputs(local)

    class NotesReads(BigQueryWarehouse):
        notes_reads: list[str] = []

        def read_table(self, name, columns=None, where=None):  # type: ignore[no-untyped-def]
            if name == "notes" or name.startswith("_tide_shard_"):
                self.notes_reads.append(name)
            return super().read_table(name, columns, where)

        def iter_batches(self, name, columns=None, where=None, batch_rows=1000):  # type: ignore[no-untyped-def]
            if name == "notes" or name.startswith("_tide_shard_"):
                self.notes_reads.append(name)
            yield from super().iter_batches(name, columns, where, batch_rows)

    wh = _open(emulator, "rayshards", cls=NotesReads)
    try:
        wh.replace_table("notes", notes)
        wh.replace_table("patients", patients)
        ray_rules = replace(rules, executor="ray")
        rec = recognize_study(wh, "s1", ray_rules, progress=False, chunk_rows=CHUNK)
        rel = anonymize_study(wh, "s1", "k1", keys, ray_rules, progress=False, chunk_rows=CHUNK)
        assert wh.notes_reads == []  # the text went from BigQuery to the workers only
        assert (
            rec.n_recognized == N - 1
            and rel.n_released == N - 1
            and rel.quarantined_by_code
            == {
                "E601": 1,
                "E604": 1,
                "E607": 2,
                "E608": 1,
            }
        )
        assert outputs(wh) == expected
        left = [t.table_id for t in wh.client.list_tables(f"{PROJECT}.rayshards")]
        assert not [t for t in left if t.startswith(("_tide_stage_", "_tide_shard_"))], left
    finally:
        wh.close()


def test_workers_stage_into_bigquery_and_the_release_equals_the_local_one(ray_with_shim, emulator, tmp_path):
    keys = FileKeyProvider(tmp_path / "keys")
    keys.create("s1", "k1")
    with DuckDBWarehouse() as demo:
        load_demo(demo, seed=7)
        notes = demo.read_table("notes").slice(0, N)
        patients = demo.read_table("patients")
    rules = TideConfig.preset("rules")
    expected = {}
    with DuckDBWarehouse(tmp_path / "local.duckdb") as local:
        local.replace_table("notes", notes)
        local.replace_table("patients", patients)
        recognize_study(local, "s1", rules, progress=False, chunk_rows=CHUNK)
        anonymize_study(local, "s1", "k1", keys, rules, progress=False, chunk_rows=CHUNK)
        expected = _released(local)
    wh = _open(emulator, "rayrelease")
    try:
        wh.replace_table("notes", notes)
        wh.replace_table("patients", patients)
        recognize_study(wh, "s1", rules, progress=False, chunk_rows=CHUNK)
        target = wh.staging_target()
        assert isinstance(target, StagingTarget) and target.kind == "bigquery"
        report = anonymize_study(wh, "s1", "k1", keys, replace(rules, executor="ray"), progress=False, chunk_rows=CHUNK)
        assert report.n_released == len(expected["tide_deid_notes"]) > 0
        assert _released(wh) == expected
        assert wh.count("tide_runs", {"stage": "anonymization.chunk"}) == -(-N // CHUNK)
        left = [t.table_id for t in wh.client.list_tables(f"{PROJECT}.rayrelease")]
        assert not [t for t in left if t.startswith("_tide_stage_")], left
    finally:
        wh.close()
