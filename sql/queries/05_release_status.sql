-- Operators: what each (study, key) release holds, what was held back, and whether its gate passed.
SELECT d.`study`, d.`key`, COUNT(*) AS n_released, ANY_VALUE(r.`n_quarantined`) AS n_quarantined,
       ANY_VALUE(r.`gate_passed`) AS gate_passed, MAX(d.`released_at`) AS released_at,
       ANY_VALUE(d.`anonymizer`) AS anonymizer
FROM `{{dataset}}.tide_deid_notes` d
LEFT JOIN `{{dataset}}.tide_releases` r USING (`study`, `key`)
GROUP BY d.`study`, d.`key`
ORDER BY d.`study`, d.`key`;
