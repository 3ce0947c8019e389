-- The researchers' view of published releases: for each (study, key), the rows of the version
-- tide_published_pointer names (moved only by publish and rollback, in one commit), researcher
-- columns only: pseudonymous references, shifted dates, metadata from the configured vocabulary,
-- de-identified text. No source ids, offsets, operators or recognizer names.
-- The same SQL as tide_core.release.publish.VIEW_SQL, which creates it (a test checks they are equal).
-- BigQuery: grant researchers this view (an authorized view), not the tide_* tables.
CREATE OR REPLACE VIEW `{{dataset}}.released_notes` AS
SELECT p.`study`, p.`key`, p.`version`, c.`note_ref`, c.`patient_ref`, c.`note_date`, c.`note_type`, c.`source`,
       c.`site`, c.`text`
FROM `{{dataset}}.tide_published_pointer` p
JOIN `{{dataset}}.tide_published_members` m
  ON m.`study` = p.`study` AND m.`key` = p.`key` AND m.`version` = p.`version`
JOIN `{{dataset}}.tide_published_content` c
  ON c.`study` = m.`study` AND c.`key` = m.`key` AND c.`row_hash` = m.`row_hash`;
