-- Retract one release (study, key): the released notes, their span metadata and quarantine rows.
-- Run as one script; parameters @study and @key.
BEGIN TRANSACTION;
DELETE FROM `{{dataset}}.tide_deid_notes` WHERE `study` = @study AND `key` = @key;
DELETE FROM `{{dataset}}.tide_released_spans` WHERE `study` = @study AND `key` = @key;
DELETE FROM `{{dataset}}.tide_quarantine` WHERE `study` = @study AND `key` = @key;
COMMIT TRANSACTION;
