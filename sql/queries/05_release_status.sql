-- Operators: what each (study, key) release holds and how many notes were held back, by code.
SELECT d.`study`, d.`key`, COUNT(*) AS n_released,
       (SELECT COUNT(*) FROM `{{dataset}}.tide_quarantine` q
         WHERE q.`study` = d.`study` AND q.`key` IN (d.`key`, '')) AS n_quarantined,
       MAX(d.`released_at`) AS released_at, ANY_VALUE(d.`anonymizer`) AS anonymizer
FROM `{{dataset}}.tide_deid_notes` d
GROUP BY d.`study`, d.`key`
ORDER BY d.`study`, d.`key`;
