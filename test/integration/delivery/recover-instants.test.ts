import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { runRecoveries } from '../../../src/app/delivery/run-recoveries.js';
import { recoverTask } from '../../../src/worker/scheduler.js';
import { harness, type Harness } from '../../support/app.js';
import { createWebhook, visiblePoll } from '../../support/fixtures.js';

/**
 * A recover resends at most so many deliveries due at one instant, the next a millisecond later:
 * a claim that leaves their host out cannot read past more than a window's worth due at one
 * instant (src/worker/leave-out-cursor.ts).
 */
/** Deliveries of `hook` made a minute ago and given up, as the batch record leaves one whose retries ran out. */
async function givenUp(h: Harness, accountId: string, pollId: string, hookId: string, ids: string[]) {
  const madeAt = new Date(h.clock.now().getTime() - 60_000);
  await h.deps.store.deliveries.insert(
    ids.map((id, i) => ({
      id,
      accountId,
      pollId,
      webhookId: hookId,
      endpointId: hookId,
      source: 'webhook' as const,
      url: 'https://hooks.example.com/recovered',
      participantId: `prt_${i}`,
      type: 'submitted-responses' as const,
      body: '{}',
      createdAt: madeAt,
      nextAttemptAt: madeAt,
    })),
  );
  const db = h.database.db;
  await sql`DELETE FROM delivery_queue WHERE delivery_id = ANY(${ids})`.execute(db);
  await sql`UPDATE deliveries SET status = 'given_up', finished_at = ${madeAt} WHERE id = ANY(${ids})`.execute(db);
  // And listed as lost, as the record lists every delivery it gives up on.
  await sql`INSERT INTO lost_deliveries (delivery_id, endpoint_id, lost_at)
    SELECT id, endpoint_id, finished_at FROM deliveries WHERE id = ANY(${ids})`.execute(db);
  return madeAt;
}

it('a recover resends its deliveries at most perInstant to an instant, each next group a millisecond later', async () => {
  const h = await harness();
  try {
    const acme = await h.account();
    const poll = await visiblePoll(h, acme);
    const hook = await createWebhook(h, acme, poll.pollId, 'https://hooks.example.com/recovered');
    const ids = Array.from({ length: 5 }, (_, i) => `dlv_recovered_${i}`);
    const madeAt = await givenUp(h, acme.accountId, poll.pollId, hook.data.id, ids);
    const db = h.database.db;
    const listed = await h.deps.store.recoveries.create(
      { id: 'rcv_instants', accountId: acme.accountId, userId: acme.userId, createdAt: madeAt },
      { webhookId: hook.data.id, since: new Date(0) },
    );
    expect(listed).toBe(5);
    const now = h.clock.now();
    expect(await runRecoveries(h.deps, 10, 2)).toEqual({ resent: 5, taken: 5 });
    const due = await sql<{ at: Date }>`
      SELECT next_attempt_at AS at FROM delivery_queue WHERE delivery_id = ANY(${ids}) ORDER BY next_attempt_at`.execute(
      db,
    );
    expect(due.rows.map((r) => new Date(r.at).getTime() - now.getTime())).toEqual([0, 0, 1, 1, 2]);
  } finally {
    await h.close();
  }
});

