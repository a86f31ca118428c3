import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { rotateSigningSecret } from '../../src/app/accounts/rotate-signing-secret.js';
import { verifySignature } from '../../src/verify.js';
import { bearer, type Harness, type TestAccount } from '../support/app.js';
import { answer, createWebhook } from '../support/fixtures.js';
import { type Received } from '../support/receiver.js';
import { liveDelivery } from '../support/worker.js';

/**
 * Logic-triggered webhooks end to end: question logic and survey action
 * logic deliveries go through the real worker to a real HTTPS receiver with the same payload,
 * signature, delivery id and retry ladder as saved webhooks, and never the legacy secret header.
 */

const LADDER = [700, 300, 400, 500, 600];

type Json = Record<string, unknown>;

// No rotation overlap: a retry after a rotation carries the new signature only.
const live = liveDelivery({ delivery: { batchWindowMs: 100, retryLadderMs: LADDER, secretOverlapMs: 0 } });
let h: Harness;
let receiver: typeof live.receiver;
beforeAll(() => ({ h, receiver } = live));

async function call(acct: TestAccount, method: 'GET' | 'POST', url: string, payload?: Json) {
  const res = await h.app.inject({ method, url, headers: bearer(acct.key), ...(payload ? { payload } : {}) });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json().data;
}

/** A visible poll: a rating whose rule triggers `ratingHook` when below 3, a comment, and survey logic → `doneHook`. */
async function logicPoll(acct: TestAccount, ratingHook: string, doneHook?: string) {
  const poll = await call(acct, 'POST', '/poll', { accountId: acct.accountId, title: 'Logic e2e' });
  const ratingRes = await h.app.inject({
    method: 'POST',
    url: '/slide',
    headers: bearer(acct.key),
    payload: {
      pollId: poll.id,
      type: 'star-rating',
      title: 'Rate us',
      logic: [
        { match: 'all', conditions: [{ op: 'lt', value: 3 }], action: { type: 'trigger-webhook', url: ratingHook } },
      ],
    },
  });
  expect(ratingRes.statusCode, ratingRes.body).toBe(201);
  const rating = ratingRes.json().data;
  // The account's first Trigger webhook action creates its signing secret and shows it once.
  const signingSecret = ratingRes.json().signingSecret as string | undefined;
  const comment = await call(acct, 'POST', '/slide', { pollId: poll.id, type: 'short-answer', title: 'Why?' });
  await call(acct, 'POST', '/poll/update', {
    pollId: poll.id,
    isVisible: true,
    ...(doneHook ? { actionLogic: [{ on: 'complete', action: { type: 'trigger-webhook', url: doneHook } }] } : {}),
  });
  return { pollId: poll.id as string, rating: rating.id as string, comment: comment.id as string, signingSecret };
}

const at = (path: string) => (r: Received[]) => r.filter((x) => x.path === path);
const waitAt = async (path: string, n: number, timeoutMs?: number) =>
  at(path)(await receiver.waitFor((r) => at(path)(r).length >= n, timeoutMs));

function expectSigned(req: Received, secret: string) {
  verifySignature({ secret, header: req.headers['x-service-signature'], rawBody: req.rawBody });
  const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(req.headers['x-service-signature']!)!;
  expect(createHmac('sha256', secret).update(`${t}.${req.rawBody}`).digest('hex')).toBe(v1);
  // t is the send time of this attempt.
  expect(Math.abs(Number(t) - req.at)).toBeLessThan(5_000);
  return Number(t);
}

function expectLogicHeaders(req: Received, attempt: number) {
  expect(req.headers['content-type']).toBe('application/json');
  expect(req.headers['x-service-delivery-id']).toMatch(/^dlv_/);
  expect(req.headers['x-service-attempt']).toBe(String(attempt));
  expect(new Date(req.headers['x-service-triggered-at']!).toISOString()).toBe(req.headers['x-service-triggered-at']);
  expect(req.headers['user-agent']).toBe('Canvass-Webhooks/test');
  // Never the legacy per-webhook secret on a logic-triggered delivery.
  expect(req.headers).not.toHaveProperty('x-service-secret');
  expect(Object.keys(req.headers).filter((k) => k.toLowerCase() === 'x-service-secret')).toEqual([]);
}

