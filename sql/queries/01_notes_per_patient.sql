-- Notes per pseudonymous patient in one release (the same patient_ref across notes under one key).
SELECT `patient_ref`, COUNT(*) AS n_notes, MIN(`note_date`) AS first_note, MAX(`note_date`) AS last_note
FROM `{{dataset}}.released_notes`
WHERE `study` = @study AND `key` = @key
GROUP BY `patient_ref`
ORDER BY n_notes DESC;
