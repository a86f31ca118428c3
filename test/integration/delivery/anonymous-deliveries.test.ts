import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { flushDueBatches } from '../../../src/app/delivery/flush-batches.js';
import { bearer, harness, type Harness, type TestAccount } from '../../support/app.js';
import { onPostgres } from '../../support/db.js';
import { holdTransaction } from '../../support/hold.js';
import { untilSettledOrWaiting } from '../../support/races.js';

/** A call of the API with the account's key that must succeed; its `data`. */
const okAs = (h: Harness, acct: TestAccount) => async (method: 'POST' | 'GET', url: string, payload?: object) => {
  const res = await h.app.inject({ method, url, headers: bearer(acct.key), ...(payload ? { payload } : {}) });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json().data;
};

// "For a survey in anonymous mode, `email` is always null and `emails` is always []": on every
// path that makes a delivery, not only a saved webhook's submission at once.
describe('an anonymous poll', () => {
  it('sends no address on any path: batched partial, complete, logic-triggered and test deliveries', async () => {
    const h = await harness({ delivery: { batchWindowMs: 1_000 } });
    try {
      const acct = await h.account();
      const ok = okAs(h, acct);
      const hook = (path: string) => ({ type: 'trigger-webhook', url: `https://hooks.example.com/${path}` });
      const poll = await ok('POST', '/poll', {
        accountId: acct.accountId,
        title: 'Anonymous',
        settings: { anonymous: true },
        actionLogic: [{ on: 'complete', action: hook('survey-logic') }],
      });
      const asked = await ok('POST', '/slide', {
        pollId: poll.id,
        type: 'short-answer',
        title: 'Anything?',
        logic: [{ match: 'all', conditions: [{ op: 'answered' }], action: hook('question-logic') }],
      });
      const email = await ok('POST', '/slide', { pollId: poll.id, type: 'email-capture', title: 'Email?' });
      await ok('POST', '/poll/update', { pollId: poll.id, isVisible: true });
      const partial = await ok('POST', '/webhooks', {
        pollId: poll.id,
        url: 'https://hooks.example.com/p',
        deliveryRule: 'partial',
      });
      await ok('POST', '/webhooks', { pollId: poll.id, url: 'https://hooks.example.com/c', deliveryRule: 'complete' });

      const res = await h.app.inject({
        method: 'POST',
        url: '/participant/responses',
        payload: {
          pollId: poll.id,
          answers: [
            { slideId: asked.id, value: 'write to ann@example.com' },
            { slideId: email.id, value: 'ann@example.com' },
          ],
          metadata: { contact: 'meta@example.com' },
          participantMetadata: { email: 'participant@example.com' },
          complete: true,
        },
      });
      expect(res.statusCode, res.body).toBe(201);
      h.clock.advance(1_001);
      expect(await flushDueBatches(h.deps, 10)).toBe(1);
      await ok('POST', '/webhooks/test', { webhookId: partial.id });

      const made = (await h.deps.store.deliveries.list({ accountIds: [acct.accountId] }, { limit: 50 })).data;
      const bodies = made.map((d) => ({ url: d.url, ...(JSON.parse(d.body) as { email: unknown; emails: unknown }) }));
      expect(bodies.map((b) => new URL(b.url).pathname).sort()).toEqual(
        ['/c', '/p', '/p', '/question-logic', '/survey-logic'].sort(),
      );
      for (const b of bodies) expect([b.url, b.email, b.emails]).toEqual([b.url, null, []]);
      // The answers themselves go out as given.
      expect(bodies.some((b) => JSON.stringify(b).includes('write to ann@example.com'))).toBe(true);
    } finally {
      await h.close();
    }
  });

  // PostgreSQL only: on the embedded database the held change holds the one connection.
  it.runIf(onPostgres)('sends no address in a test event that raced the change making it anonymous', async () => {
    const h = await harness();
    try {
      const acct = await h.account();
      const ok = okAs(h, acct);
      const poll = await ok('POST', '/poll', { accountId: acct.accountId, title: 'Soon anonymous' });
      await ok('POST', '/slide', { pollId: poll.id, type: 'email-capture', title: 'Email?' });
      const hook = await ok('POST', '/webhooks', {
        pollId: poll.id,
        url: 'https://hooks.example.com/c',
        deliveryRule: 'complete',
      });
      // The change under way, as POST /poll/update takes it: the poll locked, its settings written.
      const change = await holdTransaction(h.database.db, async (trx) => {
        await sql`SELECT id FROM polls WHERE id = ${poll.id} FOR UPDATE`.execute(trx);
        await sql`UPDATE polls SET body = jsonb_set(body, '{settings,anonymous}', 'true') WHERE id = ${poll.id}`.execute(
          trx,
        );
      });
      const test = h.app.inject({
        method: 'POST',
        url: '/webhooks/test',
        headers: bearer(acct.key),
        payload: { webhookId: hook.id },
      });
      await untilSettledOrWaiting(h.database.db, test, 'FOR KEY SHARE');
      await change.release();
      const made = await test;
      expect(made.statusCode, made.body).toBe(202);
      const body = JSON.parse((await h.deps.store.deliveries.get(made.json().data.id as string))!.body) as {
        email: unknown;
        emails: unknown;
      };
      expect([body.email, body.emails]).toEqual([null, []]);
    } finally {
      await h.close();
    }
  });
});
