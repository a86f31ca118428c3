-- Losses an endpoint had before its alert state started afresh (its Trigger webhook action
-- removed) no longer count in an alert email's "responses lost in the past week", and stay
-- listed for a recover of the action added again (docs/operations.md, "Upgrades and migrations").
ALTER TABLE endpoints ADD COLUMN losses_counted_since timestamptz;
