-- Saved webhooks: one survey each, 20 at most per survey (checked in the use case).
CREATE TABLE webhooks (
  id text COLLATE "C" PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  poll_id text NOT NULL REFERENCES polls(id) ON DELETE CASCADE,
  url text NOT NULL,
  delivery_rule text NOT NULL CHECK (delivery_rule IN ('partial', 'complete')),
  legacy_secret text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX webhooks_poll ON webhooks (poll_id, id);
CREATE INDEX webhooks_account ON webhooks (account_id, id);

-- Where deliveries go, with the health that drives failure alerts: a saved webhook, or a
-- logic-triggered URL identified by (poll, slide or survey, url).
CREATE TABLE endpoints (
  id text COLLATE "C" PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  poll_id text NOT NULL,
  webhook_id text UNIQUE,
  source text NOT NULL CHECK (source IN ('webhook', 'question-logic', 'survey-logic')),
  slide_id text,
  url text NOT NULL,
  state text NOT NULL DEFAULT 'healthy' CHECK (state IN ('healthy', 'alerted')),
  last_success_at timestamptz,
  last_given_up_at timestamptz,
  last_failure text,
  alert_emails_sent integer NOT NULL DEFAULT 0,
  last_alert_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX endpoints_logic_key ON endpoints (poll_id, source, coalesce(slide_id, ''), url) WHERE webhook_id IS NULL;
CREATE INDEX endpoints_given_up ON endpoints (last_given_up_at) WHERE last_given_up_at IS NOT NULL;

-- Answers waiting out the batch window of a "partial" webhook: one open batch per
-- (webhook, participant); flushed into a delivery when flush_at passes.
CREATE TABLE batches (
  id text COLLATE "C" PRIMARY KEY,
  webhook_id text NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  endpoint_id text NOT NULL,
  account_id text NOT NULL,
  poll_id text NOT NULL,
  participant_id text NOT NULL,
  response_ids jsonb NOT NULL,
  flush_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  UNIQUE (webhook_id, participant_id)
);
CREATE INDEX batches_due ON batches (flush_at);

-- One event to one endpoint. The body is serialised once, at creation; every attempt sends
-- those bytes. next_attempt_at is the claim key for pending AND in_flight rows: for in_flight
-- it is the lease expiry, after which another worker may take the delivery over.
CREATE TABLE deliveries (
  id text COLLATE "C" PRIMARY KEY,
  account_id text NOT NULL,
  poll_id text NOT NULL,
  webhook_id text,
  endpoint_id text NOT NULL,
  source text NOT NULL CHECK (source IN ('webhook', 'question-logic', 'survey-logic')),
  url text NOT NULL,
  participant_id text NOT NULL,
  type text NOT NULL CHECK (type IN ('submitted-responses', 'completed-survey')),
  status text NOT NULL CHECK (status IN ('pending', 'in_flight', 'delivered', 'rejected', 'given_up', 'cancelled')),
  attempt_count integer NOT NULL DEFAULT 0,
  dns_failures integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  lease_token text,
  body text NOT NULL,
  created_at timestamptz NOT NULL,
  finished_at timestamptz
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status IN ('pending', 'in_flight');
CREATE INDEX deliveries_webhook ON deliveries (webhook_id, id);
CREATE INDEX deliveries_poll ON deliveries (poll_id, id);
CREATE INDEX deliveries_endpoint ON deliveries (endpoint_id, finished_at);
CREATE INDEX deliveries_finished ON deliveries (finished_at) WHERE finished_at IS NOT NULL;

CREATE TABLE attempts (
  id text COLLATE "C" PRIMARY KEY,
  delivery_id text NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
  number integer NOT NULL,
  sent_at timestamptz NOT NULL,
  status_code integer,
  error text,
  duration_ms integer NOT NULL,
  response_excerpt text
);
CREATE INDEX attempts_delivery ON attempts (delivery_id, number);
