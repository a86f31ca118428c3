-- A statement whose queue rows are all leased already (the batch flush hands its deliveries to
-- its own runner) wakes no worker: none of them could claim those rows before the lease ends.
CREATE OR REPLACE FUNCTION canvass_notify_deliveries_due() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM queued_rows WHERE lease_token IS NULL) THEN
    PERFORM pg_notify('canvass_new_deliveries', '');
  END IF;
  RETURN NULL;
END
$$;

DROP TRIGGER delivery_queue_notify_due ON delivery_queue;
CREATE TRIGGER delivery_queue_notify_due
  AFTER INSERT ON delivery_queue
  REFERENCING NEW TABLE AS queued_rows
  FOR EACH STATEMENT EXECUTE FUNCTION canvass_notify_deliveries_due();
