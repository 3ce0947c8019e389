-- Released span metadata: output offsets and labels, never original values. Partition = (study, key).
-- Generated from tide_core.store.tables.TABLES['released_spans'] by `python -m tide_core.store.ddl`; replace {{dataset}} with PROJECT.DATASET (the source dataset).
CREATE TABLE IF NOT EXISTS `{{dataset}}.tide_released_spans` (
  `study` STRING,
  `key` STRING,
  `note_id` STRING,
  `start` INT64,
  `end` INT64,
  `out_start` INT64,
  `out_end` INT64,
  `label` STRING,
  `operator` STRING,
  `recognizer` STRING
)
CLUSTER BY study, key, note_id
OPTIONS (description = "Released span metadata: output offsets and labels, never original values. Partition = (study, key).");
