-- A lost delivery is listed by one recover at a time. Two recovers committing together each
-- read the other's items as not there yet, so each listed it and the scheduler resent it twice;
-- a unique index makes the second wait for the first and leave it out. Items listed twice by an
-- earlier build stay with the older recover, and a recover left with none goes.
DELETE FROM recovery_items a USING recovery_items b
  WHERE a.delivery_id = b.delivery_id AND a.recovery_id > b.recovery_id;
DELETE FROM recoveries r
  WHERE NOT EXISTS (SELECT 1 FROM recovery_items i WHERE i.recovery_id = r.id COLLATE "default");
DROP INDEX recovery_items_delivery;
CREATE UNIQUE INDEX recovery_items_delivery ON recovery_items (delivery_id);
