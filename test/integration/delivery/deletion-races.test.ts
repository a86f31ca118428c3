import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDeliveries } from '../../../src/app/delivery/claim-deliveries.js';
import { recordAttempts } from '../../../src/app/delivery/record-attempts.js';
import { newId } from '../../../src/domain/ids.js';
import { bearer, harness, type Harness, type TestAccount } from '../../support/app.js';
import { onPostgres } from '../../support/db.js';
import { answer, createWebhook, visiblePoll } from '../../support/fixtures.js';
import { seedDelivery, untilSettledOrWaiting, type Seeded } from '../../support/races.js';

// What queues a delivery (a resend, a batch flush, a submission) racing the deletion or the new
// URL of its webhook: no delivery may stay queued for a webhook that is gone, nor go to a URL
// that was replaced before it was queued.

let h: Harness;
let acme: TestAccount;

beforeAll(async () => {
  h = await harness();
  acme = await h.account();
});
afterAll(async () => {
  await h?.close();
});

const finished = () => seedDelivery(h.database.db, acme.accountId, h.clock.now(), { finished: true });

const deliveryRow = (id: string) =>
  h.database.db.selectFrom('deliveries').select(['status', 'url']).where('id', '=', id).executeTakeFirstOrThrow();

const queued = async (id: string) =>
  (await h.database.db.selectFrom('delivery_queue').select('delivery_id').where('delivery_id', '=', id).execute())
    .length;

const deleteWebhook = (id: string) =>
  h.app.inject({ method: 'DELETE', url: `/webhooks?id=${id}`, headers: bearer(acme.key) });
const deletePoll = (id: string) =>
  h.app.inject({ method: 'DELETE', url: `/poll?pollId=${id}`, headers: bearer(acme.key) });

const deletions = [
  { what: 'webhook', remove: (s: Seeded) => deleteWebhook(s.webhookId), text: 'delete from "webhooks"' },
  { what: 'poll', remove: (s: Seeded) => deletePoll(s.pollId), text: 'delete from "polls"' },
];
// A batch flush holds its polls under a key share lock (batches.ts, claimDue): a poll's
// deletion waits for it at the poll's own lock, before its delete.
const flushDeletions = [deletions[0]!, { ...deletions[1]!, text: 'from "polls" where "id" = $1 for update' }];