it('a recover leaves alone a delivery it listed that was resent and delivered since', async () => {
  const h = await harness();
  try {
    const acme = await h.account();
    const poll = await visiblePoll(h, acme);
    const hook = await createWebhook(h, acme, poll.pollId, 'https://hooks.example.com/recovered');
    const ids = ['dlv_listed_0', 'dlv_listed_1'];
    const madeAt = await givenUp(h, acme.accountId, poll.pollId, hook.data.id, ids);
    const db = h.database.db;
    expect(
      await h.deps.store.recoveries.create(
        { id: 'rcv_listed', accountId: acme.accountId, userId: acme.userId, createdAt: madeAt },
        { webhookId: hook.data.id, since: new Date(0) },
      ),
    ).toBe(2);
    // The first is resent by hand and delivered before the recover's turn comes.
    expect(await h.deps.store.deliveries.reopen(ids[0]!, h.clock.now())).toBe(1);
    await sql`DELETE FROM delivery_queue WHERE delivery_id = ${ids[0]!}`.execute(db);
    await sql`UPDATE deliveries SET status = 'delivered', finished_at = ${h.clock.now()} WHERE id = ${ids[0]!}`.execute(
      db,
    );
    expect((await runRecoveries(h.deps, 10)).resent).toBe(1);
    const queued = await sql<{
      id: string;
    }>`SELECT delivery_id AS id FROM delivery_queue WHERE delivery_id = ANY(${ids})`.execute(db);
    expect(queued.rows.map((r) => r.id)).toEqual([ids[1]]);
    const first = await db
      .selectFrom('deliveries')
      .select('status')
      .where('id', '=', ids[0]!)
      .executeTakeFirstOrThrow();
    expect(first.status).toBe('delivered');
    expect(await sql`SELECT 1 FROM recovery_items WHERE recovery_id = 'rcv_listed'`.execute(db)).toMatchObject({
      rows: [],
    });
  } finally {
    await h.close();
  }
});

it('a full batch of listed deliveries whose webhook was deleted resends nothing, and asks for the next batch at once', async () => {
  const h = await harness();
  try {
    const acme = await h.account();
    const poll = await visiblePoll(h, acme);
    const hook = await createWebhook(h, acme, poll.pollId, 'https://hooks.example.com/recovered');
    const ids = Array.from({ length: 5 }, (_, i) => `dlv_gone_${i}`);
    const madeAt = await givenUp(h, acme.accountId, poll.pollId, hook.data.id, ids);
    await h.deps.store.recoveries.create(
      { id: 'rcv_gone', accountId: acme.accountId, userId: acme.userId, createdAt: madeAt },
      { webhookId: hook.data.id, since: new Date(0) },
    );
    await sql`DELETE FROM webhooks WHERE id = ${hook.data.id}`.execute(h.database.db);
    const task = recoverTask(2);
    expect(await task.run(h.deps)).toEqual({ done: 0, more: true });
    expect(await task.run(h.deps)).toEqual({ done: 0, more: true });
    expect(await task.run(h.deps)).toEqual({ done: 0, more: false });
  } finally {
    await h.close();
  }
});

it('a recover repeated while the first is under way lists each lost delivery once, and lists it again once resent and lost', async () => {
  const h = await harness();
  try {
    const acme = await h.account();
    const poll = await visiblePoll(h, acme);
    const hook = await createWebhook(h, acme, poll.pollId, 'https://hooks.example.com/recovered');
    const ids = ['dlv_again_0', 'dlv_again_1', 'dlv_again_2'];
    const madeAt = await givenUp(h, acme.accountId, poll.pollId, hook.data.id, ids);
    const recover = (id: string) =>
      h.deps.store.recoveries.create(
        { id, accountId: acme.accountId, userId: acme.userId, createdAt: madeAt },
        { webhookId: hook.data.id, since: new Date(0) },
      );
    expect(await recover('rcv_again_1')).toBe(3);
    expect(await recover('rcv_again_2')).toBe(0);
    expect(await recover('rcv_again_3')).toBe(0);
    const db = h.database.db;
    const items = await sql<{ n: string }>`SELECT count(*)::text AS n FROM recovery_items`.execute(db);
    expect(items.rows[0]!.n).toBe('3');
    expect((await runRecoveries(h.deps, 10)).resent).toBe(3);
    // Resent, then given up on again: a new recover lists them again.
    await sql`DELETE FROM delivery_queue WHERE delivery_id = ANY(${ids})`.execute(db);
    await sql`UPDATE deliveries SET status = 'given_up' WHERE id = ANY(${ids})`.execute(db);
    await sql`INSERT INTO lost_deliveries (delivery_id, endpoint_id, lost_at)
      SELECT id, endpoint_id, ${madeAt} FROM deliveries WHERE id = ANY(${ids}) ON CONFLICT DO NOTHING`.execute(db);
    expect(await recover('rcv_again_4')).toBe(3);
  } finally {
    await h.close();
  }
});
