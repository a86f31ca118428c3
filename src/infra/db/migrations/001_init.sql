-- Ids and cursors sort bytewise (COLLATE "C") whatever the database's default collation:
-- they are time-ordered base62, and paging and "newest first" rely on that order.

-- Accounts, people and keys.
CREATE TABLE accounts (
  id text COLLATE "C" PRIMARY KEY,
  name text NOT NULL,
  plan text NOT NULL CHECK (plan IN ('free', 'basic', 'premium', 'enterprise')),
  defaults jsonb NOT NULL DEFAULT '{}'::jsonb,
  notification_recipients jsonb,
  signing_secret text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE TABLE users (
  id text COLLATE "C" PRIMARY KEY,
  email text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL
);

CREATE TABLE memberships (
  account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'billing_admin', 'editor', 'read_only')),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (account_id, user_id)
);
CREATE INDEX memberships_user ON memberships (user_id);

CREATE TABLE api_keys (
  id text COLLATE "C" PRIMARY KEY,
  user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  key_hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz
);

-- Polls: the settings objects live in one document; title and visibility are columns
-- because lists filter and sort on them.
CREATE TABLE polls (
  id text COLLATE "C" PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  title text NOT NULL,
  is_visible boolean NOT NULL DEFAULT false,
  body jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX polls_account ON polls (account_id, id);

CREATE TABLE slides (
  id text COLLATE "C" PRIMARY KEY,
  poll_id text NOT NULL REFERENCES polls(id) ON DELETE CASCADE,
  account_id text NOT NULL,
  idx integer NOT NULL,
  type text NOT NULL,
  title text NOT NULL,
  subtitle text,
  answers jsonb NOT NULL DEFAULT '[]'::jsonb,
  multi boolean NOT NULL DEFAULT false,
  logic jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX slides_poll ON slides (poll_id, idx);

-- Respondents and their answers. Synthetic rows come from research runs.
CREATE TABLE participants (
  id text NOT NULL,
  -- A time-sorted surrogate: participant ids are the client's and do not sort.
  seq text COLLATE "C" NOT NULL UNIQUE,
  poll_id text NOT NULL REFERENCES polls(id) ON DELETE CASCADE,
  account_id text NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  synthetic boolean NOT NULL DEFAULT false,
  complete boolean NOT NULL DEFAULT false,
  completed_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (poll_id, id)
);
CREATE INDEX participants_account ON participants (account_id, seq);
CREATE INDEX participants_poll_seq ON participants (poll_id, seq);

CREATE TABLE responses (
  id text COLLATE "C" PRIMARY KEY,
  account_id text NOT NULL,
  poll_id text NOT NULL REFERENCES polls(id) ON DELETE CASCADE,
  participant_id text NOT NULL,
  slide_id text NOT NULL,
  value jsonb NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  synthetic boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL
);
CREATE INDEX responses_poll ON responses (poll_id, id);
CREATE INDEX responses_account ON responses (account_id, id);
CREATE INDEX responses_participant ON responses (poll_id, participant_id);

CREATE TABLE research_runs (
  id text COLLATE "C" PRIMARY KEY,
  poll_id text NOT NULL REFERENCES polls(id) ON DELETE CASCADE,
  account_id text NOT NULL,
  participants integer NOT NULL,
  seed integer NOT NULL,
  responses_created integer NOT NULL,
  created_at timestamptz NOT NULL
);