describe.skipIf(!onPostgres)('deliveries queued while their webhook is deleted or changed (PostgreSQL)', () => {
  it('of two deletes of one webhook at once, the second waits for the first and answers 404', async () => {
    const { webhookId } = await finished();
    let second: ReturnType<typeof deleteWebhook> | undefined;
    await h.database.db.transaction().execute(async (trx) => {
      await sql`DELETE FROM webhooks WHERE id = ${webhookId}`.execute(trx);
      second = deleteWebhook(webhookId);
      await untilSettledOrWaiting(h.database.db, second, 'delete from "webhooks"');
    });
    const res = await second!;
    expect(res.statusCode, res.body).toBe(404);
    expect(res.json().code).toBe('not_found');
  });

  it('a delivery a resend queued while the deletion waited on the webhook is cancelled by it', async () => {
    const { webhookId, deliveryId } = await finished();
    let deletion: ReturnType<typeof deleteWebhook> | undefined;
    await h.deps.store.transaction(async (store) => {
      expect(await store.deliveries.reopen(deliveryId, h.clock.now())).toBe(2);
      deletion = deleteWebhook(webhookId);
      await untilSettledOrWaiting(h.database.db, deletion, 'delete from "webhooks"');
    });
    const res = await deletion!;
    expect(res.statusCode).toBe(200);
    expect(res.json().data.cancelledDeliveries).toBe(1);
    expect((await deliveryRow(deliveryId)).status).toBe('cancelled');
    expect(await queued(deliveryId)).toBe(0);
  });

  it('a resend that waited on a deletion of its webhook queues nothing', async () => {
    const { webhookId, deliveryId } = await finished();
    let resend: Promise<number | undefined> | undefined;
    await h.deps.store.transaction(async (store) => {
      // The deletion as deleteWebhook makes it: the webhook, then its queued deliveries.
      await store.webhooks.delete(webhookId);
      await store.deliveries.cancel({ webhookId }, h.clock.now());
      resend = h.deps.store.deliveries.reopen(deliveryId, h.clock.now());
      await untilSettledOrWaiting(h.database.db, resend, 'WITH reopened AS');
    });
    expect(await resend).toBeUndefined();
    expect((await deliveryRow(deliveryId)).status).toBe('delivered');
    expect(await queued(deliveryId)).toBe(0);
  });

  it('a test event that waited on a deletion of its webhook is refused and queues nothing', async () => {
    const { webhookId } = await finished();
    let test: ReturnType<typeof deleteWebhook> | undefined;
    await h.deps.store.transaction(async (store) => {
      await store.webhooks.delete(webhookId);
      await store.deliveries.cancel({ webhookId }, h.clock.now());
      test = h.app.inject({ method: 'POST', url: '/webhooks/test', headers: bearer(acme.key), payload: { webhookId } });
      await untilSettledOrWaiting(h.database.db, test, 'for update');
    });
    expect((await test!).statusCode).toBe(404);
    const made = await h.database.db
      .selectFrom('deliveries')
      .select('id')
      .where('webhook_id', '=', webhookId)
      .execute();
    expect(made).toHaveLength(1);
  });

  it('a resend that waited on a new URL of its webhook is queued to the new URL', async () => {
    const { webhookId, deliveryId } = await finished();
    let resend: Promise<number | undefined> | undefined;
    await h.deps.store.transaction(async (store) => {
      // The change as updateWebhook makes it: the webhook locked and updated, then its deliveries.
      await store.webhooks.lock(webhookId);
      await store.webhooks.update(webhookId, { url: 'https://new.example/hook' });
      await store.deliveries.retarget(webhookId, 'https://new.example/hook');
      resend = h.deps.store.deliveries.reopen(deliveryId, h.clock.now());
      await untilSettledOrWaiting(h.database.db, resend, 'WITH reopened AS');
    });
    expect(await resend).toBe(2);
    expect(await deliveryRow(deliveryId)).toEqual({ status: 'pending', url: 'https://new.example/hook' });
  });

  it('a resend queued before a new URL committed is retargeted by it', async () => {
    const { webhookId, deliveryId } = await finished();
    let change: Promise<number> | undefined;
    await h.deps.store.transaction(async (store) => {
      expect(await store.deliveries.reopen(deliveryId, h.clock.now())).toBe(2);
      change = h.deps.store.transaction(async (other) => {
        await other.webhooks.lock(webhookId);
        await other.webhooks.update(webhookId, { url: 'https://new.example/hook' });
        return other.deliveries.retarget(webhookId, 'https://new.example/hook');
      });
      await untilSettledOrWaiting(h.database.db, change, 'for update');
    });
    expect(await change).toBe(1);
    expect(await deliveryRow(deliveryId)).toEqual({ status: 'pending', url: 'https://new.example/hook' });
  });

  it.each(flushDeletions)(
    'a delivery a batch flush made while the $what deletion waited for the flush is cancelled by it',
    async ({ remove, text }) => {
      const seeded = await finished();
      const { pollId, webhookId } = seeded;
      const now = h.clock.now();
      const batchId = newId('bat');
      await h.database.db
        .insertInto('batches')
        .values({
          id: batchId,
          webhook_id: webhookId,
          endpoint_id: webhookId,
          account_id: acme.accountId,
          poll_id: pollId,
          participant_id: 'p',
          response_ids: '[]',
          flush_at: now,
          created_at: now,
        })
        .execute();
      const deliveryId = newId('dlv', now.getTime());
      let deletion: ReturnType<typeof remove> | undefined;
      await h.deps.store.transaction(async (store) => {
        const due = await store.batches.claimDue(now, 100);
        expect(due.map((b) => b.id)).toContain(batchId);
        // Nested, so the flush does not send its COMMIT along (store.ts): the race is held open.
        await store.transaction((inner) =>
          inner.batches.flush(
            [batchId],
            [
              {
                id: deliveryId,
                accountId: acme.accountId,
                pollId,
                webhookId,
                endpointId: webhookId,
                source: 'webhook',
                url: 'https://old.example/hook',
                participantId: 'p',
                type: 'submitted-responses',
                body: '{}',
                createdAt: now,
                nextAttemptAt: now,
              },
            ],
          ),
        );
        deletion = remove(seeded);
        await untilSettledOrWaiting(h.database.db, deletion, text);
      });
      const res = await deletion!;
      expect(res.statusCode).toBe(200);
      expect(res.json().data.cancelledDeliveries).toBe(1);
      expect((await deliveryRow(deliveryId)).status).toBe('cancelled');
      expect(await queued(deliveryId)).toBe(0);
    },
  );

  it('a resend that reaches a poll whose deletion waits on one of its webhooks waits, then queues nothing', async () => {
    const seeded = await finished();
    let deletion: ReturnType<typeof deletePoll> | undefined;
    let resend: Promise<number | undefined> | undefined;
    await h.database.db.transaction().execute(async (trx) => {
      // Holds the webhook under a share lock, so the deletion stops in its cascade with the
      // poll's row locked, while a resend could still take a share lock on the webhook.
      await sql`SELECT 1 FROM webhooks WHERE id = ${seeded.webhookId} FOR SHARE`.execute(trx);
      deletion = deletePoll(seeded.pollId);
      await untilSettledOrWaiting(h.database.db, deletion, 'delete from "polls"');
      // A resend that locked the webhook before the poll would now deadlock with the cascade.
      resend = h.deps.store.deliveries.reopen(seeded.deliveryId, h.clock.now());
      await untilSettledOrWaiting(h.database.db, resend, 'FROM polls p');
    });
    const res = await deletion!;
    expect(res.statusCode).toBe(200);
    expect(await resend).toBeUndefined();
    expect((await deliveryRow(seeded.deliveryId)).status).toBe('delivered');
    expect(await queued(seeded.deliveryId)).toBe(0);
  });
});

