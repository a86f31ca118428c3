-- The delivery hot path touches as few index entries as it can.
--
-- With the claim key and the lease on the wide deliveries row, every claim and every result
-- changes an indexed column (next_attempt_at, status in an index predicate, finished_at), so
-- each is a non-HOT update: a new entry in all five indexes, twice per delivery. This layout
-- avoids that (docs/performance.md has the measurements):
--
-- - delivery_queue holds a delivery while it is not finished: the claim key, the lease and the
--   attempt count. A claim updates this narrow row only (two small indexes).
-- - deliveries keeps the event and, once finished, its outcome. Its indexes cover only columns
--   that never change, so the one update a delivery gets (the outcome) is HOT; fillfactor 50
--   leaves each page room for that new version of every row on it.
-- - lost_deliveries lists the given-up and rejected ones for the alert emails' "responses lost"
--   count, which an index on deliveries (status, finished_at) would otherwise serve.

CREATE TABLE delivery_queue (
  delivery_id text COLLATE "C" PRIMARY KEY REFERENCES deliveries(id) ON DELETE CASCADE,
  -- For a leased delivery this is the lease expiry, after which another worker may take it over.
  next_attempt_at timestamptz NOT NULL,
  lease_token text,
  attempt_count integer NOT NULL DEFAULT 0,
  dns_failures integer NOT NULL DEFAULT 0
);

INSERT INTO delivery_queue (delivery_id, next_attempt_at, lease_token, attempt_count, dns_failures)
SELECT id, coalesce(next_attempt_at, created_at), lease_token, attempt_count, dns_failures
FROM deliveries WHERE status IN ('pending', 'in_flight');

CREATE INDEX delivery_queue_due ON delivery_queue (next_attempt_at);

-- A queued delivery's row says 'pending'; whether it is leased is the queue's business.
UPDATE deliveries SET status = 'pending' WHERE status = 'in_flight';

CREATE TABLE lost_deliveries (
  delivery_id text COLLATE "C" PRIMARY KEY REFERENCES deliveries(id) ON DELETE CASCADE,
  endpoint_id text NOT NULL,
  lost_at timestamptz NOT NULL
);
CREATE INDEX lost_deliveries_endpoint ON lost_deliveries (endpoint_id, lost_at);

INSERT INTO lost_deliveries (delivery_id, endpoint_id, lost_at)
SELECT id, endpoint_id, finished_at FROM deliveries
WHERE status IN ('given_up', 'rejected') AND finished_at IS NOT NULL;

DROP INDEX deliveries_due;
DROP INDEX deliveries_endpoint;
DROP INDEX deliveries_finished;
ALTER TABLE deliveries DROP COLUMN next_attempt_at, DROP COLUMN lease_token;
ALTER TABLE deliveries SET (fillfactor = 50);
