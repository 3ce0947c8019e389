"""Versioned, immutable releases: what researchers see, and the one commit that changes it.

Anonymization writes a **candidate** (``tide_deid_notes`` and friends), rewritten by every run.
Researchers never read it.  They read the **researcher store**:

- ``tide_published_content``: researcher columns only (pseudonymous refs, shifted dates,
  screened metadata, text), one row per distinct released row (``row_hash``), written once;
- ``tide_published_members``: the row hashes of each published version (ids only);
- ``tide_published_pointer``: one row per (study, key): the version researchers see;
- the view ``released_notes`` (pointer -> members -> content) and ``released_versions``.

:func:`publish` makes the candidate a version and moves the pointer in **one atomic commit**
(a DuckDB transaction, a BigQuery multi-statement transaction): researchers see the previous
version, complete, until that commit, then the new one, complete.  The version's rows are
streamed into that commit in batches on both backends (BigQuery: loaded batch by batch into
expiring staging tables that the transaction inserts from), so no process holds the study.  A running, blocked, killed
or re-run release never touches the store.  A published version is never rewritten (its rows
are content-addressed); storage grows by the rows that changed plus one id row per note and
version.  :func:`rollback` moves the pointer back, and withdraws the content it moved away from
(publishing that same content again needs an explicit override).

On DuckDB the store is a **separate database file** that holds nothing else (default: the
warehouse's file name with ``.released.duckdb``; ``TIDE_RELEASE_STORE`` sets another path), so
access to it can be granted apart from the source notes.  On BigQuery it is the warehouse's
dataset (grant the views as authorized views).

Every publish and rollback is appended to ``tide_release_versions`` in the warehouse (version,
content fingerprint, gate policy, approval, actor).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from tide_core.errors import ConfigError, InputError
from tide_core.io.open import open_warehouse
from tide_core.io.warehouse import PartitionWrite, StreamedWriteWarehouse, Warehouse
from tide_core.release.scan import rows_by_hash, stream_rows
from tide_core.store import tables
from tide_core.store.release_content import (
    HASHED_COLUMNS,
    RESEARCHER_COLUMNS,
    SortedDigest,
    raise_unverified,
    unverified_counts,
)
from tide_core.store.release_store import ReleaseStore
from tide_core.store.tables import TableNames

STORE_ENV = "TIDE_RELEASE_STORE"
PUBLISH, ROLLBACK, WITHDRAW = "publish", "rollback", "withdraw"

#: The researcher views, in BigQuery's dialect (``sql/views`` holds the same text); DuckDB gets
#: them rendered by :func:`render_view` (double quotes, the store's schema).
VIEW_SQL = """CREATE OR REPLACE VIEW `{{dataset}}.released_notes` AS
SELECT p.`study`, p.`key`, p.`version`, c.`note_ref`, c.`patient_ref`, c.`note_date`, c.`note_type`, c.`source`,
       c.`site`, c.`text`
FROM `{{dataset}}.tide_published_pointer` p
JOIN `{{dataset}}.tide_published_members` m
  ON m.`study` = p.`study` AND m.`key` = p.`key` AND m.`version` = p.`version`
JOIN `{{dataset}}.tide_published_content` c
  ON c.`study` = m.`study` AND c.`key` = m.`key` AND c.`row_hash` = m.`row_hash`"""
VERSIONS_VIEW_SQL = """CREATE OR REPLACE VIEW `{{dataset}}.released_versions` AS
SELECT p.`study`, p.`key`, p.`version`, p.`n_notes`, p.`published_at`
FROM `{{dataset}}.tide_published_pointer` p"""
#: Every column of every researcher object (tests hold the store to exactly these).
RESEARCHER_OBJECTS = {
    "released_notes": ("study", "key", "version", *RESEARCHER_COLUMNS),
    "released_versions": ("study", "key", "version", "n_notes", "published_at"),
}


def store_url(wh: Warehouse) -> str | None:
    """The researcher store's URL, or None when it is the warehouse itself (BigQuery, in memory)."""
    override = os.environ.get(STORE_ENV)
    url = str(getattr(wh, "url", ""))
    if not url.startswith("duckdb:"):
        return override or None
    path = str(getattr(wh, "path", ":memory:"))
    if override:
        target = override if override.startswith("duckdb:") else f"duckdb:{override}"
    elif path == ":memory:":
        return None
    else:
        p = Path(path)
        target = f"duckdb:{p.with_name(p.name.removesuffix('.duckdb') + '.released.duckdb')}"
    if Path(target.removeprefix("duckdb:")).resolve() == Path(path).resolve():
        raise ConfigError(
            "E934",
            "the researcher store must be a separate DuckDB file from the warehouse",
            hint=f"set {STORE_ENV} to another path (or leave it unset for <warehouse>.released.duckdb)",
        )
    return target


