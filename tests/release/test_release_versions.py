"""Versioned releases on DuckDB through the CLI (``tide run``, ``tide release ...``), in process.

A study of 400 short notes is recognized once (rules preset) and released in chunks of 100,
so every release here has four chunks.  Each test works on its own copy of the warehouse: the
recognized study, or the study after its first release (written, held for its audit, audited,
published as v1 through the CLI; the steps in between are checked once, in the module fixture).

Guarantees:
- a release of many chunks (and one with an exact duplicate row in a chunk of its own) gets one
  stamp and publishes; a rerun of the same content publishes nothing new;
- an interrupted run resumes under the same stamp; a candidate from an interrupted run is not
  published (E920);
- audit evidence is bound to content: after a recognizer change the re-release is held and the
  rounds recorded for the earlier content do not vouch for it; researchers keep the previous
  version, unchanged; a nightly increment is its own batch and old rows keep their evidence;
- a census of a small study with no leak publishes under the default policy;
- rollback is one command; withdrawn content is not published again without an override;
- the researcher store is a separate file holding only the researcher objects, whose columns
  are exactly the allowlist.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

import release_study
from release_helpers import fixed_key
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.cli.main import main
from tide_core.config import TideConfig
from tide_core.errors import InputError
from tide_core.io.open import open_warehouse
from tide_core.release import evidence, lifecycle, publish
from tide_core.runner import anonymize_study, recognize_study
from tide_core.store.release_content import RESEARCHER_COLUMNS

S, K = "big", "k1"
N_NOTES, N_PATIENTS, CHUNK = 400, 60, 100
CONFIG = TideConfig.preset("rules")


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("versions")
    with open_warehouse(f"duckdb:{root / 'wh.duckdb'}") as wh:
        release_study.write(wh, N_NOTES, N_PATIENTS)
        recognize_study(wh, S, CONFIG, progress=False, chunk_rows=CHUNK)
    # fixed secrets: under a random one a surrogate now and then holds a patient's first name
    fixed_key(FileKeyProvider(root / "keys"), S, K)
    fixed_key(FileKeyProvider(root / "keys"), S, "k2")
    return root


@pytest.fixture
def site(base: Path, tmp_path: Path) -> Path:
    shutil.copy(base / "wh.duckdb", tmp_path / "wh.duckdb")
    shutil.copytree(base / "keys", tmp_path / "keys")
    return tmp_path


@pytest.fixture(scope="module")
def released_base(base: Path, tmp_path_factory) -> tuple[Path, list[dict]]:
    """The study after its first release (:func:`first_release`, checked there), and what researchers see."""
    root = tmp_path_factory.mktemp("released")
    shutil.copy(base / "wh.duckdb", root / "wh.duckdb")
    shutil.copytree(base / "keys", root / "keys")
    return root, first_release(root)


@pytest.fixture
def released(released_base: tuple[Path, list[dict]], tmp_path: Path) -> tuple[Path, list[dict]]:
    """A copy of the study after its first release (warehouse, researcher store, keys), and v1."""
    root, v1 = released_base
    for name in ("wh.duckdb", "wh.released.duckdb"):
        shutil.copy(root / name, tmp_path / name)
    shutil.copytree(root / "keys", tmp_path / "keys")
    assert seen(tmp_path) == v1
    return tmp_path, v1


def cli(site: Path, *args: str) -> int:
    return main([*args[:2], "--warehouse", f"duckdb:{site / 'wh.duckdb'}", *args[2:]])


def tide_run(site: Path, key: str = K) -> int:
    return main(
        ["run", "--warehouse", f"duckdb:{site / 'wh.duckdb'}", "--study", S, "--key", key, "--stage", "anonymize",
         "--preset", "rules", "--chunk-rows", str(CHUNK), "--no-progress", "--key-dir", str(site / "keys")]
    )  # fmt: skip


def publish_cli(site: Path, key: str = K, *extra: str) -> int:
    return main(
        ["release", "publish", "--warehouse", f"duckdb:{site / 'wh.duckdb'}", "--study", S, "--key", key,
         "--preset", "rules", *extra]
    )  # fmt: skip


def audit_census(site: Path, key: str = K, leaks: int = 0) -> list[dict]:
    """Plan through the CLI, then record each frame's drawn sample as reviewed."""
    out = site / f"plan-{key}.json"
    argv = ["release", "audit", "plan", "--warehouse", f"duckdb:{site / 'wh.duckdb'}", "--study", S, "--key", key]
    assert main([*argv, "--out", str(out)]) == 0
    frames = json.loads(out.read_text())["frames"] if out.exists() else []
    for f in frames:
        rec = ["release", "audit", "record", "--warehouse", f"duckdb:{site / 'wh.duckdb'}", "--study", S, "--key", key]
        rec += ["--frame", f["frame_id"], "--n", str(f["sample_size"]), "--leaks", str(leaks), "--reviewer", "test"]
        assert main(rec) == 0
    out.unlink(missing_ok=True)
    return frames


