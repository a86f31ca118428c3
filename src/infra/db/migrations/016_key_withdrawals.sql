-- A key of a user's own (not limited to one account) opens every account its user belongs to.
-- An owner or admin of one of them who may not revoke it everywhere withdraws it from their own
-- account instead: from then on it does not open that account, whatever memberships come and
-- go (docs/operations.md, "API keys across accounts"). Read with the key at every request.
CREATE TABLE api_key_withdrawals (
  key_id text COLLATE "C" NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
  account_id text COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  withdrawn_at timestamptz NOT NULL,
  PRIMARY KEY (key_id, account_id)
);
CREATE INDEX api_key_withdrawals_account ON api_key_withdrawals (account_id);
