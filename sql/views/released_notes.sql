-- The researcher-facing view of one dataset's releases: pseudonymous references only, and only
-- published releases whose gate passed (tide_releases, written by release_summary), and only the
-- rows of the anonymization run that was verified (released_at = the published stamp): rows of a
-- re-release stay invisible until its own checks and gate pass and it is published.
-- The source note_id is left out on purpose (it links back to the identified source table);
-- grant researchers this view (an authorized view), not the tide_* tables.
CREATE OR REPLACE VIEW `{{dataset}}.released_notes` AS
SELECT d.`study`, d.`key`, d.`note_ref`, d.`patient_ref`, d.`text`, d.`note_date`, d.`note_type`, d.`source`,
       d.`site`, d.`anonymizer`, d.`released_at`
FROM `{{dataset}}.tide_deid_notes` d
JOIN `{{dataset}}.tide_releases` r
  ON r.`study` = d.`study` AND r.`key` = d.`key` AND r.`released_at` = d.`released_at`
WHERE r.`status` = 'published' AND r.`gate_passed`;
