"""The table registry: every table TIDE writes into the source schema, in one place.

Each :class:`TableSpec` holds a table's default name (prefixable through :class:`TableNames`),
its Arrow schema, the columns it is partitioned by (``replace_partition`` scopes), its BigQuery
clustering and monthly time-partitioning column, and a one-line description.  The BigQuery DDL
in ``sql/ddl`` is generated from this registry (``python -m tide_core.store.ddl``; a test checks
the checked-in files equal the generated ones).

The span-metadata table (``tide_spans``) is written by recognition before any text changes;
anonymization reads only from it.  None of these tables holds key material; released tables
hold no original values.  Every read of the released tables goes through
:class:`tide_core.store.release_store.ReleaseStore`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import pyarrow as pa

from tide_core.errors import ConfigError

TS = pa.timestamp("us", tz="UTC")

SPANS = pa.schema(
    [
        ("study", pa.string()),
        ("note_id", pa.string()),
        ("start", pa.int64()),
        ("end", pa.int64()),
        ("label", pa.string()),
        ("score", pa.float64()),
        ("recognizer", pa.string()),
        ("fingerprint", pa.string()),
        ("origin", pa.string()),
        ("decision", pa.string()),
        ("created_at", TS),
    ]
)

RECOGNIZED_NOTES = pa.schema(
    [
        ("study", pa.string()),
        ("note_id", pa.string()),
        ("patient_id", pa.string()),
        ("text_sha256", pa.string()),
        ("fingerprint", pa.string()),
        ("status", pa.string()),
        ("error_code", pa.string()),
        ("n_spans", pa.int64()),
        ("recognized_at", TS),
    ]
)

DEID_NOTES = pa.schema(
    [
        ("study", pa.string()),
        ("key", pa.string()),
        ("note_id", pa.string()),
        ("note_ref", pa.string()),
        ("patient_ref", pa.string()),
        ("text", pa.string()),
        ("note_date", pa.string()),
        ("note_type", pa.string()),
        ("source", pa.string()),
        ("site", pa.string()),
        ("anonymizer", pa.string()),
        ("fingerprint", pa.string()),
        ("released_at", TS),
        # digest of the row's released content and versions (tide_core.release.content.row_hash):
        # what audit frames and published versions are bound to
        ("row_hash", pa.string()),
    ]
)

RELEASED_SPANS = pa.schema(
    [
        ("study", pa.string()),
        ("key", pa.string()),
        ("note_id", pa.string()),
        ("start", pa.int64()),
        ("end", pa.int64()),
        ("out_start", pa.int64()),
        ("out_end", pa.int64()),
        ("label", pa.string()),
        ("operator", pa.string()),
        ("recognizer", pa.string()),
    ]
)

QUARANTINE = pa.schema(
    [
        ("study", pa.string()),
        ("key", pa.string()),
        ("note_id", pa.string()),
        ("patient_id", pa.string()),
        ("stage", pa.string()),
        ("code", pa.string()),
        ("reason", pa.string()),
        ("row_number", pa.int64()),
        ("quarantined_at", TS),
    ]
)

RUNS = pa.schema(
    [
        ("run_id", pa.string()),
        ("study", pa.string()),
        ("key", pa.string()),
        ("stage", pa.string()),
        ("started_at", TS),
        ("finished_at", TS),
        ("n_in", pa.int64()),
        ("n_released", pa.int64()),
        ("n_quarantined", pa.int64()),
        ("n_spans", pa.int64()),
        ("n_recognized", pa.int64()),
        ("n_cached", pa.int64()),
        ("notes_per_s", pa.float64()),
        ("recognizers", pa.string()),
        ("anonymizer", pa.string()),
        ("fingerprint", pa.string()),
        # chunk progress (issue 13): a ``<stage>.chunk`` row per committed chunk (0-based), null on run rows
        ("chunk", pa.int64()),
        ("n_chunks", pa.int64()),
    ]
)

#: Reviewer decisions: data, not cache.  Recognition never rewrites this table (``tide run
#: --force`` and recognizer or model changes keep every row); decisions are re-applied to the
#: recognized spans on every read, for the note text (``text_sha256``) they were made on.
REVIEW_DECISIONS = pa.schema(
    [
        ("study", pa.string()),
        ("note_id", pa.string()),
        ("text_sha256", pa.string()),
        ("start", pa.int64()),
        ("end", pa.int64()),
        ("label", pa.string()),
        ("decision", pa.string()),
        ("reviewer", pa.string()),
        ("fingerprint", pa.string()),
        ("decided_at", TS),
    ]
)

#: Audit rounds (append only): counts and reviewer only; the release gate pools every round.
AUDITS = pa.schema(
    [
        ("study", pa.string()),
        ("key", pa.string()),
        ("bucket", pa.string()),
        ("n_patients_sampled", pa.int64()),
        ("n_leaks", pa.int64()),
        ("confidence", pa.float64()),
        ("upper_bound", pa.float64()),
        ("reviewer", pa.string()),
        ("audited_at", TS),
        # a round of an audit stratified by PHI Guard richness: its stratum and the stratum's size
        ("stratum", pa.string()),
        ("stratum_population", pa.int64()),
        # the content the round sampled (tide_audit_frames) and the patients in that frame
        ("frame_id", pa.string()),
        ("frame_patients", pa.int64()),
    ]
)

#: Audit frames: exactly which released rows (by row_hash) an audit round sampled from.
AUDIT_FRAMES = pa.schema(
    [
        ("study", pa.string()),
        ("key", pa.string()),
        ("frame_id", pa.string()),
        ("bucket_id", pa.string()),
        ("row_hash", pa.string()),
        ("patient_ref", pa.string()),
        ("created_at", TS),
    ]
)

#: Published release content (researcher columns only), one row per distinct released row.
PUBLISHED_CONTENT = pa.schema(
    [
        ("study", pa.string()),
        ("key", pa.string()),
        ("row_hash", pa.string()),
        ("note_ref", pa.string()),
        ("patient_ref", pa.string()),
        ("note_date", pa.string()),
        ("note_type", pa.string()),
        ("source", pa.string()),
        ("site", pa.string()),
        ("text", pa.string()),
    ]
)

#: Which content rows make up each published version (ids only).
PUBLISHED_MEMBERS = pa.schema(
    [
        ("study", pa.string()),
        ("key", pa.string()),
        ("version", pa.string()),
        ("row_hash", pa.string()),
    ]
)

#: The version researchers see, one row per (study, key); publish and rollback move it atomically.
PUBLISHED_POINTER = pa.schema(
    [
        ("study", pa.string()),
        ("key", pa.string()),
        ("version", pa.string()),
        ("content_fingerprint", pa.string()),
        ("n_notes", pa.int64()),
        ("published_at", TS),
    ]
)

#: Every publish and rollback of a (study, key) (append only): what went out, under which policy.
RELEASE_VERSIONS = pa.schema(
    [
        ("study", pa.string()),
        ("key", pa.string()),
        ("version", pa.string()),
        ("action", pa.string()),
        ("content_fingerprint", pa.string()),
        ("n_notes", pa.int64()),
        ("gate_policy", pa.string()),
        ("gate_approval", pa.string()),
        ("gate_statement", pa.string()),
        ("actor", pa.string()),
        ("decided_at", TS),
    ]
)

#: Per-chunk verified digests of the release checks (tide_core.release.chunk_verdicts): one row per
#: (study, key, chunk); digests and counts only, no text, no note id, no value.
CHUNK_VERDICTS = pa.schema(
    [
        ("study", pa.string()),
        ("key", pa.string()),
        ("chunk", pa.int64()),
        ("n_chunks", pa.int64()),
        ("digest", pa.string()),
        ("checks", pa.string()),
        ("scan_version", pa.string()),
        ("tallies", pa.string()),
        ("row_check", pa.string()),
        ("verified_at", TS),
    ]
)

#: Drift verdicts (append only): aggregate statistics only (tide_core.assurance.drift_table).
DRIFT = pa.schema(
    [
        ("study", pa.string()),
        ("key", pa.string()),
        ("band", pa.string()),
        ("n_docs", pa.int64()),
        ("low_confidence", pa.bool_()),
        ("worst_component", pa.string()),
        ("worst_band", pa.string()),
        ("n_components", pa.int64()),
        ("reference_name", pa.string()),
        ("checked_at", TS),
        ("result_json", pa.string()),
    ]
)

#: One row per (study, key) release: counts, versions, gate decision, status (tide_core.release.lifecycle).
RELEASES = pa.schema(
    [
        ("study", pa.string()),
        ("key", pa.string()),
        ("n_in", pa.int64()),
        ("n_released", pa.int64()),
        ("n_quarantined", pa.int64()),
        ("n_spans", pa.int64()),
        ("spans_by_label", pa.string()),
        ("anonymizer", pa.string()),
        ("recognizers", pa.string()),
        ("gate_passed", pa.bool_()),
        ("gate_reasons", pa.string()),
        ("gate_statement", pa.string()),
        ("decided_at", TS),
        ("status", pa.string()),
        ("released_at", TS),
        ("n_held", pa.int64()),
        ("guard_version", pa.string()),
        ("guard_thresholds", pa.string()),
        # the candidate's content fingerprint, the version researchers see, the gate policy used
        ("content_fingerprint", pa.string()),
        ("published_version", pa.string()),
        ("gate_policy", pa.string()),
        ("gate_approval", pa.string()),
    ]
)

#: PHI Guard scores of one release (tide_core.assurance.guard_hold): numbers and ids only.  ``held``
#: rows are the review pile (``rank`` 1 = riskiest); ``richness`` stratifies the audit sample.
GUARD_SCORES = pa.schema(
    [
        ("study", pa.string()),
        ("key", pa.string()),
        ("note_id", pa.string()),
        ("note_ref", pa.string()),
        ("patient_ref", pa.string()),
        ("source", pa.string()),
        ("masked", pa.float64()),
        ("richness", pa.float64()),
        ("held", pa.bool_()),
        ("rank", pa.int64()),
        ("guard_version", pa.string()),
        ("threshold", pa.float64()),
        ("scored_at", TS),
    ]
)


@dataclass(frozen=True)
class TableSpec:
    """One TIDE table: default name, schema, partition scope, BigQuery layout and description."""

    kind: str  # the TableNames attribute
    default_name: str
    schema: pa.Schema
    partition: tuple[str, ...]  # columns a replace_partition / read is scoped by
    cluster: tuple[str, ...]  # BigQuery CLUSTER BY
    time_partition: str | None  # BigQuery monthly time partition column
    description: str
    ddl_file: str  # file under sql/ddl


def _spec(
    n: int,
    kind: str,
    schema: pa.Schema,
    partition: tuple[str, ...],
    time_partition: str | None,
    description: str,
) -> TableSpec:
    cluster = tuple(c for c in ("study", "key", "note_id") if c in schema.names)
    name = f"tide_{kind}"
    return TableSpec(kind, name, schema, partition, cluster, time_partition, description, f"{n:02d}_{name}.sql")


#: The registry, in DDL order.
TABLES: dict[str, TableSpec] = {
    t.kind: t
    for t in (
        _spec(
            1,
            "spans",
            SPANS,
            ("study",),
            "created_at",
            "Span cache: one row per recognized (or reviewer-added) span, original offsets, no surface strings. "
            "Written by recognition; partition = study.",
        ),
        _spec(
            2,
            "recognized_notes",
            RECOGNIZED_NOTES,
            ("study",),
            "recognized_at",
            "One row per recognized note: cache key (study, note_id, text_sha256, fingerprint) and status. "
            "Partition = study.",
        ),
        _spec(
            3,
            "deid_notes",
            DEID_NOTES,
            ("study", "key"),
            "released_at",
            "Release candidate: de-identified notes, one row per (study, key, note), rewritten by every "
            "anonymization run; researchers read published versions (tide_published_*), never this table. "
            "Partition = (study, key).",
        ),
        _spec(
            4,
            "released_spans",
            RELEASED_SPANS,
            ("study", "key"),
            None,
            "Released span metadata: output offsets and labels, never original values. Partition = (study, key).",
        ),
        _spec(
            5,
            "quarantine",
            QUARANTINE,
            ("study", "key"),
            "quarantined_at",
            "Rows not released, with a coded reason (no note text). key = '' for recognition-stage rows.",
        ),
        _spec(6, "runs", RUNS, (), "started_at", "One row per recognition / anonymization run (append only)."),
        _spec(
            7,
            "audits",
            AUDITS,
            ("study", "key"),
            "audited_at",
            "Audit rounds (append only): patients sampled and leaks found per (study, key, bucket); counts and "
            "reviewer only. The release gate pools every round.",
        ),
        _spec(
            8,
            "releases",
            RELEASES,
            ("study", "key"),
            "decided_at",
            "One row per (study, key) release: counts, versions, the release-gate decision and the status "
            "(pending | blocked | awaiting_audit | published | rolled_back) of the candidate, its content "
            "fingerprint, the version researchers see and the gate policy, the documents held by the PHI "
            "Guard and its version and thresholds. Written by tide_core.release.lifecycle.",
        ),
        _spec(
            9,
            "review_decisions",
            REVIEW_DECISIONS,
            ("study",),
            "decided_at",
            "Reviewer decisions (data, not cache): one row per decision on a span of a note's text "
            "(text_sha256), with the reviewer. Never rewritten by recognition; partition = study.",
        ),
        _spec(
            10,
            "drift",
            DRIFT,
            ("study", "key"),
            None,
            "Drift verdicts (append only): one row per drift check of a (study, key) batch; aggregate "
            "statistics only. The release gate reads the newest.",
        ),
        _spec(
            11,
            "guard_scores",
            GUARD_SCORES,
            ("study", "key"),
            None,
            "PHI Guard scores of one release (numbers and ids only): held rows are the review pile, "
            "rank 1 riskiest; richness stratifies the audit sample. Partition = (study, key).",
        ),
        _spec(
            12,
            "audit_frames",
            AUDIT_FRAMES,
            ("study", "key"),
            "created_at",
            "Audit frames: the released rows (row_hash, patient_ref) an audit round sampled from. The gate "
            "counts a round only for the content its frame holds. Partition = (study, key).",
        ),
        _spec(
            13,
            "published_content",
            PUBLISHED_CONTENT,
            ("study", "key"),
            None,
            "Published release content, researcher columns only, one row per distinct released row "
            "(row_hash). Written only by publish. Partition = (study, key).",
        ),
        _spec(
            14,
            "published_members",
            PUBLISHED_MEMBERS,
            ("study", "key"),
            None,
            "The rows (row_hash) of each published version. Partition = (study, key).",
        ),
        _spec(
            15,
            "published_pointer",
            PUBLISHED_POINTER,
            ("study", "key"),
            None,
            "The version researchers see, one row per (study, key); moved by publish and rollback in one commit.",
        ),
        _spec(
            16,
            "release_versions",
            RELEASE_VERSIONS,
            ("study", "key"),
            "decided_at",
            "Every publish and rollback (append only): version, content fingerprint, gate policy and approval.",
        ),
        _spec(
            17,
            "chunk_verdicts",
            CHUNK_VERDICTS,
            ("study", "key"),
            None,
            "Per-chunk verified digests of the release checks: one row per (study, key, chunk) with the "
            "digest of what the chunk's verdict depends on and its tallies (counts only). A later scan "
            "reuses a chunk's tallies only when its digest matches. Partition = (study, key).",
        ),
    )
}

SCHEMAS: dict[str, pa.Schema] = {k: t.schema for k, t in TABLES.items()}

#: Columns each table is partitioned by (the scope of replace_partition).
PARTITION_COLUMNS: dict[str, tuple[str, ...]] = {k: t.partition for k, t in TABLES.items()}


@dataclass(frozen=True)
class TableNames:
    """Where TIDE's tables live in the source schema.  Override any name per site.

    ``notes`` and ``patients`` are the site's input tables, ``studies`` an optional input (one
    column ``study``); every other name is a table of :data:`TABLES`.
    """

    notes: str = "notes"
    patients: str = "patients"
    spans: str = "tide_spans"
    recognized_notes: str = "tide_recognized_notes"
    deid_notes: str = "tide_deid_notes"
    released_spans: str = "tide_released_spans"
    quarantine: str = "tide_quarantine"
    runs: str = "tide_runs"
    review_decisions: str = "tide_review_decisions"
    audits: str = "tide_audits"
    drift: str = "tide_drift"
    releases: str = "tide_releases"
    guard_scores: str = "tide_guard_scores"
    audit_frames: str = "tide_audit_frames"
    published_content: str = "tide_published_content"
    published_members: str = "tide_published_members"
    published_pointer: str = "tide_published_pointer"
    release_versions: str = "tide_release_versions"
    chunk_verdicts: str = "tide_chunk_verdicts"
    studies: str = "tide_studies"

    @classmethod
    def with_prefix(cls, prefix: str, notes: str = "notes", patients: str = "patients") -> TableNames:
        """Every TIDE table (and ``studies``) named ``{prefix}{kind}``; the input tables as given."""
        return cls(notes=notes, patients=patients, studies=f"{prefix}studies", **{k: f"{prefix}{k}" for k in TABLES})

    def __post_init__(self) -> None:
        names = [getattr(self, f.name) for f in fields(self)]
        if len(set(names)) != len(names):
            raise ConfigError(
                "E390",
                "two TIDE tables are configured with the same name",
                hint="give every table in TableNames a distinct name",
            )

    def of(self, kind: str) -> str:
        """The configured name of table ``kind`` (a key of :data:`TABLES`)."""
        if kind not in TABLES:
            raise ConfigError("E391", f"unknown TIDE table kind {kind!r}", hint=f"use one of {', '.join(TABLES)}")
        return str(getattr(self, kind))


def empty(kind: str) -> pa.Table:
    return SCHEMAS[kind].empty_table()


def to_table(kind: str, rows: list[dict[str, Any]]) -> pa.Table:
    """Build an Arrow table of ``kind`` from row dicts (missing columns become null)."""
    schema = SCHEMAS[kind]
    cols = {f.name: [r.get(f.name) for r in rows] for f in schema}
    return pa.table(cols, schema=schema)
