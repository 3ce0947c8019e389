"""Regression tests for three small defects of issue 16.

1. ``tide audit record`` accepted more reviewed patients than were audited (``--n 299`` for a
   38-patient study): it refuses more than its frame holds (E747) and more leaks than patients (E740).
2. An exact duplicate source row (same note_id and text) made ``rows_accounted`` fail forever
   while the runner released the note once; a note_id twice with different text stays quarantined.
3. ``tide demo --warehouse bigquery:...`` did not create its dataset and printed a DuckDB label; its
   closing hint named the raw ``tide_deid_notes`` table instead of the researchers' ``released_notes``
   view (the published version; on DuckDB in the researcher store, a file apart from the warehouse).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tide_core.anonymize.keys import FileKeyProvider
from tide_core.assurance.audit_table import TABLE_NAME as AUDITS_TABLE
from tide_core.cli.main import main
from tide_core.config import TideConfig
from tide_core.engine.study_input import read_study_input
from tide_core.io.open import open_warehouse
from tide_core.release import evidence
from tide_core.release.checks import rows_accounted
from tide_core.runner import anonymize_study, recognize_study

try:  # reuse the BigQuery emulator fixture; without bqemulator only the BigQuery test skips
    import bqemulator  # noqa: F401
    import google.cloud.bigquery  # noqa: F401
    from test_bigquery_warehouse import PROJECT, emulator  # pytest fixture
except ImportError as exc:  # pragma: no cover - depends on the environment
    _NO_EMULATOR = f"BigQuery emulator not available: {exc}"
    PROJECT = "local-proj"

    @pytest.fixture(scope="module")
    def emulator():
        pytest.skip(_NO_EMULATOR)


CONFIG = TideConfig.preset(
    "rules",
    metadata_vocabulary={"site": ("site1", "site2"), "source": ("ehr",), "note_type": ("progress", "phone")},
)
S, K = "s", "k"
NOTE_A = "Pt Mary Lee seen 03/04/2021, age 45."
ROWS = [
    {"note_id": "a", "patient_id": "p1", "text": NOTE_A, "site": "site1", "source": "ehr", "note_type": "progress"},
    {"note_id": "b", "patient_id": "p2", "text": "Call 617-555-0100 re: Bob Stone.", "site": "site1"},
    {"note_id": "c", "patient_id": "p3", "text": "Seen by Ann Ito today.", "site": "site2"},
    # exact duplicate of a: released once
    {"note_id": "a", "patient_id": "p1", "text": NOTE_A, "site": "site1", "source": "ehr", "note_type": "progress"},
    # note e twice with different text: both rows quarantined (E607), patient p4 never released
    {"note_id": "e", "patient_id": "p4", "text": "Seen 01/02/2020.", "site": "site2"},
    {"note_id": "e", "patient_id": "p4", "text": "Seen 01/03/2020.", "site": "site2"},
]
PATIENTS = [
    {"patient_id": "p1", "first_name": "Mary", "last_name": "Lee"},
    {"patient_id": "p2", "first_name": "Bob", "last_name": "Stone"},
    {"patient_id": "p3", "first_name": "Ann", "last_name": "Ito"},
]


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """One small study released into DuckDB: 6 source rows, 3 notes of 3 patients released."""
    root = tmp_path_factory.mktemp("small_defects")
    url = f"duckdb:{root / 'wh.duckdb'}"
    rows = [{c: r.get(c) for c in ("note_id", "patient_id", "text", "site", "source", "note_type")} for r in ROWS]
    wh = open_warehouse(url)
    try:
        wh.replace_table("notes", pa.Table.from_pylist(rows))
        specs = ({"name": "tide.regex"}, {"name": "tide.known_phi", "rows": PATIENTS})
        recognize_study(wh, S, CONFIG.with_(recognizers=specs), progress=False)
        keys = FileKeyProvider(root / "keys")
        keys.create(S, K)
        anonymize_study(wh, S, K, keys, CONFIG, progress=False)
    finally:
        wh.close()
    return url


# -- 1. tide audit record: n no larger than the released patients, leaks no larger than n --------


def _record(url, n, leaks=0, frame=None, study=S):
    args = ["audit", "record", "--warehouse", url, "--study", study, "--key", K]
    args += ["--frame", frame] if frame else []
    return main([*args, "--n", str(n), "--leaks", str(leaks), "--reviewer", "qa"])


def _n_rounds(url):
    wh = open_warehouse(url)
    try:
        return wh.count(AUDITS_TABLE) if wh.table_exists(AUDITS_TABLE) else 0
    finally:
        wh.close()


def test_audit_record_refuses_more_patients_than_its_frame_holds(release, capsys):
    n0 = _n_rounds(release)
    wh = open_warehouse(release)
    try:
        frames = {p.bucket: p for p in evidence.plan_audit(wh, CONFIG.tables, S, K)}
    finally:
        wh.close()
    assert sum(p.n_patients for p in frames.values()) >= 3  # p4's notes are quarantined
    one = next(p for p in frames.values() if p.n_patients == 1)
    # no frame named: refused (a round must say which content it reviewed)
    assert _record(release, 1) == 2 and "[E938]" in capsys.readouterr().err
    # more patients than the frame holds: refused, naming no patient
    assert _record(release, 299, frame=one.frame_id) == 2
    err = capsys.readouterr().err
    assert "[E747]" in err and "299" in err and "holds 1" in err and "--n" in err
    assert "Mary" not in err and "p1" not in err
    # an unknown frame, or a study with nothing released
    assert _record(release, 1, frame="f0000") == 2 and "[E931]" in capsys.readouterr().err
    assert _record(release, 1, frame=one.frame_id, study="never") == 2 and "[E931]" in capsys.readouterr().err
    # more leaks than patients reviewed is refused too
    assert _record(release, 1, leaks=3, frame=one.frame_id) == 2 and "[E740]" in capsys.readouterr().err
    assert _n_rounds(release) == n0
    # a census of each frame is recorded
    for p in frames.values():
        assert _record(release, p.n_patients, frame=p.frame_id) == 0
    assert _n_rounds(release) == n0 + len(frames)


# -- 2. rows_accounted with exact and conflicting duplicate note ids -------------------------------


def test_exact_duplicate_row_is_accounted_for_and_conflicting_one_quarantined(release):
    wh = open_warehouse(release)
    try:
        assert read_study_input(wh, S, CONFIG).n_rows == 6
        released = [r["note_id"] for r in wh.read_table("tide_deid_notes", where={"study": S, "key": K}).to_pylist()]
        assert sorted(released) == ["a", "b", "c"]
        quarantined = wh.read_table("tide_quarantine", ["note_id", "code"], where={"study": S, "key": K}).to_pylist()
        assert sorted((q["note_id"], q["code"]) for q in quarantined) == [
            ("a", "E608"),
            ("e", "E607"),
            ("e", "E607"),
        ]
        out = rows_accounted(wh, CONFIG, S, K)
        assert out.passed, out.description
        assert out.description == "every source row is released or quarantined, once"
        assert out.metadata["n_in"] == 6 and out.metadata["n_released"] == 3 and out.metadata["n_quarantined"] == 3
        assert out.metadata["n_exact_duplicate_rows"] == 1 and out.metadata["n_released_and_quarantined"] == 0
        # the E608 row is accounted for by its released original: without it, the check fails
        wh.replace_partition(
            "tide_deid_notes",
            wh.read_table("tide_deid_notes", where={"study": S, "key": K}).filter(pc.field("note_id") != "a"),
            {"study": S, "key": K},
        )
        out = rows_accounted(wh, CONFIG, S, K)
        assert out.passed is False and out.metadata["n_duplicates_without_original"] == 1
    finally:
        wh.close()


# -- 3. tide demo on BigQuery -----------------------------------------------------------------------


@pytest.mark.timeout(120)  # without ensure_dataset the demo hung on the missing dataset
def test_demo_on_bigquery_creates_its_dataset_and_labels_it(emulator, monkeypatch, tmp_path, capsys):
    from tide_core.io.bigquery_warehouse import BigQueryWarehouse

    monkeypatch.setenv("TIDE_BQ_API_ENDPOINT", emulator["rest"])
    monkeypatch.setenv("TIDE_BQ_STORAGE_ENDPOINT", emulator["grpc"])
    monkeypatch.setenv("TIDE_BQ_ANONYMOUS", "1")
    url = f"bigquery:{PROJECT}.demo_fresh"
    args = ["demo", "--warehouse", url, "--preset", "rules", "--n-notes", "30", "--no-progress"]
    rc = main([*args, "--key-dir", str(tmp_path / "k")])
    out = capsys.readouterr().out
    assert rc == 0
    assert f"into {url}" in out and "duckdb" not in out.lower()
    hint = out[out.index("researchers query") :]
    assert f"`{PROJECT}.demo_fresh.released_notes`" in hint and "tide_deid_notes" not in hint
    wh = BigQueryWarehouse.from_url(url)
    try:
        assert wh.count("tide_deid_notes", {"study": "demo", "key": "k1"}) > 0
    finally:
        wh.close()


def test_demo_hint_points_at_the_published_view_in_the_researcher_store_on_duckdb(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("TIDE_RELEASE_STORE", raising=False)
    monkeypatch.chdir(tmp_path)
    url = f"duckdb:{tmp_path / 'demo.duckdb'}"
    args = ["demo", "--warehouse", url, "--preset", "rules", "--n-notes", "30", "--no-progress"]
    assert main([*args, "--key-dir", "keys"]) == 0
    out = capsys.readouterr().out
    hint = out[out.index("researchers query") :]
    assert "FROM released_notes WHERE study = 'demo' AND key = 'k1'" in hint
    # the researchers' file, never the warehouse that holds the source notes and the tide_* tables
    assert str(tmp_path / "demo.released.duckdb") in hint
    assert "tide_deid_notes" not in hint and url not in hint
