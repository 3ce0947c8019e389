-- Release candidate: de-identified notes, one row per (study, key, note), rewritten by every anonymization run; researchers read published versions (tide_published_*), never this table. Partition = (study, key).
-- Generated from tide_core.store.tables.TABLES['deid_notes'] by `python -m tide_core.store.ddl`; replace {{dataset}} with PROJECT.DATASET (the source dataset).
CREATE TABLE IF NOT EXISTS `{{dataset}}.tide_deid_notes` (
  `study` STRING,
  `key` STRING,
  `note_id` STRING,
  `note_ref` STRING,
  `patient_ref` STRING,
  `text` STRING,
  `note_date` STRING,
  `note_type` STRING,
  `source` STRING,
  `site` STRING,
  `anonymizer` STRING,
  `fingerprint` STRING,
  `released_at` TIMESTAMP,
  `row_hash` STRING
)
PARTITION BY TIMESTAMP_TRUNC(`released_at`, MONTH)
CLUSTER BY study, key, note_id
OPTIONS (description = "Release candidate: de-identified notes, one row per (study, key, note), rewritten by every anonymization run; researchers read published versions (tide_published_*), never this table. Partition = (study, key).");
