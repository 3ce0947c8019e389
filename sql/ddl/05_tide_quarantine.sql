-- Rows not released, with a coded reason (no note text). key = '' for recognition-stage rows.
-- Generated from tide_core.store.tables.TABLES['quarantine'] by `python -m tide_core.store.ddl`; replace {{dataset}} with PROJECT.DATASET (the source dataset).
CREATE TABLE IF NOT EXISTS `{{dataset}}.tide_quarantine` (
  `study` STRING,
  `key` STRING,
  `note_id` STRING,
  `patient_id` STRING,
  `stage` STRING,
  `code` STRING,
  `reason` STRING,
  `row_number` INT64,
  `quarantined_at` TIMESTAMP
)
PARTITION BY TIMESTAMP_TRUNC(`quarantined_at`, MONTH)
CLUSTER BY study, key, note_id
OPTIONS (description = "Rows not released, with a coded reason (no note text). key = '' for recognition-stage rows.");
