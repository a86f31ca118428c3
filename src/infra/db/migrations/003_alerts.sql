-- Every failure-alert email sent, kept for the dashboard and GET /alerts.
CREATE TABLE alert_emails (
  id text COLLATE "C" PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  endpoint_id text NOT NULL,
  webhook_id text,
  poll_id text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('first', 'reminder')),
  sequence integer NOT NULL,
  recipients jsonb NOT NULL,
  subject text NOT NULL,
  text_body text NOT NULL,
  html_body text NOT NULL,
  details jsonb NOT NULL,
  sent_at timestamptz NOT NULL
);
CREATE INDEX alert_emails_account ON alert_emails (account_id, id);

-- An endpoint whose email is being sent, or whose last send failed, is held until this time:
-- other schedulers leave it alone meanwhile, and a refused email is retried with a pause.
ALTER TABLE endpoints ADD COLUMN alert_hold_until timestamptz;

-- The alert check looks only at endpoints that have given up on something.
CREATE INDEX endpoints_alert_state ON endpoints (state, last_alert_at) WHERE last_given_up_at IS NOT NULL;
