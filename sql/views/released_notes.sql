-- The researcher-facing view of one dataset's releases: pseudonymous references only.
-- The source note_id is left out on purpose (it links back to the identified source table);
-- grant researchers this view (an authorized view), not the tide_* tables.
CREATE OR REPLACE VIEW `{{dataset}}.released_notes` AS
SELECT `study`, `key`, `note_ref`, `patient_ref`, `text`, `note_date`, `note_type`, `source`, `site`,
       `anonymizer`, `released_at`
FROM `{{dataset}}.tide_deid_notes`;
