import { expect, it } from 'vitest';
import { claimDeliveries } from '../../../src/app/delivery/claim-deliveries.js';
import { AbortedForAnotherError } from '../../../src/app/ports/aborted-for-another.js';
import type { Deps } from '../../../src/app/ports/index.js';
import { resultBatcher } from '../../../src/worker/result-batcher.js';
import { harness } from '../../support/app.js';
import { seedDelivery } from '../../support/races.js';

// A batch of results PostgreSQL aborts for another transaction (a deadlock) wrote nothing: it is
// recorded again at once, rather than its deliveries left leased until their leases run out.

type RecordResults = Deps['store']['deliveries']['recordResults'];

/** One claimed delivery's 204 recorded through a result batcher whose store's recordResults is `wrap`ped. */
async function recordThrough(wrap: (real: RecordResults) => RecordResults) {
  const h = await harness();
  try {
    const acct = await h.account();
    const { deliveryId } = await seedDelivery(h.database.db, acct.accountId, h.clock.now());
    const [claimed] = (await claimDeliveries(h.deps, 1000)).filter((d) => d.id === deliveryId);
    const real = h.deps.store.deliveries.recordResults.bind(h.deps.store.deliveries);
    const deliveries = { ...h.deps.store.deliveries, recordResults: wrap(real) };
    const batcher = resultBatcher(
      { ...h.deps, store: { ...h.deps.store, deliveries } },
      {
        maxBatch: 1,
        delayMs: 0,
        parallel: 1,
      },
    );
    const sent = { outcome: { kind: 'response' as const, statusCode: 204 }, durationMs: 5, excerpt: null };
    const report = await batcher.record({ delivery: claimed!, sentAt: h.clock.now(), sent }).catch((e: unknown) => e);
    const row = await h.database.db
      .selectFrom('deliveries')
      .select('status')
      .where('id', '=', deliveryId)
      .executeTakeFirstOrThrow();
    return { report, status: row.status };
  } finally {
    await h.close();
  }
}

it('a batch of results aborted for another transaction is recorded on a second try', async () => {
  let calls = 0;
  const { report, status } = await recordThrough(
    (real) => (rows, now) =>
      calls++ === 0 ? Promise.reject(new AbortedForAnotherError(new Error('deadlock detected'))) : real(rows, now),
  );
  expect(report).toMatchObject({ decision: { next: 'delivered' }, applied: true });
  expect(calls).toBe(2);
  expect(status).toBe('delivered');
});

it('a batch that fails for another reason is not tried again', async () => {
  let calls = 0;
  const { report, status } = await recordThrough(() => () => {
    calls++;
    return Promise.reject(new Error('connection terminated'));
  });
  expect(report).toBeInstanceOf(Error);
  expect((report as Error).message).toBe('connection terminated');
  expect(calls).toBe(1);
  expect(status).toBe('pending');
});
