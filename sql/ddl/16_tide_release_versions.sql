-- Every publish and rollback (append only): version, content fingerprint, gate policy and approval.
-- Generated from tide_core.store.tables.TABLES['release_versions'] by `python -m tide_core.store.ddl`; replace {{dataset}} with PROJECT.DATASET (the source dataset).
CREATE TABLE IF NOT EXISTS `{{dataset}}.tide_release_versions` (
  `study` STRING,
  `key` STRING,
  `version` STRING,
  `action` STRING,
  `content_fingerprint` STRING,
  `n_notes` INT64,
  `gate_policy` STRING,
  `gate_approval` STRING,
  `gate_statement` STRING,
  `actor` STRING,
  `decided_at` TIMESTAMP
)
PARTITION BY TIMESTAMP_TRUNC(`decided_at`, MONTH)
CLUSTER BY study, key
OPTIONS (description = "Every publish and rollback (append only): version, content fingerprint, gate policy and approval.");
