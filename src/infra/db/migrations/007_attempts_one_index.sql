-- Attempts get one index instead of two (the primary key on id, and attempts_delivery
-- (delivery_id, number)). Nothing looks an attempt up by its id alone (it is not even in the
-- API); the delivery log reads a delivery's few attempts and sorts them. So one index serves,
-- the primary key (delivery_id, id): attempt ids sort by the time they were made, and the pair
-- is unique since the id is.
--
-- One index entry fewer per attempt makes each result batch's insert cheaper
-- (docs/performance.md).
--
-- The new key is built under the table's lock: on a large attempts table, the delivery log and
-- the workers' result writes wait for that build.
ALTER TABLE attempts DROP CONSTRAINT attempts_pkey;
DROP INDEX attempts_delivery;
ALTER TABLE attempts ADD PRIMARY KEY (delivery_id, id);
