-- Span cache: one row per recognized (or reviewer-added) span, original offsets, no surface strings. Written by recognition; partition = study.
-- Generated from tide_core.store.tables.TABLES['spans'] by `python -m tide_core.store.ddl`; replace {{dataset}} with PROJECT.DATASET (the source dataset).
CREATE TABLE IF NOT EXISTS `{{dataset}}.tide_spans` (
  `study` STRING,
  `note_id` STRING,
  `start` INT64,
  `end` INT64,
  `label` STRING,
  `score` FLOAT64,
  `recognizer` STRING,
  `fingerprint` STRING,
  `origin` STRING,
  `decision` STRING,
  `created_at` TIMESTAMP
)
PARTITION BY TIMESTAMP_TRUNC(`created_at`, MONTH)
CLUSTER BY study, note_id
OPTIONS (description = "Span cache: one row per recognized (or reviewer-added) span, original offsets, no surface strings. Written by recognition; partition = study.");
