-- How much was replaced, by label and operator, in one release.
SELECT `label`, `operator`, COUNT(*) AS n_spans, COUNT(DISTINCT `note_ref`) AS n_notes
FROM `{{dataset}}.released_spans`
WHERE `study` = @study AND `key` = @key
GROUP BY `label`, `operator`
ORDER BY n_spans DESC;
