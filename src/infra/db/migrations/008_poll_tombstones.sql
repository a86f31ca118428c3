-- Poll ids are chosen by the client on POST /commit (a preview carries its id), so an id must
-- never move from one account to another: what hangs on a poll id (logic endpoints with their
-- alert state and recipients, the delivery log) would then be shared across accounts.
-- A deleted poll leaves its id and account here, and /commit refuses it to any other account.
CREATE TABLE deleted_polls (
  id text COLLATE "C" PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  deleted_at timestamptz NOT NULL
);

-- Polls deleted earlier: their ids are known from the rows that outlived them.
INSERT INTO deleted_polls (id, account_id, deleted_at)
SELECT DISTINCT ON (poll_id) poll_id, account_id, now()
FROM (
  SELECT poll_id, account_id, created_at FROM endpoints
  UNION ALL
  SELECT poll_id, account_id, created_at FROM deliveries
) AS leftovers
WHERE NOT EXISTS (SELECT 1 FROM polls p WHERE p.id = leftovers.poll_id)
  AND EXISTS (SELECT 1 FROM accounts a WHERE a.id = leftovers.account_id)
ORDER BY poll_id, created_at;

-- Endpoints go with their poll (and with their account's copy of it): an endpoint whose poll is
-- gone, or now belongs to another account, is removed, and the owner's deliveries make their own.
DELETE FROM endpoints e
WHERE NOT EXISTS (SELECT 1 FROM polls p WHERE p.id = e.poll_id AND p.account_id = e.account_id);

-- A logic endpoint is identified within its account.
DROP INDEX endpoints_logic_key;
CREATE UNIQUE INDEX endpoints_logic_key ON endpoints (account_id, poll_id, source, coalesce(slide_id, ''), url) WHERE webhook_id IS NULL;
