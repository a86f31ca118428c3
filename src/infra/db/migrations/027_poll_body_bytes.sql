-- A poll's stored settings, in bytes as PostgreSQL prints them, so that `GET /polls` can end a
-- page before 8 MiB of them without printing every listed poll to count it (docs/operations.md,
-- "Memory"). A trigger keeps it, so every writer does, processes of the version before this one
-- included, and the polls stored already are counted here, in the same transaction. The column
-- stays nullable: a poll without a count is counted as it is listed.
ALTER TABLE polls ADD COLUMN body_bytes integer;

CREATE FUNCTION count_poll_body_bytes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.body_bytes := octet_length(NEW.body::text);
  RETURN NEW;
END $$;

CREATE TRIGGER polls_body_bytes BEFORE INSERT OR UPDATE OF body ON polls
  FOR EACH ROW EXECUTE FUNCTION count_poll_body_bytes();

UPDATE polls SET body_bytes = octet_length(body::text);
