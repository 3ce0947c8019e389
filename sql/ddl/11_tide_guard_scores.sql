-- PHI Guard scores of one release (numbers and ids only): held rows are the review pile, rank 1 riskiest; richness stratifies the audit sample. Partition = (study, key).
-- Generated from tide_core.store.tables.TABLES['guard_scores'] by `python -m tide_core.store.ddl`; replace {{dataset}} with PROJECT.DATASET (the source dataset).
CREATE TABLE IF NOT EXISTS `{{dataset}}.tide_guard_scores` (
  `study` STRING,
  `key` STRING,
  `note_id` STRING,
  `note_ref` STRING,
  `patient_ref` STRING,
  `source` STRING,
  `masked` FLOAT64,
  `richness` FLOAT64,
  `held` BOOL,
  `rank` INT64,
  `guard_version` STRING,
  `threshold` FLOAT64,
  `scored_at` TIMESTAMP
)
CLUSTER BY study, key, note_id
OPTIONS (description = "PHI Guard scores of one release (numbers and ids only): held rows are the review pile, rank 1 riskiest; richness stratifies the audit sample. Partition = (study, key).");
