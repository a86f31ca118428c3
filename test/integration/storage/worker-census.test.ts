import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../../src/infra/db/database.js';
import { listenForDue, type DueListener } from '../../../src/infra/db/due-listener.js';
import { countWorkers, WORKER_APPLICATION_NAME } from '../../../src/infra/db/worker-census.js';
import { createPgDatabase, onPostgres } from '../../support/db.js';

const until = async (pred: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

// Workers on one PostgreSQL database count each other by their notification sessions, to divide
// the connections one endpoint origin may have (docs/operations.md, "Scaling").
describe.skipIf(!onPostgres)('the workers sharing a database count each other', () => {
  let made: Awaited<ReturnType<typeof createPgDatabase>>;
  let database: Database;
  const listeners: DueListener[] = [];
  const other: pg.Client[] = [];

  beforeAll(async () => {
    made = await createPgDatabase();
    database = await openDatabase({ databaseUrl: made.url, dataDir: '', schema: 'apply' });
  });
  afterAll(async () => {
    for (const l of listeners) await l.close();
    for (const c of other) await c.end();
    await database?.close();
    await made?.drop();
  });

  it('each announces itself on connecting, the others count again, and one that leaves is no longer counted', async () => {
    const heard = [0, 0];
    const worker = (i: number) => {
      const l = listenForDue(made.url, () => {}, {
        presence: { applicationName: WORKER_APPLICATION_NAME, onWorkersChanged: () => heard[i]!++ },
      });
      listeners.push(l);
      return l;
    };
    // A session of another name on the same database, and one of the same name on another database, count for nothing.
    const stranger = new pg.Client({ connectionString: made.url, application_name: 'psql' });
    await stranger.connect();
    other.push(stranger);
    const elsewhere = new pg.Client({
      connectionString: process.env.CANVASS_TEST_PG_URL,
      application_name: WORKER_APPLICATION_NAME,
    });
    await elsewhere.connect();
    other.push(elsewhere);

    // Alone, and before its own session is up, a worker counts itself once.
    expect(await countWorkers(database.db, null)).toBe(1);
    const a = worker(0);
    await until(() => a.session() !== null && heard[0]! >= 1, 'the first worker to hear its own announcement');
    expect(await countWorkers(database.db, a.session())).toBe(1);

    const b = worker(1);
    await until(
      () => b.session() !== null && heard[0]! >= 2 && heard[1]! >= 1,
      'both to hear the second announce itself',
    );
    expect(await countWorkers(database.db, a.session())).toBe(2);
    expect(await countWorkers(database.db, b.session())).toBe(2);

    await b.close();
    await until(async () => (await countWorkers(database.db, a.session())) === 1, 'the second to be gone');
  });
});
