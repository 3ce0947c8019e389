-- Full-text search over released text (e.g. a drug name) within one release, case-insensitive.
-- Dialect-neutral (STRPOS and LOWER exist in BigQuery and DuckDB).
SELECT `note_ref`, `patient_ref`, `note_date`, `note_type`
FROM `{{dataset}}.released_notes`
WHERE `study` = @study AND `key` = @key AND STRPOS(LOWER(`text`), LOWER(@term)) > 0;
