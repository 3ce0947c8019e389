"""A study's input as a stream of chunks: bounded memory for a study of any size.

A chunk is ``chunk_rows`` consecutive rows of the study's notes in the warehouse's read order
(DuckDB: storage order; one deterministic order for an unchanged table), validated with their
study-wide row numbers.  Only one chunk's rows are in memory at a time.

Duplicate note ids are the one study-wide rule of validation: the warehouse lists the ids that
occur more than once (``duplicate_values``, a GROUP BY), the rows of those ids are held back
from their chunks and decided together in one last *duplicates chunk*.  Every other chunk owns
exactly the note ids of its rows, so a chunk commit (``note_id IN chunk``) is idempotent and
never touches another chunk's rows.  Rows with no note id (quarantined, E601) belong to no
chunk's ids; callers write them once per run.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from tide_core.anonymize.keys import check_name
from tide_core.config import TideConfig
from tide_core.engine.validation import (
    _as_str_id,
    check_columns,
    resolve_duplicates,
    validate_chunk,
    validate_numbered,
)
from tide_core.errors import ConfigError, InputError, KeyProviderError
from tide_core.io.warehouse import REF, ShardingWarehouse, ShardSource, StreamingWarehouse, Warehouse
from tide_core.spans import Note, Quarantined

#: Rows per chunk unless the caller says otherwise (``tide run --chunk-rows``).
DEFAULT_CHUNK_ROWS = 2000


@dataclass(frozen=True)
class StudyChunk:
    """One chunk of a study's input: its valid notes, its quarantined rows, the note ids it owns."""

    index: int  # 0-based, in read order; the duplicates chunk (if any) is the last
    n_chunks: int  # chunks in this study (counted before reading)
    n_rows: int  # input rows decided in this chunk
    notes: list[Note]
    quarantined: list[Quarantined]  # input-validation quarantines (with a note id)
    null_id_rows: list[Quarantined]  # rows without a note id (E601): in no chunk's ids
    owned_ids: tuple[str, ...]  # note ids whose rows this chunk decides (sorted)

    @property
    def patient_ids(self) -> set[str]:
        """The patients of the chunk's valid notes (the known-PHI rows it needs)."""
        return {n.patient_id for n in self.notes}

    def info(self) -> ChunkInfo:
        """What the driver keeps of this chunk: counts, ids and id-less rows, no text."""
        return ChunkInfo(self.index, self.n_chunks, self.n_rows, len(self.notes), self.null_id_rows, self.owned_ids)


@dataclass(frozen=True)
class ChunkInfo:
    """What the driver keeps of a decided chunk: counts, ids and id-less rows (no text)."""

    index: int
    n_chunks: int
    n_rows: int  # input rows decided in this chunk (as StudyChunk.n_rows)
    n_notes: int  # valid notes among them
    null_id_rows: list[Quarantined]
    owned_ids: tuple[str, ...]


@dataclass(frozen=True)
class ChunkPlan:
    """One chunk planned from row references only (:func:`iter_plans`): which rows, which note ids.

    A worker reads the rows (a shard) and decides them with :func:`chunk_from_rows`; the result
    equals the :class:`StudyChunk` that :func:`iter_chunks` gives for the same index.
    """

    index: int
    n_chunks: int
    refs: tuple[int, ...]  # the warehouse's references of the chunk's rows
    row_numbers: tuple[int, ...]  # their study-wide row numbers, ascending
    owned_ids: tuple[str, ...]  # note ids whose rows this chunk decides (sorted)
    duplicates: bool = False  # the duplicates chunk (rows of every note id that occurs more than once)
    patient_ids: tuple[str, ...] = ()  # patient ids of its rows (sorted): the known-PHI rows it needs


@dataclass(frozen=True)
class StudySource:
    """Where a study's notes are and how they are chunked."""

    wh: Warehouse
    table: str
    where: Mapping[str, object] | None
    chunk_rows: int
    n_source_rows: int
    duplicate_ids: frozenset[str]
    max_note_chars: int

    @property
    def n_chunks(self) -> int:
        """Chunks in the study's plan: the row chunks, plus one for duplicated note ids if any."""
        return max(1, math.ceil(self.n_source_rows / self.chunk_rows)) + (1 if self.duplicate_ids else 0)

    @property
    def source_where(self) -> Mapping[str, object] | None:
        """The filter on the source table's rows (``None``: every row)."""
        return self.where


