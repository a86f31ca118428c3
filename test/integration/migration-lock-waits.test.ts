import pg from 'pg';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, migrationNames } from '../../src/infra/db/migrate.js';
import { databaseBefore, onPostgres } from '../support/db.js';

/**
 * A migration that changes a table a long transaction is reading (docs/operations.md,
 * Upgrades): it gives way after a bounded wait instead of holding every query of that table
 * queued behind it, tries again, and says what holds it once it stops trying. PostgreSQL only:
 * the embedded database has one connection, so nothing else can hold a table.
 */
describe.skipIf(!onPostgres)('migrations waiting for a table lock', () => {
  const opened: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const c of opened.splice(0).reverse()) await c.close();
  });

  /** A database at 016 and a transaction reading `responses`, which 017 alters. */
  async function heldBefore017() {
    const database = await databaseBefore('017');
    opened.push(database);
    const reader = new pg.Client({ connectionString: database.url });
    await reader.connect();
    opened.push({ close: () => reader.end() });
    await reader.query('BEGIN');
    await reader.query('SELECT count(*) FROM responses');
    const probe = new pg.Client({ connectionString: database.url });
    await probe.connect();
    opened.push({ close: () => probe.end() });
    await probe.query("SET statement_timeout = '20s'");
    return { database, reader, probe };
  }

  it('lets other queries of the table through while it waits, and applies once the reader ends', async () => {
    const { database, reader, probe } = await heldBefore017();
    let settled = false;
    const migrating = migrate(database.db, { lockTimeoutMs: 300, tries: 1_000, pauseMs: 100 }).finally(
      () => (settled = true),
    );
    await expect
      .poll(
        async () =>
          (
            await probe.query(
              "SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'responses'::regclass",
            )
          ).rows[0].n,
        { timeout: 10_000, interval: 20 },
      )
      .toBeGreaterThan(0);
    // Queued behind a migration that waited without bound, this read would wait as long as the
    // reader (past the probe's 20 s statement timeout).
    const read = await probe.query('SELECT count(*)::int AS n FROM responses');
    expect(read.rows).toEqual([{ n: 0 }]);
    expect(settled).toBe(false);

    await reader.query('COMMIT');
    expect(await migrating).toEqual(migrationNames().filter((n) => n >= '017'));
    const applied = await sql<{ name: string }>`SELECT name FROM schema_migrations WHERE name LIKE '017%'`.execute(
      database.db,
    );
    expect(applied.rows).toHaveLength(1);
  });

  it('stops after its tries with an error that says what to do, having applied nothing of it', async () => {
    const { database, reader } = await heldBefore017();
    const failed = await migrate(database.db, { lockTimeoutMs: 100, tries: 3, pauseMs: 10 }).catch((e: Error) => e);
    expect(failed).toBeInstanceOf(Error);
    expect((failed as Error).message).toMatch(
      /^migration 017_\S+ gave way 3 times .*pg_stat_activity.*run canvass migrate again/,
    );
    await reader.query('COMMIT');
    const applied = await sql<{ name: string }>`SELECT name FROM schema_migrations WHERE name >= '017'`.execute(
      database.db,
    );
    expect(applied.rows).toEqual([]);
  });
});