@contextlib.contextmanager
def researcher_store(wh: Warehouse, create: bool = True) -> Iterator[Warehouse | None]:
    """The researcher store of ``wh`` (opened and closed here when it is a separate file);
    ``create=False``: None when that file does not exist yet (a read creates nothing)."""
    url = store_url(wh)
    if url is None:
        yield wh
        return
    if not create and not Path(url.removeprefix("duckdb:").partition("#")[0]).exists():
        yield None
        return
    rs = open_warehouse(url)
    try:
        yield rs
    finally:
        rs.close()


def render_view(rs: Warehouse, sql: str, names: TableNames) -> str:
    """A view's SQL for the store's warehouse, with the configured table names."""
    for kind in ("published_pointer", "published_members", "published_content"):
        sql = sql.replace(f"{{{{dataset}}}}.tide_{kind}`", f"{{{{dataset}}}}.{getattr(names, kind)}`")
    if str(getattr(rs, "url", "")).startswith("bigquery:"):
        return sql.replace("{{dataset}}", f"{getattr(rs, 'project')}.{getattr(rs, 'dataset')}")  # noqa: B009
    schema = getattr(rs, "schema", "main")
    return re.sub(r"`\{\{dataset\}\}\.([A-Za-z0-9_]+)`", rf'"{schema}"."\1"', sql).replace("`", '"')


def ensure_store(rs: Warehouse, names: TableNames) -> None:
    """Create the store's tables (empty) and its researcher views, if missing."""
    writes = [
        PartitionWrite(getattr(names, kind), tables.empty(kind), {"study": "", "key": ""})
        for kind in ("published_content", "published_members", "published_pointer")
        if not rs.table_exists(getattr(names, kind))
    ]
    if writes:
        rs.replace_partitions(writes)
    sql: Any = getattr(rs, "sql")  # noqa: B009 -- both warehouses have it
    for name, text in (("released_notes", VIEW_SQL), ("released_versions", VERSIONS_VIEW_SQL)):
        if not rs.table_exists(name):
            sql(render_view(rs, text, names))


def pointer(rs: Warehouse, names: TableNames, study: str, key: str) -> dict[str, Any] | None:
    """The pointer row of (study, key) in the researcher store, or None (nothing published)."""
    if not rs.table_exists(names.published_pointer):
        return None
    rows = rs.read_table(names.published_pointer, where={"study": study, "key": key}).to_pylist()
    return rows[0] if rows else None


def published_version(wh: Warehouse, names: TableNames, study: str, key: str) -> dict[str, Any] | None:
    """What researchers see for (study, key): the pointer row, or None."""
    with researcher_store(wh, create=False) as rs:
        return None if rs is None else pointer(rs, names, study, key)


def history(wh: Warehouse, names: TableNames, study: str, key: str) -> list[dict[str, Any]]:
    """Every publish, rollback and withdrawal of (study, key), oldest first."""
    rows = ReleaseStore(wh, names).rows("release_versions", study, key)
    return sorted(rows, key=lambda r: r["decided_at"])


def _number(version: str | None) -> int:
    return int(version[1:]) if version and version[:1] == "v" and version[1:].isdigit() else 0


@dataclass(frozen=True)
class Published:
    """The outcome of :func:`publish`: the version researchers now see."""

    version: str
    content_fingerprint: str
    n_notes: int
    changed: bool  # False: that content was already what researchers saw


#: Candidate rows read, verified and written at a time when a version is published.
PUBLISH_BATCH_ROWS = 2_000


def _researcher_rows(study: str, key: str, rows: list[dict[str, Any]], seen: set[str]) -> list[dict[str, Any]]:
    """The researcher rows of verified candidate rows, one per row hash not in ``seen`` (updated)."""
    out = []
    for r in rows:
        h = str(r["row_hash"])
        if h not in seen:
            seen.add(h)
            out.append({"row_hash": h, "study": study, "key": key, **{c: r[c] for c in RESEARCHER_COLUMNS}})
    return out


