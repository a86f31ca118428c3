import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userFor } from '../../src/app/accounts/issue-key.js';
import { addressForms, comparableAddress } from '../../src/domain/email-address.js';
import { openDatabase, type Database } from '../../src/infra/db/database.js';
import { migrate, migrationNames } from '../../src/infra/db/migrate.js';
import { createStore } from '../../src/infra/db/store.js';
import { databaseBefore, onPostgres } from '../support/db.js';
import { holdTransaction } from '../support/hold.js';
import { untilSettledOrWaiting } from '../support/races.js';

/**
 * A database at migration 027 with users stored under every kind of address, then migrated: a
 * lower-case ASCII address is its own mailbox key, any other keeps none and is still found by
 * its forms; from then on the two forms of one address (its domain in Unicode or in ASCII) make
 * one user, even when both are given at once (README, API overview: keys).
 */
describe('migration 028 (one user per mailbox)', () => {
  let database: Database & { url?: string };
  const now = new Date('2026-12-08T00:00:00Z');

  beforeAll(async () => {
    database = await databaseBefore('028');
    await sql`INSERT INTO users (id, email, created_at) VALUES
      ('usr_ascii', 'ann@xn--exmple-cua.de', now()),
      ('usr_unicode', 'jörg@exämple.de', now()),
      ('usr_upper', 'Bob@Example.com', now())`.execute(database.db);
    expect(await migrate(database.db)).toEqual(migrationNames().filter((n) => n >= '028'));
  });

  afterAll(async () => {
    await database?.close();
  });

  it('keys the stored lower-case ASCII addresses, and leaves the others to be found by their forms', async () => {
    const rows = await sql<{ id: string; mailbox: string | null }>`
      SELECT id, mailbox FROM users ORDER BY id`.execute(database.db);
    expect(rows.rows).toEqual([
      { id: 'usr_ascii', mailbox: 'ann@xn--exmple-cua.de' },
      { id: 'usr_unicode', mailbox: null },
      { id: 'usr_upper', mailbox: null },
    ]);
    const store = createStore(database.db);
    expect(await userFor(store, 'ANN@exämple.de', now)).toBe('usr_ascii');
    expect(await userFor(store, 'jörg@xn--exmple-cua.de', now)).toBe('usr_unicode');
  });

  it('takes a new address under its other form as the user already stored', async () => {
    const store = createStore(database.db);
    const first = await userFor(store, 'zoë@exämple.de', now);
    // Asked as a second request would that found no one before the first's insert committed.
    const second = await store.users.insertOrFind({
      id: 'usr_second',
      email: 'zoë@xn--exmple-cua.de',
      mailbox: 'zoë@xn--exmple-cua.de',
      createdAt: now,
    });
    expect(second).toBe(first);
    const stored = await sql<{ email: string }>`SELECT email FROM users WHERE email LIKE 'zoë@%'`.execute(database.db);
    expect(stored.rows).toEqual([{ email: 'zoë@exämple.de' }]);
  });

  it('finds a member under an address written another way that names the same mailbox', async () => {
    const store = createStore(database.db);
    // Full-width letters map to ASCII ones in a domain: `ｅxample.com` is `example.com`.
    const id = await userFor(store, 'wide@ｅxample.com', now);
    for (const asked of ['wide@example.com', 'WIDE@Example.COM']) {
      expect((await store.users.findByEmail(addressForms(asked), comparableAddress(asked)))?.id, asked).toBe(id);
      expect(await userFor(store, asked, now)).toBe(id);
    }
  });

  it.runIf(onPostgres)('makes one user of two forms of a new address given at once', async () => {
    // Three connections: the held request, the one waiting on it, and the one watching.
    const pool = await openDatabase({ databaseUrl: database.url!, dataDir: '', schema: 'none', poolSize: 3 });
    try {
      let firstId = '';
      // The first request's insert is held uncommitted; the second, which found no one, waits on it.
      const held = await holdTransaction(pool.db, async (trx) => {
        firstId = await userFor(createStore(trx), 'lí@exämple.de', now);
      });
      const second = userFor(createStore(pool.db), 'lí@xn--exmple-cua.de', now);
      await untilSettledOrWaiting(pool.db, second, 'insert into "users"');
      await held.release();
      expect(await second).toBe(firstId);
      const stored = await sql<{ n: number }>`SELECT count(*)::int AS n FROM users WHERE email LIKE 'lí@%'`.execute(
        pool.db,
      );
      expect(stored.rows[0]!.n).toBe(1);
    } finally {
      await pool.close();
    }
  });
});
