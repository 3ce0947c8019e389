-- One row per recognized note: cache key (study, note_id, text_sha256, fingerprint) and status. Partition = study.
-- Generated from tide_core.store.tables.TABLES['recognized_notes'] by `python -m tide_core.store.ddl`; replace {{dataset}} with PROJECT.DATASET (the source dataset).
CREATE TABLE IF NOT EXISTS `{{dataset}}.tide_recognized_notes` (
  `study` STRING,
  `note_id` STRING,
  `patient_id` STRING,
  `text_sha256` STRING,
  `fingerprint` STRING,
  `status` STRING,
  `error_code` STRING,
  `n_spans` INT64,
  `recognized_at` TIMESTAMP
)
PARTITION BY TIMESTAMP_TRUNC(`recognized_at`, MONTH)
CLUSTER BY study, note_id
OPTIONS (description = "One row per recognized note: cache key (study, note_id, text_sha256, fingerprint) and status. Partition = study.");
