-- Published release content, researcher columns only, one row per distinct released row (row_hash). Written only by publish. Partition = (study, key).
-- Generated from tide_core.store.tables.TABLES['published_content'] by `python -m tide_core.store.ddl`; replace {{dataset}} with PROJECT.DATASET (the source dataset).
CREATE TABLE IF NOT EXISTS `{{dataset}}.tide_published_content` (
  `study` STRING,
  `key` STRING,
  `row_hash` STRING,
  `note_ref` STRING,
  `patient_ref` STRING,
  `note_date` STRING,
  `note_type` STRING,
  `source` STRING,
  `site` STRING,
  `text` STRING
)
CLUSTER BY study, key
OPTIONS (description = "Published release content, researcher columns only, one row per distinct released row (row_hash). Written only by publish. Partition = (study, key).");
