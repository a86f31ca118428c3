-- An account's delivery log (GET /webhooks/deliveries?accountId=, the dashboard's Deliveries
-- page, refreshed every 5 s) reads newest first by account: without this index every page read
-- and sorted the deliveries of every account.
CREATE INDEX deliveries_account ON deliveries (account_id, id);
