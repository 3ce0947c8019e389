-- The researcher-facing view of one dataset's releases: pseudonymous references only, and only
-- releases whose release gate passed (tide_releases.gate_passed, written by release_summary).
-- The source note_id is left out on purpose (it links back to the identified source table);
-- grant researchers this view (an authorized view), not the tide_* tables.
CREATE OR REPLACE VIEW `{{dataset}}.released_notes` AS
SELECT d.`study`, d.`key`, d.`note_ref`, d.`patient_ref`, d.`text`, d.`note_date`, d.`note_type`, d.`source`,
       d.`site`, d.`anonymizer`, d.`released_at`
FROM `{{dataset}}.tide_deid_notes` d
JOIN `{{dataset}}.tide_releases` r USING (`study`, `key`)
WHERE r.`gate_passed`;
