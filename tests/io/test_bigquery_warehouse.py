"""BigQueryWarehouse against a real local BigQuery-API emulator (bqemulator: REST + gRPC Storage Read API).

The emulator runs in a subprocess on free 127.0.0.1 ports; the google-cloud-bigquery client talks
to it over its normal request path.  Skipped (with the reason) only when bqemulator is not installed.
"""

from __future__ import annotations

import datetime as dt
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest

from tide_core.errors import ConfigError, WarehouseError
from tide_core.store import tables

pytest.importorskip("google.cloud.bigquery")
pytest.importorskip("bqemulator")

PROJECT = "local-proj"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _install_duckdb_extensions() -> None:
    """bqemulator LOADs spatial (and avro); offline they must be installed from their wheels once."""
    import duckdb

    for mod, name in (("duckdb_extension_spatial", "spatial"), ("duckdb_extension_avro", "avro")):
        try:
            pkg = __import__(mod)
        except ImportError:
            continue
        con = duckdb.connect()
        try:
            con.execute(f"LOAD {name}")
        except duckdb.Error:
            path = next(Path(pkg.__file__).parent.rglob(f"{name}.duckdb_extension"))
            con.execute(f"INSTALL '{path}'")
        finally:
            con.close()


@pytest.fixture(scope="module")
def emulator(tmp_path_factory):
    _install_duckdb_extensions()
    rest, grpc_port = _free_port(), _free_port()
    exe = shutil.which("bqemulator", path=str(Path(sys.executable).parent)) or "bqemulator"
    log = tmp_path_factory.mktemp("bqemu") / "emulator.log"
    fh = open(log, "w")
    proc = subprocess.Popen(
        [
            exe,
            "start",
            "--ephemeral",
            "--project",
            PROJECT,
            "--rest-port",
            str(rest),
            "--grpc-port",
            str(grpc_port),
            "--log-level",
            "warning",
        ],
        stdout=fh,
        stderr=fh,
    )
    deadline = time.time() + 60
    import urllib.request

    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{rest}/bigquery/v2/projects/{PROJECT}/datasets", timeout=2)
            break
        except Exception:
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                pytest.fail(f"bqemulator did not start: {log.read_text()[-2000:]}")
            time.sleep(0.3)
    # bqemulator rejects the client's generic "*/*" upload content type.  A shim for the emulator
    # only, so it lives here (a process-wide private constant is not production code's to patch).
    import google.cloud.bigquery.client as bq_client

    generic = bq_client._GENERIC_CONTENT_TYPE
    bq_client._GENERIC_CONTENT_TYPE = "application/octet-stream"
    yield {"rest": f"http://127.0.0.1:{rest}", "grpc": f"127.0.0.1:{grpc_port}"}
    bq_client._GENERIC_CONTENT_TYPE = generic
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    fh.close()


def _open(emulator, dataset: str, cls=None, **kw):
    """A warehouse (``cls``: a BigQueryWarehouse subclass) on the emulator's ``dataset``."""
    from tide_core.io.bigquery_warehouse import BigQueryWarehouse

    wh = (cls or BigQueryWarehouse).from_url(
        f"bigquery:{PROJECT}.{dataset}",
        api_endpoint=emulator["rest"],
        storage_endpoint=emulator["grpc"],
        anonymous=True,
        **kw,
    )
    wh.ensure_dataset()
    return wh


NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)


def _spans(study: str, n: int, base: int = 0) -> pa.Table:
    rows = [
        {
            "study": study,
            "note_id": f"n{i}",
            "start": base + i,
            "end": base + i + 3,
            "label": "DATE",
            "score": 0.9,
            "recognizer": "tide.regex@1",
            "fingerprint": "fp",
            "origin": "recognizer",
            "decision": None,
            "created_at": NOW,
        }
        for i in range(n)
    ]
    return tables.to_table("spans", rows)


