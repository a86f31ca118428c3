-- Who made a key through the API (null: an operator, or the account's creation). A key an owner
-- or admin made for another member was shown to them: it is revoked with their access, when they
-- are removed from its account or lose the right to manage it (docs/operations.md, "API keys,
-- members and the signing secret").
ALTER TABLE api_keys ADD COLUMN created_by text REFERENCES users(id) ON DELETE SET NULL;
CREATE INDEX api_keys_created_by ON api_keys (created_by, account_id) WHERE created_by IS NOT NULL AND revoked_at IS NULL;
