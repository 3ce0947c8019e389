-- Released span metadata (output offsets into released_notes.text, labels, operators; no values),
-- for gate-passed releases only.
CREATE OR REPLACE VIEW `{{dataset}}.released_spans` AS
SELECT d.`study`, d.`key`, d.`note_ref`, s.`out_start`, s.`out_end`, s.`label`, s.`operator`, s.`recognizer`
FROM `{{dataset}}.tide_released_spans` s
JOIN `{{dataset}}.tide_deid_notes` d USING (`study`, `key`, `note_id`)
JOIN `{{dataset}}.tide_releases` r USING (`study`, `key`)
WHERE r.`gate_passed`;