def open_source(
    wh: Warehouse, study: str, config: TideConfig, notes_table: str | None = None, chunk_rows: int | None = None
) -> StudySource:
    """Check the study's notes table and plan its chunks (a count and a duplicate-id query)."""
    name = notes_table or config.tables.notes
    if not wh.table_exists(name):
        raise ConfigError(
            "E609",
            f"notes table {name!r} not found in {wh.url}",
            hint="create it (tide demo loads a synthetic one) or pass --notes-table",
        )
    rows = DEFAULT_CHUNK_ROWS if chunk_rows is None else int(chunk_rows)  # 0 is refused, not the default
    if rows < 1:
        raise ConfigError("E610", f"chunk size {rows} is not positive", hint="pass --chunk-rows N with N >= 1")
    cols = wh.columns(name)
    check_columns(cols, name)
    where = {"study": study} if "study" in cols else None
    if isinstance(wh, StreamingWarehouse):
        dups = frozenset(wh.duplicate_values(name, "note_id", where))
    else:  # a backend without the streaming reads: ids in memory (not bounded)
        ids = [_as_str_id(v) for v in wh.read_table(name, ["note_id"], where).column("note_id").to_pylist()]
        dups = frozenset(k for k, c in Counter(i for i in ids if i is not None).items() if c > 1)
    return StudySource(wh, name, where, rows, wh.count(name, where), dups, config.max_note_chars)


@dataclass(frozen=True)
class StudyValueCensus:
    """Rows of a notes table that belong to no study: counts only, never the values."""

    n_null: int = 0  # study NULL or empty
    n_ill_formed: int = 0  # a study value that is not a study name (check_name)
    n_ill_formed_values: int = 0  # distinct such values

    def warnings(self, table: str) -> list[str]:
        """The E620 / E621 lines of a run report (empty when every row has a study)."""
        out = []
        if self.n_null:
            out.append(
                f"[E620] {self.n_null} row(s) of notes table {table!r} have no study (NULL or empty): no study "
                "run reads them; give them a study, or drop the study column to make the table one study"
            )
        if self.n_ill_formed:
            out.append(
                f"[E621] {self.n_ill_formed} row(s) of notes table {table!r} have a study value that is not a "
                f"study name ({self.n_ill_formed_values} distinct value(s), e.g. with spaces or invisible "
                "characters): they are not discovered as studies and no study run reads them; fix the values "
                "(1-63 letters, digits, '_', '.', '-', starting with a letter or digit)"
            )
        return out


def is_study_name(value: object) -> bool:
    """Whether a notes table's ``study`` value names a study (the names keys and partitions accept)."""
    if value is None or isinstance(value, (bytes, bytearray, memoryview)):
        return False
    try:
        check_name("study", value if isinstance(value, str) else str(value))
    except KeyProviderError:
        return False
    return True


def study_value_census(wh: Warehouse, table: str) -> StudyValueCensus:
    """Count the rows of ``table`` whose ``study`` is NULL, empty or not a study name (one scan of the column)."""
    if not wh.table_exists(table) or "study" not in wh.columns(table):
        return StudyValueCensus()
    counts: Counter[object] = Counter()
    if isinstance(wh, StreamingWarehouse):
        for batch in wh.iter_batches(table, ["study"], None, _CENSUS_BATCH_ROWS):
            counts.update(_hashable(v) for v in batch.column("study").to_pylist())
    else:
        counts.update(_hashable(v) for v in wh.read_table(table, ["study"]).column("study").to_pylist())
    null = sum(n for v, n in counts.items() if v is None or v == "")
    bad = {v: n for v, n in counts.items() if v is not None and v != "" and not is_study_name(v)}
    return StudyValueCensus(null, sum(bad.values()), len(bad))


def study_value_warnings(wh: Warehouse, table: str) -> list[str]:
    """:meth:`StudyValueCensus.warnings` of ``table``'s census."""
    return study_value_census(wh, table).warnings(table)


