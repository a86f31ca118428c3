import { sql, type Kysely } from 'kysely';
import { newId } from '../../src/domain/ids.js';
import type { DB } from '../../src/infra/db/schema.js';

// Two statements racing on PostgreSQL: one side's transaction is held open until the other is
// seen waiting on a row lock (or has finished), then committed.

/** Until `pending` settles or a statement containing `text` waits on a lock. */
export async function untilSettledOrWaiting(db: Kysely<DB>, pending: Promise<unknown>, text: string): Promise<void> {
  let settled = false;
  void pending.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (;;) {
    const waiting = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND position(${text} in query) > 0`.execute(db);
    if (settled || waiting.rows[0]!.n > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

export type Seeded = { pollId: string; webhookId: string; deliveryId: string };

/**
 * A poll with a webhook (paused or not) and one delivery of it, made at `now`: queued (leased
 * under `leaseToken` if given) or, with `finished`, delivered at `finishedAt` and out of the queue.
 */
export async function seedDelivery(
  db: Kysely<DB>,
  accountId: string,
  now: Date,
  o: { paused?: boolean; leaseToken?: string; finished?: boolean; finishedAt?: Date; withWebhook?: boolean } = {},
): Promise<Seeded> {
  const pollId = newId('poll');
  const webhookId = newId('whk');
  const deliveryId = newId('dlv', now.getTime());
  const url = 'https://old.example/hook';
  await db
    .insertInto('polls')
    .values({
      id: pollId,
      account_id: accountId,
      title: 'p',
      is_visible: false,
      body: '{}',
      created_at: now,
      updated_at: now,
    })
    .execute();
  if (o.withWebhook !== false) {
    await db
      .insertInto('webhooks')
      .values({
        id: webhookId,
        account_id: accountId,
        poll_id: pollId,
        url,
        delivery_rule: 'complete',
        legacy_secret: 'legacy',
        created_at: now,
        paused_at: o.paused ? now : null,
      })
      .execute();
  }
  await db
    .insertInto('deliveries')
    .values({
      id: deliveryId,
      account_id: accountId,
      poll_id: pollId,
      webhook_id: webhookId,
      endpoint_id: webhookId,
      source: 'webhook',
      url,
      participant_id: 'p',
      type: 'completed-survey',
      status: o.finished ? 'delivered' : 'pending',
      body: '{}',
      created_at: now,
      finished_at: o.finished ? (o.finishedAt ?? now) : null,
      attempt_count: o.finished ? 1 : 0,
    })
    .execute();
  if (o.finished) return { pollId, webhookId, deliveryId };
  await db
    .insertInto('delivery_queue')
    .values({
      delivery_id: deliveryId,
      next_attempt_at: o.leaseToken ? new Date(now.getTime() + 60_000) : now,
      lease_token: o.leaseToken ?? null,
      attempt_count: o.leaseToken ? 1 : 0,
    })
    .execute();
  return { pollId, webhookId, deliveryId };
}