def _deid(study: str, key: str, n: int, text: str = "ok") -> pa.Table:
    rows = [
        {
            "study": study,
            "key": key,
            "note_id": f"n{i}",
            "note_ref": f"r{i}",
            "patient_ref": "p",
            "text": f"{text} {i}\nline 'two' \\ end",
            "note_date": "2020-01-01",
            "note_type": "progress",
            "source": "s",
            "site": "x",
            "anonymizer": "tide.anonymizer@4",
            "fingerprint": "fp",
            "released_at": NOW,
        }
        for i in range(n)
    ]
    return tables.to_table("deid_notes", rows)


def test_round_trip_storage_read(emulator):
    wh = _open(emulator, "rt")
    assert not wh.table_exists("tide_spans")
    assert wh.append("tide_spans", _spans("s1", 5)) == 5
    assert wh.table_exists("tide_spans")
    out = wh.read_table("tide_spans")
    assert wh.read_path == "storage"
    assert out.num_rows == 5
    assert out.column_names == tables.SPANS.names
    assert out.column("created_at").type == pa.timestamp("us", tz="UTC")
    assert sorted(out.column("start").to_pylist()) == [0, 1, 2, 3, 4]
    assert out.column("decision").to_pylist() == [None] * 5
    # projection keeps the requested order
    proj = wh.read_table("tide_spans", columns=["end", "note_id"])
    assert proj.column_names == ["end", "note_id"]
    # the created table is clustered and time-partitioned as sql/ddl says
    t = wh.client.get_table(wh.table_id("tide_spans"))
    assert [f.name for f in t.schema] == tables.SPANS.names
    wh.close()


def test_filters_equality_in_and_quotes(emulator):
    wh = _open(emulator, "flt")
    wh.append("tide_deid_notes", _deid("s1", "k1", 3))
    wh.append("tide_deid_notes", _deid("s1", "k2", 2))
    wh.append("tide_deid_notes", _deid("s2", "k1", 4))
    assert wh.count("tide_deid_notes") == 9
    assert wh.count("tide_deid_notes", {"study": "s1"}) == 5
    assert wh.count("tide_deid_notes", {"study": "s1", "key": "k2"}) == 2
    assert wh.count("tide_deid_notes", {"study": ["s1", "s2"], "key": "k1"}) == 7
    assert wh.count("tide_deid_notes", {"study": []}) == 0
    got = wh.read_table("tide_deid_notes", ["note_id", "text"], where={"study": "s2", "note_id": ("n1", "n3")})
    assert sorted(got.column("note_id").to_pylist()) == ["n1", "n3"]
    assert got.column("text").to_pylist()[0].endswith("line 'two' \\ end")
    # a value with quotes and backslashes is a literal, never SQL
    assert wh.read_table("tide_deid_notes", where={"study": "s1' OR TRUE OR '\\"}).num_rows == 0
    assert wh.read_table("tide_deid_notes", where={"study": []}).num_rows == 0
    assert wh.delete("tide_deid_notes", {"study": "s2", "note_id": "n0"}) == 1
    assert wh.count("tide_deid_notes", {"study": "s2"}) == 3
    with pytest.raises(ConfigError):  # E302: never interpolated into SQL
        wh.read_table("tide_deid_notes", columns=["text; DROP TABLE x"])
    with pytest.raises(WarehouseError):
        wh.read_table("no_such_table")
    wh.close()


def test_replace_partition_twice_never_duplicates(emulator):
    wh = _open(emulator, "rp")
    part = {"study": "s1", "key": "k1"}
    wh.replace_partition("tide_deid_notes", _deid("s2", "k1", 2), {"study": "s2", "key": "k1"})
    assert wh.replace_partition("tide_deid_notes", _deid("s1", "k1", 4, "first"), part) == 4
    assert wh.replace_partition("tide_deid_notes", _deid("s1", "k1", 4, "second"), part) == 4
    assert wh.count("tide_deid_notes", part) == 4
    texts = wh.read_table("tide_deid_notes", ["text"], where=part).column("text").to_pylist()
    assert all(t.startswith("second") for t in texts)
    assert wh.count("tide_deid_notes", {"study": "s2"}) == 2  # other partitions untouched
    assert wh.replace_partition("tide_deid_notes", _deid("s1", "k1", 3, "third"), part) == 3
    assert wh.count("tide_deid_notes", part) == 3
    # an empty replacement clears exactly that partition
    assert wh.replace_partition("tide_deid_notes", tables.empty("deid_notes"), part) == 0
    assert wh.count("tide_deid_notes", part) == 0
    assert wh.count("tide_deid_notes") == 2
    # no staging tables are left behind
    left = [t.table_id for t in wh.client.list_tables(f"{PROJECT}.rp")]
    assert left == ["tide_deid_notes"]
    with pytest.raises(WarehouseError):
        wh.replace_partition("tide_deid_notes", _deid("s9", "k1", 1), part)
    # key "" (recognition-stage quarantine rows) is a partition like any other
    q = tables.to_table(
        "quarantine",
        [
            {
                "study": "s1",
                "key": "",
                "note_id": "n1",
                "stage": "validation",
                "code": "E201",
                "reason": "empty text",
                "quarantined_at": NOW,
            }
        ],
    )
    wh.replace_partition("tide_quarantine", q, {"study": "s1", "key": ""})
    wh.replace_partition("tide_quarantine", q, {"study": "s1", "key": ""})
    assert wh.count("tide_quarantine", {"study": "s1", "key": ""}) == 1
    wh.close()