_CENSUS_BATCH_ROWS = 100_000


def _hashable(value: object) -> object:
    """A study value as a Counter key (a LIST or STRUCT study column's values are not hashable)."""
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _batches(src: StudySource) -> Iterator[pa.RecordBatch]:
    if isinstance(src.wh, StreamingWarehouse):
        yield from src.wh.iter_batches(src.table, None, src.where, src.chunk_rows)
    else:
        yield from src.wh.read_table(src.table, None, src.where).to_batches(src.chunk_rows)


def _row_chunks(src: StudySource) -> Iterator[list[dict[str, Any]]]:
    """Exactly ``chunk_rows`` rows per chunk (the last may be shorter), whatever batch sizes the backend yields."""
    pending: list[dict[str, Any]] = []
    for batch in _batches(src):
        pending.extend(batch.to_pylist())
        while len(pending) >= src.chunk_rows:
            yield pending[: src.chunk_rows]
            pending = pending[src.chunk_rows :]
    if pending:
        yield pending


def iter_chunks(src: StudySource) -> Iterator[StudyChunk]:
    """The study's chunks in order; rows of duplicated note ids come last, in their own chunk."""
    n_chunks = src.n_chunks
    first = 0
    index = 0
    held: list[tuple[int, Note]] = []
    held_q: list[Quarantined] = []
    for rows in _row_chunks(src):
        valid, quarantined = validate_chunk(rows, first, src.max_note_chars)
        first += len(rows)
        notes = [n for _, n in valid if n.note_id not in src.duplicate_ids]
        held.extend((i, n) for i, n in valid if n.note_id in src.duplicate_ids)
        held_q.extend(q for q in quarantined if q.note_id is not None and q.note_id in src.duplicate_ids)
        mine = [q for q in quarantined if q.note_id is not None and q.note_id not in src.duplicate_ids]
        owned = {n.note_id for n in notes} | {q.note_id for q in mine if q.note_id is not None}
        yield StudyChunk(
            index,
            n_chunks,
            len(notes) + len(mine),
            notes,
            mine,
            [q for q in quarantined if q.note_id is None],
            tuple(sorted(owned)),
        )
        index += 1
    if src.duplicate_ids:
        kept, dup_q = resolve_duplicates(held)
        yield StudyChunk(
            index,
            n_chunks,
            len(held) + len(held_q),
            kept,
            held_q + dup_q,
            [],
            tuple(sorted(src.duplicate_ids)),
        )


def iter_plans(src: StudySource, source: ShardSource) -> Iterator[ChunkPlan]:
    """The study's chunks as :class:`ChunkPlan`, planned over ``source`` (:meth:`ShardingWarehouse.open_shards`).

    On DuckDB the source is the notes table, so the chunks have the indices and rows of
    :func:`iter_chunks`; on BigQuery it is the run's copy of the study, in its own row order.

    Reads only row references, note ids and patient ids (:meth:`ShardingWarehouse.iter_refs`), never text.
    """
    if not isinstance(src.wh, ShardingWarehouse):
        raise ConfigError("E614", f"warehouse {src.wh.url} cannot export shards", hint="this is a bug in the caller")
    n_chunks = src.n_chunks
    pending: list[tuple[int, str | None, str | None]] = []  # (ref, note id, patient id)
    held: list[tuple[int, int, str | None]] = []  # (row number, ref, patient id) of duplicated note ids' rows
    first = index = 0

    def plan(rows: list[tuple[int, str | None, str | None]]) -> ChunkPlan:
        numbered = [(first + j, ref, nid, pid) for j, (ref, nid, pid) in enumerate(rows)]
        kept = [r for r in numbered if r[2] not in src.duplicate_ids]
        held.extend((i, ref, pid) for i, ref, nid, pid in numbered if nid in src.duplicate_ids)
        return ChunkPlan(
            index,
            n_chunks,
            tuple(r[1] for r in kept),
            tuple(r[0] for r in kept),
            tuple(sorted({r[2] for r in kept if r[2] is not None})),
            patient_ids=tuple(sorted({r[3] for r in kept if r[3] is not None})),
        )

    for batch in src.wh.iter_refs(source.table, ["note_id", "patient_id"], source.where, src.chunk_rows):
        refs = batch.column(REF).to_pylist()
        ids = [_as_str_id(v) for v in batch.column("note_id").to_pylist()]
        patients = [_as_str_id(v) for v in batch.column("patient_id").to_pylist()]
        pending.extend(zip(refs, ids, patients, strict=True))
        while len(pending) >= src.chunk_rows:
            yield plan(pending[: src.chunk_rows])
            pending = pending[src.chunk_rows :]
            first += src.chunk_rows
            index += 1
    if pending:
        yield plan(pending)
        index += 1
    if src.duplicate_ids:
        yield ChunkPlan(
            index,
            n_chunks,
            tuple(r for _, r, _ in held),
            tuple(i for i, _, _ in held),
            tuple(sorted(src.duplicate_ids)),
            duplicates=True,
            patient_ids=tuple(sorted({p for _, _, p in held if p is not None})),
        )


