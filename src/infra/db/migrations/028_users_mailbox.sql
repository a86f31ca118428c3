-- One user per mailbox: `ann@exämple.de` and `ann@xn--exmple-cua.de` are one address, stored in
-- the form first given. `mailbox` is its key, lower case with the domain in ASCII, written by the
-- service (which converts domains; PostgreSQL cannot), and unique, so that two requests making
-- one new user at once under its two forms make one row. An address of lower-case ASCII is its
-- own key, filled here; any other stored already stays without one, and is found by its forms
-- (docs/operations.md, "Upgrades and migrations").
ALTER TABLE users ADD COLUMN mailbox text COLLATE "C";

UPDATE users SET mailbox = email WHERE email = lower(email) AND email ~ '^[ -~]*$';

CREATE UNIQUE INDEX users_mailbox ON users (mailbox);
