import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PARKED_UNTIL } from '../../../src/domain/delivery.js';
import { newId } from '../../../src/domain/ids.js';
import { harness, type Harness, type TestAccount } from '../../support/app.js';
import { onPostgres } from '../../support/db.js';

// A person's change to a webhook racing a worker's statement on one of its deliveries. Each
// race holds one side's transaction open until the other is seen waiting on its row lock (or
// has finished), then commits: two connections, so PostgreSQL only.

let h: Harness;
let acme: TestAccount;

beforeAll(async () => {
  h = await harness();
  acme = await h.account();
});
afterAll(async () => {
  await h?.close();
});

/** Until `pending` settles or a statement containing `text` waits on a lock. */
async function untilSettledOrWaiting(pending: Promise<unknown>, text: string): Promise<void> {
  let settled = false;
  void pending.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (;;) {
    const waiting = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND position(${text} in query) > 0`.execute(
      h.database.db,
    );
    if (settled || waiting.rows[0]!.n > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A webhook (paused or not) with one queued delivery, leased under `leaseToken` if given. */
async function seed(o: { paused: boolean; leaseToken?: string }) {
  const db = h.database.db;
  const now = h.clock.now();
  const pollId = newId('poll');
  const webhookId = newId('whk');
  const deliveryId = newId('dlv');
  await db
    .insertInto('polls')
    .values({
      id: pollId,
      account_id: acme.accountId,
      title: 'p',
      is_visible: false,
      body: '{}',
      created_at: now,
      updated_at: now,
    })
    .execute();
  await db
    .insertInto('webhooks')
    .values({
      id: webhookId,
      account_id: acme.accountId,
      poll_id: pollId,
      url: 'https://old.example/hook',
      delivery_rule: 'complete',
      legacy_secret: 'legacy',
      created_at: now,
      paused_at: o.paused ? now : null,
    })
    .execute();
  await db
    .insertInto('deliveries')
    .values({
      id: deliveryId,
      account_id: acme.accountId,
      poll_id: pollId,
      webhook_id: webhookId,
      endpoint_id: webhookId,
      source: 'webhook',
      url: 'https://old.example/hook',
      participant_id: 'p',
      type: 'completed-survey',
      status: 'pending',
      body: '{}',
      created_at: now,
    })
    .execute();
  await db
    .insertInto('delivery_queue')
    .values({
      delivery_id: deliveryId,
      next_attempt_at: o.leaseToken ? new Date(now.getTime() + 60_000) : now,
      lease_token: o.leaseToken ?? null,
      attempt_count: o.leaseToken ? 1 : 0,
    })
    .execute();
  return { webhookId, deliveryId };
}

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
      await untilSettledOrWaiting(retarget, 'UPDATE deliveries d SET url');
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
      await untilSettledOrWaiting(park, 'UPDATE delivery_queue q');
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