def _changed(plan: ChunkPlan) -> InputError:
    return InputError(
        "E613",
        f"chunk {plan.index + 1}/{plan.n_chunks} read other rows than it was planned with",
        hint="the notes table changed during the run; rerun once it is stable (committed chunks are kept)",
        terminal=False,
    )


def chunk_from_rows(plan: ChunkPlan, rows: Sequence[tuple[int, Mapping[str, Any]]], max_chars: int) -> StudyChunk:
    """Decide a planned chunk from its rows (a shard's): validation, and duplicates for that chunk."""
    if tuple(i for i, _ in rows) != plan.row_numbers:
        raise _changed(plan)
    valid, quarantined = validate_numbered(rows, max_chars)
    if plan.duplicates:
        held_q = [q for q in quarantined if q.note_id is not None]
        if len(held_q) != len(quarantined) or not {n.note_id for _, n in valid} <= set(plan.owned_ids):
            raise _changed(plan)
        kept, dup_q = resolve_duplicates(valid)
        return StudyChunk(plan.index, plan.n_chunks, len(valid) + len(held_q), kept, held_q + dup_q, [], plan.owned_ids)
    notes = [n for _, n in valid]
    mine = [q for q in quarantined if q.note_id is not None]
    owned = tuple(sorted({n.note_id for n in notes} | {q.note_id for q in mine if q.note_id is not None}))
    if owned != plan.owned_ids:
        raise _changed(plan)
    null_ids = [q for q in quarantined if q.note_id is None]
    return StudyChunk(plan.index, plan.n_chunks, len(notes) + len(mine), notes, mine, null_ids, owned)


def delete_absent(src: StudySource, name: str, where: Mapping[str, object]) -> int:
    """Delete rows of ``name`` (matching ``where``) whose note is no longer in the study's source."""
    wh = src.wh
    if not wh.table_exists(name):
        return 0
    if isinstance(wh, StreamingWarehouse):
        return wh.delete_absent(name, where, "note_id", src.table, "note_id", src.where)
    present = {_as_str_id(v) for v in wh.read_table(src.table, ["note_id"], src.where).column("note_id").to_pylist()}
    stored = {v for v in wh.read_table(name, ["note_id"], where).column("note_id").to_pylist() if v is not None}
    gone = sorted(stored - present)
    return wh.delete(name, {**where, "note_id": gone}) if gone else 0


def digest(parts: Iterable[object]) -> str:
    """A short hash of JSON-able parts (chunk identity for resume; never holds values)."""
    h = hashlib.sha256()
    for p in parts:
        h.update(json.dumps(p, sort_keys=True, default=str, separators=(",", ":")).encode())
        h.update(b"\x1e")
    return h.hexdigest()[:32]


def note_identity(notes: Sequence[Note]) -> list[list[object]]:
    """What of each note decides its outputs, hashed (no text leaves the process)."""
    return [
        [
            n.note_id,
            n.patient_id,
            hashlib.sha256(n.text.encode("utf-8")).hexdigest(),
            sorted((k, v) for k, v in n.metadata.items()),
        ]
        for n in notes
    ]
