"""One streamed pass over a release: the source study chunk by chunk, never the whole study.

The blocking checks need, for each released note, its source text, its released text, its
released spans and its cached spans.  Reading all of that for a study at once held the whole
study in one process (the Dagster release path grew from 469 MiB at 2,000 notes to 1,064 MiB at
20,000).  Here the source is read as the study's chunks (:func:`tide_core.engine.study_chunks.iter_chunks`:
``chunk_rows`` rows at a time, duplicate note ids decided in their own last chunk), and for each
chunk only the released rows, spans and cached spans of the note ids that chunk owns are read
(``note_id IN chunk``).  Every chunk owns different note ids, so per-chunk tallies add up to the
study's; what no chunk owns (a released row whose note has no source row, a span of no released
note, a quarantine row without a note id) is found from warehouse counts: total minus seen.

Memory is one chunk plus counters; a DuckDB connection is reopened every
:data:`~tide_core.engine.chunk_run.REFRESH_EVERY_CHUNKS` chunks, as study runs do, so what DuckDB keeps for
the file does not grow with the study.  :func:`stream_rows` and :func:`release_summary_counts`
stream whole columns in batches for the checks and the summary that need no source text.

A nightly pass does per-note work only for the chunks that changed: with a
:class:`~tide_core.release.chunk_verdicts.ChunkVerdicts`, each chunk's digest (of its source rows,
released rows, spans, cached spans and riders' inputs) is computed from what the chunk reads, and
a chunk whose digest equals its recorded one takes its recorded tallies
(:mod:`tide_core.release.chunk_verdicts`).  Study-level counts are asked of the warehouse every time.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Any, ClassVar, Protocol

import ahocorasick

from tide_core.config import TideConfig
from tide_core.engine.chunk_run import REFRESH_EVERY_CHUNKS
from tide_core.engine.heap import trim_heap
from tide_core.engine.study_chunks import StudyChunk, StudySource, iter_chunks, open_source
from tide_core.engine.validation import _as_str_id
from tide_core.io.warehouse import RefreshableWarehouse, StreamingWarehouse, Warehouse, sorted_batches
from tide_core.release.chunk_verdicts import ChunkVerdicts, chunk_digest
from tide_core.release.outcome import CheckOutcome
from tide_core.store.release_content import SortedDigest
from tide_core.store.release_store import ReleaseStore
from tide_core.store.span_cache import SpanCache
from tide_core.store.tables import TableNames

#: Labels whose operator may keep the original value (ages <= 89); see tide_core.engine.anonymization.
KEEPS_VALUE = frozenset({"AGE"})
#: Shorter surfaces ("3/4", "Al") are too common to search for elsewhere in a note without noise.
MIN_SEARCH_LEN = 4
#: Quarantine code of an exact duplicate source row (tide_core.engine.validation): its first row is released once.
EXACT_DUPLICATE = "E608"
#: Rows per batch when a whole column of a released table is streamed.
COLUMN_BATCH_ROWS = 50_000
#: Rows per batch of a sorted read digested as it streams (a few hundred kB of Python objects).
ORDERED_BATCH_ROWS = 2_000
#: Rows per range a sorted read of row hashes is split into (:func:`even_bounds`): what DuckDB
#: sorts at once in this process, so memory does not grow with the study.
RANGE_ROWS = 10_000

ROWS_ACCOUNTED = "rows_accounted"
OFFSETS_IN_TEXT = "offsets_in_text"
NO_SURFACE_SURVIVES = "no_surface_survives"
SCANNED = (ROWS_ACCOUNTED, OFFSETS_IN_TEXT, NO_SURFACE_SURVIVES)


def stream_rows(
    wh: Warehouse,
    name: str,
    columns: Sequence[str],
    where: Mapping[str, object] | None,
    batch_rows: int = COLUMN_BATCH_ROWS,
) -> Iterator[list[dict[str, Any]]]:
    """Rows of ``name`` as lists of at most ``batch_rows`` dicts (nothing when the table is absent)."""
    if not wh.table_exists(name):
        return
    if isinstance(wh, StreamingWarehouse):
        for n, batch in enumerate(wh.iter_batches(name, list(columns), where, batch_rows), start=1):
            yield batch.to_pylist()
            if n % REFRESH_EVERY_CHUNKS == 0 and isinstance(wh, RefreshableWarehouse):
                wh.refresh()  # between batches nothing is open: DuckDB hands back what it kept
    else:  # a backend without streaming reads: one read, handed out in batches
        for batch in wh.read_table(name, list(columns), where).to_batches(batch_rows):
            yield batch.to_pylist()


def ordered_rows(
    wh: Warehouse,
    name: str,
    columns: Sequence[str],
    order_by: Sequence[str],
    where: Mapping[str, object] | None,
    batch_rows: int = COLUMN_BATCH_ROWS,
    bounds: Sequence[object] = (),
) -> Iterator[list[dict[str, Any]]]:
    """Rows of ``name`` sorted by ``order_by`` (ascending, nulls first, text by code point) as
    lists of at most ``batch_rows`` dicts: the warehouse sorts, one range of ``bounds`` at a time
    where it sorts in this process (:func:`even_bounds`; nothing when the table is absent)."""
    if not wh.table_exists(name):
        return
    for batch in sorted_batches(wh, name, columns, order_by, where, batch_rows, bounds):
        yield batch.to_pylist()


def even_bounds(n_rows: int, rows_per_range: int | None = None) -> list[str]:
    """Split points of lower-case hex digests (row hashes) into ranges of about ``rows_per_range``
    (default :data:`RANGE_ROWS`) of ``n_rows`` uniformly spread values: ``[]`` for one range."""
    per = RANGE_ROWS if rows_per_range is None else rows_per_range
    ranges = -(-max(0, n_rows) // max(1, per))
    if ranges <= 1:
        return []
    width = 4
    while 16**width < 16 * ranges:
        width += 1
    return [f"{i * 16**width // ranges:0{width}x}" for i in range(1, ranges)]


def stored_fingerprint(wh: Warehouse, name: str, study: str, key: str) -> str:
    """The content fingerprint of the row hashes stored in ``name`` for (study, key), sorted by the
    warehouse and digested as they stream (:class:`SortedDigest`: constant memory); a missing
    hash counts as ``""``; ``""`` when there are no rows (or no ``row_hash`` column).

    The hashes are taken as stored: callers that vouch for content verify them against it
    (:func:`tide_core.release.evidence.verify_candidate`)."""
    digest = SortedDigest()
    if wh.table_exists(name) and "row_hash" in wh.columns(name):
        for batch in rows_by_hash(wh, name, study, key, ["row_hash"]):
            for r in batch:
                digest.add(str(r["row_hash"] or ""))
    return digest.hexdigest() if digest.n else ""


def rows_by_hash(
    wh: Warehouse, name: str, study: str, key: str, columns: Sequence[str], batch_rows: int = ORDERED_BATCH_ROWS
) -> Iterator[list[dict[str, Any]]]:
    """The rows of (study, key) in ``name`` in ascending ``row_hash`` order, as the warehouse sorts
    them in ranges of :func:`even_bounds` (nothing when the table is absent)."""
    if not wh.table_exists(name):
        return
    where = {"study": study, "key": key}
    bounds = even_bounds(wh.count(name, where))
    yield from ordered_rows(wh, name, columns, ["row_hash"], where, batch_rows, bounds)


@dataclass
class ReleaseChunk:
    """One source chunk of a release and the released rows of the note ids it owns."""

    chunk: StudyChunk
    released: list[dict[str, Any]]  # note_id, text
    spans: list[dict[str, Any]]  # note_id, start, end, out_start, out_end, label
    quarantine: list[dict[str, Any]]  # note_id, code

    @property
    def source(self) -> dict[str, Any]:
        """Valid source notes of the chunk by note id."""
        return {n.note_id: n for n in self.chunk.notes}


def iter_release_chunks(
    wh: Warehouse,
    config: TideConfig,
    study: str,
    key: str,
    chunk_rows: int | None = None,
    source: StudySource | None = None,
) -> Iterator[ReleaseChunk]:
    """The release of (study, key) beside its source, one source chunk at a time (``source``: the
    study's chunk plan when the caller has it already; ``chunk_rows`` is then not used)."""
    store = ReleaseStore(wh, config.tables)
    src = source if source is not None else open_source(wh, study, config, chunk_rows=chunk_rows)
    for n, chunk in enumerate(iter_chunks(src), start=1):
        owned = list(chunk.owned_ids)
        if owned:
            released = store.deid_notes(study, key, ["note_id", "text"], note_ids=owned)
            spans = store.released_spans(
                study, key, ["note_id", "start", "end", "out_start", "out_end", "label"], note_ids=owned
            )
            quarantine = store.quarantine(study, key, ["note_id", "code"], note_ids=owned)
        else:
            released, spans, quarantine = [], [], []
        yield ReleaseChunk(chunk, released, spans, quarantine)
        del released, spans, quarantine
        if n % REFRESH_EVERY_CHUNKS == 0 and isinstance(wh, RefreshableWarehouse):
            wh.refresh()
        trim_heap()  # the chunk's rows are freed: their pages go back, not to a growing plateau


@dataclass
class _Rows:
    """rows_accounted's tallies."""

    n_in: int = 0
    seen_released: int = 0
    both: int = 0
    dup_released: int = 0
    exact_dups_seen: int = 0
    orphan_dups: int = 0

    def add(self, rc: ReleaseChunk) -> None:
        released = [r["note_id"] for r in rc.released]
        other_q = {r["note_id"] for r in rc.quarantine if r["code"] != EXACT_DUPLICATE}
        exact = [r["note_id"] for r in rc.quarantine if r["code"] == EXACT_DUPLICATE]
        self.seen_released += len(released)
        self.dup_released += len(released) - len(set(released))
        self.both += len(set(released) & other_q)
        accounted = set(released) | other_q
        self.exact_dups_seen += len(exact)
        self.orphan_dups += sum(1 for nid in exact if nid not in accounted)

    def outcome(self, store: ReleaseStore, study: str, key: str) -> CheckOutcome:
        n_released = store.count("deid_notes", study, key)
        n_quarantined = store.count("quarantine", study, key)
        n_exact = _count(store, "quarantine", {"study": study, "key": key, "code": EXACT_DUPLICATE})
        # E608 rows of note ids no chunk owns have no original in the study
        orphan_dups = self.orphan_dups + max(0, n_exact - self.exact_dups_seen)
        n_out = n_released + n_quarantined
        passed = self.n_in == n_out and self.both == 0 and self.dup_released == 0 and orphan_dups == 0 and self.n_in > 0
        md = {
            "n_in": self.n_in,
            "n_released": n_released,
            "n_quarantined": n_quarantined,
            "n_released_and_quarantined": self.both,
            "n_duplicate_releases": self.dup_released,
            "n_exact_duplicate_rows": n_exact,
            "n_duplicates_without_original": orphan_dups,
        }
        desc = (
            "every source row is released or quarantined, once"
            if passed
            else f"{self.n_in} rows in, {n_released} released + {n_quarantined} quarantined"
            f" ({self.both} in both, {self.dup_released} duplicated"
            + (f", {orphan_dups} exact duplicates without their original" if orphan_dups else "")
            + f"); rematerialize deidentified_notes for {study}/{key}"
        )
        return CheckOutcome(passed, desc, md)


@dataclass
class _Offsets:
    """offsets_in_text's tallies."""

    n_spans_seen: int = 0
    bad_out: int = 0
    bad_in: int = 0
    orphans: int = 0
    overlaps: int = 0

    #: The per-chunk counts a chunk verdict records (``n_spans_seen`` is counted afresh every scan).
    TALLIED: ClassVar[tuple[str, ...]] = ("bad_out", "bad_in", "orphans", "overlaps")

    def work(self, rc: ReleaseChunk) -> None:
        """The per-span work of one chunk (what a reused chunk verdict stands for)."""
        src = rc.source
        texts = {r["note_id"]: r["text"] or "" for r in rc.released}
        by_note: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for s in rc.spans:
            text = texts.get(s["note_id"])
            if text is None:
                self.orphans += 1
                continue
            o0, o1 = s["out_start"], s["out_end"]
            if o0 is None or o1 is None or not (0 <= o0 <= o1 <= len(text)):
                self.bad_out += 1
            else:
                by_note[s["note_id"]].append((o0, o1))
            note = src.get(s["note_id"])
            if (
                note is None
                or s["start"] is None
                or s["end"] is None
                or not (0 <= s["start"] < s["end"] <= len(note.text))
            ):
                self.bad_in += 1
        for ranges in by_note.values():
            ranges.sort()
            self.overlaps += sum(1 for a, b in pairwise(ranges) if b[0] < a[1])

    def outcome(self, store: ReleaseStore, study: str, key: str, source: SourceIds) -> CheckOutcome:
        n_spans = store.count("released_spans", study, key)
        unseen = max(0, n_spans - self.n_spans_seen)  # spans of notes no chunk owns
        bad_in = self.bad_in
        if unseen:  # released notes without a source row: their spans' source offsets cannot hold
            unsourced = source.released_without_source(store, study, key)
            on_released = len(store.released_spans(study, key, ["note_id"], note_ids=sorted(unsourced)))
            bad_in += on_released
            unseen -= on_released
        orphans = self.orphans + unseen
        passed = self.bad_out == 0 and bad_in == 0 and orphans == 0 and self.overlaps == 0
        md = {
            "n_spans": n_spans,
            "n_out_of_text": self.bad_out,
            "n_bad_source_offsets": bad_in,
            "n_orphan_spans": orphans,
            "n_overlapping_outputs": self.overlaps,
        }
        return CheckOutcome(
            passed,
            "released span offsets lie inside their texts"
            if passed
            else "released span offsets are inconsistent with the released texts; rematerialize "
            f"deidentified_notes for {study}/{key}",
            md,
        )


@dataclass(frozen=True)
class NoteSurfaces:
    """One released note's original surfaces, as :func:`note_surfaces` reads them."""

    checked: int  # surfaces checked (not an age kept by rule, not blank)
    in_place: int  # surfaces whose own span's replacement equals them (case-folded)
    terms: tuple[str, ...]  # distinct case-folded, stripped surfaces of >= MIN_SEARCH_LEN, searched anywhere


def note_surfaces(text: str, out_text: str, rel: Sequence[Mapping[str, Any]], cached: Sequence[Any]) -> NoteSurfaces:
    """The surfaces of one note (its cached spans and released spans over the source ``text``):
    how many are checked, how many survive at their own span of ``out_text``, which are searched."""
    by_in = {(s["start"], s["end"]): s for s in rel}
    surfaces = {(sp.start, sp.end, sp.label) for sp in cached}
    surfaces |= {(s["start"], s["end"], s["label"]) for s in rel}
    checked = in_place = 0
    terms: dict[str, None] = {}  # insertion-ordered set
    for start, end, label in sorted(surfaces):  # in text order: the same work under any hash seed
        if label in KEEPS_VALUE:
            continue
        surface = text[start:end].casefold()
        if not surface.strip():
            continue
        checked += 1
        r = by_in.get((start, end))
        if r is not None and out_text[r["out_start"] : r["out_end"]].casefold() == surface:
            in_place += 1
        term = surface.strip()
        if len(term) >= MIN_SEARCH_LEN:
            terms.setdefault(term)
    return NoteSurfaces(checked, in_place, tuple(terms))


def term_automaton(terms: Iterable[str]) -> Any:
    """One Aho-Corasick automaton of search terms (each term its own value); None when there are none."""
    automaton = ahocorasick.Automaton()
    for term in terms:
        automaton.add_word(term, term)
    if not len(automaton):
        return None
    automaton.make_automaton()
    return automaton


#: A word character as ``re`` reads ``\w`` (the bounds a search term must not touch).
_WORD = re.compile(r"\w")


def surviving_elsewhere(
    folded: str, terms: Collection[str], out_ranges: Sequence[tuple[Any, Any]], automaton: Any
) -> int:
    r"""Occurrences of ``terms`` in ``folded`` (a released text, case-folded) not inside a replaced range.

    An occurrence is a whole word (no word character just before or after it); per term, the
    occurrences counted are those a left-to-right scan takes without overlap (the earliest, then
    the earliest starting at or after its end), exactly what ``re.finditer`` of
    ``(?<!\w)term(?!\w)`` yields.  ``automaton`` (:func:`term_automaton`) may hold more terms
    (the whole chunk's): only ``terms`` count.  One scan of the text for every term.
    """
    if automaton is None or not terms:
        return 0
    n = len(folded)
    next_free: dict[str, int] = {}
    found = 0
    for last, term in automaton.iter(folded):  # per term, in ascending position
        if term not in terms:
            continue
        end = last + 1
        start = end - len(term)
        if start < next_free.get(term, 0):
            continue  # overlaps an occurrence already taken
        if (start > 0 and _WORD.match(folded, start - 1)) or (end < n and _WORD.match(folded, end)):
            continue
        next_free[term] = end
        if not any(a <= start and end <= b for a, b in out_ranges):  # not inside a surrogate
            found += 1
    return found


@dataclass
class _Surfaces:
    """no_surface_survives's tallies (see :func:`tide_core.release.checks.no_surface_survives`).

    Each chunk's search terms go into one automaton (:func:`term_automaton`), each released text
    is scanned once (:func:`surviving_elsewhere`): no pattern compiled per surface or per note.
    """

    cache: SpanCache
    study: str
    in_place: int = 0
    elsewhere: int = 0
    checked: int = 0
    missing_source: int = 0
    seen_released: int = 0

    #: The per-chunk counts a chunk verdict records (``seen_released`` is counted afresh every scan).
    TALLIED: ClassVar[tuple[str, ...]] = ("in_place", "elsewhere", "checked", "missing_source")

    def cached(self, rc: ReleaseChunk) -> dict[str, list[Any]]:
        """The span cache's spans of the chunk's released notes (reviewer decisions applied)."""
        released = list(dict.fromkeys(r["note_id"] for r in rc.released))
        return self.cache.spans(self.study, released) if released else {}

    def work(self, rc: ReleaseChunk, cached: Mapping[str, Sequence[Any]]) -> None:
        """The per-note work of one chunk (what a reused chunk verdict stands for)."""
        src = rc.source
        released = {r["note_id"]: r["text"] or "" for r in rc.released}
        rel_spans: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for s in rc.spans:
            rel_spans[s["note_id"]].append(s)
        notes: list[tuple[str, NoteSurfaces, list[tuple[Any, Any]]]] = []
        for nid, out_text in released.items():
            note = src.get(nid)
            if note is None:
                self.missing_source += 1
                continue
            rel = rel_spans.get(nid, [])
            found = note_surfaces(note.text, out_text, rel, cached.get(nid, []))
            self.checked += found.checked
            self.in_place += found.in_place
            notes.append((out_text, found, [(s["out_start"], s["out_end"]) for s in rel]))
        automaton = term_automaton({t for _, found, _ in notes for t in found.terms})
        for out_text, found, out_ranges in notes:
            if found.terms:
                self.elsewhere += surviving_elsewhere(out_text.casefold(), set(found.terms), out_ranges, automaton)

    def outcome(self, store: ReleaseStore, study: str, key: str) -> CheckOutcome:
        n_notes = store.count("deid_notes", study, key)
        missing = self.missing_source + max(0, n_notes - self.seen_released)  # released without a source row
        passed = self.in_place == 0 and self.elsewhere == 0 and missing == 0
        md = {
            "n_surfaces_checked": self.checked,
            "n_surviving_in_place": self.in_place,
            "n_surviving_elsewhere": self.elsewhere,
            "n_released_without_source": missing,
            "n_notes": n_notes,
        }
        return CheckOutcome(
            passed,
            "no original surface survives in the released text"
            if passed
            else f"{self.in_place + self.elsewhere} original surfaces survive in released notes of {study}/{key}; "
            "block this release, review the notes (tide review) and rerun",
            md,
        )


@dataclass
class SourceIds:
    """The study's source note ids, asked only when a pass finds released rows no chunk owned."""

    wh: Warehouse
    config: TideConfig
    study: str

    def released_without_source(self, store: ReleaseStore, study: str, key: str) -> set[str]:
        """Released note ids of (study, key) with no row in the notes table (an anomaly: streamed)."""
        name = self.config.tables.notes
        cols = self.wh.columns(name)
        scope: dict[str, object] = {"study": study} if "study" in cols else {}
        out: set[str] = set()
        for batch in stream_rows(self.wh, store.names.deid_notes, ["note_id"], {"study": study, "key": key}):
            ids = [r["note_id"] for r in batch]
            have = self.wh.read_table(name, ["note_id"], {**scope, "note_id": ids}).column("note_id").to_pylist()
            out.update(set(ids) - {_as_str_id(v) for v in have})
        return out


def _count(store: ReleaseStore, kind: str, where: Mapping[str, object]) -> int:
    name = store.names.of(kind)
    return int(store.wh.count(name, where)) if store.wh.table_exists(name) else 0


class ChunkRider(Protocol):
    """A check riding the chunk pass whose per-chunk tallies can be recorded and reused
    (:mod:`tide_core.release.chunk_verdicts`); the known-PHI check is one."""

    name: str
    #: The names of the counts one chunk's tally holds.
    tally_names: tuple[str, ...]

    def chunk_inputs(self, rc: ReleaseChunk) -> tuple[list[object], Any] | None:
        """Read what the chunk's tally depends on beyond the chunk: (digest parts, state for
        :meth:`scan_chunk` / :meth:`reuse_chunk`), or None when it cannot be read (scan in full)."""

    def scan_chunk(self, rc: ReleaseChunk, state: Any) -> dict[str, int] | None:
        """Do the chunk's work with ``state``; its tally, or None when the work failed."""

    def reuse_chunk(self, rc: ReleaseChunk, state: Any, tally: Mapping[str, int]) -> None:
        """Take a recorded tally of the chunk instead of its work."""


def _tally_of(acc: Any, rc: ReleaseChunk, *args: Any) -> dict[str, int]:
    """Run an accumulator's per-chunk work and return what it added (its TALLIED counts)."""
    before = [getattr(acc, f) for f in acc.TALLIED]
    acc.work(rc, *args)
    return {f: getattr(acc, f) - b for f, b in zip(acc.TALLIED, before, strict=True)}


def _take(acc: Any, tally: Mapping[str, int]) -> None:
    for f in acc.TALLIED:
        setattr(acc, f, getattr(acc, f) + tally[f])


@dataclass
class _Pass:
    """One pass of :func:`scan_release`: its accumulators, riders and chunk verdicts, fed a chunk at a time."""

    study: str
    key: str
    checks: Sequence[str]
    surfaces: _Surfaces
    riders: Sequence[ChunkRider]
    extra: Sequence[Callable[[ReleaseChunk], None]]
    book: ChunkVerdicts | None
    rows: _Rows = field(default_factory=_Rows)
    offsets: _Offsets = field(default_factory=_Offsets)

    def __post_init__(self) -> None:
        """The accumulators whose tallies are recorded, by check name, and what each tally holds."""
        self.tallied: dict[str, Any] = {}
        if OFFSETS_IN_TEXT in self.checks:
            self.tallied[OFFSETS_IN_TEXT] = self.offsets
        if NO_SURFACE_SURVIVES in self.checks:
            self.tallied[NO_SURFACE_SURVIVES] = self.surfaces
        self.names = [*self.checks, *(r.name for r in self.riders)]
        self.expected = {n: acc.TALLIED for n, acc in self.tallied.items()}
        self.expected.update({r.name: r.tally_names for r in self.riders})

    def chunk(self, rc: ReleaseChunk) -> None:
        """Count one chunk afresh, then reuse its recorded tallies or do its work (and record it)."""
        self.rows.n_in += rc.chunk.n_rows + len(rc.chunk.null_id_rows)
        if ROWS_ACCOUNTED in self.checks:  # id arithmetic on what the chunk read: always afresh
            self.rows.add(rc)
        self.offsets.n_spans_seen += len(rc.spans)
        self.surfaces.seen_released += len(rc.released)
        cached = self.surfaces.cached(rc) if NO_SURFACE_SURVIVES in self.checks else None
        inputs = [r.chunk_inputs(rc) for r in self.riders]
        states = [i[1] if i is not None else None for i in inputs]
        book, digest = self.book, None
        if book is not None and all(i is not None for i in inputs) and _recordable(rc):
            parts = [(r.name, i[0]) for r, i in zip(self.riders, inputs, strict=True) if i is not None]
            digest = chunk_digest(
                self.study, self.key, self.names, rc.chunk, rc.released, rc.spans, rc.quarantine, cached, parts
            )
        index, n_chunks = rc.chunk.index, rc.chunk.n_chunks
        reused = book.reuse(index, n_chunks, digest, self.names, self.expected) if book and digest else None
        if reused is not None:
            for name, acc in self.tallied.items():
                _take(acc, reused[name])
            for r, state in zip(self.riders, states, strict=True):
                r.reuse_chunk(rc, state, reused[r.name])
            return
        tallies: dict[str, dict[str, int] | None] = {}
        for name, acc in self.tallied.items():
            tallies[name] = _tally_of(acc, rc, *([cached] if acc is self.surfaces else []))
        for r, i, state in zip(self.riders, inputs, states, strict=True):
            tallies[r.name] = r.scan_chunk(rc, state) if i is not None else None
        for fn in self.extra:
            fn(rc)
        complete = {n: t for n, t in tallies.items() if t is not None}
        if book is not None and digest and len(complete) == len(tallies):
            book.record(index, n_chunks, digest, self.names, complete)
        elif book is not None:
            book.scanned(index)


def scan_release(
    wh: Warehouse,
    config: TideConfig,
    study: str,
    key: str,
    checks: Sequence[str] = SCANNED,
    *,
    extra: Sequence[Callable[[ReleaseChunk], None]] = (),
    riders: Sequence[ChunkRider] = (),
    chunk_rows: int | None = None,
    source: StudySource | None = None,
    verdicts: ChunkVerdicts | None = None,
) -> dict[str, CheckOutcome]:
    """Run the named chunk-streamed checks (:data:`SCANNED`) in one pass; {name: outcome}.

    ``extra`` callables see every chunk too; ``riders`` (:class:`ChunkRider`, e.g. the known-PHI
    check) ride the pass with tallies that can be recorded; ``source``: the study's chunk plan
    from the run's :class:`SourceSummary` (else planned here).

    With ``verdicts`` (:class:`~tide_core.release.chunk_verdicts.ChunkVerdicts`, loaded), a chunk
    whose digest equals its recorded one takes its recorded tallies instead of the per-note work,
    every other chunk is scanned and recorded, and ``verdicts`` counts which was which (every
    outcome's ``scan/`` metadata).  ``extra`` callables cannot be recorded: with any, every chunk
    is scanned and nothing is recorded.  Study-level counts (rows no chunk owns, totals) are
    asked of the warehouse every time.
    """
    unknown = sorted(set(checks) - set(SCANNED))
    if unknown:
        raise ValueError(f"not a streamed check: {unknown}")
    store = ReleaseStore(wh, config.tables)
    book = verdicts if not extra else None
    p = _Pass(study, key, checks, _Surfaces(SpanCache(wh, config.tables), study), riders, extra, book)
    for rc in iter_release_chunks(wh, config, study, key, chunk_rows, source):
        p.chunk(rc)
    if book is not None:
        book.save()
    done: dict[str, CheckOutcome] = {}
    if ROWS_ACCOUNTED in checks:
        done[ROWS_ACCOUNTED] = p.rows.outcome(store, study, key)
    if OFFSETS_IN_TEXT in checks:
        done[OFFSETS_IN_TEXT] = p.offsets.outcome(store, study, key, SourceIds(wh, config, study))
    if NO_SURFACE_SURVIVES in checks:
        done[NO_SURFACE_SURVIVES] = p.surfaces.outcome(store, study, key)
    scanned = book.metadata() if book is not None else {}
    return {name: replace(done[name], metadata={**done[name].metadata, **scanned}) for name in checks}


def _recordable(rc: ReleaseChunk) -> bool:
    """Whether a chunk's tallies may be recorded: a note id released twice is doubtful (the
    tallies of such a chunk could depend on row order); it is scanned every time."""
    ids = [r["note_id"] for r in rc.released]
    return len(ids) == len(set(ids))


@dataclass(frozen=True)
class SourceSummary:
    """What one run knows of a release before its checks, worked out once and passed to every check:
    the study's chunk plan (source rows counted, duplicate note ids found: one count and one
    duplicate query), the candidate's counts and its content fingerprint (the digest of its row
    hashes, :func:`tide_core.store.release_content.content_fingerprint`, as ``decide`` computes it
    for rows whose hashes verify).  Counts and a digest only: no text, no id."""

    source: StudySource
    n_released: int
    n_quarantined: int
    n_spans: int
    content_fingerprint: str

    def metadata(self) -> dict[str, Any]:
        """The figures every check result of the run carries: which content its verdict covers."""
        return {
            "source/n_rows": self.source.n_source_rows,
            "source/n_chunks": self.source.n_chunks,
            "candidate/n_released": self.n_released,
            "candidate/n_quarantined": self.n_quarantined,
            "candidate/n_spans": self.n_spans,
            "candidate/content_fingerprint": self.content_fingerprint,
        }


def source_summary(wh: Warehouse, config: TideConfig, study: str, key: str) -> SourceSummary:
    """The run's :class:`SourceSummary` of (study, key): counts from the warehouse, the fingerprint
    of the row hashes as the warehouse sorts them (:func:`stored_fingerprint`: none is kept)."""
    store = ReleaseStore(wh, config.tables)
    return SourceSummary(
        open_source(wh, study, config),
        store.count("deid_notes", study, key),
        store.count("quarantine", study, key),
        store.count("released_spans", study, key),
        stored_fingerprint(wh, config.tables.deid_notes, study, key),
    )


@dataclass
class SummaryCounts:
    """What a release row counts, streamed from the released tables (no text read)."""

    n_released: int = 0
    n_spans: int = 0
    spans_by_label: Counter[str] = field(default_factory=Counter)
    anonymizers: set[str] = field(default_factory=set)
    recognizers: set[str] = field(default_factory=set)
    stamps: set[Any] = field(default_factory=set)


def release_summary_counts(wh: Warehouse, names: TableNames, study: str, key: str) -> SummaryCounts:
    """Counts of the candidate of (study, key): notes, spans by label, versions, stamps."""
    out = SummaryCounts()
    where = {"study": study, "key": key}
    for batch in stream_rows(wh, names.deid_notes, ["anonymizer", "released_at"], where):
        out.n_released += len(batch)
        out.anonymizers.update(r["anonymizer"] for r in batch if r["anonymizer"])
        out.stamps.update(r["released_at"] for r in batch)
    for batch in stream_rows(wh, names.released_spans, ["label", "recognizer"], where):
        out.n_spans += len(batch)
        out.spans_by_label.update(r["label"] for r in batch)
        out.recognizers.update(r["recognizer"] for r in batch if r["recognizer"])
    return out
