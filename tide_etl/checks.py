"""The blocking checks of every release partition, in one step (a failure stops release_summary).

The five checks of :data:`tide_core.release.lifecycle.BLOCKING_CHECKS` are five partitioned,
blocking ``AssetCheckSpec`` of ``deidentified_notes`` computed by one ``multi_asset_check``
(``release_checks``): one step reads the study once, a chunk at a time
(:func:`tide_core.release.lifecycle.verify_release`: the chunk-streamed checks and the known-PHI
scan share one pass), and reports five results, so the UI, ``release_checks_job`` and the
partition view still show five named checks per (study, key).  The step first works out the
run's source summary (:func:`tide_core.release.scan.source_summary`: the study's chunk plan, the
candidate's counts and content fingerprint); the pass uses its chunk plan, and every check result
carries its figures, so each verdict says which content it covered.

The checks can also be run on their own against an existing partition (job
``release_checks_job``) to catch edits made after release.  A failing check also takes the
release out of researchers' views at once (``tide_releases.status = 'blocked'``, one write
naming every failed check): a blocking check only stops what runs after it, and the release may
have been published before.

The release decision itself is the check ``release_gate`` of ``release_summary``, reported by that
asset's own step (tide_etl/status.py).
"""

import warnings
from collections.abc import Iterator

import dagster as dg

from tide_core.release.lifecycle import BLOCKED, BLOCKING_CHECKS, set_status, verify_release
from tide_core.release.outcome import CheckOutcome
from tide_core.release.scan import source_summary
from tide_etl.assets import deidentified_notes
from tide_etl.partitions import release_partitions, split_release_key
from tide_etl.resources import TideConfigResource, WarehouseResource
from tide_etl.retry import POOL, TRANSIENT_RETRY, transient_only

#: What each blocking check guarantees (the UI shows it beside the check's name).
DESCRIPTIONS = {
    "rows_accounted": "rows in = de-identified + quarantined; no note in both; none released twice",
    "offsets_in_text": "every released span's output offsets lie inside its released text",
    "no_surface_survives": "no original span surface (span cache + source text) survives in the released text",
    "known_phi_survives": "no known value of the note's patient (patients table: names, ids, phones, e-mails, "
    "address, date of birth) appears in the released text, compared on the normalised view",
    "versions_recorded": "recognizer and anonymizer name@version recorded on released rows and runs",
}

# Partitioned check specs are a preview in Dagster 1.13 (pinned; tests cover them): the warning is
# silenced for these definitions only, not process-wide.
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message=".*partitions_def on an AssetCheckSpec.*")
    SPECS = [
        dg.AssetCheckSpec(
            name,
            asset=deidentified_notes,
            blocking=True,
            partitions_def=release_partitions,
            description=DESCRIPTIONS[name],
        )
        for name in BLOCKING_CHECKS
    ]

    @dg.multi_asset_check(
        name="release_checks",
        specs=SPECS,
        pool=POOL,
        retry_policy=TRANSIENT_RETRY,
        description="The five blocking checks of a (study, key) release in one streamed pass over the study.",
    )
    def release_checks(
        context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource, tide_config: TideConfigResource
    ) -> Iterator[dg.AssetCheckResult]:
        study, key = split_release_key(context.partition_key)
        config = tide_config.build()
        with transient_only(), warehouse.open() as wh:
            summary = source_summary(wh, config, study, key)
            outcomes = verify_release(wh, config, study, key, summary)
            failed = [name for name, outcome in outcomes.items() if not outcome.passed]
            if failed:  # fail closed at once: hidden from researchers until a release passes
                reason = "; ".join(f"check {name} failed: {outcomes[name].description}" for name in failed)
                set_status(wh, study, key, BLOCKED, reason, config.tables.releases)
        # the run's source summary and how much of it the pass reused (recorded chunk verdicts) or scanned
        reuse = {k: v for o in outcomes.values() for k, v in o.metadata.items() if k.startswith("scan/")}
        shared = {**summary.metadata(), **reuse}
        for name, outcome in outcomes.items():
            yield _result(name, outcome, shared)


def _result(name: str, outcome: CheckOutcome, shared: dict) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        check_name=name,
        asset_key=deidentified_notes.key,
        passed=outcome.passed,
        severity=dg.AssetCheckSeverity.ERROR,
        description=outcome.description,
        metadata={**outcome.metadata, **shared},
    )


CHECKS = [release_checks]
