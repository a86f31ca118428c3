import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/infra/db/database.js';
import { migrate, migrationNames } from '../../src/infra/db/migrate.js';
import { databaseBefore } from '../support/db.js';

/**
 * A database at migration 007 where account B took over a poll id that account A had deleted
 * (and B's logic deliveries were recorded against A's endpoint), then migrated: a deleted id stays
 * its account's, the endpoint that crossed accounts is gone, and B's next delivery makes its own.
 */
describe('migration 008 (poll tombstones)', () => {
  let database: Database;

  beforeAll(async () => {
    database = await databaseBefore('008');
    const db = database.db;
    for (const a of ['acc_a', 'acc_b']) {
      await sql`INSERT INTO accounts (id, name, plan, created_at, updated_at) VALUES (${a}, ${a}, 'premium', now(), now())`.execute(
        db,
      );
    }
    // poll_taken was A's, deleted, then committed by B; poll_gone was A's and stays deleted; poll_live is A's.
    await sql`INSERT INTO polls (id, account_id, title, is_visible, body, created_at, updated_at) VALUES ('poll_taken', 'acc_b', 'B', true, '{}', now(), now()), ('poll_live', 'acc_a', 'A', true, '{}', now(), now())`.execute(
      db,
    );
    const endpoint = (id: string, account: string, poll: string) =>
      sql`INSERT INTO endpoints (id, account_id, poll_id, source, url, created_at) VALUES (${id}, ${account}, ${poll}, 'survey-logic', 'https://hooks.example.com/x', now())`.execute(
        db,
      );
    await endpoint('end_taken', 'acc_a', 'poll_taken');
    await endpoint('end_gone', 'acc_a', 'poll_gone');
    await endpoint('end_live', 'acc_a', 'poll_live');
    expect(await migrate(db)).toEqual(migrationNames().filter((n) => n >= '008'));
  });

  afterAll(async () => {
    await database?.close();
  });

  it('keeps a deleted id as its account’s and removes the endpoints that outlived or crossed their poll', async () => {
    const db = database.db;
    const tombstones = await db.selectFrom('deleted_polls').select(['id', 'account_id']).orderBy('id').execute();
    // A taken id is left to the account that holds it now; its crossed endpoint goes.
    expect(tombstones).toEqual([{ id: 'poll_gone', account_id: 'acc_a' }]);
    expect((await db.selectFrom('endpoints').select('id').execute()).map((e) => e.id)).toEqual(['end_live']);
    // The logic key now includes the account.
    await sql`INSERT INTO endpoints (id, account_id, poll_id, source, url, created_at) VALUES ('end_b', 'acc_b', 'poll_live', 'survey-logic', 'https://hooks.example.com/x', now())`.execute(
      db,
    );
    expect(
      Number(
        (
          await db
            .selectFrom('endpoints')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    ).toBe(2);
  });
});