def _candidate_batches(wh: Warehouse, names: TableNames, study: str, key: str) -> Iterator[list[dict[str, Any]]]:
    """The candidate's rows (row hash + hashed columns), :data:`PUBLISH_BATCH_ROWS` at a time, each
    batch verified against its hashes (E932 / E937) before it is handed out."""
    for rows in stream_rows(
        wh, names.deid_notes, ["row_hash", *HASHED_COLUMNS], {"study": study, "key": key}, PUBLISH_BATCH_ROWS
    ):
        raise_unverified(study, key, *unverified_counts(study, key, rows))
        yield rows


def candidate_content(wh: Warehouse, names: TableNames, study: str, key: str) -> pa.Table:
    """The candidate's researcher rows (researcher columns + row_hash), one per row hash, each
    verified against its hash (E932 / E937).  Whole candidate in memory: for small callers and tests."""
    seen: set[str] = set()
    rows = [r for batch in _candidate_batches(wh, names, study, key) for r in _researcher_rows(study, key, batch, seen)]
    return tables.to_table("published_content", rows)


def _ordered_hashes(wh: Warehouse, names: TableNames, study: str, key: str) -> Iterator[list[dict[str, Any]]]:
    """The candidate's row hashes as the warehouse sorts them, a batch at a time
    (:func:`~tide_core.release.scan.rows_by_hash`)."""
    yield from rows_by_hash(wh, names.deid_notes, study, key, ["row_hash"], PUBLISH_BATCH_ROWS)


@dataclass(frozen=True)
class CandidateDigest:
    """What :func:`publish` knows of the candidate before its commit, from one sorted pass."""

    fingerprint: str  # the content fingerprint of its distinct row hashes ("" when it has none)
    n_notes: int  # distinct row hashes: the version's notes
    n_rows: int  # rows (a row repeated with the same content counts each time)
    checksum: int  # the order-free checksum (:func:`_sum_of`) of every row's hash
    repeated: frozenset[str]  # row hashes of more than one row (normally none)


def candidate_digest(wh: Warehouse, names: TableNames, study: str, key: str) -> CandidateDigest:
    """The candidate's :class:`CandidateDigest`, every row verified first (E932 / E937): two
    streamed passes, no hash kept but the repeated ones."""
    for _ in _candidate_batches(wh, names, study, key):
        pass  # each batch is verified as it is read
    distinct, n_rows, checksum = _Distinct(), 0, 0
    repeated: set[str] = set()
    for rows in _ordered_hashes(wh, names, study, key):
        hashes = [str(r["row_hash"] or "") for r in rows]
        n_rows += len(hashes)
        checksum += _sum_of(hashes)
        repeated.update(h for h in hashes if not distinct.new(h))
    d = distinct.digest
    return CandidateDigest(d.hexdigest() if d.n else "", d.n, n_rows, checksum, frozenset(repeated))


def _record(wh: Warehouse, names: TableNames, row: dict[str, Any]) -> None:
    wh.append(names.release_versions, tables.to_table("release_versions", [row]))


