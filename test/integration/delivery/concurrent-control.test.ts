import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PARKED_UNTIL } from '../../../src/domain/delivery.js';
import { newId } from '../../../src/domain/ids.js';
import { bearer, harness, type Harness, type TestAccount } from '../../support/app.js';
import { onPostgres } from '../../support/db.js';
import { seedDelivery, untilSettledOrWaiting } from '../../support/races.js';

// A person's change to a webhook racing a worker's statement on one of its deliveries, and two
// schedulers on one recover: two connections, so PostgreSQL only (support/races.ts).

let h: Harness;
let acme: TestAccount;

beforeAll(async () => {
  h = await harness();
  acme = await h.account();
});
afterAll(async () => {
  await h?.close();
});

const seed = (o: { paused: boolean; leaseToken?: string }) =>
  seedDelivery(h.database.db, acme.accountId, h.clock.now(), o);

describe.skipIf(!onPostgres)('webhook changes racing the worker (PostgreSQL)', () => {
  it('a new URL leaves a delivery that a batch record finished meanwhile with the URL it was sent to', async () => {
    const { webhookId, deliveryId } = await seed({ paused: false });
    const db = h.database.db;
    let retarget: Promise<number> | undefined;
    await db.transaction().execute(async (trx) => {
      // What the batch record does to a delivered one: out of the queue, its outcome on its row.
      await sql`DELETE FROM delivery_queue WHERE delivery_id = ${deliveryId}`.execute(trx);
      await sql`UPDATE deliveries SET status = 'delivered', finished_at = ${h.clock.now()} WHERE id = ${deliveryId}`.execute(
        trx,
      );
      retarget = h.deps.store.deliveries.retarget(webhookId, 'https://new.example/hook');
      await untilSettledOrWaiting(db, retarget, 'UPDATE deliveries d SET url');
    });
    expect(await retarget).toBe(0);
    const row = await db
      .selectFrom('deliveries')
      .select(['url', 'status'])
      .where('id', '=', deliveryId)
      .executeTakeFirst();
    expect(row).toEqual({ url: 'https://old.example/hook', status: 'delivered' });
  });

  it('a delivery parked while its webhook is being resumed is due at once, not parked for good', async () => {
    const token = 'lease-1';
    const { webhookId, deliveryId } = await seed({ paused: true, leaseToken: token });
    const now = h.clock.now();
    let park: Promise<void> | undefined;
    await h.deps.store.transaction(async (store) => {
      // The resume, as updateWebhook makes it: the webhook locked, unpaused, its parked rows made due.
      await store.webhooks.lock(webhookId);
      await store.webhooks.update(webhookId, { pausedAt: null });
      await store.deliveries.unparkWebhook(webhookId, now);
      // Meanwhile a worker that claimed the delivery while the webhook was paused parks it.
      park = h.deps.store.deliveries.park([deliveryId], token, now);
      await untilSettledOrWaiting(h.database.db, park, 'UPDATE delivery_queue q');
    });
    await park;
    const queued = await h.database.db
      .selectFrom('delivery_queue')
      .select(['next_attempt_at', 'lease_token', 'attempt_count'])
      .where('delivery_id', '=', deliveryId)
      .executeTakeFirstOrThrow();
    expect(queued.lease_token).toBeNull();
    expect(queued.attempt_count).toBe(0);
    expect(new Date(queued.next_attempt_at).getTime()).toBe(now.getTime());
    expect(new Date(queued.next_attempt_at).getTime()).not.toBe(PARKED_UNTIL.getTime());
  });

  it('two recovers answered at once list a lost delivery once: the second waits for the first, then leaves it out', async () => {
    const db = h.database.db;
    const { webhookId, deliveryId } = await seed({ paused: false });
    await sql`DELETE FROM delivery_queue WHERE delivery_id = ${deliveryId}`.execute(db);
    await sql`UPDATE deliveries SET status = 'rejected', finished_at = ${h.clock.now()} WHERE id = ${deliveryId}`.execute(
      db,
    );
    await db
      .insertInto('lost_deliveries')
      .values({ delivery_id: deliveryId, endpoint_id: webhookId, lost_at: h.clock.now() })
      .execute();
    const recover = (id: string) => ({ id, accountId: acme.accountId, userId: acme.userId, createdAt: h.clock.now() });
    const window = { webhookId, since: new Date(h.clock.now().getTime() - 60_000) };
    let second: Promise<number> | undefined;
    const first = await h.deps.store.transaction(async (store) => {
      const listed = await store.recoveries.create(recover(newId('rcv')), window);
      second = h.deps.store.recoveries.create(recover(newId('rcv')), window);
      await untilSettledOrWaiting(db, second, 'INSERT INTO recovery_items');
      return listed;
    });
    expect(first).toBe(1);
    expect(await second).toBe(0);
    const items = await db
      .selectFrom('recovery_items')
      .select('recovery_id')
      .where('delivery_id', '=', deliveryId)
      .execute();
    expect(items).toHaveLength(1);
    // The second recover, which listed nothing, left no row.
    const recoveries = await db
      .selectFrom('recoveries')
      .select('id')
      .where('account_id', '=', acme.accountId)
      .execute();
    expect(recoveries.map((r) => r.id)).toEqual([items[0]!.recovery_id]);
    await db.deleteFrom('recoveries').where('account_id', '=', acme.accountId).execute();
  });

  it('a resend that waited for another resend of the delivery says it is pending, not that its webhook is gone', async () => {
    const db = h.database.db;
    const { deliveryId } = await seed({ paused: false });
    await sql`DELETE FROM delivery_queue WHERE delivery_id = ${deliveryId}`.execute(db);
    await sql`UPDATE deliveries SET status = 'given_up', finished_at = ${h.clock.now()} WHERE id = ${deliveryId}`.execute(
      db,
    );
    let second: Promise<LightMyRequestResponse> | undefined;
    await h.deps.store.transaction(async (store) => {
      // The first resend, under way: the second reads the row as given up, then waits on it.
      expect(await store.deliveries.reopen(deliveryId, h.clock.now())).toBe(1);
      second = Promise.resolve(
        h.app.inject({
          method: 'POST',
          url: '/webhooks/delivery/resend',
          headers: bearer(acme.key),
          payload: { deliveryId },
        }),
      );
      await untilSettledOrWaiting(db, second, 'UPDATE deliveries d SET status');
    });
    const res = await second!;
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().detail).toBe('the delivery is pending; only a finished one can be resent');
  });

  it('a recover whose last two items two schedulers remove at once goes with them', async () => {
    const db = h.database.db;
    const recoveryId = newId('rcv');
    await db
      .insertInto('recoveries')
      .values({ id: recoveryId, account_id: acme.accountId, user_id: null, created_at: h.clock.now() })
      .execute();
    await db
      .insertInto('recovery_items')
      .values([
        { recovery_id: recoveryId, delivery_id: 'dlv_a' },
        { recovery_id: recoveryId, delivery_id: 'dlv_b' },
      ])
      .execute();
    let other: Promise<void> | undefined;
    await h.deps.store.transaction(async (store) => {
      await store.recoveries.removeItems([{ recoveryId, deliveryId: 'dlv_a' }]);
      other = h.deps.store.recoveries.removeItems([{ recoveryId, deliveryId: 'dlv_b' }]);
      await untilSettledOrWaiting(db, other, 'FROM recover');
    });
    await other;
    expect(
      await db.selectFrom('recovery_items').select('delivery_id').where('recovery_id', '=', recoveryId).execute(),
    ).toEqual([]);
    expect(await db.selectFrom('recoveries').select('id').where('id', '=', recoveryId).execute()).toEqual([]);
  });
});

describe('parking', () => {
  it('a delivery parked while its webhook stays paused is parked', async () => {
    const token = 'lease-2';
    const { deliveryId } = await seed({ paused: true, leaseToken: token });
    await h.deps.store.deliveries.park([deliveryId], token, h.clock.now());
    const queued = await h.database.db
      .selectFrom('delivery_queue')
      .select('next_attempt_at')
      .where('delivery_id', '=', deliveryId)
      .executeTakeFirstOrThrow();
    expect(new Date(queued.next_attempt_at).getTime()).toBe(PARKED_UNTIL.getTime());
  });
});
