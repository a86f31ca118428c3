-- Per-account quotas (docs/operations.md, "Quotas"). An account's polls are counted on its row,
-- kept by the statements that insert and delete a poll, so a create checks its quota without
-- reading the account's polls; the update also queues concurrent creates of one account, so
-- the quota holds under concurrency.
ALTER TABLE accounts ADD COLUMN poll_count integer NOT NULL DEFAULT 0;
UPDATE accounts a SET poll_count = (SELECT count(*) FROM polls p WHERE p.account_id = a.id);

-- Live keys limited to an account, counted when one more is made.
CREATE INDEX api_keys_account_live ON api_keys (account_id) WHERE revoked_at IS NULL;
