import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../../src/infra/db/database.js';
import { listenForDue, type DueListener } from '../../../src/infra/db/due-listener.js';
import { countWorkers, workerApplicationName } from '../../../src/infra/db/worker-census.js';
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
  const client = async (url: string, applicationName: string) => {
    const c = new pg.Client({ connectionString: url, application_name: applicationName });
    await c.connect();
    other.push(c);
    return c;
  };

  beforeAll(async () => {
    made = await createPgDatabase();
    database = await openDatabase({ databaseUrl: made.url, dataDir: '', schema: 'apply' });
  });
  afterAll(async () => {
    for (const l of listeners) await l.close();
    for (const c of other) await c.end().catch(() => {});
    await database?.close();
    await made?.drop();
  });

  it('each announces itself on connecting, the others count again, and one that leaves is no longer counted', async () => {
    const names = [workerApplicationName(), workerApplicationName()];
    expect(names[0]).not.toBe(names[1]);
    const heard = [0, 0];
    const worker = (i: number, url = made.url) => {
      const l = listenForDue(url, () => {}, {
        presence: { applicationName: names[i]!, onWorkersChanged: () => heard[i]!++ },
      });
      listeners.push(l);
      return l;
    };
    // A session of another name on the same database, and a worker's on another database, count for nothing.
    await client(made.url, 'psql');
    await client(process.env.CANVASS_TEST_PG_URL!, workerApplicationName());

    // Alone, before its session is up or after, a worker counts itself once.
    expect(await countWorkers(database.db, names[0]!)).toBe(1);
    // The URL names the session otherwise: the worker's own name wins all the same.
    worker(0, `${made.url}${made.url.includes('?') ? '&' : '?'}application_name=from-the-url`);
    await until(() => heard[0]! >= 1, 'the first worker to hear its own announcement');
    expect(await countWorkers(database.db, names[0]!)).toBe(1);
    expect(await countWorkers(database.db, names[1]!)).toBe(2);

    const b = worker(1);
    await until(() => heard[0]! >= 2 && heard[1]! >= 1, 'both to hear the second announce itself');
    expect(await countWorkers(database.db, names[0]!)).toBe(2);
    expect(await countWorkers(database.db, names[1]!)).toBe(2);

    // A session left over under a worker's name (its old one, not yet gone) does not count it twice.
    await client(made.url, names[1]!);
    expect(await countWorkers(database.db, names[0]!)).toBe(2);

    await b.close();
    await other.pop()!.end();
    await until(async () => (await countWorkers(database.db, names[0]!)) === 1, 'the second to be gone');
  });
});
