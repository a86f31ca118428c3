import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { claimDeliveries } from '../../../src/app/delivery/claim-deliveries.js';
import { recordAttempts } from '../../../src/app/delivery/record-attempts.js';
import { harness } from '../../support/app.js';
import { onPostgres } from '../../support/db.js';
import { answer, createWebhook, visiblePoll } from '../../support/fixtures.js';

// A batch of results with a give-up updates endpoints twice: a success's health in the record
// statement, the give-up's after it. Locked so, each set in id order but not the two together, a
// worker holding a success's endpoint while waiting for a give-up's could deadlock with another
// worker holding them the other way round (its batch then lost until the leases ran out). The
// batch's endpoints are locked first, together, in id order: while it waits for the lower, it
// holds none above it. (PGlite runs one transaction at a time: nothing to wait for there.)
describe.skipIf(!onPostgres)('recording a batch with a give-up', () => {
  it('waits for its endpoints in id order, holding no higher one while it waits', async () => {
    const h = await harness();
    try {
      const acct = await h.account();
      const poll = await visiblePoll(h, acct);
      const hooks = [
        (await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/one', 'complete')).data.id,
        (await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/two', 'complete')).data.id,
      ].sort();
      const [low, high] = hooks as [string, string];
      await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'x' }], complete: true });
      const claimed = await claimDeliveries(h.deps, 1000);
      const to = (endpoint: string) => claimed.find((d) => d.endpointId === endpoint)!;
      const sent = (statusCode: number) => ({
        outcome: { kind: 'response' as const, statusCode },
        durationMs: 5,
        excerpt: null,
      });
      const at = h.clock.now();
      await h.database.db.connection().execute(async (blocker) => {
        await sql`BEGIN`.execute(blocker);
        await sql`SELECT id FROM endpoints WHERE id = ${low} FOR UPDATE`.execute(blocker);
        // A success at the higher endpoint, a rejection at the lower one.
        const recorded = recordAttempts(h.deps, [
          { delivery: to(high), sentAt: at, sent: sent(200) },
          { delivery: to(low), sentAt: at, sent: sent(404) },
        ]);
        for (;;) {
          const { rows } = await sql<{ n: number }>`
            SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(h.database.db);
          if (rows[0]!.n > 0) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        const higher = await h.database.db
          .transaction()
          .execute((trx) => sql`SELECT id FROM endpoints WHERE id = ${high} FOR UPDATE NOWAIT`.execute(trx))
          .then(
            () => 'free',
            (err: { code?: string }) => err.code,
          );
        expect(higher).toBe('free');
        await sql`COMMIT`.execute(blocker);
        const reports = await recorded;
        expect(reports.map((r) => [r.decision.next, r.applied])).toEqual([
          ['delivered', true],
          ['rejected', true],
        ]);
      });
    } finally {
      await h.close();
    }
  });
});