def test_worker_staged_tables_are_published_in_one_commit_and_dropped(emulator):
    """A worker stages with its own client (``stage``); the driver's ``publish`` replaces each
    partition from the staging tables plus its in-memory writes, inserts only rows inside the
    partition, and leaves no staging table behind."""
    from tide_core.io.staging import stage
    from tide_core.io.warehouse import PartitionWrite

    wh = _open(emulator, "staged")
    rows = lambda ids, tag: pa.table({"study": ["s"] * len(ids), "note_id": ids, "v": [tag] * len(ids)})  # noqa: E731
    wh.replace_table("a", rows(["n1", "n2", "n3"], "old"))
    wh.replace_table("b", rows(["n1", "n2", "n3"], "old"))
    target = wh.staging_target()
    assert target.kind == "bigquery" and ("anonymous", True) in target.options
    part = {"study": "s", "note_id": ["n1", "n2"]}
    staged = stage(target, "a", rows(["n1"], "new"), part)
    # a staging table holding a row outside the chunk (never from stage(), which refuses it)
    stray = wh.stage_table("b", rows(["n1", "n3"], "stray"))
    from tide_core.io.staging import StagedWrite

    stray_write = StagedWrite("b", {"study": "s", "note_id": ["n1"]}, stray, 2, rows([], "").schema)
    progress = PartitionWrite("c", rows(["n2"], "new"), {"study": "s", "note_id": ["n2"]})
    wh.publish([staged, stray_write], [progress])
    got = {t: sorted((r["note_id"], r["v"]) for r in wh.read_table(t).to_pylist()) for t in ("a", "b", "c")}
    assert got["a"] == [("n1", "new"), ("n3", "old")]
    assert got["b"] == [("n1", "stray"), ("n2", "old"), ("n3", "old")]  # n3 of the stray table not inserted
    assert got["c"] == [("n2", "new")]
    left = sorted(t.table_id for t in wh.client.list_tables(f"{PROJECT}.staged"))
    assert left == ["a", "b", "c"]
    wh.close()


def test_replace_table_and_schema_growth(emulator):
    wh = _open(emulator, "rt2")
    notes = pa.table({"note_id": ["a", "b"], "patient_id": ["p1", "p2"], "text": ["x", "y"]})
    assert wh.replace_table("notes", notes) == 2
    created = wh.client.get_table(wh.table_id("notes")).created
    assert wh.replace_table("notes", notes.slice(0, 1)) == 1
    assert wh.client.get_table(wh.table_id("notes")).created == created  # same schema: truncated, not dropped
    assert wh.count("notes") == 1
    assert wh.columns("notes") == ["note_id", "patient_id", "text"]
    wider = notes.append_column("study", pa.array(["s", "s"]))
    wh.append("notes", wider)  # a new column is added, old rows read as null
    # (bqemulator 1.4 does not refresh the table metadata after ALTER TABLE, so check the data)
    assert wh.count("notes", {"study": "s"}) == 2
    assert wh.count("notes", {"study": None}) == 1
    wh.close()


