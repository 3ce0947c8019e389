-- One row per recognition / anonymization run (append only).
-- Generated from tide_core.store.tables.TABLES['runs'] by `python -m tide_core.store.ddl`; replace {{dataset}} with PROJECT.DATASET (the source dataset).
CREATE TABLE IF NOT EXISTS `{{dataset}}.tide_runs` (
  `run_id` STRING,
  `study` STRING,
  `key` STRING,
  `stage` STRING,
  `started_at` TIMESTAMP,
  `finished_at` TIMESTAMP,
  `n_in` INT64,
  `n_released` INT64,
  `n_quarantined` INT64,
  `n_spans` INT64,
  `n_recognized` INT64,
  `n_cached` INT64,
  `notes_per_s` FLOAT64,
  `recognizers` STRING,
  `anonymizer` STRING,
  `fingerprint` STRING,
  `chunk` INT64,
  `n_chunks` INT64
)
PARTITION BY TIMESTAMP_TRUNC(`started_at`, MONTH)
CLUSTER BY study, key
OPTIONS (description = "One row per recognition / anonymization run (append only).");
