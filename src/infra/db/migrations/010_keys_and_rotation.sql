-- API keys can be listed (by a short prefix, never the key), show when they were last used,
-- and be revoked. Keys made before this have no prefix to show.
ALTER TABLE api_keys ADD COLUMN prefix text;
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;
-- A key made through the API by an account's owner or admin opens that account only; a key
-- made by an operator (or before this) is the user's, in every account they belong to.
ALTER TABLE api_keys ADD COLUMN account_id text REFERENCES accounts(id) ON DELETE CASCADE;
CREATE INDEX api_keys_user ON api_keys (user_id, id);

-- A rotated signing secret is kept for an overlap period: attempts are then signed with both,
-- so a receiver still holding the old secret keeps verifying until it is updated.
ALTER TABLE accounts ADD COLUMN previous_signing_secret text;
ALTER TABLE accounts ADD COLUMN signing_secret_rotated_at timestamptz;
