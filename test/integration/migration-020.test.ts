import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/infra/db/database.js';
import { migrate, migrationNames } from '../../src/infra/db/migrate.js';
import { databaseBefore } from '../support/db.js';

/**
 * A database at migration 019 with recovers under way, two of which listed the same delivery
 * (as two recovers answered at once could), then migrated: each delivery is listed once, by the
 * older recover, a recover left with nothing goes, and a delivery cannot be listed twice again.
 */
describe('migration 020 (a delivery listed by one recover at a time)', () => {
  let database: Database;

  beforeAll(async () => {
    database = await databaseBefore('020');
    const db = database.db;
    await sql`INSERT INTO accounts (id, name, plan, created_at, updated_at) VALUES ('acc_a', 'A', 'premium', now(), now())`.execute(
      db,
    );
    // Made in the order B, a, c: ids sort by when they were made in "C" (B before a), whatever
    // the database's own collation says.
    await sql`INSERT INTO recoveries (id, account_id, user_id, created_at) VALUES
      ('rcv_B', 'acc_a', NULL, now()), ('rcv_a', 'acc_a', NULL, now()), ('rcv_c', 'acc_a', NULL, now())`.execute(db);
    await sql`INSERT INTO recovery_items (recovery_id, delivery_id) VALUES
      ('rcv_B', 'dlv_x'), ('rcv_a', 'dlv_x'), ('rcv_a', 'dlv_y'), ('rcv_c', 'dlv_y')`.execute(db);
    expect(await migrate(db)).toEqual(migrationNames().filter((n) => n >= '020'));
  });

  afterAll(async () => {
    await database?.close();
  });

  it('keeps each delivery with the older recover, drops a recover left with none, and refuses a second listing', async () => {
    const db = database.db;
    const items = await sql<{ recovery_id: string; delivery_id: string }>`
      SELECT recovery_id, delivery_id FROM recovery_items ORDER BY delivery_id`.execute(db);
    expect(items.rows).toEqual([
      { recovery_id: 'rcv_B', delivery_id: 'dlv_x' },
      { recovery_id: 'rcv_a', delivery_id: 'dlv_y' },
    ]);
    const recoveries = await sql<{ id: string }>`SELECT id FROM recoveries ORDER BY id`.execute(db);
    expect(recoveries.rows.map((r) => r.id).sort()).toEqual(['rcv_B', 'rcv_a']);
    await expect(
      sql`INSERT INTO recovery_items (recovery_id, delivery_id) VALUES ('rcv_a', 'dlv_x')`.execute(db),
    ).rejects.toThrow(/unique|duplicate/i);
  });
});
