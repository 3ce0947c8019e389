-- Full-text search over released text (e.g. a drug name) within one release.
SELECT `note_ref`, `patient_ref`, `note_date`, `note_type`
FROM `{{dataset}}.released_notes`
WHERE `study` = @study AND `key` = @key AND CONTAINS_SUBSTR(`text`, @term);
