-- What a respondent's stored answers hold, as JSON (values and each submission's metadata), kept
-- by the submissions that add them, so that a submission passing the bound of
-- MAX_RESPONDENT_BYTES is refused without reading the answers, and a batch flush takes no more of
-- them than it can hold (docs/operations.md, "Memory"). Null: not counted yet; the respondent's
-- next submission with answers counts what is stored.
ALTER TABLE participants ADD COLUMN answer_bytes integer;
