import { expect, it } from 'vitest';
import { claimDeliveries } from '../../../src/app/delivery/claim-deliveries.js';
import type { Deps } from '../../../src/app/ports/index.js';
import { AbortedForAnotherError } from '../../../src/app/ports/aborted-for-another.js';
import { resultBatcher } from '../../../src/worker/result-batcher.js';
import { harness } from '../../support/app.js';
import { seedDelivery } from '../../support/races.js';

// A batch of results PostgreSQL aborts for another transaction (a deadlock) wrote nothing: it is
// recorded again at once, rather than its deliveries left leased until their leases run out.
it('a batch of results aborted for another transaction is recorded on a second try', async () => {
  const h = await harness();
  try {
    const acct = await h.account();
    const { deliveryId } = await seedDelivery(h.database.db, acct.accountId, h.clock.now());
    const [claimed] = (await claimDeliveries(h.deps, 1000)).filter((d) => d.id === deliveryId);
    let aborted = 0;
    const deps: Deps = {
      ...h.deps,
      store: {
        ...h.deps.store,
        deliveries: {
          ...h.deps.store.deliveries,
          recordResults: (rows, now) => {
            if (aborted++ === 0) return Promise.reject(new AbortedForAnotherError(new Error('deadlock detected')));
            return h.deps.store.deliveries.recordResults(rows, now);
          },
        },
      },
    };
    const batcher = resultBatcher(deps, { maxBatch: 1, delayMs: 0, parallel: 1 });
    const sent = { outcome: { kind: 'response' as const, statusCode: 204 }, durationMs: 5, excerpt: null };
    const report = await batcher.record({ delivery: claimed!, sentAt: h.clock.now(), sent });
    expect(report).toMatchObject({ decision: { next: 'delivered' }, applied: true });
    expect(aborted).toBe(2);
    const row = await h.database.db
      .selectFrom('deliveries')
      .select('status')
      .where('id', '=', deliveryId)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('delivered');
  } finally {
    await h.close();
  }
});

it('a batch that fails for another reason is not tried again', async () => {
  const h = await harness();
  try {
    const acct = await h.account();
    const { deliveryId } = await seedDelivery(h.database.db, acct.accountId, h.clock.now());
    const [claimed] = (await claimDeliveries(h.deps, 1000)).filter((d) => d.id === deliveryId);
    let calls = 0;
    const deps: Deps = {
      ...h.deps,
      store: {
        ...h.deps.store,
        deliveries: {
          ...h.deps.store.deliveries,
          recordResults: () => {
            calls++;
            return Promise.reject(new Error('connection terminated'));
          },
        },
      },
    };
    const batcher = resultBatcher(deps, { maxBatch: 1, delayMs: 0, parallel: 1 });
    const sent = { outcome: { kind: 'response' as const, statusCode: 204 }, durationMs: 5, excerpt: null };
    await expect(batcher.record({ delivery: claimed!, sentAt: h.clock.now(), sent })).rejects.toThrow(
      'connection terminated',
    );
    expect(calls).toBe(1);
  } finally {
    await h.close();
  }
});
