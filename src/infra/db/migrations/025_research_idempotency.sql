-- A research run may carry the client's idempotency key: a request sent again with it (its
-- answer lost) is answered with the run it made, not a second run (README, API overview).
ALTER TABLE research_runs ADD COLUMN idempotency_key text COLLATE "C";
CREATE UNIQUE INDEX research_runs_idempotency ON research_runs (poll_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
