import { afterAll, beforeAll, expect, it } from 'vitest';
import { claimDeliveries } from '../../../src/app/delivery/claim-deliveries.js';
import { recordAttempts } from '../../../src/app/delivery/record-attempts.js';
import { bearer, harness, type Harness, type TestAccount } from '../../support/app.js';
import { createWebhook, visiblePoll } from '../../support/fixtures.js';

/**
 * A test event or a resend of a paused webhook's delivery waits for the resume, as its other
 * deliveries do (README, "Webhooks"): answered as parked (`nextAttemptAt: null`), not claimed
 * while the webhook stays paused, and due at once when it resumes.
 */

let h: Harness;
let acct: TestAccount;
let hook: string;

beforeAll(async () => {
  h = await harness();
  acct = await h.account();
  const poll = await visiblePoll(h, acct);
  hook = (await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/paused')).data.id;
});
afterAll(() => h?.close());

const post = async (url: string, payload: object, status: number) => {
  const res = await h.app.inject({ method: 'POST', url, headers: bearer(acct.key), payload });
  expect(res.statusCode, res.body).toBe(status);
  return res.json().data as { id: string; status: string; nextAttemptAt: string | null };
};
const claimed = async () => (await claimDeliveries(h.deps, 1000)).map((d) => d.id);

it('a test event and a resend on a paused webhook are parked until it resumes', async () => {
  // A delivered test event first, to resend later.
  const first = await post('/webhooks/test', { webhookId: hook }, 202);
  const [delivery] = (await claimDeliveries(h.deps, 1000)).filter((d) => d.id === first.id);
  const ok = { outcome: { kind: 'response' as const, statusCode: 200 }, durationMs: 5, excerpt: null };
  await recordAttempts(h.deps, [{ delivery: delivery!, sentAt: h.clock.now(), sent: ok }]);

  await post('/webhooks/update', { webhookId: hook, paused: true }, 200);
  const test = await post('/webhooks/test', { webhookId: hook }, 202);
  const resent = await post('/webhooks/delivery/resend', { deliveryId: first.id }, 202);
  for (const d of [test, resent]) expect(d).toMatchObject({ status: 'pending', nextAttemptAt: null });
  expect(await claimed()).toEqual([]);

  await post('/webhooks/update', { webhookId: hook, paused: false }, 200);
  h.clock.advance(1); // the resumed backlog falls due a microsecond apart
  expect((await claimed()).sort()).toEqual([test.id, first.id].sort());
});
