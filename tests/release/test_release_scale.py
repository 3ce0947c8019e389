"""A study of ten chunks (2,000 notes in chunks of 200) publishes through the CLI and through Dagster.

Recognition runs once (rules preset, the span cache); each test releases a copy: the CLI with
``tide run --chunk-rows`` + ``tide release audit plan/record`` + ``tide release publish``, Dagster
with ``release_job`` and ``release_checks_job`` executed in process.  Both write the candidate in
ten chunks and end with every note in the researchers' view, one version, one stamp, and a
``published`` release row.  The steps that take the default chunk size (Dagster's, the release
checks) run with the study's default set to ``CHUNK``, as a deployment that sets it would.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import dagster as dg
import duckdb
import pytest

import release_study
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.cli.main import main
from tide_core.config import TideConfig
from tide_core.engine import study_chunks
from tide_core.io.open import open_warehouse
from tide_core.release import evidence, scan
from tide_core.runner import recognize_study

warnings.filterwarnings("ignore", category=dg.BetaWarning)
warnings.filterwarnings("ignore", category=dg.PreviewWarning)

S, K = "big", "k1"
N_CHUNKS, CHUNK, N_PATIENTS = 10, 200, 150
N_NOTES = N_CHUNKS * CHUNK
SORT_RANGE = 150  # 14 sorted ranges of row hashes
CONFIG = TideConfig.preset("rules")


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("scale")
    with open_warehouse(f"duckdb:{root / 'wh.duckdb'}") as wh:
        release_study.write(wh, N_NOTES, N_PATIENTS)
        recognize_study(wh, S, CONFIG, progress=False, chunk_rows=CHUNK)
    FileKeyProvider(root / "keys").create(S, K)
    return root


@pytest.fixture(autouse=True)
def default_chunk(monkeypatch) -> None:
    """Steps without a chunk-size option (Dagster's anonymization, the release checks) chunk by ``CHUNK``;
    sorted reads of row hashes (fingerprints, the gate's batches, a publish's members) are split into
    ranges of ``SORT_RANGE`` rows, as a study of millions of notes is at the default."""
    monkeypatch.setattr(study_chunks, "DEFAULT_CHUNK_ROWS", CHUNK)
    monkeypatch.setattr(scan, "RANGE_ROWS", SORT_RANGE)


def anonymization_chunks(site: Path) -> int:
    with open_warehouse(f"duckdb:{site / 'wh.duckdb'}") as wh:
        return wh.read_table("tide_runs", where={"stage": "anonymization.chunk"}).num_rows


@pytest.fixture
def site(base: Path, tmp_path: Path) -> Path:
    shutil.copy(base / "wh.duckdb", tmp_path / "wh.duckdb")
    shutil.copytree(base / "keys", tmp_path / "keys")
    return tmp_path


def researchers_see(site: Path) -> list[tuple]:
    with duckdb.connect(str(site / "wh.released.duckdb"), read_only=True) as con:
        return con.execute(
            "SELECT version, note_ref FROM released_notes WHERE study = ? AND key = ?", [S, K]
        ).fetchall()


def candidate(site: Path) -> tuple[int, int]:
    """(rows, distinct released_at stamps) of the candidate."""
    with duckdb.connect(str(site / "wh.duckdb"), read_only=True) as con:
        row = con.execute("SELECT count(*), count(DISTINCT released_at) FROM tide_deid_notes").fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def record_audits(site: Path) -> None:
    with open_warehouse(f"duckdb:{site / 'wh.duckdb'}") as wh:
        for p in evidence.plan_audit(wh, CONFIG.tables, S, K):
            evidence.record_round(wh, CONFIG.tables, S, K, p.frame_id, p.sample_size, 0, reviewer="test")


def test_a_study_of_ten_chunks_publishes_through_the_cli(site: Path, capsys):
    url = f"duckdb:{site / 'wh.duckdb'}"
    assert main(["run", "--warehouse", url, "--study", S, "--key", K, "--stage", "anonymize", "--preset", "rules",
                 "--chunk-rows", str(CHUNK), "--no-progress", "--key-dir", str(site / "keys")]) == 0  # fmt: skip
    assert candidate(site) == (N_NOTES, 1)
    assert anonymization_chunks(site) == N_CHUNKS
    plan = site / "plan.json"
    assert main(["release", "audit", "plan", "--warehouse", url, "--study", S, "--key", K, "--out", str(plan)]) == 0
    for f in json.loads(plan.read_text())["frames"]:
        rec = ["release", "audit", "record", "--warehouse", url, "--study", S, "--key", K, "--frame", f["frame_id"]]
        assert main([*rec, "--n", str(f["sample_size"]), "--leaks", "0", "--reviewer", "test"]) == 0
    capsys.readouterr()
    assert main(["release", "publish", "--warehouse", url, "--study", S, "--key", K, "--preset", "rules"]) == 0
    assert "published; researchers see v1" in capsys.readouterr().out
    seen = researchers_see(site)
    assert len(seen) == N_NOTES and {v for v, _ in seen} == {"v1"} and len({r for _, r in seen}) == N_NOTES


def test_a_study_of_ten_chunks_publishes_through_dagster(site: Path):
    from tide_etl import build_defs
    from tide_etl.partitions import release_key
    from tide_etl.resources import KeyProviderResource, ReleaseGateResource, TideConfigResource, WarehouseResource

    url = f"duckdb:{site / 'wh.duckdb'}"
    defs = build_defs(
        {
            "warehouse": WarehouseResource(url=url),
            "tide_config": TideConfigResource(preset="rules"),
            "key_provider": KeyProviderResource(key_dir=str(site / "keys")),
            "gate": ReleaseGateResource(),
        }
    )
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("study", [S])
    instance.add_dynamic_partitions("key", [K])

    def run(job: str) -> dg.ExecuteInProcessResult:
        return defs.resolve_job_def(job).execute_in_process(
            partition_key=release_key(S, K), instance=instance, raise_on_error=False
        )

    first = run("release_job")
    assert first.success
    assert candidate(site) == (N_NOTES, 1)
    assert anonymization_chunks(site) == N_CHUNKS
    with open_warehouse(url) as wh:
        row = wh.read_table("tide_releases").to_pylist()[0]
    assert row["status"] == "awaiting_audit" and row["published_version"] is None
    record_audits(site)
    second = run("release_checks_job")
    assert second.success
    with open_warehouse(url) as wh:
        row = wh.read_table("tide_releases").to_pylist()[0]
    assert (row["status"], row["published_version"], row["n_released"]) == ("published", "v1", N_NOTES)
    seen = researchers_see(site)
    assert len(seen) == N_NOTES and {v for v, _ in seen} == {"v1"}
