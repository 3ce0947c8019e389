-- Released span metadata (output offsets into released_notes.text, labels, operators; no values),
-- for published, gate-passed releases only (the same rule as released_notes).
CREATE OR REPLACE VIEW `{{dataset}}.released_spans` AS
SELECT d.`study`, d.`key`, d.`note_ref`, s.`out_start`, s.`out_end`, s.`label`, s.`operator`, s.`recognizer`
FROM `{{dataset}}.tide_released_spans` s
JOIN `{{dataset}}.tide_deid_notes` d
  ON d.`study` = s.`study` AND d.`key` = s.`key` AND d.`note_id` = s.`note_id`
JOIN `{{dataset}}.tide_releases` r
  ON r.`study` = d.`study` AND r.`key` = d.`key` AND r.`released_at` = d.`released_at`
WHERE r.`status` = 'published' AND r.`gate_passed`;
