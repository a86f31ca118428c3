import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../../src/infra/db/database.js';

// PGlite answers without leaving the event loop. Queued statements must still let socket reads
// (new requests, endpoint answers) in between, or a busy database starves every connection
// until its queue is empty (docs/performance.md, "The embedded database").
describe('embedded storage shares the event loop', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase({ dataDir: '', memory: true, schema: 'none' });
    await sql`SELECT 1`.execute(database.db); // started: the first query waits for the boot
  });
  afterAll(async () => {
    await database?.close();
  });

  it('runs I/O callbacks between queued queries', async () => {
    const finished: number[] = [];
    let immediateAt = -1;
    setImmediate(() => (immediateAt = finished.length));
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        sql`SELECT ${i}::int AS n`.execute(database.db).then(() => finished.push(i)),
      ),
    );
    expect(immediateAt).toBeGreaterThanOrEqual(0);
    expect(immediateAt).toBeLessThan(50);
  });

  it('keeps a transaction whole: its statements are not interleaved with others', async () => {
    await sql`CREATE TABLE IF NOT EXISTS fairness (v int)`.execute(database.db);
    const seen: number[] = [];
    await Promise.all([
      database.db.transaction().execute(async (trx) => {
        await sql`INSERT INTO fairness VALUES (1)`.execute(trx);
        await new Promise((r) => setImmediate(r));
        const r = await sql<{ n: number }>`SELECT count(*)::int AS n FROM fairness`.execute(trx);
        seen.push(r.rows[0]!.n);
      }),
      sql`INSERT INTO fairness VALUES (2)`.execute(database.db),
    ]);
    // The outside insert waited for the transaction: inside it, only its own row was there.
    expect(seen).toEqual([1]);
  });
});
