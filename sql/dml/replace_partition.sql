-- What BigQueryWarehouse.replace_partition runs (tide_core/io/bigquery_warehouse.py).
-- 1. The new rows of one partition are loaded (Parquet load job) into a staging table
--    `{{dataset}}._tide_stage_<table>_<run>` that expires after 6 hours.
-- 2. One MERGE replaces the partition: a single DML statement, so it is atomic; ON FALSE makes
--    every old row of the partition "not matched by source" (deleted) and every staged row inserted.
--    A rerun of the same (study, key) therefore replaces its rows and never duplicates them.
MERGE `{{dataset}}.tide_deid_notes` T
USING `{{dataset}}._tide_stage_tide_deid_notes_RUN` S
ON FALSE
WHEN NOT MATCHED BY SOURCE AND T.`study` = @w0 AND T.`key` = @w1 THEN DELETE
WHEN NOT MATCHED THEN INSERT (`study`, `key`, `note_id`, `note_ref`, `patient_ref`, `text`, `note_date`,
                              `note_type`, `source`, `site`, `anonymizer`, `fingerprint`, `released_at`)
  VALUES (S.`study`, S.`key`, S.`note_id`, S.`note_ref`, S.`patient_ref`, S.`text`, S.`note_date`,
          S.`note_type`, S.`source`, S.`site`, S.`anonymizer`, S.`fingerprint`, S.`released_at`);
-- 3. The staging table is dropped.
