-- Drift verdicts (append only): one row per drift check of a (study, key) batch; aggregate statistics only. The release gate reads the newest.
-- Generated from tide_core.store.tables.TABLES['drift'] by `python -m tide_core.store.ddl`; replace {{dataset}} with PROJECT.DATASET (the source dataset).
CREATE TABLE IF NOT EXISTS `{{dataset}}.tide_drift` (
  `study` STRING,
  `key` STRING,
  `band` STRING,
  `n_docs` INT64,
  `low_confidence` BOOL,
  `worst_component` STRING,
  `worst_band` STRING,
  `n_components` INT64,
  `reference_name` STRING,
  `checked_at` TIMESTAMP,
  `result_json` STRING
)
CLUSTER BY study, key
OPTIONS (description = "Drift verdicts (append only): one row per drift check of a (study, key) batch; aggregate statistics only. The release gate reads the newest.");
