"""The asset graph: source_notes -> recognized_spans -> deidentified_notes -> release_summary.

Thin assets (read the partition, call one engine function, return metadata).  Recognition is
partitioned by study; anonymization and release by (study, key), mapped onto the study's spans
with a MultiToSingleDimensionPartitionMapping -- so a new key re-anonymizes from the span cache
and never re-runs recognition.  Metadata holds counts and rates only, never note text or keys.
"""

import hashlib
import json
from collections.abc import Iterator

import dagster as dg

from tide_core.engine.study_input import read_study_input
from tide_core.release.lifecycle import AWAITING_AUDIT, PENDING, PUBLISHED, decide, set_status
from tide_core.runner import anonymize_study, recognize_study
from tide_core.store.span_cache import text_sha256
from tide_etl.partitions import release_partitions, split_release_key, study_of_release, study_partitions
from tide_etl.resources import KeyProviderResource, ReleaseGateResource, TideConfigResource, WarehouseResource
from tide_etl.retry import ONE_PARTITION_PER_RUN, POOL, TRANSIENT_RETRY, transient_only
from tide_etl.status import RELEASE_GATE_SPEC, blocked_failure, gate_check

RECOGNITION = "recognition"
RELEASE = "release"


def _labels(by_label: dict) -> dg.MetadataValue:
    return dg.MetadataValue.json({k: int(v) for k, v in sorted(by_label.items())})


@dg.asset(
    pool=POOL,
    retry_policy=TRANSIENT_RETRY,
    backfill_policy=ONE_PARTITION_PER_RUN,
    partitions_def=study_partitions,
    group_name=RECOGNITION,
    description="The study's rows of the source notes table, validated (a snapshot of counts; "
    "the data version changes when any note id or text changes).",
)
def source_notes(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, tide_config: TideConfigResource
) -> dg.MaterializeResult:

    study = context.partition_key
    config = tide_config.build()
    with transient_only(), warehouse.open() as wh:
        validated = read_study_input(wh, study, config)
    digest = hashlib.sha256()
    for n in sorted(validated.notes, key=lambda n: n.note_id):
        digest.update(f"{n.note_id}\0{text_sha256(n.text)}\n".encode())
    if validated.n_rows == 0:
        raise dg.Failure(
            description=f"study {study!r} has no rows in table {config.tables.notes!r} of {warehouse.url}",
            metadata={"hint": "check the study name and the notes table"},
        )
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": validated.n_rows,
            "n_valid": len(validated.notes),
            "n_invalid": len(validated.quarantined),
            "n_patients": len({n.patient_id for n in validated.notes}),
            "table": config.tables.notes,
            "warehouse": warehouse.url,
        },
        data_version=dg.DataVersion(digest.hexdigest()[:24]),
    )


@dg.asset(
    pool=POOL,
    retry_policy=TRANSIENT_RETRY,
    backfill_policy=ONE_PARTITION_PER_RUN,
    partitions_def=study_partitions,
    group_name=RECOGNITION,
    deps=[source_notes],
    description="The span cache (tide_spans + tide_recognized_notes) for one study: original offsets, "
    "labels, recognizer name@version. Cache hits are not recognized again.",
)
def recognized_spans(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, tide_config: TideConfigResource
) -> dg.MaterializeResult:

    study = context.partition_key
    config = tide_config.build()
    done: list[int] = []  # chunk progress in the run's log; a failed chunk is named (issue 13)

    def on_chunk(p):  # tide_core.chunk_progress.ChunkProgress
        done.append(p.chunk)
        context.log.info(p.describe())

    try:
        with transient_only(), warehouse.open() as wh:
            report = recognize_study(wh, study, config, progress=False, on_chunk=on_chunk)
    except Exception:
        context.log.error(
            f"study {study}: recognition failed in chunk {len(done) + 1}; chunks 1..{len(done)} are committed "
            "and a re-execution resumes after them"
        )
        raise
    for w in report.warnings:
        context.log.warning(w)
    context.log.info(
        f"study {study}: {report.n_recognized} recognized, {report.n_cached} cached, "
        f"{report.n_failed} failed, {report.notes_per_s:.1f} notes/s"
    )
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": report.n_spans,
            "notes_per_s": float(round(report.notes_per_s, 2)),
            "n_rows": report.n_rows,
            "n_recognized": report.n_recognized,
            "n_cached": report.n_cached,
            "n_failed": report.n_failed,
            "n_quarantined": report.n_quarantined + report.n_failed,
            "n_spans": report.n_spans,
            "known_phi_patients_matched": report.known_phi_patients_matched,
            "spans_by_label": _labels(report.spans_by_label),
            "recognizers": ", ".join(report.recognizers),
            "fingerprint": report.fingerprint,
            "executor": config.executor,
            "seconds": float(round(report.seconds, 3)),
            "table": config.tables.spans,
        }
    )


