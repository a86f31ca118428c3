-- Putting deliveries right and holding them: resend, recover, pause, test events.

-- A paused webhook's deliveries wait in the queue, parked, and make no attempt.
ALTER TABLE webhooks ADD COLUMN paused_at timestamptz;

-- The retry ladder of a queued delivery starts after this many attempts: a resent delivery
-- keeps its attempt numbers and gets a fresh ladder.
ALTER TABLE delivery_queue ADD COLUMN ladder_base integer NOT NULL DEFAULT 0;

-- Failure alerts count an endpoint's quiet time from here at the earliest: time paused, or at a
-- URL that is no longer configured, is not held against it.
ALTER TABLE endpoints ADD COLUMN quiet_since timestamptz;

-- What people did to a delivery: resent it (alone or by a recover), or made it as a test event.
-- attempt_number is the attempt that followed.
CREATE TABLE delivery_events (
  id text COLLATE "C" PRIMARY KEY,
  delivery_id text NOT NULL,
  account_id text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('resend', 'recover', 'test')),
  user_id text,
  attempt_number integer NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX delivery_events_delivery ON delivery_events (delivery_id, id);

-- A recover's deliveries are listed when it is asked for, and each is removed in the
-- transaction that resends it: a restart carries on with what is left, none twice.
CREATE TABLE recoveries (
  id text COLLATE "C" PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  user_id text,
  created_at timestamptz NOT NULL
);
CREATE TABLE recovery_items (
  recovery_id text NOT NULL REFERENCES recoveries(id) ON DELETE CASCADE,
  delivery_id text COLLATE "C" NOT NULL,
  PRIMARY KEY (recovery_id, delivery_id)
);