describe('a queued delivery whose webhook is gone', () => {
  it('is cancelled when a worker claims it, never attempted', async () => {
    const { deliveryId } = await seedDelivery(h.database.db, acme.accountId, h.clock.now(), { withWebhook: false });
    const heard: string[] = [];
    const claimed = await claimDeliveries(h.deps, 1000, { onCancelled: (ids) => heard.push(...ids) });
    expect(claimed.map((d) => d.id)).not.toContain(deliveryId);
    expect(heard).toContain(deliveryId);
    const row = await h.database.db
      .selectFrom('deliveries')
      .select(['status', 'attempt_count', 'finished_at'])
      .where('id', '=', deliveryId)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('cancelled');
    expect(row.attempt_count).toBe(0);
    expect(row.finished_at).not.toBeNull();
    expect(await queued(deliveryId)).toBe(0);
    expect(await h.deps.store.deliveries.attempts(deliveryId)).toEqual([]);
  });
});

describe("a queued delivery whose webhook's URL changed after it was queued", () => {
  it("is sent to the webhook's URL, which its row then records", async () => {
    const { webhookId, deliveryId } = await seedDelivery(h.database.db, acme.accountId, h.clock.now());
    // A new URL whose retarget ran before this delivery was queued with the old one, as a
    // submission or flush that read the webhook just before the change committed queues it.
    await sql`UPDATE webhooks SET url = 'https://new.example/hook' WHERE id = ${webhookId}`.execute(h.database.db);
    const claimed = await claimDeliveries(h.deps, 1000);
    expect(claimed.find((d) => d.id === deliveryId)?.url).toBe('https://new.example/hook');
    expect(await deliveryRow(deliveryId)).toEqual({ status: 'pending', url: 'https://new.example/hook' });
  });

  it('keeps the newer URL when a claim that read an older one records it late', async () => {
    const { webhookId, deliveryId } = await seedDelivery(h.database.db, acme.accountId, h.clock.now());
    await sql`UPDATE webhooks SET url = 'https://newer.example/hook' WHERE id = ${webhookId}`.execute(h.database.db);
    await sql`UPDATE deliveries SET url = 'https://newer.example/hook' WHERE id = ${deliveryId}`.execute(h.database.db);
    // The retarget a claim runs with the URL it read before the newer one committed.
    expect(await h.deps.store.deliveries.retarget(webhookId, 'https://new.example/hook')).toBe(0);
    expect(await deliveryRow(deliveryId)).toEqual({ status: 'pending', url: 'https://newer.example/hook' });
  });

  it.skipIf(!onPostgres)('keeps the newer URL when a claim records an older one while the change commits', async () => {
    const { webhookId, deliveryId } = await seedDelivery(h.database.db, acme.accountId, h.clock.now());
    let late: Promise<number> | undefined;
    await h.deps.store.transaction(async (store) => {
      // The change as updateWebhook makes it, not yet committed when the claim's retarget runs.
      await store.webhooks.lock(webhookId);
      await store.webhooks.update(webhookId, { url: 'https://newer.example/hook' });
      await store.deliveries.retarget(webhookId, 'https://newer.example/hook');
      late = h.deps.store.deliveries.retarget(webhookId, 'https://old.example/hook');
      await untilSettledOrWaiting(h.database.db, late, 'UPDATE deliveries d SET url');
    });
    expect(await late).toBe(0);
    expect(await deliveryRow(deliveryId)).toEqual({ status: 'pending', url: 'https://newer.example/hook' });
  });
});

