import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushDueBatches, flushSomeBatches } from '../../../src/app/delivery/flush-batches.js';
import { createStore } from '../../../src/infra/db/store.js';
import { harness, type Harness, type TestAccount } from '../../support/app.js';
import { onPostgres } from '../../support/db.js';
import { answer, createWebhook, visiblePoll } from '../../support/fixtures.js';
import { holdTransaction } from '../../support/hold.js';

/**
 * A submission, or a batch flush, under way while its poll is being made anonymous
 * (docs/architecture.md, races): a submission reads the poll under a key share lock, so it waits
 * for the change; a flush, which has locked its batches first, leaves the poll's batches to the
 * next flush. Neither sends an address. PostgreSQL only: the embedded database runs one
 * transaction at a time.
 */
describe.skipIf(!onPostgres)('a submission under way when its poll is made anonymous', () => {
  let h: Harness;
  let acct: TestAccount;
  beforeAll(async () => {
    h = await harness();
    acct = await h.account();
  });
  afterAll(() => h?.close());

  it('waits for the change under way and sends no address', async () => {
    const poll = await visiblePoll(h, acct);
    await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/on-complete', 'complete');
    // The change under way: the poll locked as POST /poll/update locks it, and made anonymous.
    const change = await holdTransaction(h.database.db, async (trx) => {
      await sql`SELECT id FROM polls WHERE id = ${poll.pollId} FOR UPDATE`.execute(trx);
      await sql`UPDATE polls SET body = jsonb_set(body, '{settings,anonymous}', 'true'::jsonb)
        WHERE id = ${poll.pollId}`.execute(trx);
    });

    const submitting = answer(h, {
      pollId: poll.pollId,
      answers: [{ slideId: poll.q2, value: 'ann@example.com' }],
      complete: true,
    });
    await expect
      .poll(
        async () =>
          (await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted`.execute(h.database.db))
            .rows[0]!.n,
        { timeout: 10_000, interval: 20 },
      )
      .toBeGreaterThan(0);
    await change.release();
    await submitting;

    const made = (
      await h.deps.store.deliveries.list({ accountIds: [acct.accountId], pollId: poll.pollId }, { limit: 10 })
    ).data;
    expect(made).toHaveLength(1);
    expect(JSON.parse(made[0]!.body)).toMatchObject({ email: null, emails: [] });
  });

  it('leaves a due batch to the next flush while the change is under way, and that flush sends no address', async () => {
    const poll = await visiblePoll(h, acct);
    await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/on-answer', 'partial');
    await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q2, value: 'bob@example.com' }] });
    h.clock.advance(60_000);
    // The change under way, as POST /poll/update makes it: the poll locked and made anonymous,
    // and the queued deliveries' addresses withheld, then not yet committed.
    const change = await holdTransaction(h.database.db, async (trx) => {
      await sql`SELECT id FROM polls WHERE id = ${poll.pollId} FOR UPDATE`.execute(trx);
      await sql`UPDATE polls SET body = jsonb_set(body, '{settings,anonymous}', 'true'::jsonb)
        WHERE id = ${poll.pollId}`.execute(trx);
      await createStore(trx, { nested: true }).deliveries.withholdAddresses(poll.pollId);
    });
    const made = async () =>
      (await h.deps.store.deliveries.list({ accountIds: [acct.accountId], pollId: poll.pollId }, { limit: 10 }, true))
        .data;
    // Not waited for: the flush ends at once, with the batch left.
    expect(await flushDueBatches(h.deps)).toBe(0);
    await change.release();
    expect(await flushDueBatches(h.deps)).toBe(1);
    const [delivery] = await made();
    expect(JSON.parse(delivery!.body)).toMatchObject({ email: null, emails: [] });
  });

  it("takes other polls' batches while one poll is held, however many of the held one's fall due first", async () => {
    await flushDueBatches(h.deps);
    const held = await visiblePoll(h, acct);
    await createWebhook(h, acct, held.pollId, 'https://hooks.example.com/held', 'partial');
    await answer(h, { pollId: held.pollId, answers: [{ slideId: held.q1, value: 'first' }] });
    h.clock.advance(1_000);
    const other = await visiblePoll(h, acct);
    await createWebhook(h, acct, other.pollId, 'https://hooks.example.com/other', 'partial');
    await answer(h, { pollId: other.pollId, answers: [{ slideId: other.q1, value: 'second' }] });
    h.clock.advance(60_000);
    const change = await holdTransaction(h.database.db, (trx) =>
      sql`SELECT id FROM polls WHERE id = ${held.pollId} FOR UPDATE`.execute(trx),
    );
    const count = async (pollId: string) =>
      (await h.deps.store.deliveries.list({ accountIds: [acct.accountId], pollId }, { limit: 10 }, false)).data.length;
    // A claim passes over the held poll's batch without locking it: a submission adding to it
    // does not wait for the flush.
    await h.deps.store.transaction(async (store) => {
      const claimed = await store.batches.claimDue(h.clock.now(), 10);
      expect(claimed.map((b) => b.pollId)).toEqual([other.pollId]);
      const free = await sql`SELECT id FROM batches WHERE poll_id = ${held.pollId} FOR UPDATE NOWAIT`.execute(
        h.database.db,
      );
      expect(free.rows).toHaveLength(1);
    });
    // One batch a flush: the held poll's, due first, is passed over.
    expect((await flushSomeBatches(h.deps, 1)).deliveries).toBe(1);
    expect([await count(held.pollId), await count(other.pollId)]).toEqual([0, 1]);
    await change.release();
    expect(await flushDueBatches(h.deps)).toBe(1);
    expect(await count(held.pollId)).toBe(1);
  });
});
