-- DuckDB variant of ../02_days_between_notes.sql (BigQuery's DATE_DIFF / SAFE.PARSE_DATE have no
-- dialect-neutral spelling): intervals between a patient's consecutive notes.
SELECT `patient_ref`, `note_ref`, `note_date`,
       DATE_DIFF('day',
                 LAG(TRY_CAST(`note_date` AS DATE)) OVER (PARTITION BY `patient_ref` ORDER BY `note_date`),
                 TRY_CAST(`note_date` AS DATE)) AS days_since_previous
FROM `{{dataset}}.released_notes`
WHERE `study` = @study AND `key` = @key;
