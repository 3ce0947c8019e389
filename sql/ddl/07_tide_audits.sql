-- Audit rounds (append only): patients sampled and leaks found per (study, key, bucket); counts and reviewer only. The release gate pools every round.
-- Generated from tide_core.store.tables.TABLES['audits'] by `python -m tide_core.store.ddl`; replace {{dataset}} with PROJECT.DATASET (the source dataset).
CREATE TABLE IF NOT EXISTS `{{dataset}}.tide_audits` (
  `study` STRING,
  `key` STRING,
  `bucket` STRING,
  `n_patients_sampled` INT64,
  `n_leaks` INT64,
  `confidence` FLOAT64,
  `upper_bound` FLOAT64,
  `reviewer` STRING,
  `audited_at` TIMESTAMP,
  `stratum` STRING,
  `stratum_population` INT64,
  `frame_id` STRING,
  `frame_patients` INT64
)
PARTITION BY TIMESTAMP_TRUNC(`audited_at`, MONTH)
CLUSTER BY study, key
OPTIONS (description = "Audit rounds (append only): patients sampled and leaks found per (study, key, bucket); counts and reviewer only. The release gate pools every round.");
