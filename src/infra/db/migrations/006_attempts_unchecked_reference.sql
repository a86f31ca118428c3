-- Every result batch inserts one attempt row per delivery. A foreign key from attempts to
-- deliveries is checked row by row, by a trigger that looks up and locks the delivery row: a
-- large share of a batch record's database time (docs/performance.md). This drops it.
--
-- Nothing needs the check. Attempt rows are written by that one statement only, for deliveries
-- that were claimed, so that exist; a delivery is deleted only by the retention purge, once it
-- has been finished for the whole retention period, and the purge deletes its attempts in the
-- same statement (repositories/deliveries.ts), with no cascade to rely on.
ALTER TABLE attempts DROP CONSTRAINT attempts_delivery_id_fkey;