async function deliveryOf(acct: TestAccount, id: string) {
  return call(acct, 'GET', `/webhooks/delivery?deliveryId=${id}`) as Promise<{
    status: string;
    source: string;
    webhookId: string | null;
    attemptCount: number;
    attempts: { number: number; statusCode: number | null }[];
  }>;
}

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('logic-triggered deliveries end to end', () => {
  it('question logic: same payload shape as a saved webhook, signed with the account secret, no legacy header', async () => {
    const acct = await h.account();
    const p = await logicPoll(acct, receiver.url('/q1'));
    // The logic rule made the account secret; a saved webhook on the same poll shares it and is the shape to compare with.
    expect(p.signingSecret).toMatch(/^whsec_/);
    const hook = await createWebhook(h, acct, p.pollId, receiver.url('/saved1'), 'partial');
    expect(hook.signingSecret).toBeUndefined();
    const r = await answer(h, {
      pollId: p.pollId,
      answers: [{ slideId: p.rating, value: 2 }],
      participantMetadata: { email: 'Pat@Example.com' },
    });

    const [logicReq] = await waitAt('/q1', 1);
    const [savedReq] = await waitAt('/saved1', 1);
    expectLogicHeaders(logicReq!, 1);
    expectSigned(logicReq!, p.signingSecret!);
    expectSigned(savedReq!, p.signingSecret!);
    expect(savedReq!.headers['x-service-secret']).toBe(hook.data.legacySecret);

    const logicBody = JSON.parse(logicReq!.rawBody);
    const savedBody = JSON.parse(savedReq!.rawBody);
    expect(Object.keys(logicBody).sort()).toEqual([
      'accountId',
      'email',
      'emails',
      'metadata',
      'participantId',
      'pollId',
      'responses',
      'submissionsComplete',
      'timestamp',
      'type',
    ]);
    expect(Object.keys(logicBody).sort()).toEqual(Object.keys(savedBody).sort());
    expect(logicBody).toMatchObject({
      type: 'submitted-responses',
      accountId: acct.accountId,
      pollId: p.pollId,
      participantId: r.participantId,
      submissionsComplete: false,
      email: 'pat@example.com',
      emails: ['pat@example.com'],
    });
    expect(logicBody.responses).toEqual(savedBody.responses);
    expect(logicBody.responses[p.rating]).toMatchObject({ slideId: p.rating, value: 2, type: 'star-rating' });
    // Two events, two delivery ids.
    expect(logicReq!.headers['x-service-delivery-id']).not.toBe(savedReq!.headers['x-service-delivery-id']);

    const d = await until(
      () => deliveryOf(acct, logicReq!.headers['x-service-delivery-id']!),
      (x) => x.status === 'delivered',
    );
    expect(d).toMatchObject({ source: 'question-logic', webhookId: null, attemptCount: 1 });
  });

  it('an answer whose condition fails sends nothing', async () => {
    const acct = await h.account();
    const p = await logicPoll(acct, receiver.url('/q-none'));
    await answer(h, { pollId: p.pollId, answers: [{ slideId: p.rating, value: 4 }] });
    await new Promise((r) => setTimeout(r, 600));
    expect(at('/q-none')(receiver.received)).toEqual([]);
  });

  it('survey action logic: a completed-survey delivery with every answer, signed even when the account has no saved webhook', async () => {
    const acct = await h.account();
    const p = await logicPoll(acct, receiver.url('/q-unused'), receiver.url('/done2'));
    const first = await answer(h, { pollId: p.pollId, answers: [{ slideId: p.rating, value: 5 }] });
    await answer(h, {
      pollId: p.pollId,
      participantId: first.participantId,
      answers: [{ slideId: p.comment, value: 'All good' }],
    });
    const [req] = await waitAt('/done2', 1);
    // No saved webhook ever existed, so no create call returned a secret: the account got one
    // at this first delivery, readable here only from storage.
    const account = await h.database.db
      .selectFrom('accounts')
      .select('signing_secret')
      .where('id', '=', acct.accountId)
      .executeTakeFirstOrThrow();
    expect(account.signing_secret).toMatch(/^whsec_/);
    expectSigned(req!, account.signing_secret!);
    expectLogicHeaders(req!, 1);
    const body = JSON.parse(req!.rawBody);
    expect(body).toMatchObject({
      type: 'completed-survey',
      submissionsComplete: true,
      participantId: first.participantId,
    });
    expect(Object.keys(body.responses).sort()).toEqual([p.rating, p.comment].sort());
    expect(at('/q-unused')(receiver.received)).toEqual([]);
    const d = await until(
      () => deliveryOf(acct, req!.headers['x-service-delivery-id']!),
      (x) => x.status === 'delivered',
    );
    expect(d).toMatchObject({ source: 'survey-logic', webhookId: null });
  });

  it('retries keep the delivery id and bytes, count attempts, wait the ladder, and sign afresh with the current secret', async () => {
    const acct = await h.account();
    const before = await rotateSigningSecret(h.deps, acct.accountId);
    receiver.script('/flaky', [{ status: 503 }, { status: 200 }]);
    const p = await logicPoll(acct, receiver.url('/flaky'));
    await answer(h, { pollId: p.pollId, answers: [{ slideId: p.rating, value: 1 }] });

    const [a1] = await waitAt('/flaky', 1);
    expectSigned(a1!, before.signingSecret);
    expectLogicHeaders(a1!, 1);
    // Rotated while the retry waits on the ladder (700 ms): the retry is signed with the new one.
    const after = await rotateSigningSecret(h.deps, acct.accountId, { force: true });
    const [, a2] = await waitAt('/flaky', 2);
    expectLogicHeaders(a2!, 2);
    expectSigned(a2!, after.signingSecret);
    expect(() =>
      verifySignature({
        secret: before.signingSecret,
        header: a2!.headers['x-service-signature'],
        rawBody: a2!.rawBody,
      }),
    ).toThrow();

    expect(a2!.headers['x-service-delivery-id']).toBe(a1!.headers['x-service-delivery-id']);
    expect(a2!.rawBody).toBe(a1!.rawBody);
    expect(a2!.headers['x-service-signature']).not.toBe(a1!.headers['x-service-signature']);
    expect(a2!.at - a1!.at).toBeGreaterThanOrEqual(LADDER[0]! - 50);

    const d = await until(
      () => deliveryOf(acct, a1!.headers['x-service-delivery-id']!),
      (x) => x.status === 'delivered',
    );
    expect(d.attempts.map((x) => [x.number, x.statusCode])).toEqual([
      [1, 503],
      [2, 200],
    ]);
    await new Promise((r) => setTimeout(r, 400));
    expect(at('/flaky')(receiver.received)).toHaveLength(2);
  });

  it('a logic endpoint that keeps failing is tried 1 + 5 times on the ladder, then given up', async () => {
    const acct = await h.account();
    receiver.script('/down', [{ status: 503 }]);
    const p = await logicPoll(acct, receiver.url('/down'));
    await answer(h, { pollId: p.pollId, answers: [{ slideId: p.rating, value: 2 }] });
    const reqs = await waitAt('/down', 6, 20_000);
    expect(reqs.map((r) => r.headers['x-service-attempt'])).toEqual(['1', '2', '3', '4', '5', '6']);
    expect(new Set(reqs.map((r) => r.headers['x-service-delivery-id'])).size).toBe(1);
    for (let i = 1; i < reqs.length; i++)
      expect(reqs[i]!.at - reqs[i - 1]!.at).toBeGreaterThanOrEqual(LADDER[i - 1]! - 50);
    const id = reqs[0]!.headers['x-service-delivery-id']!;
    const d = await until(
      () => deliveryOf(acct, id),
      (x) => x.status === 'given_up',
    );
    expect(d.attemptCount).toBe(6);
    await new Promise((r) => setTimeout(r, 800));
    expect(at('/down')(receiver.received)).toHaveLength(6);
    // The logic endpoint records the give-up for failure alerts.
    const endpoint = await h.database.db
      .selectFrom('endpoints')
      .selectAll()
      .where('poll_id', '=', p.pollId)
      .executeTakeFirstOrThrow();
    expect(endpoint).toMatchObject({
      source: 'question-logic',
      slide_id: p.rating,
      webhook_id: null,
      last_failure: 'HTTP 503',
    });
    expect(endpoint.last_given_up_at).not.toBeNull();
  });

  it('a permanent 4xx on a logic delivery is not retried', async () => {
    const acct = await h.account();
    receiver.script('/gone', [{ status: 410 }]);
    const p = await logicPoll(acct, receiver.url('/q-gone-unused'), receiver.url('/gone'));
    const r = await answer(h, { pollId: p.pollId, answers: [{ slideId: p.rating, value: 5 }], complete: true });
    expect(r.complete).toBe(true);
    const [req] = await waitAt('/gone', 1);
    const d = await until(
      () => deliveryOf(acct, req!.headers['x-service-delivery-id']!),
      (x) => x.status === 'rejected',
    );
    expect(d.attempts.map((x) => x.statusCode)).toEqual([410]);
    await new Promise((r2) => setTimeout(r2, LADDER[0]! + 400));
    expect(at('/gone')(receiver.received)).toHaveLength(1);
  });
});
