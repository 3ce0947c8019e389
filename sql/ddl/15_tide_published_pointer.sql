-- The version researchers see, one row per (study, key); moved by publish and rollback in one commit.
-- Generated from tide_core.store.tables.TABLES['published_pointer'] by `python -m tide_core.store.ddl`; replace {{dataset}} with PROJECT.DATASET (the source dataset).
CREATE TABLE IF NOT EXISTS `{{dataset}}.tide_published_pointer` (
  `study` STRING,
  `key` STRING,
  `version` STRING,
  `content_fingerprint` STRING,
  `n_notes` INT64,
  `published_at` TIMESTAMP
)
CLUSTER BY study, key
OPTIONS (description = "The version researchers see, one row per (study, key); moved by publish and rollback in one commit.");
