-- Recipients whose mail server answered an alert email with "try again later" (a 4xx reply:
-- greylisting, a full mailbox) are kept on the email and mailed it again after a pause that
-- doubles, until the server takes them, refuses them for good, or the tries run out
-- (docs/receiving-webhooks.md, "Failure alerts"). The partial index finds those due without reading the rest.
ALTER TABLE alert_emails ADD COLUMN deferred_recipients jsonb;
ALTER TABLE alert_emails ADD COLUMN deferred_until timestamptz;
ALTER TABLE alert_emails ADD COLUMN deferred_tries integer NOT NULL DEFAULT 0;
CREATE INDEX alert_emails_deferred ON alert_emails (deferred_until) WHERE deferred_until IS NOT NULL;
