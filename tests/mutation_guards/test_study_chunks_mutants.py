"""A study's input as chunks (``tide_core/engine/study_chunks.py``), checked on real DuckDB warehouses in seconds.

What resume and idempotent chunk commits rely on: every chunk holds exactly ``chunk_rows`` input rows (the
last fewer) in read order, validated with their study-wide row numbers, whatever batch sizes the backend
yields, and the backend is read one chunk at a time; a chunk owns exactly the note ids of its rows (sorted),
so the chunks' ids are disjoint; the rows of a note id that occurs more than once are held back and decided
together in one last duplicates chunk; rows without a note id are in no chunk's ids.  ``open_source`` plans
the chunks (the study's rows and its duplicate ids, only the study's rows when the table has a ``study``
column); ``delete_absent`` deletes exactly the stored rows whose note left the study's source; ``digest`` and
``note_identity`` are the resume identity of a chunk.  Every check runs on the streaming DuckDB backend and on
a backend with only the plain ``Warehouse`` reads (the in-memory fallback).  Negative cases differ in one property.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json

import pyarrow as pa
import pytest

from tide_core.config import TideConfig
from tide_core.engine import study_chunks as sc
from tide_core.errors import ConfigError
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.io.warehouse import StreamingWarehouse, Warehouse
from tide_core.spans import Note
from tide_core.store.tables import TableNames

CONFIG = TideConfig.preset("rules")

NOTES = pa.schema(
    [
        ("study", pa.string()),
        ("note_id", pa.string()),
        ("patient_id", pa.string()),
        ("text", pa.string()),
        ("note_date", pa.string()),
    ]
)


class Counting(DuckDBWarehouse):
    """The real DuckDB backend; it records what ``iter_batches`` is asked for, counts the batches it has
    handed out, and can cut them to another size (a backend is free to choose its batch sizes)."""

    def __init__(self, batch: int | None = None) -> None:
        super().__init__(":memory:")
        self.batch = batch
        self.asked: list[tuple[object, ...]] = []
        self.handed = 0

    def iter_batches(self, name, columns=None, where=None, batch_rows=1000):
        self.asked.append((name, columns, where, batch_rows))
        for b in super().iter_batches(name, columns, where, self.batch or batch_rows):
            self.handed += 1
            yield b


class Plain:
    """Only the plain ``Warehouse`` protocol over a real DuckDB (no streaming reads)."""

    def __init__(self) -> None:
        self._db = DuckDBWarehouse(":memory:")
        self.url = self._db.url

    def table_exists(self, name):
        return self._db.table_exists(name)

    def columns(self, name):
        return self._db.columns(name)

    def read_table(self, name, columns=None, where=None):
        return self._db.read_table(name, columns, where)

    def replace_table(self, name, table):
        return self._db.replace_table(name, table)

    def append(self, name, table):
        return self._db.append(name, table)

    def replace_partition(self, name, table, partition):
        return self._db.replace_partition(name, table, partition)

    def replace_partitions(self, writes):
        return self._db.replace_partitions(writes)

    def delete(self, name, where):
        return self._db.delete(name, where)

    def count(self, name, where=None):
        return self._db.count(name, where)

    def close(self):
        self._db.close()


def _backends():
    return [pytest.param(Counting, id="streaming"), pytest.param(Plain, id="plain")]


def test_the_two_backends_are_what_they_stand_for():
    assert isinstance(Counting(), StreamingWarehouse)
    assert isinstance(Plain(), Warehouse) and not isinstance(Plain(), StreamingWarehouse)


def _row(nid, pid="p1", text="note text", study="s", date=None):
    return {"study": study, "note_id": nid, "patient_id": pid, "text": text, "note_date": date}


def _load(wh, rows, name="notes", schema=NOTES):
    wh.replace_table(name, pa.Table.from_pylist(rows, schema=schema))
    return wh


def _ids(n, prefix="n"):
    return [_row(f"{prefix}{i:02d}", pid=f"p{i % 3}") for i in range(n)]


# -- StudySource -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n_rows, chunk_rows, dups, expected",
    [(0, 5, (), 1), (1, 5, (), 1), (5, 5, (), 1), (6, 5, (), 2), (10, 5, (), 2), (11, 5, (), 3), (0, 5, ("a",), 2)]
    + [(6, 5, ("a",), 3), (5, 5, ("a", "b"), 2)],
)
def test_the_number_of_chunks(n_rows, chunk_rows, dups, expected):
    src = sc.StudySource(Plain(), "notes", {"study": "s"}, chunk_rows, n_rows, frozenset(dups), 100)
    assert src.n_chunks == expected
    assert src.source_where == {"study": "s"}


def test_a_chunk_lists_the_patients_of_its_notes():
    notes = [Note("a", "p1", "x"), Note("b", "p2", "y"), Note("c", "p1", "z")]
    chunk = sc.StudyChunk(0, 1, 3, notes, [], [], ("a", "b", "c"))
    assert chunk.patient_ids == {"p1", "p2"}
    assert sc.StudyChunk(0, 1, 0, [], [], [], ()).patient_ids == set()


# -- open_source ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", _backends())
def test_a_missing_notes_table_is_e609(backend):
    wh = _load(backend(), _ids(2), name="site_notes")
    with pytest.raises(ConfigError) as e:
        sc.open_source(wh, "s", CONFIG)
    assert e.value.code == "E609"
    assert e.value.message == f"notes table 'notes' not found in {wh.url}"
    assert "--notes-table" in e.value.hint
    assert sc.open_source(wh, "s", CONFIG, notes_table="site_notes").table == "site_notes"
    configured = dataclasses.replace(CONFIG, tables=TableNames(notes="site_notes"))
    assert sc.open_source(wh, "s", configured).table == "site_notes"  # the configured name by default


@pytest.mark.parametrize("backend", _backends())
def test_the_chunk_size(backend):
    wh = _load(backend(), _ids(3))
    assert sc.DEFAULT_CHUNK_ROWS == 2000
    assert sc.open_source(wh, "s", CONFIG).chunk_rows == 2000
    assert sc.open_source(wh, "s", CONFIG, chunk_rows=None).chunk_rows == 2000
    assert sc.open_source(wh, "s", CONFIG, chunk_rows=1).chunk_rows == 1  # the smallest
    assert sc.open_source(wh, "s", CONFIG, chunk_rows=7).chunk_rows == 7
    for bad in (0, -1, -5):  # 0 is refused, not read as "the default"
        with pytest.raises(ConfigError) as e:
            sc.open_source(wh, "s", CONFIG, chunk_rows=bad)
        assert e.value.code == "E610"
        assert e.value.message == f"chunk size {bad} is not positive"
        assert "--chunk-rows" in e.value.hint


@pytest.mark.parametrize("backend", _backends())
def test_a_notes_table_without_a_required_column_is_refused(backend):
    schema = pa.schema([("note_id", pa.string()), ("text", pa.string())])
    wh = _load(backend(), [{"note_id": "a", "text": "x"}], schema=schema)
    with pytest.raises(ConfigError) as e:
        sc.open_source(wh, "s", CONFIG)
    assert e.value.code == "E600" and "patient_id" in e.value.message and "table notes " in e.value.message
    _load(wh, [{"note_id": "a", "text": "x"}], name="site_notes", schema=schema)
    with pytest.raises(ConfigError) as e:
        sc.open_source(wh, "s", CONFIG, notes_table="site_notes")
    assert e.value.code == "E600" and "table site_notes " in e.value.message  # the table it read


@pytest.mark.parametrize("backend", _backends())
def test_the_plan_reads_only_the_study(backend):
    rows = [_row("a"), _row(" b"), _row("b "), _row("c"), _row(None), _row(None), _row("")]
    rows += [_row("c", study="t"), _row("d", study="t"), _row("d", study="t")]
    wh = _load(backend(), rows)
    src = sc.open_source(wh, "s", dataclasses.replace(CONFIG, max_note_chars=123), chunk_rows=4)
    assert (src.wh, src.table, src.where, src.chunk_rows) == (wh, "notes", {"study": "s"}, 4)
    assert src.n_source_rows == 7
    assert src.duplicate_ids == frozenset({"b"})  # trimmed ids; no null or empty id; not "c" or "d" of study t
    assert src.max_note_chars == 123
    assert src.n_chunks == 3


@pytest.mark.parametrize("backend", _backends())
def test_without_a_study_column_the_whole_table_is_the_study(backend):
    schema = pa.schema([("note_id", pa.string()), ("patient_id", pa.string()), ("text", pa.string())])
    rows = [{"note_id": i, "patient_id": "p", "text": "x"} for i in ("a", "b", "a")]
    wh = _load(backend(), rows, schema=schema)
    src = sc.open_source(wh, "s", CONFIG)
    assert src.where is None and src.source_where is None
    assert (src.n_source_rows, src.duplicate_ids) == (3, frozenset({"a"}))
    assert [c.owned_ids for c in sc.iter_chunks(src)] == [("b",), ("a",)]


# -- iter_chunks -----------------------------------------------------------------------------------------------


def _mixed():
    """Rows of study s (with rows of study t between them): 0 a, 1 dup (first), 2 no patient (E602), 3 no id
    (E601), 4 b, 5 dup (same), 6 conflict (first), 7 c, 8 conflict (other text), 9 half (empty text: E604),
    10 half, 11 d."""
    return [
        _row("a", date="2021-03-04"),
        _row("dup", pid="p2"),
        _row("nopat", pid=None),
        _row(None, pid="p3"),
        _row("a", study="t", text="other study"),
        _row("b"),
        _row("dup", pid="p2"),
        _row("conflict", text="one"),
        _row("c", pid="p2"),
        _row("conflict", text="two"),
        _row("half", text="  "),
        _row("half", pid="p4"),
        _row("d"),
    ]


def _summary(chunk):
    return (
        chunk.index,
        chunk.n_chunks,
        chunk.n_rows,
        [n.note_id for n in chunk.notes],
        [(q.note_id, q.code, q.row_number) for q in chunk.quarantined],
        [(q.note_id, q.code, q.row_number) for q in chunk.null_id_rows],
        chunk.owned_ids,
    )


EXPECTED_MIXED = [
    (0, 4, 2, ["a"], [("nopat", "E602", 2)], [(None, "E601", 3)], ("a", "nopat")),
    (1, 4, 2, ["b", "c"], [], [], ("b", "c")),
    (2, 4, 1, ["d"], [], [], ("d",)),
    (
        3,
        4,
        6,
        ["dup", "half"],
        [("half", "E604", 9), ("dup", "E608", 5), ("conflict", "E607", 6), ("conflict", "E607", 8)],
        [],
        ("conflict", "dup", "half"),
    ),
]


@pytest.mark.parametrize("backend", _backends())
def test_chunks_in_order_with_duplicates_last(backend):
    wh = _load(backend(), _mixed())
    src = sc.open_source(wh, "s", CONFIG, chunk_rows=4)
    assert src.duplicate_ids == frozenset({"dup", "conflict", "half"})
    chunks = list(sc.iter_chunks(src))
    assert [_summary(c) for c in chunks] == EXPECTED_MIXED
    assert chunks[0].notes[0] == Note("a", "p1", "note text", chunks[0].notes[0].metadata)
    assert chunks[0].notes[0].metadata["note_date"] == "2021-03-04"
    assert chunks[3].notes[0].patient_id == "p2" and chunks[3].notes[1].patient_id == "p4"
    owned = [i for c in chunks for i in c.owned_ids]
    assert len(owned) == len(set(owned))  # disjoint: a chunk commit never touches another chunk's rows


@pytest.mark.parametrize("backend", _backends())
def test_without_duplicates_there_is_no_duplicates_chunk(backend):
    wh = _load(backend(), _ids(10))
    src = sc.open_source(wh, "s", CONFIG, chunk_rows=5)
    chunks = list(sc.iter_chunks(src))
    assert [(c.index, c.n_chunks, c.n_rows, c.owned_ids) for c in chunks] == [
        (0, 2, 5, tuple(f"n{i:02d}" for i in range(5))),
        (1, 2, 5, tuple(f"n{i:02d}" for i in range(5, 10))),
    ]
    assert [n.patient_id for n in chunks[1].notes] == [f"p{i % 3}" for i in range(5, 10)]


@pytest.mark.parametrize("backend", _backends())
def test_an_empty_study_has_no_chunk(backend):
    wh = _load(backend(), _ids(3, prefix="t"))
    src = sc.open_source(wh, "other", CONFIG)
    assert src.n_source_rows == 0 and src.n_chunks == 1
    assert list(sc.iter_chunks(src)) == []


@pytest.mark.parametrize("backend", _backends())
def test_row_numbers_are_study_wide(backend):
    rows = _ids(7)
    rows[5] = _row("late", pid=None)
    wh = _load(backend(), rows)
    chunks = list(sc.iter_chunks(sc.open_source(wh, "s", CONFIG, chunk_rows=2)))
    assert [q.row_number for c in chunks for q in c.quarantined] == [5]
    assert [c.index for c in chunks if c.quarantined] == [2]


@pytest.mark.parametrize("backend", _backends())
def test_the_note_length_limit_of_the_config(backend):
    wh = _load(backend(), [_row("a", text="x" * 10), _row("b", text="x" * 11)])
    src = sc.open_source(wh, "s", dataclasses.replace(CONFIG, max_note_chars=10))
    (chunk,) = sc.iter_chunks(src)
    assert [n.note_id for n in chunk.notes] == ["a"]
    assert [(q.note_id, q.code) for q in chunk.quarantined] == [("b", "E605")]


@pytest.mark.parametrize("batch", [1, 3, 5, 7, 100])
def test_chunks_have_exactly_chunk_rows_whatever_the_batches(batch):
    wh = _load(Counting(batch=batch), _ids(12))
    chunks = list(sc.iter_chunks(sc.open_source(wh, "s", CONFIG, chunk_rows=5)))
    assert [len(c.notes) for c in chunks] == [5, 5, 2]
    assert [n.note_id for c in chunks for n in c.notes] == [f"n{i:02d}" for i in range(12)]


def test_the_backend_is_asked_for_chunks_of_the_study():
    wh = _load(Counting(), _ids(6) + [_row("x", study="t")])
    src = sc.open_source(wh, "s", CONFIG, chunk_rows=4)
    list(sc.iter_chunks(src))
    assert wh.asked == [("notes", None, {"study": "s"}, 4)]


def test_the_backend_is_read_one_chunk_at_a_time():
    wh = _load(Counting(), _ids(12))
    it = sc.iter_chunks(sc.open_source(wh, "s", CONFIG, chunk_rows=4))
    first = next(it)
    assert len(first.notes) == 4 and wh.handed == 1  # not the next batch before the first chunk is out
    next(it)
    assert wh.handed == 2


# -- delete_absent -------------------------------------------------------------------------------------------

OUT = pa.schema([("study", pa.string()), ("key", pa.string()), ("note_id", pa.string())])


@pytest.mark.parametrize("backend", _backends())
def test_delete_absent_deletes_exactly_the_notes_gone_from_the_source(backend):
    wh = _load(backend(), [_row("kept"), _row(" padded "), _row("elsewhere", study="t")])
    stored = [("s", "k", "kept"), ("s", "k", "padded"), ("s", "k", "gone"), ("s", "k", "elsewhere")]
    stored += [("s", "k", None), ("s", "k2", "gone"), ("t", "k", "gone")]
    _load(wh, [dict(zip(OUT.names, r, strict=True)) for r in stored], name="out", schema=OUT)
    src = sc.open_source(wh, "s", CONFIG)
    assert sc.delete_absent(src, "out", {"study": "s", "key": "k"}) == 2  # "gone" and "elsewhere" (study t's)
    left = sorted(
        (r["study"], r["key"], r["note_id"] or "") for r in wh.read_table("out").to_pylist()
    )  # the null id row is no note's: kept
    assert left == [("s", "k", ""), ("s", "k", "kept"), ("s", "k", "padded"), ("s", "k2", "gone"), ("t", "k", "gone")]
    assert sc.delete_absent(src, "out", {"study": "s", "key": "k"}) == 0  # idempotent


@pytest.mark.parametrize("backend", _backends())
def test_delete_absent_of_a_missing_table_is_nothing(backend):
    wh = _load(backend(), [_row("a")])
    assert sc.delete_absent(sc.open_source(wh, "s", CONFIG), "out", {"study": "s"}) == 0
    assert not wh.table_exists("out")


@pytest.mark.parametrize("backend", _backends())
def test_delete_absent_without_a_study_column(backend):
    schema = pa.schema([("note_id", pa.string()), ("patient_id", pa.string()), ("text", pa.string())])
    wh = _load(backend(), [{"note_id": "a", "patient_id": "p", "text": "x"}], schema=schema)
    _load(wh, [{"study": "s", "key": "k", "note_id": n} for n in ("a", "b")], name="out", schema=OUT)
    assert sc.delete_absent(sc.open_source(wh, "s", CONFIG), "out", {"study": "s"}) == 1
    assert wh.read_table("out").column("note_id").to_pylist() == ["a"]


# -- resume identity -------------------------------------------------------------------------------------------


def _digest(parts):
    h = hashlib.sha256()
    for p in parts:
        h.update(json.dumps(p, sort_keys=True, default=str, separators=(",", ":")).encode())
        h.update(b"\x1e")
    return h.hexdigest()[:32]


def test_digest_is_the_documented_hash():
    parts = [{"b": 1, "a": [1, "x"]}, "v1", 3, None, dt.date(2021, 3, 4), "é"]
    assert sc.digest(parts) == _digest(parts)
    assert len(sc.digest(parts)) == 32
    assert sc.digest([{"a": [1, "x"], "b": 1}]) == sc.digest([{"b": 1, "a": [1, "x"]}])  # key order is no identity
    assert sc.digest(["ab"]) != sc.digest(["a", "b"])  # parts are separated
    assert sc.digest(["a", "b"]) != sc.digest(["b", "a"])
    assert sc.digest([]) == hashlib.sha256().hexdigest()[:32]


def test_note_identity_hashes_the_text_and_keeps_ids_and_metadata():
    notes = [Note("n1", "p1", "Anna Quist", {"site": "x", "note_date": "2021-03-04"}), Note("n2", "p2", "é", {})]
    ident = sc.note_identity(notes)
    assert ident == [
        ["n1", "p1", hashlib.sha256(b"Anna Quist").hexdigest(), [("note_date", "2021-03-04"), ("site", "x")]],
        ["n2", "p2", hashlib.sha256("é".encode()).hexdigest(), []],
    ]
    assert "Anna Quist" not in json.dumps(ident)
    assert sc.note_identity([]) == []