def seen(site: Path, key: str = K) -> list[dict]:
    """What a researcher reads: the released_notes view of the researcher file, opened read-only."""
    path = site / "wh.released.duckdb"
    if not path.exists():
        return []
    with duckdb.connect(str(path), read_only=True) as con:
        rows = con.execute("SELECT * FROM released_notes WHERE study = ? AND key = ?", [S, key]).fetch_arrow_table()
    return sorted(rows.to_pylist(), key=lambda r: r["note_ref"])


def release_row(site: Path, key: str = K) -> dict:
    with open_warehouse(f"duckdb:{site / 'wh.duckdb'}") as wh:
        row = lifecycle.read_release(wh, S, key)
    assert row is not None
    return row


def stamps(site: Path, key: str = K) -> set:
    with duckdb.connect(str(site / "wh.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT DISTINCT released_at FROM tide_deid_notes WHERE key = ?", [key]).fetchall()
    return {r[0] for r in rows}


def first_release(site: Path) -> list[dict]:
    assert tide_run(site) == 0
    assert publish_cli(site) == 3  # checks pass, no audit yet: awaiting audit, nothing published
    assert seen(site) == []
    audit_census(site)
    assert publish_cli(site) == 0
    return seen(site)


def test_a_release_of_many_chunks_publishes_once_stamped(released: tuple[Path, list[dict]]):
    site, v1 = released
    assert len(v1) == N_NOTES and {r["version"] for r in v1} == {"v1"}
    assert len(stamps(site)) == 1
    row = release_row(site)
    assert row["status"] == "published" and row["published_version"] == "v1" and row["gate_passed"]
    # the same content again: idempotent, no new version
    assert tide_run(site) == 0
    assert publish_cli(site) == 0
    assert seen(site) == v1 and release_row(site)["published_version"] == "v1"


def test_an_exact_duplicate_in_a_chunk_of_its_own_belongs_to_the_same_release(site: Path):
    with open_warehouse(f"duckdb:{site / 'wh.duckdb'}") as wh:
        notes = wh.read_table("notes").to_pylist()
        keep = notes[: N_NOTES - 5]
        wh.replace_table("notes", pa.Table.from_pylist([*keep, dict(keep[0])]))  # 1,995 + one exact duplicate
        recognize_study(wh, S, CONFIG, progress=False, chunk_rows=CHUNK)
    v1 = first_release(site)
    assert len(v1) == N_NOTES - 5 and len(stamps(site)) == 1
    with open_warehouse(f"duckdb:{site / 'wh.duckdb'}") as wh:
        codes = wh.read_table("tide_quarantine", ["code"], where={"study": S, "key": K}).column("code").to_pylist()
    assert codes == ["E608"]
    assert tide_run(site) == 0 and publish_cli(site) == 0  # and after a rerun
    assert seen(site) == v1


class StopError(Exception):
    pass


def interrupted_run(site: Path, after_chunks: int, key: str = K) -> None:
    def on_chunk(p):
        if p.chunk >= after_chunks:
            raise StopError

    with open_warehouse(f"duckdb:{site / 'wh.duckdb'}") as wh:
        with pytest.raises(StopError):
            anonymize_study(
                wh, S, key, FileKeyProvider(site / "keys"), CONFIG, progress=False, chunk_rows=CHUNK, on_chunk=on_chunk
            )


def test_an_interrupted_run_is_not_published_and_resumes_under_its_stamp(released: tuple[Path, list[dict]]):
    site, v1 = released
    with open_warehouse(f"duckdb:{site / 'wh.duckdb'}") as wh:  # new content: a new recognizer result
        drop_first_name(wh, "p1")
    interrupted_run(site, 2)
    assert len(stamps(site)) == 2  # two chunks of the new run, two of the old
    assert publish_cli(site) == 1
    row = release_row(site)
    assert row["status"] == "blocked" and "[E920]" in row["gate_reasons"]
    assert seen(site) == v1  # researchers keep v1, complete
    assert tide_run(site) == 0  # resumes
    assert len(stamps(site)) == 1


def drop_first_name(wh, patient_id: str) -> int:
    """Remove the cached spans of a patient's first name from their notes (a recognizer change)."""
    first = next(p["first_name"] for p in release_study.patients(N_PATIENTS) if p["patient_id"] == patient_id)
    notes = {r["note_id"]: r["text"] for r in wh.read_table("notes").to_pylist() if r["patient_id"] == patient_id}
    spans = wh.read_table("tide_spans").to_pylist()
    drop = [s for s in spans if s["note_id"] in notes and notes[s["note_id"]][s["start"] : s["end"]].startswith(first)]
    assert drop, "the fixture should have recognized the first name"
    keep = [s for s in spans if s not in drop]
    wh.replace_table("tide_spans", pa.Table.from_pylist(keep, schema=wh.read_table("tide_spans").schema))
    return len(drop)


def test_a_re_release_is_not_published_on_audits_of_other_content(released: tuple[Path, list[dict]]):
    """The stale-audit scenario: after a recognizer change, the re-release leaks the patient's
    first name; rounds recorded for v1 do not cover it, known PHI blocks it, researchers keep v1."""
    site, v1 = released
    with open_warehouse(f"duckdb:{site / 'wh.duckdb'}") as wh:
        drop_first_name(wh, "p1")
    assert tide_run(site) == 0
    assert publish_cli(site) == 1
    row = release_row(site)
    assert row["status"] == "blocked" and row["published_version"] == "v1"
    assert "known_phi_survives" in row["gate_reasons"]
    assert "has no audit: unvalidated" in row["gate_reasons"]  # v1's rounds do not vouch for the new rows
    assert seen(site) == v1
    first = release_study.patients(N_PATIENTS)[1]["first_name"]
    assert not any(re.search(rf"\b{re.escape(first)}\b", r["text"]) for r in seen(site))


def test_the_gate_counts_a_round_only_for_the_content_its_frame_holds(released: tuple[Path, list[dict]]):
    """Without known PHI, the evidence rule alone holds the changed content at awaiting_audit."""
    site, _ = released
    with open_warehouse(f"duckdb:{site / 'wh.duckdb'}") as wh:
        wh.replace_table("patients", pa.Table.from_pylist([{"patient_id": "nobody", "first_name": "Zz"}]))
        drop_first_name(wh, "p1")
    assert tide_run(site) == 0
    with open_warehouse(f"duckdb:{site / 'wh.duckdb'}") as wh:
        decision = lifecycle.gate(wh, CONFIG, S, K)
        changed = [b for b in decision.batches.values() if not b["frames"]]
        kept = [b for b in decision.batches.values() if b["frames"]]
        n_changed = sum(b["n_notes"] for b in changed)
        assert changed and 0 < n_changed < N_NOTES  # only p1's notes changed
        assert sum(b["n_notes"] for b in kept) == N_NOTES - n_changed and all(b["passed"] for b in kept)
        assert not decision.passed and decision.awaiting_audit
        plans = evidence.plan_audit(wh, CONFIG.tables, S, K)
        assert sum(p.n_notes for p in plans) == n_changed  # only the new content is audited again
    assert publish_cli(site) == 3


def test_a_nightly_increment_is_its_own_batch(released: tuple[Path, list[dict]]):
    site, v1 = released
    with open_warehouse(f"duckdb:{site / 'wh.duckdb'}") as wh:
        new = release_study.notes(40, N_PATIENTS, seed=9, start=N_NOTES)
        wh.append("notes", pa.Table.from_pylist(new))
        recognize_study(wh, S, CONFIG, progress=False, chunk_rows=CHUNK)
    assert tide_run(site) == 0
    assert publish_cli(site) == 3 and seen(site) == v1
    frames = audit_census(site)
    assert sum(f["n_notes"] for f in frames) == 40  # the night's notes, not the study
    assert publish_cli(site) == 0
    v2 = seen(site)
    assert len(v2) == N_NOTES + 40 and {r["version"] for r in v2} == {"v2"}
    old = {(r["note_ref"], r["text"]) for r in v1}
    assert old <= {(r["note_ref"], r["text"]) for r in v2}  # unchanged rows are the same rows


def test_a_failed_round_is_never_outweighed(site: Path):
    assert tide_run(site) == 0
    frames = audit_census(site, leaks=1)
    assert publish_cli(site) == 1 and release_row(site)["status"] == "blocked" and seen(site) == []
    rec = ["release", "audit", "record", "--warehouse", f"duckdb:{site / 'wh.duckdb'}", "--study", S, "--key", K]
    rec += ["--frame", frames[0]["frame_id"], "--n", "10", "--leaks", "0", "--reviewer", "test"]
    assert main(rec) == 2  # E769: no redraw after a failed round
    with open_warehouse(f"duckdb:{site / 'wh.duckdb'}") as wh:
        with pytest.raises(InputError) as err:
            evidence.plan_audit(wh, CONFIG.tables, S, K, everything=True)
        assert err.value.code == "E769"


def test_a_census_of_a_small_study_publishes_under_the_default_policy(tmp_path: Path):
    with open_warehouse(f"duckdb:{tmp_path / 'wh.duckdb'}") as wh:
        wh.replace_table("notes", pa.Table.from_pylist(release_study.notes(60, 25, seed=3)))
        wh.replace_table("patients", pa.Table.from_pylist(release_study.patients(25)))
        recognize_study(wh, S, CONFIG, progress=False)
        FileKeyProvider(tmp_path / "keys").create(S, K)
        anonymize_study(wh, S, K, FileKeyProvider(tmp_path / "keys"), CONFIG, progress=False)
        plans = evidence.plan_audit(wh, CONFIG.tables, S, K)
        # a finite population: 23 of 24 patients reviewed with no leak already bound the rate at 0
        assert [(p.n_patients, p.sample_size) for p in plans] == [(24, 23)]  # 24 of the 25 have notes
        for p in plans:  # a census
            evidence.record_round(wh, CONFIG.tables, S, K, p.frame_id, p.n_patients, 0, reviewer="test")
        row = lifecycle.decide(wh, CONFIG, S, K)
    assert row["status"] == "published" and row["gate_policy"].startswith("tide-default@1 ")
    assert row["gate_approval"] == "" and len(seen(tmp_path)) == 60


def test_rollback_is_one_command_and_withdraws_the_content(released: tuple[Path, list[dict]]):
    site, v1 = released
    with open_warehouse(f"duckdb:{site / 'wh.duckdb'}") as wh:
        new = release_study.notes(10, N_PATIENTS, seed=5, start=N_NOTES)
        wh.append("notes", pa.Table.from_pylist(new))
        recognize_study(wh, S, CONFIG, progress=False, chunk_rows=CHUNK)
    assert tide_run(site) == 0
    audit_census(site)
    assert publish_cli(site) == 0
    v2 = seen(site)
    assert len(v2) == N_NOTES + 10
    assert cli(site, "release", "rollback", "--study", S, "--key", K) == 0
    assert seen(site) == v1 and release_row(site)["status"] == "rolled_back"
    assert publish_cli(site) == 1  # E935: the withdrawn content is not published again
    assert "[E935]" in release_row(site)["gate_reasons"] and seen(site) == v1
    assert publish_cli(site, K, "--allow-withdrawn") == 0
    assert seen(site) == v2  # the same version, reinstated
    assert cli(site, "release", "rollback", "--study", S, "--key", K, "--to", "v9") == 2
    with open_warehouse(f"duckdb:{site / 'wh.duckdb'}") as wh:
        actions = [h["action"] for h in publish.history(wh, CONFIG.tables, S, K)]
    assert actions == ["publish", "publish", "withdraw", "rollback", "publish"]


def test_the_researcher_store_holds_only_researcher_objects(released: tuple[Path, list[dict]]):
    site, _ = released
    with duckdb.connect(str(site / "wh.released.duckdb"), read_only=True) as con:
        objects = {
            name: [c for c, in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
                [name]).fetchall()]
            for name, in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
        }  # fmt: skip
    tables = {"tide_published_content", "tide_published_members", "tide_published_pointer"}
    assert set(objects) == tables | set(publish.RESEARCHER_OBJECTS)
    for view, cols in publish.RESEARCHER_OBJECTS.items():
        assert tuple(objects[view]) == cols
    internal = {"note_id", "patient_id", "start", "end", "out_start", "out_end", "operator", "recognizer", "label",
                "fingerprint", "anonymizer", "reason", "code"}  # fmt: skip
    for name, cols in objects.items():
        assert not internal & set(cols), name
    assert set(objects["tide_published_content"]) == {"study", "key", "row_hash", *RESEARCHER_COLUMNS}
    with duckdb.connect(str(site / "wh.duckdb"), read_only=True) as con:  # and none of it in the warehouse file
        names = {n for (n,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert not names & (tables | set(publish.RESEARCHER_OBJECTS))


def test_a_new_key_is_a_release_of_its_own(released: tuple[Path, list[dict]]):
    site, v1 = released
    assert tide_run(site, "k2") == 0
    assert publish_cli(site, "k2") == 3  # k1's rounds do not cover k2's content
    audit_census(site, "k2")
    assert publish_cli(site, "k2") == 0
    k2 = seen(site, "k2")
    assert len(k2) == N_NOTES and seen(site) == v1
    assert release_row(site, "k2")["n_released"] == N_NOTES  # its own key's rows only
    assert not {r["patient_ref"] for r in k2} & {r["patient_ref"] for r in v1}


def test_rollback_is_one_dagster_job(released: tuple[Path, list[dict]]):
    from tide_etl import build_defs
    from tide_etl.resources import KeyProviderResource, ReleaseGateResource, TideConfigResource, WarehouseResource

    site, v1 = released
    with open_warehouse(f"duckdb:{site / 'wh.duckdb'}") as wh:
        wh.append("notes", pa.Table.from_pylist(release_study.notes(5, N_PATIENTS, seed=6, start=N_NOTES)))
        recognize_study(wh, S, CONFIG, progress=False, chunk_rows=CHUNK)
    assert tide_run(site) == 0
    audit_census(site)
    assert publish_cli(site) == 0 and len(seen(site)) == N_NOTES + 5
    defs = build_defs(
        {
            "warehouse": WarehouseResource(url=f"duckdb:{site / 'wh.duckdb'}"),
            "tide_config": TideConfigResource(preset="rules"),
            "key_provider": KeyProviderResource(key_dir=str(site / "keys")),
            "gate": ReleaseGateResource(),
        }
    )
    config = {"ops": {"rollback_release": {"config": {"study": S, "key": K, "to_version": "v1"}}}}
    result = defs.resolve_job_def("rollback_job").execute_in_process(run_config=config)
    assert result.success
    assert seen(site) == v1 and release_row(site)["published_version"] == "v1"
