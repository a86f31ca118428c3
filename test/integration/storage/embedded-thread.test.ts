import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../../src/infra/db/database.js';
import { openEmbedded } from '../../../src/infra/db/embedded-client.js';
import { executeThenCommit } from '../../../src/infra/db/pipelined-driver.js';
import { isStorageUnavailable } from '../../../src/infra/db/unavailable.js';
import type { DB } from '../../../src/infra/db/schema.js';

// PGlite runs on a thread of its own: while it works, the event loop goes on serving socket
// reads (new requests, endpoint answers), or a busy database would starve every connection
// until its queue is empty (docs/performance.md, "The embedded database").
describe('embedded storage runs off the event loop', () => {
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

  it('keeps serving timers while a long statement runs', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      await sql`SELECT count(*) FROM generate_series(1, 3000000)`.execute(database.db);
    } finally {
      clearInterval(timer);
    }
    // On the event loop's own thread the statement would run in one call: no tick in between.
    expect(ticks).toBeGreaterThanOrEqual(3);
  });

  it("keeps a database error's code and fields", async () => {
    await sql`CREATE TABLE IF NOT EXISTS unique_names (name text PRIMARY KEY)`.execute(database.db);
    await sql`INSERT INTO unique_names VALUES ('a')`.execute(database.db);
    const err = await sql`INSERT INTO unique_names VALUES ('a')`.execute(database.db).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({ code: '23505', constraint: 'unique_names_pkey' });
    // The connection is usable after the error.
    const r = await sql<{ n: number }>`SELECT count(*)::int AS n FROM unique_names`.execute(database.db);
    expect(r.rows[0]!.n).toBe(1);
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

  it('fails a statement whose parameter cannot be copied to the thread, and carries on', async () => {
    const notCopyable = { toJSON: () => 'x' }; // a function inside: not copyable
    await expect(sql`SELECT ${notCopyable} AS f`.execute(database.db)).rejects.toThrow(/could not be cloned/);
    const r = await sql<{ n: number }>`SELECT 7 AS n`.execute(database.db);
    expect(r.rows[0]!.n).toBe(7);
  });

  describe('transactions with BEGIN and COMMIT sent unawaited', () => {
    const names = async () =>
      (await sql<{ name: string }>`SELECT name FROM piped ORDER BY name`.execute(database.db)).rows.map((r) => r.name);
    const insert = (name: string) => sql`INSERT INTO piped VALUES (${name})`;
    beforeAll(async () => {
      await sql`CREATE TABLE piped (name text PRIMARY KEY)`.execute(database.db);
    });

    it('commits a transaction whose COMMIT went behind its last statement', async () => {
      await database.db.transaction().execute(async (trx) => {
        await insert('a').execute(trx);
        await executeThenCommit<DB, unknown>(trx, insert('b').compile(trx));
      });
      expect(await names()).toEqual(['a', 'b']);
    });

    it('reports a rollback, and writes nothing, when a failed statement was swallowed before COMMIT', async () => {
      const run = database.db.transaction().execute(async (trx) => {
        await insert('c').execute(trx);
        await insert('a')
          .execute(trx)
          .catch(() => {});
        await executeThenCommit<DB, unknown>(trx, insert('d').compile(trx)).catch(() => {});
      });
      await expect(run).rejects.toThrow(/rolled back/);
      expect(await names()).toEqual(['a', 'b']);
    });

    it('undoes the first write when a later statement fails', async () => {
      const run = database.db.transaction().execute(async (trx) => {
        await insert('e').execute(trx);
        await sql`SELECT 1 / 0`.execute(trx);
      });
      await expect(run).rejects.toMatchObject({ code: '22012' });
      expect(await names()).toEqual(['a', 'b']);
    });
  });

  it('answers a statement after the database stopped as storage unavailable (08006), not as a bug', async () => {
    const lite = await openEmbedded(null);
    await lite.close();
    const err = await lite.query('SELECT 1', []).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: '08006' });
    expect(isStorageUnavailable(err)).toBe(true);
  });

  it('lets the process end once no statement is outstanding, even left open, and after a statement that could not be sent', () => {
    const source = fileURLToPath(new URL('../../../src/infra/db/database.ts', import.meta.url));
    const script = `import { sql } from 'kysely';
      const { openDatabase } = await import(${JSON.stringify(source)});
      const d = await openDatabase({ dataDir: '', memory: true, schema: 'none' });
      await sql\`SELECT \${{ toJSON: () => 'x' }} AS f\`.execute(d.db).catch(() => {});
      const r = await sql\`SELECT 41 + 1 AS n\`.execute(d.db);
      console.log(r.rows[0].n);`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(child.stderr).toBe('');
    expect(child.stdout.trim()).toBe('42');
    expect(child.status).toBe(0);
  });
});
