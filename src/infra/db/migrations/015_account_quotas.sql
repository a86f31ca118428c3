-- Per-account quotas (docs/operations.md, "Quotas"). An account's polls are counted in a row of
-- their own, so a create checks its quota without reading the account's polls; the row's lock
-- queues concurrent creates of one account, so the quota holds under concurrency.
-- - A trigger keeps the count, so every writer keeps it: processes of the version before this
--   one still running after the migration (upgrades migrate first), and deletes by cascade.
-- - Polls are locked against writes while the count is filled, so none slips between the two.
-- - Not a column of accounts: a poll's insert locks its account's row for the foreign key, and
--   updating that row as well cost more (docs/performance.md).
LOCK TABLE polls IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE account_usage (
  account_id text COLLATE "C" PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
  polls integer NOT NULL
);

CREATE FUNCTION count_account_polls() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO account_usage (account_id, polls) VALUES (NEW.account_id, 1)
    ON CONFLICT (account_id) DO UPDATE SET polls = account_usage.polls + 1;
  ELSE
    UPDATE account_usage SET polls = polls - 1 WHERE account_id = OLD.account_id;
  END IF;
  RETURN NULL;
END $$;

-- A poll never moves between accounts, so inserts and deletes are all there is to count.
CREATE TRIGGER polls_count AFTER INSERT OR DELETE ON polls
  FOR EACH ROW EXECUTE FUNCTION count_account_polls();

INSERT INTO account_usage (account_id, polls) SELECT account_id, count(*) FROM polls GROUP BY account_id;

-- Live keys limited to an account, counted when one more is made.
CREATE INDEX api_keys_account_live ON api_keys (account_id) WHERE revoked_at IS NULL;
