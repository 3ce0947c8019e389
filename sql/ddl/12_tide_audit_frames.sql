-- Audit frames: the released rows (row_hash, patient_ref) an audit round sampled from. The gate counts a round only for the content its frame holds. Partition = (study, key).
-- Generated from tide_core.store.tables.TABLES['audit_frames'] by `python -m tide_core.store.ddl`; replace {{dataset}} with PROJECT.DATASET (the source dataset).
CREATE TABLE IF NOT EXISTS `{{dataset}}.tide_audit_frames` (
  `study` STRING,
  `key` STRING,
  `frame_id` STRING,
  `bucket_id` STRING,
  `row_hash` STRING,
  `patient_ref` STRING,
  `created_at` TIMESTAMP
)
PARTITION BY TIMESTAMP_TRUNC(`created_at`, MONTH)
CLUSTER BY study, key
OPTIONS (description = "Audit frames: the released rows (row_hash, patient_ref) an audit round sampled from. The gate counts a round only for the content its frame holds. Partition = (study, key).");
