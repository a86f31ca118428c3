-- Every result batch inserts one attempt row per delivery. The foreign key from attempts to
-- deliveries was checked row by row, by a trigger that looks up and locks the delivery row:
-- about a quarter of the database time of a batch record (measured in a loop of claims and
-- records of 30,000 deliveries: 8 to 12 µs of PostgreSQL CPU per delivery, of about 40).
--
-- Nothing needs the check. Attempt rows are written by that one statement only, for deliveries
-- that were claimed, so that exist; a delivery is deleted only by the retention purge, once it
-- has been finished for the whole retention period, and the purge now deletes its attempts in
-- the same statement (repositories/deliveries.ts) where the cascade used to.
ALTER TABLE attempts DROP CONSTRAINT attempts_delivery_id_fkey;
