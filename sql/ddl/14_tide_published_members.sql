-- The rows (row_hash) of each published version. Partition = (study, key).
-- Generated from tide_core.store.tables.TABLES['published_members'] by `python -m tide_core.store.ddl`; replace {{dataset}} with PROJECT.DATASET (the source dataset).
CREATE TABLE IF NOT EXISTS `{{dataset}}.tide_published_members` (
  `study` STRING,
  `key` STRING,
  `version` STRING,
  `row_hash` STRING
)
CLUSTER BY study, key
OPTIONS (description = "The rows (row_hash) of each published version. Partition = (study, key).");
