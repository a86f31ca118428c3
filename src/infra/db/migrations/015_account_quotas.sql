-- Per-account quotas (docs/operations.md, "Quotas"). An account's polls are counted in a row of
-- their own, kept by the statements that insert and delete a poll, so a create checks its quota
-- without reading the account's polls; the row's lock queues concurrent creates of one account,
-- so the quota holds under concurrency. Not a column of accounts: a poll's insert locks its
-- account's row for the foreign key, and updating that row as well cost more (docs/performance.md).
CREATE TABLE account_usage (
  account_id text COLLATE "C" PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
  polls integer NOT NULL
);
INSERT INTO account_usage (account_id, polls) SELECT account_id, count(*) FROM polls GROUP BY account_id;

-- Live keys limited to an account, counted when one more is made.
CREATE INDEX api_keys_account_live ON api_keys (account_id) WHERE revoked_at IS NULL;