def test_rest_fallback_when_storage_api_unreachable(emulator, caplog):
    from tide_core.io.bigquery_warehouse import BigQueryWarehouse

    wh = _open(emulator, "fb")
    wh.append("tide_spans", _spans("s1", 3))
    dead = BigQueryWarehouse.from_url(
        f"bigquery:{PROJECT}.fb",
        api_endpoint=emulator["rest"],
        storage_endpoint=f"127.0.0.1:{_free_port()}",
        anonymous=True,
    )
    with caplog.at_level("WARNING", logger="tide.bigquery"):
        out = dead.read_table("tide_spans", where={"study": "s1", "note_id": ["n0", "n2"]})
    assert dead.read_path == "rest"
    assert "Storage Read API not reachable" in caplog.text
    assert sorted(out.column("note_id").to_pylist()) == ["n0", "n2"]
    assert out.column_names == tables.SPANS.names
    dead.close()
    wh.close()


def test_engine_tables_through_open_warehouse(emulator, monkeypatch):
    """open_warehouse('bigquery:...') with env-configured endpoints, and the span cache on top of it."""
    from tide_core.io.open import open_warehouse

    monkeypatch.setenv("TIDE_BQ_API_ENDPOINT", emulator["rest"])
    monkeypatch.setenv("TIDE_BQ_STORAGE_ENDPOINT", emulator["grpc"])
    monkeypatch.setenv("TIDE_BQ_ANONYMOUS", "1")
    wh = open_warehouse(f"bigquery:{PROJECT}.envds")
    wh.ensure_dataset()
    wh.replace_partition("tide_spans", _spans("s1", 2), {"study": "s1"})
    wh.replace_partition("tide_spans", _spans("s1", 2, base=10), {"study": "s1"})
    assert sorted(wh.read_table("tide_spans", ["start"]).column("start").to_pylist()) == [10, 11]
    wh.close()


SQL_DIR = Path(__file__).resolve().parents[2] / "sql"


