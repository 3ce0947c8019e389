-- The version of each (study, key) researchers see, its size and when it was published.
-- The same SQL as tide_core.release.publish.VERSIONS_VIEW_SQL, which creates it (a test checks they are equal).
CREATE OR REPLACE VIEW `{{dataset}}.released_versions` AS
SELECT p.`study`, p.`key`, p.`version`, p.`n_notes`, p.`published_at`
FROM `{{dataset}}.tide_published_pointer` p;
