-- Per-chunk verified digests of the release checks: one row per (study, key, chunk) with the digest of what the chunk's verdict depends on and its tallies (counts only). A later scan reuses a chunk's tallies only when its digest matches. Partition = (study, key).
-- Generated from tide_core.store.tables.TABLES['chunk_verdicts'] by `python -m tide_core.store.ddl`; replace {{dataset}} with PROJECT.DATASET (the source dataset).
CREATE TABLE IF NOT EXISTS `{{dataset}}.tide_chunk_verdicts` (
  `study` STRING,
  `key` STRING,
  `chunk` INT64,
  `n_chunks` INT64,
  `digest` STRING,
  `checks` STRING,
  `scan_version` STRING,
  `tallies` STRING,
  `row_check` STRING,
  `verified_at` TIMESTAMP
)
CLUSTER BY study, key
OPTIONS (description = "Per-chunk verified digests of the release checks: one row per (study, key, chunk) with the digest of what the chunk's verdict depends on and its tallies (counts only). A later scan reuses a chunk's tallies only when its digest matches. Partition = (study, key).");
