-- Reviewer decisions (data, not cache): one row per decision on a span of a note's text (text_sha256), with the reviewer. Never rewritten by recognition; partition = study.
-- Generated from tide_core.store.tables.TABLES['review_decisions'] by `python -m tide_core.store.ddl`; replace {{dataset}} with PROJECT.DATASET (the source dataset).
CREATE TABLE IF NOT EXISTS `{{dataset}}.tide_review_decisions` (
  `study` STRING,
  `note_id` STRING,
  `text_sha256` STRING,
  `start` INT64,
  `end` INT64,
  `label` STRING,
  `decision` STRING,
  `reviewer` STRING,
  `fingerprint` STRING,
  `decided_at` TIMESTAMP
)
PARTITION BY TIMESTAMP_TRUNC(`decided_at`, MONTH)
CLUSTER BY study, note_id
OPTIONS (description = "Reviewer decisions (data, not cache): one row per decision on a span of a note's text (text_sha256), with the reviewer. Never rewritten by recognition; partition = study.");
