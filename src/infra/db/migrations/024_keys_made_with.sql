-- The key each key was made with (POST /keys). Whoever held that key saw the new one, so the
-- keys made with a key revoked for its maker's removal, demotion or promotion are revoked with it, and
-- so on down (docs/operations.md, "API keys, members and the signing secret"). Keys made before
-- hold null: only their maker is known.
ALTER TABLE api_keys ADD COLUMN created_with text COLLATE "C";
CREATE INDEX api_keys_created_with ON api_keys (created_with) WHERE created_with IS NOT NULL;