def test_sql_ddl_matches_arrow_schemas_and_queries_run(emulator):
    """sql/ddl creates the same tables the engine writes; views and example queries run on them."""
    from tide_core.io.bigquery_warehouse import bq_type

    wh = _open(emulator, "ddl")
    from tide_core.assurance.audit_table import AUDITS
    from tide_core.release.lifecycle import RELEASES

    ddl = sorted((SQL_DIR / "ddl").glob("*.sql"))
    expected = {f"tide_{kind}": schema for kind, schema in tables.SCHEMAS.items()}
    expected.update({"tide_audits": AUDITS, "tide_releases": RELEASES})
    assert len(ddl) == len(expected)
    for f in ddl:
        wh.run_sql_file(f)
    for name, schema in expected.items():
        kind = name
        t = wh.client.get_table(wh.table_id(name))
        legacy = {"INTEGER": "INT64", "FLOAT": "FLOAT64", "BOOLEAN": "BOOL"}  # REST reports legacy names
        assert [(c.name, legacy.get(c.field_type, c.field_type)) for c in t.schema] == [
            (f.name, bq_type(f.type)) for f in schema
        ], kind
    wh.replace_partition("tide_deid_notes", _hashed(_deid("s1", "k1", 3)), {"study": "s1", "key": "k1"})
    spans = tables.to_table(
        "released_spans",
        [
            {
                "study": "s1",
                "key": "k1",
                "note_id": "n0",
                "start": 0,
                "end": 2,
                "out_start": 0,
                "out_end": 4,
                "label": "DATE",
                "operator": "date_shift",
                "recognizer": "tide.regex@1",
            }
        ],
    )
    wh.replace_partition("tide_released_spans", spans, {"study": "s1", "key": "k1"})
    for f in sorted((SQL_DIR / "views").glob("*.sql")):
        wh.run_sql_file(f)

    def decided(study, key, version):
        row = {
            "study": study,
            "key": key,
            "n_in": 3,
            "n_released": 3,
            "n_quarantined": 0,
            "n_spans": 1,
            "spans_by_label": "{}",
            "gate_passed": version is not None,
            "decided_at": NOW,
            "status": "published" if version else "awaiting_audit",
            "released_at": NOW,
            "published_version": version,
        }
        wh.replace_partition(
            "tide_releases", pa.Table.from_pylist([row], schema=RELEASES), {"study": study, "key": key}
        )

    from tide_core.release import publish
    from tide_core.store.tables import TableNames

    # k1 is published (the store is the dataset itself on BigQuery); k2 awaits audit, never published
    assert publish.publish(wh, TableNames(), "s1", "k1").version == "v1"
    wh.replace_partition("tide_deid_notes", _hashed(_deid("s1", "k2", 2)), {"study": "s1", "key": "k2"})
    decided("s1", "k1", "v1")
    decided("s1", "k2", None)
    released = wh.sql(f"SELECT * FROM `{PROJECT}.ddl.released_notes`")
    assert released.num_rows == 3 and tuple(released.column_names) == publish.RESEARCHER_OBJECTS["released_notes"]
    assert set(released.column("key").to_pylist()) == {"k1"} and set(released.column("version").to_pylist()) == {"v1"}
    versions = wh.sql(f"SELECT * FROM `{PROJECT}.ddl.released_versions`").to_pylist()
    assert [(v["key"], v["version"], v["n_notes"]) for v in versions] == [("k1", "v1", 3)]
    # a re-release writes a new candidate: researchers keep the published version until it is published
    wh.replace_partition("tide_deid_notes", _hashed(_deid("s1", "k1", 3, "rewritten")), {"study": "s1", "key": "k1"})
    assert sorted(r["text"] for r in publish.researcher_rows(wh, "s1", "k1")) == sorted(
        released.column("text").to_pylist()
    )
    params = {"study": "s1", "key": "k1", "term": "ok"}
    results = {}
    for f in sorted((SQL_DIR / "queries").glob("*.sql")):
        text = f.read_text()
        results[f.stem] = wh.run_sql_file(f, {k: v for k, v in params.items() if f"@{k}" in text})
    assert results["01_notes_per_patient"].to_pylist()[0]["n_notes"] == 3
    assert results["04_search_released_text"].num_rows == 3  # the published text, not the rewritten candidate
    status = {r["key"]: r for r in results["05_release_status"].to_pylist()}
    assert status["k1"]["n_released"] == 3 and status["k2"]["n_released"] == 2
    assert status["k1"]["gate_passed"] is True and status["k2"]["gate_passed"] is False
    wh.close()


def _hashed(table: pa.Table) -> pa.Table:
    """Released rows with their row hashes (as anonymization writes them)."""
    from tide_core.store.release_content import row_hash

    rows = table.to_pylist()
    return tables.to_table("deid_notes", [dict(r, row_hash=row_hash(r["study"], r["key"], r)) for r in rows])


def test_dagster_release_on_bigquery(emulator, tmp_path):
    """The real engine through the Dagster assets, on the BigQuery backend: recognition, a release, checks."""
    import warnings

    import dagster as dg

    from tide_core.anonymize.keys import FileKeyProvider
    from tide_core.synth import generate_demo_corpus
    from tide_etl import build_defs
    from tide_etl.resources import KeyProviderResource, ReleaseGateResource, TideConfigResource, WarehouseResource

    warnings.filterwarnings("ignore", category=dg.BetaWarning)
    corpus = generate_demo_corpus(seed=7)
    notes = corpus.notes[:12]
    wh = _open(emulator, "dg")
    wh.replace_table(
        "notes",
        pa.Table.from_pylist(
            [
                {
                    "note_id": n.note_id,
                    "patient_id": n.patient_id,
                    "text": n.text,
                    "study": "bq1",
                    **{k: n.metadata.get(k) for k in ("note_date", "note_type", "source", "site")},
                }
                for n in notes
            ]
        ),
    )
    wh.replace_table(
        "patients",
        pa.Table.from_pylist([{k: (None if v is None else str(v)) for k, v in p.items()} for p in corpus.patients]),
    )
    from tests.release_helpers import fixed_key

    fixed_key(FileKeyProvider(tmp_path / "keys"), "bq1", "k1")
    resources = {
        "warehouse": WarehouseResource(
            url=f"bigquery:{PROJECT}.dg",
            api_endpoint=emulator["rest"],
            storage_endpoint=emulator["grpc"],
            anonymous=True,
        ),
        "tide_config": TideConfigResource(preset="rules"),
        "key_provider": KeyProviderResource(key_dir=str(tmp_path / "keys")),
        "gate": ReleaseGateResource(),
    }
    defs = build_defs(resources)
    with dg.DagsterInstance.ephemeral() as instance:
        _release_on_bigquery(wh, defs, instance, len(notes))
    wh.close()


