import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/infra/db/database.js';
import { migrate, migrationNames } from '../../src/infra/db/migrate.js';
import { createStore } from '../../src/infra/db/store.js';
import { databaseBefore } from '../support/db.js';

/**
 * A database at migration 014 with polls in two accounts and one account without any, then
 * migrated: each account's poll count is filled from its polls, and the store keeps it from
 * there as polls are inserted and deleted.
 */
describe('migration 015 (account quotas)', () => {
  let database: Database;

  beforeAll(async () => {
    database = await databaseBefore('015');
    const db = database.db;
    for (const a of ['acc_a', 'acc_b', 'acc_none']) {
      await sql`INSERT INTO accounts (id, name, plan, created_at, updated_at) VALUES (${a}, ${a}, 'premium', now(), now())`.execute(
        db,
      );
    }
    await sql`INSERT INTO polls (id, account_id, title, is_visible, body, created_at, updated_at)
      SELECT 'poll_a' || n, 'acc_a', 'A', true, '{}'::jsonb, now(), now() FROM generate_series(1, 3) AS n
      UNION ALL SELECT 'poll_b1', 'acc_b', 'B', true, '{}'::jsonb, now(), now()`.execute(db);
    expect(await migrate(db)).toEqual(migrationNames().filter((n) => n >= '015'));
  });

  afterAll(async () => {
    await database?.close();
  });

  const counts = async () =>
    Object.fromEntries(
      (
        await database.db.selectFrom('account_usage').select(['account_id', 'polls']).orderBy('account_id').execute()
      ).map((r) => [r.account_id, r.polls]),
    );

  it('fills each account’s poll count from its polls, and the store keeps it', async () => {
    // An account without polls has no row until its first.
    expect(await counts()).toEqual({ acc_a: 3, acc_b: 1 });
    const store = createStore(database.db);
    const now = new Date();
    const poll = {
      id: 'poll_new',
      accountId: 'acc_none',
      title: 'New',
      isVisible: false,
      createdAt: now,
      updatedAt: now,
    };
    const body = (await store.polls.get('poll_a1'))!;
    expect(await store.polls.insert({ ...body, ...poll })).toEqual({ inserted: true, pollsInAccount: 1 });
    // An id already taken inserts nothing and counts nothing.
    expect(await store.polls.insert({ ...body, ...poll })).toEqual({ inserted: false, pollsInAccount: 0 });
    expect(await store.polls.delete('poll_a1', 'acc_a', now)).toBe(true);
    // Another account's id deletes nothing there.
    expect(await store.polls.delete('poll_b1', 'acc_a', now)).toBe(false);
    expect(await counts()).toEqual({ acc_a: 2, acc_b: 1, acc_none: 1 });
  });

  it('counts polls written without the store too, as a process of the version before writes them', async () => {
    const db = database.db;
    await sql`INSERT INTO polls (id, account_id, title, is_visible, body, created_at, updated_at)
      VALUES ('poll_old1', 'acc_b', 'B', true, '{}', now(), now()), ('poll_old2', 'acc_b', 'B', true, '{}', now(), now())`.execute(
      db,
    );
    await sql`DELETE FROM polls WHERE id IN ('poll_b1', 'poll_a2')`.execute(db);
    expect(await counts()).toEqual({ acc_a: 1, acc_b: 2, acc_none: 1 });
  });
});
