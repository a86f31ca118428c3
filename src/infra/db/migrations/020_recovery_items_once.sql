-- A lost delivery is listed by one recover at a time. Two recovers committing together each
-- read the other's items as not there yet, so each listed it and the scheduler resent it twice;
-- a unique index makes the second wait for the first and leave it out. Items listed twice by an
-- earlier build stay with the older recover, and a recover left with none goes.
-- Locked first: a recover of a process still running the earlier build waits, rather than
-- listing a delivery twice between the clean-up and the index. Ids compare in "C", the order
-- they were made in.
LOCK TABLE recovery_items IN SHARE ROW EXCLUSIVE MODE;
DELETE FROM recovery_items a USING recovery_items b
  WHERE a.delivery_id = b.delivery_id AND a.recovery_id COLLATE "C" > b.recovery_id COLLATE "C";
DELETE FROM recoveries r
  WHERE NOT EXISTS (SELECT 1 FROM recovery_items i WHERE i.recovery_id = r.id COLLATE "default");
DROP INDEX recovery_items_delivery;
CREATE UNIQUE INDEX recovery_items_delivery ON recovery_items (delivery_id);