def _release_on_bigquery(wh, defs, instance, n_notes: int) -> None:
    from tide_etl.partitions import release_key

    instance.add_dynamic_partitions("study", ["bq1"])
    instance.add_dynamic_partitions("key", ["k1"])
    rec = defs.resolve_job_def("recognition_job").execute_in_process(partition_key="bq1", instance=instance)
    assert rec.success
    n_spans = wh.count("tide_spans", {"study": "bq1"})
    assert n_spans > 0
    rel = defs.resolve_job_def("release_job").execute_in_process(
        partition_key=release_key("bq1", "k1"), instance=instance, raise_on_error=False
    )
    checks = {
        e.event_specific_data.check_name: e.event_specific_data.passed
        for e in rel.all_events
        if e.event_type_value == "ASSET_CHECK_EVALUATION"
    }
    assert checks["rows_accounted"] and checks["offsets_in_text"] and checks["versions_recorded"]
    assert checks["no_surface_survives"] and checks["known_phi_survives"]
    assert checks["release_gate"] is False  # awaiting audit: nothing published
    n_rel = wh.count("tide_deid_notes", {"study": "bq1", "key": "k1"})
    assert n_rel + wh.count("tide_quarantine", {"study": "bq1", "key": "k1"}) == n_notes
    from tests.release_helpers import audit_every_frame, researchers_see
    from tide_core.config import TideConfig

    assert researchers_see(wh, "bq1", "k1") == []
    assert audit_every_frame(wh, TideConfig.preset("rules"), "bq1", "k1")  # a census of each frame, no leak
    done = defs.resolve_job_def("release_checks_job").execute_in_process(
        partition_key=release_key("bq1", "k1"), instance=instance, raise_on_error=False
    )
    assert done.success  # published in one BigQuery transaction
    seen = researchers_see(wh, "bq1", "k1")
    assert len(seen) == n_rel and {r["version"] for r in seen} == {"v1"} and "note_id" not in seen[0]
    # a rerun replaces, never duplicates, on BigQuery too
    rec2 = defs.resolve_job_def("recognition_job").execute_in_process(partition_key="bq1", instance=instance)
    assert rec2.success and wh.count("tide_spans", {"study": "bq1"}) == n_spans
    defs.resolve_job_def("release_job").execute_in_process(
        partition_key=release_key("bq1", "k1"), instance=instance, raise_on_error=False
    )
    assert wh.count("tide_deid_notes", {"study": "bq1", "key": "k1"}) == n_rel
    assert researchers_see(wh, "bq1", "k1") == seen  # the same content: the same version
    assert wh.read_path == "storage"


def test_iter_ordered_is_sorted_by_code_point_with_nulls_first(emulator):
    """The release's digests stream rows BigQuery sorts (``iter_ordered``): code-point order,
    nulls first, pages of at most ``batch_rows``, the same stream whatever ``bounds`` say."""
    wh = _open(emulator, "ordered")
    values = ["b", "a", None, "B", "é", "z", "~", "\U0001f600", "\ufffd", "ab", "a"]
    t = _deid("s1", "k1", len(values))
    t = t.set_column(t.schema.get_field_index("row_hash"), "row_hash", pa.array(values, pa.string()))
    wh.append("tide_deid_notes", t)
    wh.append("tide_deid_notes", _deid("s2", "k1", 3))
    want = [None, *sorted(v for v in values if v is not None)]
    for bounds in ((), ("a", "z")):
        got: list[str | None] = []
        for b in wh.iter_ordered("tide_deid_notes", ["row_hash"], ["row_hash"], {"study": "s1"}, 4, bounds):
            assert 0 < b.num_rows <= 4
            got.extend(b.column("row_hash").to_pylist())
        assert got == want
    wh.close()