def publish(
    wh: Warehouse,
    names: TableNames,
    study: str,
    key: str,
    *,
    gate_policy: str = "",
    gate_approval: str = "",
    gate_statement: str = "",
    actor: str = "",
    expect_fingerprint: str | None = None,
    allow_withdrawn: bool = False,
) -> Published:
    """Publish the candidate of (study, key) as a version; one atomic commit moves the pointer.

    ``expect_fingerprint`` is the content the checks and the gate judged: if the candidate
    changed since, nothing is published (E921).  Idempotent: the content researchers already
    see is not published again.  The candidate is read in batches (:data:`PUBLISH_BATCH_ROWS`)
    inside the commit, so memory does not grow with the study's text.
    """
    digest = candidate_digest(wh, names, study, key)
    fp, n_notes = digest.fingerprint, digest.n_notes
    if not n_notes:
        raise InputError("E930", f"release {study}/{key} has no released rows to publish", hint="run anonymization")
    if expect_fingerprint is not None and fp != expect_fingerprint:
        raise _changed(study, key)
    past = history(wh, names, study, key)
    withdrawn = _withdrawn(past)
    now = dt.datetime.now(dt.UTC)
    with researcher_store(wh) as rs:
        assert rs is not None  # created when missing
        ensure_store(rs, names)
        current = pointer(rs, names, study, key)
        if current is not None and current["content_fingerprint"] == fp and fp not in withdrawn:
            if not any(r["action"] in (PUBLISH, ROLLBACK) and r["version"] == current["version"] for r in past):
                _record(
                    wh,
                    names,
                    _history_row(
                        study,
                        key,
                        current["version"],
                        PUBLISH,
                        fp,
                        n_notes,
                        now,
                        gate_policy,
                        gate_approval,
                        gate_statement,
                        actor,
                    ),
                )
            return Published(current["version"], fp, n_notes, changed=False)
        if fp in withdrawn and not allow_withdrawn:
            raise InputError(
                "E935",
                f"this content of {study}/{key} was rolled back (withdrawn); it is not published again",
                hint="re-make the release (new content), or publish with --allow-withdrawn to reinstate it",
            )
        earlier = [r["version"] for r in past if r["action"] == PUBLISH and r["content_fingerprint"] == fp]
        # an earlier version of exactly this content is reused only when all its members are there
        version = earlier[-1] if earlier and _members(rs, names, study, key, earlier[-1]) == n_notes else None
        reuse = version is not None
        if version is None:
            top = max([_number(r["version"]) for r in past] + [_number((current or {}).get("version"))])
            version = f"v{top + 1}"
        _commit_version(wh, rs, names, study, key, version, digest, now, write_members=not reuse)
    _record(
        wh,
        names,
        _history_row(study, key, version, PUBLISH, fp, n_notes, now, gate_policy, gate_approval, gate_statement, actor),
    )
    return Published(version, fp, n_notes, changed=True)


def _changed(study: str, key: str) -> InputError:
    return InputError(
        "E921",
        f"the candidate of {study}/{key} changed after it was verified; nothing was published",
        hint="decide the release again (tide release publish, or release_checks_job)",
    )


class _Distinct:
    """The distinct values of an ascending stream (adjacent repeats skipped), digested as they pass."""

    def __init__(self) -> None:
        self.digest = SortedDigest()
        self._last: str | None = None

    def new(self, value: str) -> bool:
        """Whether ``value`` is new (then digested)."""
        if value == self._last:
            return False
        self.digest.add(value)
        self._last = value
        return True


def _sum_of(hashes: Iterable[str]) -> int:
    """An order-free checksum of row hashes (their sum as integers): what ``content`` streamed is
    compared with what ``members`` streamed, which is checked against the fingerprint."""
    return sum(int(h, 16) if _HEX.fullmatch(h) else int.from_bytes(h.encode()[:32], "big") for h in hashes)


_HEX = re.compile(r"[0-9a-f]{1,64}")


