"""Release checks that keep verified per-chunk digests: unchanged chunks reuse their tallies.

A study of 50 notes (one patient each, mostly) is verified in chunks of 10 rows (5 chunks) on
real DuckDB.  A second pass with nothing changed reuses every chunk's recorded tallies and gives
the outcomes a full scan gives; each kind of input a chunk's verdict depends on, changed in one
chunk, makes exactly that chunk scanned again and its check fail; a tampered tally, a new scan
version and a re-chunked study are scanned, never trusted; ``decide`` after the checks reuses
every chunk and still blocks a leak put in between.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from test_release_lifecycle import Env, checks, recognized  # noqa: F401 - recognized: a fixture

import release_study
from release_helpers import fixed_key
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.config import TideConfig
from tide_core.engine import study_chunks
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.io.open import open_warehouse
from tide_core.release import checks as rc
from tide_core.release import chunk_verdicts, lifecycle, scan
from tide_core.release.known_phi_check import known_phi_survives
from tide_core.runner import anonymize_study, recognize_study
from tide_core.store.tables import CHUNK_VERDICTS

S, K = "big", "k1"
N_NOTES, N_PATIENTS, CHUNK_ROWS = 50, 200, 10
CONFIG = TideConfig.preset("rules")
TABLE = CONFIG.tables.chunk_verdicts
_ROWS = release_study.notes(N_NOTES, N_PATIENTS)
#: The note every change is made to: chunk 2 (rows 20-29) owns it, and its patient has no other note.
NOTE = next(n["note_id"] for n in _ROWS[20:30] if sum(m["patient_id"] == n["patient_id"] for m in _ROWS) == 1)
CHUNK = 2
REUSE = ("scan/n_chunks_reused", "scan/n_chunks_scanned")


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(study_chunks, "DEFAULT_CHUNK_ROWS", CHUNK_ROWS)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("incremental")
    provider = FileKeyProvider(root / "keys")
    fixed_key(provider, S, K)
    with open_warehouse(f"duckdb:{root / 'wh.duckdb'}") as wh:
        release_study.write(wh, N_NOTES, N_PATIENTS)
        recognize_study(wh, S, CONFIG, progress=False)
        anonymize_study(wh, S, K, provider, CONFIG, progress=False)
    return root


@pytest.fixture
def wh(base: Path, tmp_path: Path) -> Iterator[DuckDBWarehouse]:
    db = tmp_path / "wh.duckdb"
    db.write_bytes((base / "wh.duckdb").read_bytes())
    w = DuckDBWarehouse(db)
    try:
        yield w
    finally:
        w.close()


def verify(wh: DuckDBWarehouse) -> dict[str, lifecycle.CheckOutcome]:
    """The blocking checks as the Dagster step runs them (with the run's source summary)."""
    return lifecycle.verify_release(wh, CONFIG, S, K, scan.source_summary(wh, CONFIG, S, K))


def reuse(out: dict[str, lifecycle.CheckOutcome]) -> tuple[int, int]:
    """(chunks reused, chunks scanned), the same on every streamed outcome."""
    seen = {tuple(o.metadata[k] for k in REUSE) for name, o in out.items() if name != "versions_recorded"}
    assert len(seen) == 1, seen
    return seen.pop()  # type: ignore[return-value]


def without_reuse(out: dict[str, lifecycle.CheckOutcome]) -> dict[str, tuple[bool, str, dict]]:
    return {
        n: (o.passed, o.description, {k: v for k, v in o.metadata.items() if k not in REUSE}) for n, o in out.items()
    }


def stored(wh: DuckDBWarehouse) -> list[dict]:
    return sorted(wh.read_table(TABLE).to_pylist(), key=lambda r: r["chunk"])


def test_a_second_pass_reuses_every_chunk_and_gives_the_outcomes_of_a_full_scan(
    wh: DuckDBWarehouse, monkeypatch: pytest.MonkeyPatch
):
    calls: list[int] = []
    real = scan.note_surfaces

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(scan, "note_surfaces", counted)
    first = verify(wh)
    assert all(o.passed for o in first.values()), {n: o.description for n, o in first.items()}
    assert reuse(first) == (0, 5) and len(calls) == N_NOTES
    assert first["known_phi_survives"].metadata["n_notes_checked"] == N_NOTES
    second = verify(wh)
    assert reuse(second) == (5, 0)
    assert len(calls) == N_NOTES  # no surface work for a reused chunk
    assert without_reuse(second) == without_reuse(first)
    # the same verdicts as each check run alone, streamed in full with nothing recorded
    alone = {
        "rows_accounted": rc.rows_accounted(wh, CONFIG, S, K),
        "offsets_in_text": rc.offsets_in_text(wh, CONFIG, S, K),
        "no_surface_survives": rc.no_surface_survives(wh, CONFIG, S, K),
        "known_phi_survives": known_phi_survives(wh, CONFIG, S, K),
    }
    assert all(not (set(o.metadata) & set(REUSE)) for o in alone.values())
    assert {n: v for n, v in without_reuse(second).items() if n in alone} == without_reuse(alone)
    # a pass that reused every chunk rewrote nothing: the rows keep the time they were verified
    rows = stored(wh)
    assert [r["chunk"] for r in rows] == [0, 1, 2, 3, 4] and all(r["n_chunks"] == 5 for r in rows)
    verify(wh)
    assert [r["verified_at"] for r in stored(wh)] == [r["verified_at"] for r in rows]


def test_the_table_holds_digests_and_counts_only(wh: DuckDBWarehouse):
    verify(wh)
    assert wh.columns(TABLE) == CHUNK_VERDICTS.names
    rows = stored(wh)
    notes = wh.read_table("notes").to_pylist()
    values = {n["note_id"] for n in notes} | {n["patient_id"] for n in notes}
    values |= {w for n in notes for w in n["text"].replace(".", " ").split() if len(w) >= 4 and w.isalpha()}
    values |= {r["text"][:20] for r in wh.read_table(CONFIG.tables.deid_notes, ["text"]).to_pylist()}
    cells = [str(v) for r in rows for c, v in r.items() if c not in ("study", "key")]
    assert not [v for v in values if any(v in cell for cell in cells)]
    for r in rows:
        tallies = json.loads(r["tallies"])
        assert set(tallies) == {"offsets_in_text", "no_surface_survives", "known_phi_survives"}
        assert all(isinstance(n, int) for t in tallies.values() for n in t.values())


def _released_text(wh: DuckDBWarehouse) -> None:
    """The released note gets its source text appended: every original surface is back."""
    wh.sql(
        "UPDATE tide_deid_notes d SET text = d.text || ' ' || n.text FROM notes n "
        f"WHERE d.note_id = n.note_id AND d.note_id = '{NOTE}'"
    )


def _released_span(wh: DuckDBWarehouse) -> None:
    """A released span's output range runs past its released text."""
    wh.sql(f"UPDATE tide_released_spans SET out_end = out_end + 100000 WHERE note_id = '{NOTE}'")


def _source_note(wh: DuckDBWarehouse) -> None:
    """The source note is cut short: its spans' source offsets no longer lie in it."""
    wh.sql(f"UPDATE notes SET text = left(text, 5) WHERE note_id = '{NOTE}'")


def _cached_span(wh: DuckDBWarehouse) -> None:
    """The span cache gains a span over the word 'worse' of the source, which the released text keeps."""
    wh.sql(
        "INSERT INTO tide_spans SELECT s.study, s.note_id, strpos(n.text, 'worse') - 1, "
        "strpos(n.text, 'worse') + 4, 'PATIENT', s.score, s.recognizer, s.fingerprint, s.origin, s.decision, "
        f"s.created_at FROM tide_spans s JOIN notes n ON s.note_id = n.note_id WHERE s.note_id = '{NOTE}' LIMIT 1"
    )


def _known_phi_row(wh: DuckDBWarehouse) -> None:
    """The note's patient is registered with the first name 'Worse', a word its released note keeps."""
    wh.sql(
        "UPDATE patients SET first_name = 'Worse' "
        f"WHERE patient_id = (SELECT patient_id FROM notes WHERE note_id = '{NOTE}')"
    )


CHANGES: dict[str, tuple[Callable[[DuckDBWarehouse], None], str]] = {
    "released_text": (_released_text, "no_surface_survives"),
    "released_span": (_released_span, "offsets_in_text"),
    "source_note": (_source_note, "offsets_in_text"),
    "cached_span": (_cached_span, "no_surface_survives"),
    "known_phi_row": (_known_phi_row, "known_phi_survives"),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_change_to_one_chunks_input_rescans_that_chunk_and_fails(wh: DuckDBWarehouse, change: str):
    """Each input the digest binds, changed for one note: its chunk is scanned again (the four
    others reuse their tallies) and the check that reads that input fails.  Were the input left
    out of the digest, the chunk would reuse its clean tally and the check would pass."""
    make, check = CHANGES[change]
    (patient,) = {r["patient_id"] for r in wh.read_table("notes", ["patient_id"], {"note_id": NOTE}).to_pylist()}
    owners = wh.read_table("notes", ["note_id"], {"patient_id": patient}).column("note_id").to_pylist()
    assert owners == [NOTE]  # the patient has no note in another chunk
    assert all(o.passed for o in verify(wh).values())
    make(wh)
    out = verify(wh)
    assert reuse(out) == (4, 1)
    assert not out[check].passed, out[check]
    # the failing verdict is recorded for that chunk, and stays failing on the next pass (reused)
    again = verify(wh)
    assert reuse(again) == (5, 0) and not again[check].passed
    assert without_reuse(again) == without_reuse(out)


def test_a_tampered_tally_cannot_make_a_leaking_chunk_pass(wh: DuckDBWarehouse):
    verify(wh)
    _released_text(wh)
    assert not verify(wh)["no_surface_survives"].passed
    row = stored(wh)[CHUNK]
    tallies = json.loads(row["tallies"])
    assert tallies["no_surface_survives"]["elsewhere"] > 0
    clean = {check: dict.fromkeys(t, 0) for check, t in tallies.items()}
    # the counts edited in place: the row checksum no longer verifies, the chunk is scanned
    wh.sql(f"UPDATE {TABLE} SET tallies = ? WHERE chunk = ?", [json.dumps(clean), CHUNK])
    out = verify(wh)
    assert reuse(out) == (4, 1) and not out["no_surface_survives"].passed
    # a forged row whose checksum verifies but whose tallies lack a count: scanned too
    forged = {c: t for c, t in clean.items() if c != "no_surface_survives"}
    text = json.dumps(forged)
    check = chunk_verdicts.row_check(S, K, CHUNK, row["digest"], row["checks"], row["scan_version"], text)
    wh.sql(f"UPDATE {TABLE} SET tallies = ?, row_check = ? WHERE chunk = ?", [text, check, CHUNK])
    out = verify(wh)
    assert reuse(out) == (4, 1) and not out["no_surface_survives"].passed
    # a clean chunk's row copied onto the leaking one (checksum recomputed): its digest is not the chunk's
    clean_row = stored(wh)[0]
    text = clean_row["tallies"]
    check = chunk_verdicts.row_check(S, K, CHUNK, clean_row["digest"], row["checks"], row["scan_version"], text)
    wh.sql(
        f"UPDATE {TABLE} SET digest = ?, tallies = ?, row_check = ? WHERE chunk = ?",
        [clean_row["digest"], text, check, CHUNK],
    )
    out = verify(wh)
    assert reuse(out) == (4, 1) and not out["no_surface_survives"].passed


def test_a_new_scan_version_scans_every_chunk_again(wh: DuckDBWarehouse, monkeypatch: pytest.MonkeyPatch):
    verify(wh)
    assert reuse(verify(wh)) == (5, 0)
    monkeypatch.setattr(chunk_verdicts, "SCAN_VERSION", "tide-chunk-scan/test")
    out = verify(wh)
    assert reuse(out) == (0, 5) and all(o.passed for o in out.values())
    assert {r["scan_version"] for r in stored(wh)} == {"tide-chunk-scan/test"}
    assert reuse(verify(wh)) == (5, 0)


def test_a_note_added_in_the_middle_rescans_only_the_chunks_that_moved(base: Path, wh: DuckDBWarehouse):
    verify(wh)
    notes = wh.read_table("notes").to_pylist()
    extra = release_study.notes(1, N_PATIENTS, seed=7, start=900)[0]
    wh.replace_table("notes", pa.Table.from_pylist([*notes[:25], extra, *notes[25:]]))
    recognize_study(wh, S, CONFIG, progress=False)
    anonymize_study(wh, S, K, FileKeyProvider(base / "keys"), CONFIG, progress=False)
    out = verify(wh)
    assert all(o.passed for o in out.values()), {n: o.description for n, o in out.items()}
    assert reuse(out) == (2, 4)  # chunks 0 and 1 did not move; 2, 3, 4 and the new 5 did
    assert [(r["chunk"], r["n_chunks"]) for r in stored(wh)] == [(c, 6) for c in range(6)]
    # the study shrinks back to 3 chunks: the rows of chunks beyond the plan go
    wh.replace_table("notes", pa.Table.from_pylist(notes[:30]))
    anonymize_study(wh, S, K, FileKeyProvider(base / "keys"), CONFIG, progress=False)
    out = verify(wh)
    assert all(o.passed for o in out.values()) and reuse(out) == (2, 1)
    assert [(r["chunk"], r["n_chunks"]) for r in stored(wh)] == [(0, 3), (1, 3), (2, 3)]


def test_decide_after_the_checks_reuses_every_chunk_and_still_blocks_a_leak_put_in_between(wh: DuckDBWarehouse):
    assert all(o.passed for o in verify(wh).values())  # the Dagster step release_checks
    row = lifecycle.decide(wh, CONFIG, S, K)
    assert row["scan"] == {"scan/n_chunks_reused": 5, "scan/n_chunks_scanned": 0}
    assert all(row["checks"].values()) and row["status"] == "awaiting_audit"
    _released_text(wh)  # a leak written after the checks, before the decision
    row = lifecycle.decide(wh, CONFIG, S, K)
    assert row["scan"] == {"scan/n_chunks_reused": 4, "scan/n_chunks_scanned": 1}
    assert row["status"] == "blocked" and not row["checks"]["no_surface_survives"]
    assert not row["checks"]["known_phi_survives"]


def test_the_dagster_checks_say_how_many_chunks_they_reused(recognized: Path, tmp_path: Path):  # noqa: F811
    """In process: release_job's checks scan the study's chunk and its decision reuses it; a later
    release_checks_job reuses it in the step too, and every one of the five results says so beside
    the run's source summary."""
    env = Env(recognized, tmp_path)
    try:
        first = env.run()
        assert first.success, checks(first)
        again = env.run("release_checks_job")
        assert again.success, checks(again)
        for run, want in ((first, (0, 1)), (again, (1, 0))):
            results = checks(run)
            for name in lifecycle.BLOCKING_CHECKS:
                md = results[name][2]
                assert tuple(md[k] for k in REUSE) == want, (name, md)
                assert md["source/n_chunks"] == 1 and md["candidate/n_released"] == 2
    finally:
        env.instance.dispose()


def test_a_patient_without_searchable_values_is_counted_alike_when_reused(wh: DuckDBWarehouse):
    """A patients row with no searchable value (short names, no ids): the chunk records it, and a
    reused chunk works its patients' values out again, so the distinct-patient count stays exact."""
    wh.sql(
        "UPDATE patients SET first_name = NULL, last_name = 'Jo', mrn = NULL, phone = NULL "
        f"WHERE patient_id = (SELECT patient_id FROM notes WHERE note_id = '{NOTE}')"
    )
    first = verify(wh)
    tallies = [json.loads(r["tallies"])["known_phi_survives"]["patients_without_values"] for r in stored(wh)]
    assert tallies[CHUNK] == 1 and sum(tallies) == 1
    second = verify(wh)
    assert reuse(second) == (5, 0) and without_reuse(second) == without_reuse(first)
    md = second["known_phi_survives"].metadata
    assert (
        md["n_notes_without_patient_row"] == 1
        and md["n_patients_with_known_values"] == len({r["patient_id"] for r in _ROWS}) - 1
    )
