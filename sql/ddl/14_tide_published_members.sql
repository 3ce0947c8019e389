-- The rows (row_hash) of each published version. Partition = (study, key).
-- Generated from tide_core.cache.tables.TABLES['published_members'] by `python -m tide_core.cache.ddl`; replace {{dataset}} with PROJECT.DATASET (the source dataset).
CREATE TABLE IF NOT EXISTS `{{dataset}}.tide_published_members` (
  `study` STRING,
  `key` STRING,
  `version` STRING,
  `row_hash` STRING
)
CLUSTER BY study, key
OPTIONS (description = "The rows (row_hash) of each published version. Partition = (study, key).");
