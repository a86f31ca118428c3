-- A revocation of the keys a member made starts from every key they made in the account,
-- revoked ones included (the index of migration 021 holds live keys only): docs/operations.md,
-- "API keys, members and the signing secret".
CREATE INDEX IF NOT EXISTS api_keys_made_by_any ON api_keys (created_by, account_id) WHERE created_by IS NOT NULL;
