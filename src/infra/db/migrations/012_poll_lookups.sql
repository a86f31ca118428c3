-- Deleting a poll removes its endpoints (by account and poll) and cascades to its research
-- runs (by poll): without these indexes each of them reads the whole table.
CREATE INDEX endpoints_poll ON endpoints (account_id, poll_id);
CREATE INDEX research_runs_poll ON research_runs (poll_id);
