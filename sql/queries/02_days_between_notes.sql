-- Intervals between a patient's consecutive notes: dates are shifted per patient, so intervals survive.
SELECT `patient_ref`, `note_ref`, `note_date`,
       DATE_DIFF(SAFE.PARSE_DATE('%Y-%m-%d', `note_date`),
                 LAG(SAFE.PARSE_DATE('%Y-%m-%d', `note_date`)) OVER (PARTITION BY `patient_ref` ORDER BY `note_date`),
                 DAY) AS days_since_previous
FROM `{{dataset}}.released_notes`
WHERE `study` = @study AND `key` = @key;