class _VersionStream:
    """The new version's rows as the commit streams them: the candidate's content rows not yet in
    the store, then the version's members, neither held whole; the commit is rolled back (E921)
    unless they are the candidate that was digested before it (``digest``).

    ``content`` streams the candidate in storage order (each row verified against its hash) and
    must see the digest's rows: as many, with the same order-free checksum (a repeated row is
    written once).  ``members`` streams the distinct row hashes as the warehouse sorts them and
    must digest to the fingerprint.
    """

    def __init__(
        self,
        wh: Warehouse,
        rs: Warehouse,
        names: TableNames,
        study: str,
        key: str,
        version: str,
        digest: CandidateDigest,
    ) -> None:
        self.wh, self.rs, self.names = wh, rs, names
        self.study, self.key, self.version, self.digest = study, key, version, digest
        self.fp, self.n_notes = digest.fingerprint, digest.n_notes

    def content(self) -> Iterator[pa.Table]:
        """The candidate's rows whose content the store lacks; E921 when they are not the digest's."""
        study, key = self.study, self.key
        n_rows, checksum = 0, 0
        repeated_seen: set[str] = set()
        for batch in _candidate_batches(self.wh, self.names, study, key):
            n_rows += len(batch)
            checksum += _sum_of(str(r["row_hash"]) for r in batch)
            rows = _researcher_rows(study, key, batch, set())
            if self.digest.repeated:  # a row repeated in another batch is written once
                rows = [r for r in rows if r["row_hash"] not in repeated_seen]
                repeated_seen.update(r["row_hash"] for r in rows if r["row_hash"] in self.digest.repeated)
            have = set(
                self.rs.read_table(
                    self.names.published_content,
                    ["row_hash"],
                    where={"study": study, "key": key, "row_hash": [r["row_hash"] for r in rows]},
                )
                .column("row_hash")
                .to_pylist()
            )
            new = [r for r in rows if r["row_hash"] not in have]
            if new:
                yield tables.to_table("published_content", new)
        if n_rows != self.digest.n_rows or checksum != self.digest.checksum:
            raise _changed(study, key)

    def members(self) -> Iterator[pa.Table]:
        """The version's member rows, one per row hash in ascending order; E921 unless they digest
        to the fingerprint."""
        distinct = _Distinct()
        for rows in _ordered_hashes(self.wh, self.names, self.study, self.key):
            part = [h for h in (str(r["row_hash"] or "") for r in rows) if distinct.new(h)]
            if part:
                yield tables.to_table(
                    "published_members",
                    [{"study": self.study, "key": self.key, "version": self.version, "row_hash": h} for h in part],
                )
        if distinct.digest.hexdigest() != self.fp or distinct.digest.n != self.n_notes:
            raise _changed(self.study, self.key)

    def pointer(self, now: dt.datetime) -> PartitionWrite:
        """The pointer row that makes the version the one researchers see."""
        row = {
            "study": self.study,
            "key": self.key,
            "version": self.version,
            "content_fingerprint": self.fp,
            "n_notes": self.n_notes,
            "published_at": now,
        }
        return PartitionWrite(
            self.names.published_pointer,
            tables.to_table("published_pointer", [row]),
            {"study": self.study, "key": self.key},
        )

    def in_memory(self, write_members: bool) -> list[PartitionWrite]:
        """The content and members as whole tables (a backend without streamed commits)."""
        study, key, names = self.study, self.key, self.names
        new_content = [t for t in self.content()]
        writes = []
        if new_content:
            table = pa.concat_tables(new_content)
            part = {"study": study, "key": key, "row_hash": table.column("row_hash").to_pylist()}
            writes.append(PartitionWrite(names.published_content, table, part))
        if write_members:
            writes.append(
                PartitionWrite(
                    names.published_members,
                    pa.concat_tables(list(self.members())),
                    {"study": study, "key": key, "version": self.version},
                )
            )
        return writes


def _commit_version(
    wh: Warehouse,
    rs: Warehouse,
    names: TableNames,
    study: str,
    key: str,
    version: str,
    digest: CandidateDigest,
    now: dt.datetime,
    *,
    write_members: bool,
) -> None:
    """Write the version's new content rows and members and move the pointer, in one commit.

    The candidate is streamed inside the commit, :data:`PUBLISH_BATCH_ROWS` rows at a time (DuckDB:
    inside its transaction; BigQuery: batch by batch into staging tables, then one multi-statement
    transaction); content already in the store (same row hash) is not written again.  If what is
    streamed is not the content fingerprinted (``fp``), the commit is rolled back (E921):
    researchers never see content that was not verified.
    """
    stream = _VersionStream(wh, rs, names, study, key, version, digest)
    pointer_write = stream.pointer(now)
    if isinstance(rs, StreamedWriteWarehouse):
        streams: list[tuple[str, Mapping[str, object] | None, Callable[[], Iterator[pa.Table]]]] = [
            (names.published_content, None, stream.content)
        ]
        if write_members:
            streams.append((names.published_members, {"study": study, "key": key, "version": version}, stream.members))
        rs.replace_partitions_streamed(streams, [pointer_write])  # the one commit researchers can observe
        return
    # a backend without streamed commits (a plugin warehouse): the version in memory, one commit all the same
    rs.replace_partitions([*stream.in_memory(write_members), pointer_write])


def _members(rs: Warehouse, names: TableNames, study: str, key: str, version: str) -> int:
    if not rs.table_exists(names.published_members):
        return 0
    return rs.count(names.published_members, {"study": study, "key": key, "version": version})


def _history_row(
    study: str,
    key: str,
    version: str,
    action: str,
    fp: str,
    n: int,
    now: dt.datetime,
    gate_policy: str = "",
    gate_approval: str = "",
    gate_statement: str = "",
    actor: str = "",
) -> dict[str, Any]:
    return {
        "study": study,
        "key": key,
        "version": version,
        "action": action,
        "content_fingerprint": fp,
        "n_notes": n,
        "gate_policy": gate_policy,
        "gate_approval": gate_approval,
        "gate_statement": gate_statement,
        "actor": actor,
        "decided_at": now,
    }


