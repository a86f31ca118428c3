-- A recover leaves out the deliveries a recover still under way has listed: repeated, it would
-- otherwise list (and resend) each lost delivery once per request. Looked up by delivery.
CREATE INDEX recovery_items_delivery ON recovery_items (delivery_id);