describe("an attempt to a webhook's old URL that ends its delivery after the URL changed", () => {
  it("is not charged to the new URL's health: no given-up time, no failure an alert would name", async () => {
    const poll = await visiblePoll(h, acme);
    const hook = (await createWebhook(h, acme, poll.pollId, 'https://old.example/fails', 'complete')).data.id;
    const health = async () =>
      (
        (await h.app.inject({ url: `/webhooks?pollId=${poll.pollId}`, headers: bearer(acme.key) })).json().data as {
          health: { lastGivenUpAt: string | null };
        }[]
      )[0]!.health;
    const sendAndFail = async (moveTo?: string) => {
      await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'x' }], complete: true });
      const [claimed] = (await claimDeliveries(h.deps, 1000)).filter((d) => d.endpointId === hook);
      // The URL changes while the attempt is out; the old URL then answers 404 (a rejection).
      if (moveTo) {
        const moved = await h.app.inject({
          method: 'POST',
          url: '/webhooks/update',
          headers: bearer(acme.key),
          payload: { webhookId: hook, url: moveTo },
        });
        expect(moved.statusCode, moved.body).toBe(200);
      }
      const sent = { outcome: { kind: 'response' as const, statusCode: 404 }, durationMs: 5, excerpt: null };
      const [report] = await recordAttempts(h.deps, [{ delivery: claimed!, sentAt: h.clock.now(), sent }]);
      expect(report).toMatchObject({ decision: { next: 'rejected' }, applied: true });
    };
    await sendAndFail('https://new.example/works');
    expect((await health()).lastGivenUpAt).toBeNull();
    // At the URL it still has, the same failure is charged.
    await sendAndFail();
    expect((await health()).lastGivenUpAt).not.toBeNull();
  });
});

describe('a statement that fails after a claim committed', () => {
  it("leaves the claim's other deliveries to be sent, and is heard; those it was for stay leased", async () => {
    const paused = await seedDelivery(h.database.db, acme.accountId, h.clock.now(), { paused: true });
    const sendable = await seedDelivery(h.database.db, acme.accountId, h.clock.now());
    // The database refusing the park, as a connection lost just after the claim would.
    const failing = {
      ...h.deps,
      store: {
        ...h.deps.store,
        deliveries: {
          ...h.deps.store.deliveries,
          park: () => Promise.reject(new Error('connection terminated')),
        },
      },
    };
    const heard: string[] = [];
    const claimed = await claimDeliveries(failing, 1000, { onFailed: (_err, what) => heard.push(what) });
    expect(claimed.map((d) => d.id)).toContain(sendable.deliveryId);
    expect(claimed.map((d) => d.id)).not.toContain(paused.deliveryId);
    expect(heard).toEqual(["parking a paused webhook's deliveries"]);
    const lease = await h.database.db
      .selectFrom('delivery_queue')
      .select(['lease_token', 'next_attempt_at'])
      .where('delivery_id', '=', paused.deliveryId)
      .executeTakeFirstOrThrow();
    expect(lease.lease_token).not.toBeNull();
    expect(new Date(lease.next_attempt_at).getTime()).toBeGreaterThan(h.clock.now().getTime());
  });
});
