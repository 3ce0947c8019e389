"""Publishing on BigQuery streams the version batch by batch, in one commit (the emulator).

A study of 60 short notes is recognized and anonymized on the emulator and published as v1; a new
key secret makes every released row new content, published as v2 with ``PUBLISH_BATCH_ROWS = 25``:
the content and members go batch by batch into staging tables (one load job per batch) and one
multi-statement transaction moves the pointer.  At every staged batch researchers still see v1,
complete; after the commit v2, complete; no staging table is left.  Then, new content again with a
row edited after its hash was taken (a bad row, E937) in the last batch: the commit fails after earlier
batches were staged, researchers keep v2, the store gains no row, no staging table is left.
"""

from __future__ import annotations

import datetime as dt

import pytest

import release_study
from tests.release_helpers import fixed_key
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.config import TideConfig
from tide_core.errors import InputError
from tide_core.io.bigquery_warehouse import STAGING_PREFIX, BigQueryWarehouse
from tide_core.release import publish
from tide_core.release.scan import stream_rows
from tide_core.runner import anonymize_study, recognize_study
from tide_core.store.release_content import content_fingerprint

try:
    import bqemulator  # noqa: F401
    import google.cloud.bigquery  # noqa: F401
    from test_bigquery_warehouse import PROJECT, _open, emulator  # pytest fixture
except ImportError as exc:  # pragma: no cover - depends on the environment
    _NO_EMULATOR = f"BigQuery emulator not available: {exc}"

    @pytest.fixture(scope="module")
    def emulator():
        pytest.skip(_NO_EMULATOR)


S, K = "big", "k1"
CONFIG = TideConfig.preset("rules")
DATASET = "pubstream"
BATCH = 25


class Watching(BigQueryWarehouse):
    """The real warehouse; after each load into a staging table of the researcher store it records
    what researchers see at that moment: (versions, rows) of ``released_notes``."""

    seen: list[tuple[str, set[str], int]]

    def _load(self, table_id, table, disposition, schema):
        n = super()._load(table_id, table, disposition, schema)
        stage = table_id.rpartition(".")[2]
        if stage.startswith(STAGING_PREFIX + "tide_published_") and getattr(self, "seen", None) is not None:
            kind = stage.removeprefix(STAGING_PREFIX + "tide_published_").rpartition("_")[0]
            rows = publish.researcher_rows(self, S, K, "version")
            self.seen.append((kind, {r["version"] for r in rows}, len(rows)))
        return n


def _view(wh) -> tuple[set[str], int]:
    rows = publish.researcher_rows(wh, S, K, "version")
    return {r["version"] for r in rows}, len(rows)


def _staging_left(wh) -> list[str]:
    return [t.table_id for t in wh.client.list_tables(f"{PROJECT}.{DATASET}") if t.table_id.startswith(STAGING_PREFIX)]


def _rekey(wh, keys, salt: str) -> None:
    """A new key secret, the study anonymized again: every released row is new content."""
    fixed_key(keys, S, K, salt=salt)
    anonymize_study(wh, S, K, keys, CONFIG, progress=False, chunk_rows=30)


def test_a_multi_batch_version_is_published_in_one_commit_and_a_bad_batch_changes_nothing(
    emulator, tmp_path, monkeypatch
):
    monkeypatch.setattr(publish, "PUBLISH_BATCH_ROWS", BATCH)
    keys = FileKeyProvider(tmp_path / "keys")
    wh = _open(emulator, DATASET, cls=Watching)
    names = CONFIG.tables
    where = {"study": S, "key": K}
    try:
        release_study.write(wh, 60, 8)
        recognize_study(wh, S, CONFIG, progress=False, chunk_rows=30)
        _rekey(wh, keys, "one")
        assert publish.publish(wh, names, S, K).version == "v1"
        assert _view(wh) == ({"v1"}, 60)

        _rekey(wh, keys, "two")
        wh.seen = []
        out = publish.publish(wh, names, S, K)
        assert (out.version, out.n_notes, out.changed) == ("v2", 60, True)
        # 60 new content rows and 60 members in batches of 25, 25, 10, then the pointer row
        loads = [kind for kind, _, _ in wh.seen]
        assert loads == ["content"] * 3 + ["members"] * 3 + ["pointer"], loads
        assert all((v, n) == ({"v1"}, 60) for _, v, n in wh.seen), wh.seen  # v1, whole, until the commit
        assert _view(wh) == ({"v2"}, 60)
        assert _staging_left(wh) == []
        stored = (wh.count(names.published_content), wh.count(names.published_members))
        assert stored == (120, 120)

        # new content again, and a bad row (its text edited after its hash) in the last batch
        _rekey(wh, keys, "three")
        order = [r["note_id"] for b in stream_rows(wh, names.deid_notes, ["note_id"], where, BATCH) for r in b]
        wh.client.query(
            f"UPDATE `{PROJECT}.{DATASET}.{names.deid_notes}` SET text = CONCAT(text, ' edited') "
            f"WHERE note_id = '{order[-1]}'"
        ).result()
        # the digest of the candidate as it was fingerprinted (candidate_digest would refuse the edited row)
        hashes = wh.read_table(names.deid_notes, ["row_hash"])["row_hash"].to_pylist()
        digest = publish.CandidateDigest(content_fingerprint(hashes), 60, 60, publish._sum_of(hashes), frozenset())
        wh.seen = []
        with pytest.raises(InputError) as err:
            publish._commit_version(wh, wh, names, S, K, "v3", digest, dt.datetime.now(dt.UTC), write_members=True)
        assert err.value.code == "E937"
        loads = [kind for kind, _, _ in wh.seen]
        assert loads == ["content", "content"], loads  # the first two batches were staged
        assert all((v, n) == ({"v2"}, 60) for _, v, n in wh.seen), wh.seen
        assert _view(wh) == ({"v2"}, 60)
        assert (wh.count(names.published_content), wh.count(names.published_members)) == stored
        assert _staging_left(wh) == []
    finally:
        wh.close()
