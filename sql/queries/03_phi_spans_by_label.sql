-- Operators: how much the current candidate of one release replaced, by label and operator
-- (tide_released_spans is internal: run this on the warehouse, never give it to researchers).
SELECT `label`, `operator`, COUNT(*) AS n_spans, COUNT(DISTINCT `note_id`) AS n_notes
FROM `{{dataset}}.tide_released_spans`
WHERE `study` = @study AND `key` = @key
GROUP BY `label`, `operator`
ORDER BY n_spans DESC;
