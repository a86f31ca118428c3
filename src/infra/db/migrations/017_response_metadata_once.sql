-- A submission's metadata is stored once, on one of its answers; its other answers hold '{}' and
-- name that one in metadata_from. Stored on every answer, 16 KiB of metadata sent with 200
-- answers was stored 200 times, and every later read of the respondent's answers carried each
-- copy (docs/operations.md, "Upgrades and migrations"). Rows written before keep their own
-- copies (null here).
ALTER TABLE responses ADD COLUMN metadata_from text COLLATE "C";
