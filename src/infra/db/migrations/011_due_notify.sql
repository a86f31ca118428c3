-- Workers in other processes hear of new deliveries at once rather than at their next poll:
-- every statement that queues deliveries sends one notification (several in a transaction are
-- sent once, at commit). A worker that misses one still finds the deliveries when it polls.
CREATE FUNCTION canvass_notify_deliveries_due() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('canvass_new_deliveries', '');
  RETURN NULL;
END
$$;

CREATE TRIGGER delivery_queue_notify_due
  AFTER INSERT ON delivery_queue
  FOR EACH STATEMENT EXECUTE FUNCTION canvass_notify_deliveries_due();
