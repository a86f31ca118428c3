import { expect, it } from 'vitest';
import { withoutAddresses } from '../../../src/domain/payload.js';
import { bearer } from '../../support/app.js';
import { answer, createWebhook, visiblePoll } from '../../support/fixtures.js';
import { liveDelivery } from '../../support/worker.js';

/**
 * A poll switched to anonymous mode sends no address from then on (README, Webhooks): not in
 * the retries of events queued before the switch, nor in a resend of one delivered before it.
 * Real deliveries to a real HTTPS receiver; the rest of each body goes out byte for byte.
 */

const env = liveDelivery({ delivery: { batchWindowMs: 0 } });

type Body = { email: string | null; emails: string[]; responses: Record<string, { value: unknown }> };

const call = async (method: 'POST' | 'GET', url: string, payload?: object) => {
  const res = await env.h.app.inject({ method, url, headers: bearer(env.acct.key), ...(payload ? { payload } : {}) });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json().data;
};
const makeAnonymous = (pollId: string) => call('POST', '/poll/update', { pollId, settings: { anonymous: true } });
const received = (path: string, n: number) =>
  env.receiver
    .waitFor((r) => r.filter((x) => x.path === path).length >= n)
    .then((r) => r.filter((x) => x.path === path));
const withAddresses = { email: 'ann@example.com', emails: ['ann@example.com', 'meta@example.com'] };

async function answered(pollId: string, q1: string, q2: string) {
  await answer(env.h, {
    pollId,
    answers: [
      { slideId: q1, value: 'reach me at ann@example.com' },
      { slideId: q2, value: 'ann@example.com' },
    ],
    metadata: { contact: 'meta@example.com' },
  });
}

it('a queued event goes out with no address once its poll is made anonymous, the rest of its bytes unchanged', async () => {
  const { h } = env;
  const poll = await visiblePoll(h, env.acct);
  const other = await visiblePoll(h, env.acct);
  const hook = (await createWebhook(h, env.acct, poll.pollId, env.receiver.url('/anon-queued'))).data.id;
  const otherHook = (await createWebhook(h, env.acct, other.pollId, env.receiver.url('/anon-other'))).data.id;
  // Paused, the events wait in the queue.
  await call('POST', '/webhooks/update', { webhookId: hook, paused: true });
  await call('POST', '/webhooks/update', { webhookId: otherHook, paused: true });
  await answered(poll.pollId, poll.q1, poll.q2);
  await answered(other.pollId, other.q1, other.q2);
  const [queued] = (
    await h.deps.store.deliveries.list({ accountIds: [env.acct.accountId] }, { limit: 10 })
  ).data.filter((d) => d.pollId === poll.pollId);
  expect(JSON.parse(queued!.body)).toMatchObject(withAddresses);

  await makeAnonymous(poll.pollId);
  await call('POST', '/webhooks/update', { webhookId: hook, paused: false });
  await call('POST', '/webhooks/update', { webhookId: otherHook, paused: false });

  const [sent] = await received('/anon-queued', 1);
  expect(sent!.headers['x-service-delivery-id']).toBe(queued!.id);
  expect(sent!.rawBody).toBe(withoutAddresses(queued!.body));
  const body = JSON.parse(sent!.rawBody) as Body;
  expect([body.email, body.emails]).toEqual([null, []]);
  // The answers themselves go out as given.
  expect(body.responses[poll.q2]!.value).toBe('ann@example.com');
  // Another poll's events keep theirs.
  const [kept] = await received('/anon-other', 1);
  expect(JSON.parse(kept!.rawBody)).toMatchObject(withAddresses);
});

it('a delivery resent after its poll was made anonymous goes out with no address', async () => {
  const { h } = env;
  const poll = await visiblePoll(h, env.acct);
  await createWebhook(h, env.acct, poll.pollId, env.receiver.url('/anon-resent'));
  await answered(poll.pollId, poll.q1, poll.q2);
  const [first] = await received('/anon-resent', 1);
  expect(JSON.parse(first!.rawBody)).toMatchObject(withAddresses);
  const id = first!.headers['x-service-delivery-id']!;
  await expect
    .poll(async () => (await call('GET', `/webhooks/delivery?deliveryId=${id}`)).status, { timeout: 10_000 })
    .toBe('delivered');

  await makeAnonymous(poll.pollId);
  await call('POST', '/webhooks/delivery/resend', { deliveryId: id });
  const [, again] = await received('/anon-resent', 2);
  expect(again!.headers['x-service-delivery-id']).toBe(id);
  expect(again!.headers['x-service-attempt']).toBe('2');
  expect(again!.rawBody).toBe(withoutAddresses(first!.rawBody));
  expect(JSON.parse(again!.rawBody)).toMatchObject({ email: null, emails: [] });
});