@dg.asset(
    pool=POOL,
    retry_policy=TRANSIENT_RETRY,
    backfill_policy=ONE_PARTITION_PER_RUN,
    partitions_def=release_partitions,
    group_name=RELEASE,
    deps=[dg.AssetDep(recognized_spans, partition_mapping=study_of_release)],
    description="De-identified notes (tide_deid_notes) and released span metadata with output offsets "
    "(tide_released_spans) for one (study, key), from cached spans only.",
)
def deidentified_notes(
    context: dg.AssetExecutionContext,
    warehouse: WarehouseResource,
    tide_config: TideConfigResource,
    key_provider: KeyProviderResource,
) -> dg.MaterializeResult:

    study, key = split_release_key(context.partition_key)
    provider = key_provider.provider()
    if not provider.has(study, key):
        raise dg.Failure(
            description=f"no key secret for study {study!r}, key {key!r}: this (study, key) cell cannot be released",
            metadata={
                "hint": f"create it with `tide keys new --study {study} --key {key}` (or set "
                f"TIDE_KEY_DIR), then rematerialize this partition"
            },
            allow_retries=False,
        )
    config = tide_config.build()
    with transient_only(), warehouse.open() as wh:
        # write: an earlier gate decision does not cover the candidate about to be written (the
        # checks and release_summary decide again); researchers keep the published version
        set_status(
            wh,
            study,
            key,
            PENDING,
            f"re-release of {study}/{key} in progress: not yet verified",
            config.tables.releases,
        )
        done: list[int] = []  # chunk progress in the run's log; a failed chunk is named (issue 13)

        def on_chunk(p):  # tide_core.chunk_progress.ChunkProgress
            done.append(p.chunk)
            context.log.info(p.describe())

        try:
            report = anonymize_study(wh, study, key, provider, config, progress=False, on_chunk=on_chunk)
        except Exception:
            context.log.error(
                f"{study}/{key}: anonymization failed in chunk {len(done) + 1}; chunks 1..{len(done)} are "
                "committed and a re-execution resumes after them"
            )
            raise
    context.log.info(
        f"{study}/{key}: {report.n_released} released, {report.n_quarantined} quarantined, "
        f"{report.notes_per_s:.1f} notes/s"
    )
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": report.n_released,
            "notes_per_s": float(round(report.notes_per_s, 2)),
            "n_rows": report.n_rows,
            "n_released": report.n_released,
            "n_quarantined": report.n_quarantined,
            "quarantined_by_code": dg.MetadataValue.json(report.quarantined_by_code),
            "n_spans": report.n_spans,
            "spans_by_label": _labels(report.spans_by_label),
            "operators": dg.MetadataValue.json(report.operators),
            "anonymizer": report.anonymizer,
            "recognition_fingerprint": report.fingerprint,
            "seconds": float(round(report.seconds, 3)),
            "table": config.tables.deid_notes,
        }
    )


RELEASES_TABLE = "tide_releases"
#: release_summary records the gate's one evaluation under these metadata keys (the release_gate
#: check of the same step carries the same figures).
GATE_METADATA_PREFIX = "gate/"


@dg.asset(
    pool=POOL,
    retry_policy=TRANSIENT_RETRY,
    backfill_policy=ONE_PARTITION_PER_RUN,
    partitions_def=release_partitions,
    group_name=RELEASE,
    deps=[deidentified_notes],
    check_specs=[RELEASE_GATE_SPEC],
    description="One row per (study, key) in tide_releases: counts, versions, the release-gate decision "
    "(audit evidence bound to content) and the status (pending, blocked, awaiting_audit, published). Re-runs "
    "the blocking checks, then publishes the verified content as a new immutable version in one commit; "
    "researchers read the published version and keep it while a newer one is written, blocked or killed. "
    "A blocked release fails the step (the partition shows failed); awaiting audit is a WARN of release_gate.",
)
def release_summary(
    context: dg.AssetExecutionContext,
    warehouse: WarehouseResource,
    tide_config: TideConfigResource,
    gate: ReleaseGateResource,
) -> Iterator[dg.AssetCheckResult | dg.MaterializeResult]:

    study, key = split_release_key(context.partition_key)
    config = tide_config.build()
    with transient_only(), warehouse.open() as wh:
        row = decide(wh, config, study, key, gate.policy(), config.tables.releases, actor=f"dagster:{context.run_id}")
    if not row["gate_passed"]:
        context.log.warning(f"release {study}/{key} is {row['status']}, not published: {row['gate_reasons']}")
    guard = row["guard"]
    if row["n_held"] is None:
        context.log.info(f"release {study}/{key}: PHI Guard {guard['guard_version']}")
    else:
        context.log.info(
            f"release {study}/{key}: PHI Guard {guard['guard_version']} held {guard['n_held']} documents for review"
        )
    check = gate_check(study, key, row)
    if row["status"] not in (PUBLISHED, AWAITING_AUDIT):  # blocked: the check says why, the partition fails
        yield check
        raise blocked_failure(study, key, row)
    yield dg.MaterializeResult(
        metadata={
            **{f"guard/{k}": dg.MetadataValue.json(v) if isinstance(v, dict) else v for k, v in guard.items()},
            **{f"{GATE_METADATA_PREFIX}{k}": v for k, v in row["gate"].items()},
            "n_in": row["n_in"],
            "n_released": row["n_released"],
            "n_quarantined": row["n_quarantined"],
            "n_spans": row["n_spans"],
            "spans_by_label": dg.MetadataValue.json(json.loads(row["spans_by_label"])),
            "gate_passed": row["gate_passed"],
            "status": row["status"],
            "published_version": row["published_version"] or "none",
            "content_fingerprint": row["content_fingerprint"] or "",
            "gate_policy": row["gate_policy"] or "",
            "gate_approval": row["gate_approval"] or "none",
            "gate_reasons": row["gate_reasons"] or "none",
            "anonymizer": row["anonymizer"] or "",
            "recognizers": row["recognizers"] or "",
            "table": config.tables.releases,
        },
        check_results=[check],
    )


ASSETS = [source_notes, recognized_spans, deidentified_notes, release_summary]
