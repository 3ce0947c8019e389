-- One row per (study, key) release: counts, versions, the release-gate decision and the status (pending | blocked | awaiting_audit | published | rolled_back) of the candidate, its content fingerprint, the version researchers see and the gate policy, the documents held by the PHI Guard and its version and thresholds. Written by tide_core.release.lifecycle.
-- Generated from tide_core.store.tables.TABLES['releases'] by `python -m tide_core.store.ddl`; replace {{dataset}} with PROJECT.DATASET (the source dataset).
CREATE TABLE IF NOT EXISTS `{{dataset}}.tide_releases` (
  `study` STRING,
  `key` STRING,
  `n_in` INT64,
  `n_released` INT64,
  `n_quarantined` INT64,
  `n_spans` INT64,
  `spans_by_label` STRING,
  `anonymizer` STRING,
  `recognizers` STRING,
  `gate_passed` BOOL,
  `gate_reasons` STRING,
  `gate_statement` STRING,
  `decided_at` TIMESTAMP,
  `status` STRING,
  `released_at` TIMESTAMP,
  `n_held` INT64,
  `guard_version` STRING,
  `guard_thresholds` STRING,
  `content_fingerprint` STRING,
  `published_version` STRING,
  `gate_policy` STRING,
  `gate_approval` STRING
)
PARTITION BY TIMESTAMP_TRUNC(`decided_at`, MONTH)
CLUSTER BY study, key
OPTIONS (description = "One row per (study, key) release: counts, versions, the release-gate decision and the status (pending | blocked | awaiting_audit | published | rolled_back) of the candidate, its content fingerprint, the version researchers see and the gate policy, the documents held by the PHI Guard and its version and thresholds. Written by tide_core.release.lifecycle.");
