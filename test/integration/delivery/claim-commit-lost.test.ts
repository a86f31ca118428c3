import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDeliveries } from '../../../src/app/delivery/claim-deliveries.js';
import { openDatabase, type Database } from '../../../src/infra/db/database.js';
import { harness, type Harness } from '../../support/app.js';
import { createPgDatabase, onPostgres } from '../../support/db.js';
import { pgProxy, type PgProxy } from '../../support/pg-proxy.js';
import { queueDue } from '../../support/worker.js';

/**
 * A claim whose COMMIT's answer is lost with its connection has leased deliveries the worker
 * never learns of: they are given back at once, their attempt not counted, rather than waiting
 * out the lease and going out under a skipped attempt number. A TCP proxy drops the answer.
 * PostgreSQL only: the embedded database has no connection to lose.
 */
describe.skipIf(!onPostgres)('a claim whose answer is lost', () => {
  let made: Awaited<ReturnType<typeof createPgDatabase>>;
  let proxy: PgProxy;
  let database: Database;
  let direct: Database;
  let h: Harness;

  beforeAll(async () => {
    made = await createPgDatabase();
    direct = await openDatabase({ databaseUrl: made.url, dataDir: '', schema: 'apply', poolSize: 1 });
    proxy = await pgProxy(made.url);
    database = await openDatabase({ databaseUrl: proxy.url, dataDir: '', schema: 'none', poolSize: 4 });
    h = await harness({ database });
    h.deps.clock = { now: () => new Date() };
  });
  afterAll(async () => {
    await h?.close();
    await database?.close();
    await direct?.close();
    await proxy?.close();
    await made?.drop();
  });

  it('gives back what it leased, uncounted and due at once', async () => {
    const { accountId } = await h.account();
    const ids = await queueDue(h, accountId, 'https://hooks.example.com/lost-claim', 3);
    const given: number[] = [];
    const cut = proxy.cut('after-commit');
    await expect(claimDeliveries(h.deps, 10, { onGivenBack: (n) => given.push(n) })).rejects.toThrow();
    await cut;
    const rows = await direct.db
      .selectFrom('delivery_queue')
      .select(['delivery_id', 'attempt_count', 'lease_token'])
      .where('delivery_id', 'in', ids)
      .execute();
    expect(rows).toHaveLength(3);
    for (const r of rows) expect(r).toMatchObject({ attempt_count: 0, lease_token: null });
    expect(given).toEqual([3]);
    // Claimed again, each is attempt 1.
    const again = await claimDeliveries(h.deps, 10);
    expect(again.map((d) => d.attemptCount).sort()).toEqual([1, 1, 1]);
  });
});