def _withdrawn(past: list[dict[str, Any]]) -> set[str]:
    """Content fingerprints whose last publish or withdrawal was a withdrawal."""
    last: dict[str, str] = {}
    for r in past:  # oldest first
        if r["action"] in (PUBLISH, WITHDRAW):
            last[r["content_fingerprint"]] = r["action"]
    return {fp for fp, action in last.items() if action == WITHDRAW}


def rollback(
    wh: Warehouse,
    names: TableNames,
    study: str,
    key: str,
    to_version: str | None = None,
    actor: str = "",
    allow_withdrawn: bool = False,
    before_commit: Callable[[str], None] | None = None,
) -> str:
    """Point researchers back at an earlier published version (default: the latest one before the
    current that was not withdrawn); the content moved away from is withdrawn.  A withdrawn
    version is a target only when named and ``allow_withdrawn`` (E935).  Returns the version now
    visible."""
    past = history(wh, names, study, key)
    withdrawn = _withdrawn(past)
    now = dt.datetime.now(dt.UTC)
    with researcher_store(wh, create=False) as rs:
        current = None if rs is None else pointer(rs, names, study, key)
        if rs is None or current is None:
            raise InputError("E936", f"nothing of {study}/{key} is published; there is nothing to roll back")
        published = [r for r in past if r["action"] == PUBLISH and r["version"] != current["version"]]
        if to_version is not None:
            published = [r for r in published if r["version"] == to_version]
            if published and published[-1]["content_fingerprint"] in withdrawn and not allow_withdrawn:
                raise InputError(
                    "E935",
                    f"version {to_version} of {study}/{key} was rolled back (withdrawn); it is not shown again",
                    hint="pass --allow-withdrawn to reinstate it on purpose",
                )
        else:
            published = [r for r in published if r["content_fingerprint"] not in withdrawn]
        if not published or not _members(rs, names, study, key, published[-1]["version"]):
            raise InputError(
                "E936",
                f"no earlier published version of {study}/{key}"
                + (f" named {to_version!r}" if to_version else "")
                + " to roll back to",
                hint="tide release status lists the published versions",
            )
        target = published[-1]
        # intent first: the withdrawal and the rollback are recorded (and ``before_commit`` runs,
        # e.g. the release row) before the pointer moves, so a kill between leaves researchers the
        # current version, complete, and a rerun of the rollback finishes it
        for version, action, fp, n in (
            (current["version"], WITHDRAW, current["content_fingerprint"], current["n_notes"]),
            (target["version"], ROLLBACK, target["content_fingerprint"], target["n_notes"]),
        ):
            _record(wh, names, _history_row(study, key, version, action, fp, int(n or 0), now, actor=actor))
        if before_commit is not None:
            before_commit(str(target["version"]))
        point = tables.to_table(
            "published_pointer",
            [
                {
                    "study": study,
                    "key": key,
                    "version": target["version"],
                    "content_fingerprint": target["content_fingerprint"],
                    "n_notes": target["n_notes"],
                    "published_at": now,
                }
            ],
        )
        rs.replace_partitions([PartitionWrite(names.published_pointer, point, {"study": study, "key": key})])
    return str(target["version"])


def researcher_rows(wh: Warehouse, study: str, key: str, columns: str = "*") -> list[dict[str, Any]]:
    """What a researcher reads from ``released_notes`` for (study, key) (tests, the CLI)."""
    with researcher_store(wh, create=False) as rs:
        if rs is None or not rs.table_exists("released_notes"):
            return []
        sql: Any = getattr(rs, "sql")  # noqa: B009
        if str(getattr(rs, "url", "")).startswith("bigquery:"):
            ds = f"{getattr(rs, 'project')}.{getattr(rs, 'dataset')}"  # noqa: B009
            q = f"SELECT {columns} FROM `{ds}.released_notes` WHERE study = @study AND key = @key"
            return list(sql(q, {"study": study, "key": key}).to_pylist())
        q = f'SELECT {columns} FROM "{getattr(rs, "schema", "main")}"."released_notes" WHERE study = ? AND key = ?'
        return list(sql(q, [study, key]).to_pylist())
