import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { rotateSigningSecret } from '../../src/app/accounts/rotate-signing-secret.js';
import { verifySignature, WebhookVerificationError } from '../../src/verify.js';
import { bearer, type Harness, type TestAccount } from '../support/app.js';
import { answer, createWebhook, visiblePoll } from '../support/fixtures.js';
import { type Received, type Reply } from '../support/receiver.js';
import { liveDelivery, startTestWorker } from '../support/worker.js';

/**
 * The delivery outcome matrix (docs/receiving-webhooks.md, Answering) end to end — in-process API
 * and worker (real runner, scheduler and HTTPS sender), a real HTTPS receiver on loopback.
 * Every case has its own webhook path and is asserted twice: by what the receiver got, and by
 * what GET /webhooks/delivery says.
 */

const LADDER = [200, 300, 400, 500, 600];
// Unlike the ordinary ladder in its first step, so a DNS failure visibly follows its own ladder.
const DNS_LADDER = [500, 250];
// Generous for a loaded 2-core runner: an ordinary answer must never hit it by accident.
const DEADLINE_MS = 1_500;
const USER_AGENT = 'Canvass-Webhooks/test';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

type AttemptJson = {
  number: number;
  sentAt: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseExcerpt: string | null;
};
type DeliveryJson = {
  id: string;
  webhookId: string | null;
  source: string;
  url: string;
  type: string;
  status: string;
  attemptCount: number;
  nextAttemptAt: string | null;
  finishedAt: string | null;
  payload: Record<string, unknown>;
  attempts: AttemptJson[];
};
type Hook = Awaited<ReturnType<typeof createWebhook>>;

const secrets = new Map<string, string>();
/** What each path's requests must verify with; the final sweep checks every request received. */
const expected = new Map<string, { secretOfAttempt: string[]; legacySecret: string }>();

// No rotation overlap: a retry after a rotation carries the new signature only (the overlap is
// e2e/secret-rotation.test.ts's).
const live = liveDelivery({
  delivery: {
    retryLadderMs: LADDER,
    dnsRetryLadderMs: DNS_LADDER,
    deliveryTimeoutMs: DEADLINE_MS,
    batchWindowMs: 0,
    secretOverlapMs: 0,
  },
});
let h: Harness;
let acct: TestAccount;
let receiver: typeof live.receiver;
beforeAll(() => ({ h, acct, receiver } = live));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(25);
  }
}

async function getDelivery(a: TestAccount, deliveryId: string): Promise<DeliveryJson> {
  const res = await h.app.inject({ url: `/webhooks/delivery?deliveryId=${deliveryId}`, headers: bearer(a.key) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as DeliveryJson;
}

async function deliveriesOf(a: TestAccount, webhookId: string): Promise<DeliveryJson[]> {
  const res = await h.app.inject({ url: `/webhooks/deliveries?webhookId=${webhookId}`, headers: bearer(a.key) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as DeliveryJson[];
}

/** The one delivery of a webhook, once it satisfies `done`. */
async function settled(
  a: TestAccount,
  webhookId: string,
  done: (d: DeliveryJson) => boolean,
  timeoutMs = 15_000,
): Promise<DeliveryJson> {
  return until(
    `a delivery of ${webhookId} to settle`,
    async () => {
      const list = await deliveriesOf(a, webhookId);
      if (list.length === 0) return undefined;
      expect(list).toHaveLength(1);
      const d = await getDelivery(a, list[0]!.id);
      return done(d) ? d : undefined;
    },
    timeoutMs,
  );
}

const finished = (d: DeliveryJson) => ['delivered', 'rejected', 'given_up', 'cancelled'].includes(d.status);
const at = (p: string) => receiver.received.filter((r) => r.path === p);
const hmac = (secret: string, t: string, body: string) =>
  createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');

/** One request as docs/receiving-webhooks.md describes it, checked two independent ways. */
function checkSigned(req: Received, secret: string, legacySecret: string | null) {
  verifySignature({ secret, header: req.headers['x-service-signature'], rawBody: req.rawBody });
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(req.headers['x-service-signature'] ?? '');
  expect(m, req.headers['x-service-signature']).not.toBeNull();
  const [, t, v1] = m!;
  expect(hmac(secret, t!, req.rawBody)).toBe(v1);
  expect(req.headers['content-type']).toBe('application/json');
  expect(req.headers['user-agent']).toBe(USER_AGENT);
  expect(req.headers['x-service-delivery-id']).toMatch(/^dlv_/);
  expect(req.headers['x-service-attempt']).toMatch(/^[1-9]\d*$/);
  const triggered = req.headers['x-service-triggered-at'] ?? '';
  expect(triggered).toMatch(ISO);
  // The send time of this attempt: the same instant the signature's t names.
  expect(Date.parse(triggered)).toBe(Number(t));
  expect(Math.abs(req.at - Number(t))).toBeLessThan(5_000);
  if (legacySecret === null) expect(req.headers['x-service-secret']).toBeUndefined();
  else expect(req.headers['x-service-secret']).toBe(legacySecret);
  expect(() => JSON.parse(req.rawBody)).not.toThrow();
}

function rejectsWith(secret: string, req: Received, reason: string) {
  try {
    verifySignature({ secret, header: req.headers['x-service-signature'], rawBody: req.rawBody });
  } catch (e) {
    expect(e).toBeInstanceOf(WebhookVerificationError);
    expect((e as WebhookVerificationError).reason).toBe(reason);
    return;
  }
  throw new Error('signature verified with a secret it must not verify with');
}

let paths = 0;

/** A visible poll with a webhook on its own receiver path; one answer is submitted unless told not to. */
async function scenario(
  name: string,
  replies: Reply[],
  opts: {
    url?: string;
    account?: TestAccount;
    pollExtra?: Record<string, unknown>;
    rule?: 'partial' | 'complete';
    submit?: boolean;
  } = {},
) {
  const a = opts.account ?? acct;
  const p = `/${name}-${++paths}`;
  receiver.script(p, replies);
  const poll = await visiblePoll(h, a, opts.pollExtra);
  const hook: Hook = await createWebhook(h, a, poll.pollId, opts.url ?? receiver.url(p), opts.rule ?? 'partial');
  if (hook.signingSecret) secrets.set(a.accountId, hook.signingSecret);
  const secret = secrets.get(a.accountId)!;
  expect(secret).toMatch(/^whsec_/);
  expected.set(p, { secretOfAttempt: [secret], legacySecret: hook.data.legacySecret });
  const submitted =
    opts.submit === false
      ? undefined
      : await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: `case ${name}` }] });
  return { p, poll, hook, secret, account: a, submitted, requests: () => at(p) };
}

/** The receiver's requests of one case: one delivery id, attempts 1..n in order, each signed correctly. */
function checkAttemptsSeen(reqs: Received[], deliveryId: string, secret: string, legacySecret: string) {
  reqs.forEach((r, i) => {
    expect(r.headers['x-service-delivery-id']).toBe(deliveryId);
    expect(r.headers['x-service-attempt']).toBe(String(i + 1));
    checkSigned(r, secret, legacySecret);
  });
  // Every attempt sends the bytes serialised once at creation.
  expect(new Set(reqs.map((r) => r.rawBody)).size).toBe(1);
}

describe('delivery outcome matrix', () => {
  it('2xx at once: one attempt, delivered, payload and headers as specified', async () => {
    const c = await scenario('success', [{ status: 200, body: 'thanks' }], { submit: false });
    const sub = await answer(h, {
      pollId: c.poll.pollId,
      answers: [
        { slideId: c.poll.q1, value: 'Search' },
        { slideId: c.poll.q2, value: 'Dana@Example.com' },
      ],
      participantMetadata: { email: 'dana.home@example.org' },
      metadata: { source: 'e2e' },
    });
    const d = await settled(acct, c.hook.data.id, finished);
    await sleep(LADDER[0]! + 400);
    const reqs = c.requests();
    expect(reqs).toHaveLength(1);
    checkAttemptsSeen(reqs, d.id, c.secret, c.hook.data.legacySecret);
    expect(d).toMatchObject({
      status: 'delivered',
      attemptCount: 1,
      webhookId: c.hook.data.id,
      source: 'webhook',
      type: 'submitted-responses',
      nextAttemptAt: null,
    });
    expect(d.finishedAt).not.toBeNull();
    expect(d.attempts).toHaveLength(1);
    expect(d.attempts[0]).toMatchObject({ number: 1, statusCode: 200, error: null, responseExcerpt: 'thanks' });
    const body = JSON.parse(reqs[0]!.rawBody);
    expect(body).toEqual(d.payload);
    expect(body).toMatchObject({
      type: 'submitted-responses',
      accountId: acct.accountId,
      pollId: c.poll.pollId,
      participantId: sub.participantId,
      metadata: { source: 'e2e' },
      submissionsComplete: true,
      email: 'dana@example.com',
      emails: ['dana@example.com', 'dana.home@example.org'],
    });
    expect(Number.isInteger(body.timestamp)).toBe(true);
    expect(Object.keys(body.responses).sort()).toEqual([c.poll.q1, c.poll.q2].sort());
    expect(body.responses[c.poll.q1]).toMatchObject({ slideId: c.poll.q1, type: 'short-answer', value: 'Search' });
  });

  it('an answer body that PostgreSQL text cannot hold (a NUL byte, a character cut at the excerpt limit) is recorded: delivered, not retried', async () => {
    // 1023 ASCII bytes put the emoji's four UTF-8 bytes across the 1,024-byte excerpt limit: its
    // first byte is cut off from the rest.
    const c = await scenario('unstorable-answer', [{ status: 200, body: `ok\u0000${'x'.repeat(1020)}\u{1F600}tail` }]);
    const d = await settled(acct, c.hook.data.id, finished);
    await sleep(LADDER[0]! + 400);
    expect(c.requests()).toHaveLength(1);
    expect(d).toMatchObject({ status: 'delivered', attemptCount: 1 });
    const excerpt = d.attempts[0]!.responseExcerpt!;
    expect(excerpt.startsWith('ok\uFFFDxxx')).toBe(true);
    expect(excerpt).toHaveLength(1024);
    expect(excerpt.endsWith('x\uFFFD')).toBe(true);
  });

  it('503 then 200: the same delivery id, attempt 1 then 2, each signed afresh with its own t', async () => {
    const c = await scenario('s503', [{ status: 503 }, { status: 200 }]);
    const d = await settled(acct, c.hook.data.id, finished);
    const reqs = c.requests();
    expect(reqs).toHaveLength(2);
    checkAttemptsSeen(reqs, d.id, c.secret, c.hook.data.legacySecret);
    const sig = reqs.map((r) => r.headers['x-service-signature']!);
    expect(sig[0]).not.toBe(sig[1]);
    const ts = sig.map((s) => Number(/^t=(\d+),/.exec(s)![1]));
    expect(ts[1]! - ts[0]!).toBeGreaterThanOrEqual(LADDER[0]!);
    expect(reqs[1]!.at - reqs[0]!.at).toBeGreaterThanOrEqual(LADDER[0]! - 10);
    expect(d).toMatchObject({ status: 'delivered', attemptCount: 2 });
    expect(d.attempts.map((a) => [a.number, a.statusCode, a.error])).toEqual([
      [1, 503, null],
      [2, 200, null],
    ]);
  });

  it.each([408, 429, 500])('%i is temporary: retried, then delivered', async (status) => {
    const c = await scenario(`s${status}`, [{ status }, { status: 200 }]);
    const d = await settled(acct, c.hook.data.id, finished);
    checkAttemptsSeen(c.requests(), d.id, c.secret, c.hook.data.legacySecret);
    expect(c.requests()).toHaveLength(2);
    expect(d).toMatchObject({ status: 'delivered', attemptCount: 2 });
    expect(d.attempts.map((a) => [a.statusCode, a.error])).toEqual([
      [status, null],
      [200, null],
    ]);
  });

  it.each([404, 410])('%i is permanent: exactly one attempt, rejected', async (status) => {
    const c = await scenario(`s${status}`, [{ status }]);
    const d = await settled(acct, c.hook.data.id, finished);
    // Longer than the first retry delay: a retry would have come by now.
    await sleep(LADDER[0]! + 600);
    expect(c.requests()).toHaveLength(1);
    checkAttemptsSeen(c.requests(), d.id, c.secret, c.hook.data.legacySecret);
    const after = await getDelivery(acct, d.id);
    expect(after).toMatchObject({ status: 'rejected', attemptCount: 1, nextAttemptAt: null });
    expect(after.finishedAt).not.toBeNull();
    expect(after.attempts).toHaveLength(1);
    expect(after.attempts[0]).toMatchObject({ number: 1, statusCode: status, error: null });
  });

  it('an endpoint slower than the deadline: error timeout, retried', async () => {
    const c = await scenario('slow', [{ status: 200, delayMs: 2 * DEADLINE_MS }, { status: 200 }]);
    const d = await settled(acct, c.hook.data.id, finished);
    checkAttemptsSeen(c.requests(), d.id, c.secret, c.hook.data.legacySecret);
    expect(c.requests()).toHaveLength(2);
    expect(d).toMatchObject({ status: 'delivered', attemptCount: 2 });
    expect(d.attempts[0]).toMatchObject({ number: 1, statusCode: null, error: 'timeout' });
    expect(d.attempts[0]!.durationMs).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(d.attempts[0]!.durationMs).toBeLessThan(2 * DEADLINE_MS);
    expect(d.attempts[1]).toMatchObject({ number: 2, statusCode: 200, error: null });
  });

  it('a refused connection: error refused, retried', async () => {
    // Port 1 (tcpmux): privileged and unused, so no other test's server can appear on it.
    const c = await scenario('refused', [], { url: 'https://127.0.0.1:1/hook' });
    const d = await settled(acct, c.hook.data.id, (x) => x.attemptCount >= 2 && x.attempts.length >= 2);
    expect(d.attempts.slice(0, 2).map((a) => [a.number, a.statusCode, a.error])).toEqual([
      [1, null, 'refused'],
      [2, null, 'refused'],
    ]);
    expect(Date.parse(d.attempts[1]!.sentAt) - Date.parse(d.attempts[0]!.sentAt)).toBeGreaterThanOrEqual(LADDER[0]!);
  });

  it('a host that does not resolve: exactly 3 attempts on the DNS ladder, then given_up with error dns', async () => {
    const c = await scenario('dns', [], { url: 'https://nothing.invalid/hook' });
    const d = await settled(acct, c.hook.data.id, finished);
    expect(d).toMatchObject({ status: 'given_up', attemptCount: 3, nextAttemptAt: null });
    expect(d.attempts.map((a) => [a.number, a.statusCode, a.error])).toEqual([
      [1, null, 'dns'],
      [2, null, 'dns'],
      [3, null, 'dns'],
    ]);
    const sent = d.attempts.map((a) => Date.parse(a.sentAt));
    expect(sent[1]! - sent[0]!).toBeGreaterThanOrEqual(DNS_LADDER[0]!);
    expect(sent[2]! - sent[1]!).toBeGreaterThanOrEqual(DNS_LADDER[1]!);
    await sleep(Math.max(...LADDER) + 400);
    const after = await getDelivery(acct, d.id);
    expect(after).toMatchObject({ status: 'given_up', attemptCount: 3 });
    expect(after.attempts).toHaveLength(3);
  });

  it.each([301, 302])('%i is not followed (no request to the Location) and is retried', async (status) => {
    const target = `/moved-${status}`;
    receiver.script(target, [{ status: 200 }]);
    const c = await scenario(`s${status}`, [{ status, headers: { location: receiver.url(target) } }, { status: 200 }]);
    const d = await settled(acct, c.hook.data.id, finished);
    await sleep(200);
    expect(at(target)).toHaveLength(0);
    checkAttemptsSeen(c.requests(), d.id, c.secret, c.hook.data.legacySecret);
    expect(c.requests()).toHaveLength(2);
    expect(d).toMatchObject({ status: 'delivered', attemptCount: 2 });
    expect(d.attempts.map((a) => [a.statusCode, a.error])).toEqual([
      [status, 'redirect'],
      [200, null],
    ]);
  });

  it('ladder exhausted: exactly 6 attempts on the ladder, then given_up and never sent again', async () => {
    const c = await scenario('exhaust', [{ status: 500 }]);
    const d = await settled(acct, c.hook.data.id, finished, 20_000);
    expect(d).toMatchObject({ status: 'given_up', attemptCount: 6, nextAttemptAt: null });
    expect(d.finishedAt).not.toBeNull();
    expect(d.attempts.map((a) => [a.number, a.statusCode])).toEqual([1, 2, 3, 4, 5, 6].map((n) => [n, 500]));
    const reqs = c.requests();
    expect(reqs).toHaveLength(6);
    checkAttemptsSeen(reqs, d.id, c.secret, c.hook.data.legacySecret);
    // Retry i comes at least LADDER[i-1] after attempt i ended.
    for (let i = 1; i < 6; i++) expect(reqs[i]!.at - reqs[i - 1]!.at).toBeGreaterThanOrEqual(LADDER[i - 1]! - 10);
    // Past the longest step with room to spare: no 7th attempt.
    await sleep(2 * Math.max(...LADDER) + 500);
    expect(c.requests()).toHaveLength(6);
    const after = await getDelivery(acct, d.id);
    expect(after).toMatchObject({ status: 'given_up', attemptCount: 6 });
    expect(after.attempts).toHaveLength(6);
  });

  it('deleting the webhook while a retry is queued cancels it; nothing more is sent', async () => {
    // The first reply is slow so the worker can be stopped while attempt 1 is in flight: it
    // finishes and records (503 → retry queued), and nothing can claim the retry before the
    // DELETE. The restarted worker then finds the retry long due, and must not send it.
    const c = await scenario('deleted', [{ status: 503, delayMs: 400 }, { status: 503 }]);
    await receiver.waitFor(() => c.requests().length >= 1);
    await live.worker.stop();
    const [listed] = await deliveriesOf(acct, c.hook.data.id);
    const queued = await getDelivery(acct, listed!.id);
    expect(queued).toMatchObject({ status: 'pending', attemptCount: 1 });
    expect(queued.attempts.map((a) => a.statusCode)).toEqual([503]);
    const del = await h.app.inject({
      method: 'DELETE',
      url: `/webhooks?id=${c.hook.data.id}`,
      headers: bearer(acct.key),
    });
    expect(del.statusCode, del.body).toBe(200);
    expect(del.json().data).toMatchObject({ id: c.hook.data.id, deleted: true });
    expect(del.json().data.cancelledDeliveries).toBeGreaterThanOrEqual(1);
    live.worker = startTestWorker(h.deps);
    await sleep(LADDER[0]! + LADDER[1]! + 1_000);
    expect(c.requests()).toHaveLength(1);
    const after = await getDelivery(acct, queued.id);
    expect(after).toMatchObject({ status: 'cancelled', attemptCount: 1, nextAttemptAt: null });
    expect(after.finishedAt).not.toBeNull();
    expect(after.attempts).toHaveLength(1);
    // Further answers to the poll make no delivery for the deleted webhook.
    await answer(h, { pollId: c.poll.pollId, answers: [{ slideId: c.poll.q2, value: 'late@example.com' }] });
    await sleep(500);
    expect(c.requests()).toHaveLength(1);
  });

  it('a secret rotated between attempts: the retry verifies with the new secret and not the old', async () => {
    const other = await h.account({ name: 'Rotating' });
    // Attempt 1 is answered slowly, so the rotation surely lands before the retry is claimed.
    const c = await scenario('rotate', [{ status: 503, delayMs: 400 }, { status: 200 }], { account: other });
    const oldSecret = c.secret;
    await receiver.waitFor(() => c.requests().length >= 1);
    const { signingSecret: newSecret } = await rotateSigningSecret(h.deps, other.accountId);
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(oldSecret);
    const d = await settled(other, c.hook.data.id, finished);
    expect(d).toMatchObject({ status: 'delivered', attemptCount: 2 });
    const [first, retry] = c.requests();
    expect(c.requests()).toHaveLength(2);
    checkSigned(first!, oldSecret, c.hook.data.legacySecret);
    rejectsWith(newSecret, first!, 'signature_mismatch');
    checkSigned(retry!, newSecret, c.hook.data.legacySecret);
    rejectsWith(oldSecret, retry!, 'signature_mismatch');
    expect(retry!.headers['x-service-delivery-id']).toBe(d.id);
    expect(retry!.headers['x-service-attempt']).toBe('2');
    expected.set(c.p, { secretOfAttempt: [oldSecret, newSecret], legacySecret: c.hook.data.legacySecret });
  });
});

describe('payload rules', () => {
  it('"complete" rule: fires once, when the respondent finishes, with all of their answers', async () => {
    const c = await scenario('complete', [{ status: 200 }], {
      rule: 'complete',
      submit: false,
      pollExtra: { settings: { allowResubmissions: true } },
    });
    // Finishing by answering every slide, over two submissions.
    const first = await answer(h, { pollId: c.poll.pollId, answers: [{ slideId: c.poll.q1, value: 'Ads' }] });
    expect(first.complete).toBe(false);
    await sleep(600);
    expect(c.requests()).toHaveLength(0);
    const done = await answer(h, {
      pollId: c.poll.pollId,
      participantId: first.participantId,
      answers: [{ slideId: c.poll.q2, value: 'eve@example.com' }],
    });
    expect(done.complete).toBe(true);
    await receiver.waitFor(() => c.requests().length >= 1);
    // Finishing by saying so (complete: true) after one answer.
    const early = await answer(h, {
      pollId: c.poll.pollId,
      answers: [{ slideId: c.poll.q1, value: 'Radio' }],
      complete: true,
    });
    expect(early.complete).toBe(true);
    await receiver.waitFor(() => c.requests().length >= 2);
    // More answers after finishing (resubmissions allowed) do not fire it again.
    await answer(h, {
      pollId: c.poll.pollId,
      participantId: first.participantId,
      answers: [{ slideId: c.poll.q1, value: 'Changed my mind' }],
    });
    await answer(h, {
      pollId: c.poll.pollId,
      participantId: early.participantId,
      answers: [{ slideId: c.poll.q2, value: 'fin@example.com' }],
      complete: true,
    });
    await sleep(800);
    const reqs = c.requests();
    expect(reqs).toHaveLength(2);
    const bodies = reqs.map((r) => JSON.parse(r.rawBody));
    const ofFirst = bodies.find((b) => b.participantId === first.participantId);
    const ofEarly = bodies.find((b) => b.participantId === early.participantId);
    expect(ofFirst).toMatchObject({
      type: 'completed-survey',
      submissionsComplete: true,
      email: 'eve@example.com',
      emails: ['eve@example.com'],
    });
    expect(Object.keys(ofFirst.responses).sort()).toEqual([c.poll.q1, c.poll.q2].sort());
    expect(ofFirst.responses[c.poll.q1].value).toBe('Ads');
    expect(ofEarly).toMatchObject({ type: 'completed-survey', submissionsComplete: true, email: null, emails: [] });
    expect(Object.keys(ofEarly.responses)).toEqual([c.poll.q1]);
    for (const r of reqs) {
      checkSigned(r, c.secret, c.hook.data.legacySecret);
      expect(r.headers['x-service-attempt']).toBe('1');
      const d = await getDelivery(acct, r.headers['x-service-delivery-id']!);
      expect(d).toMatchObject({ type: 'completed-survey', status: 'delivered', attemptCount: 1 });
    }
  });

  it('anonymous poll: email null and emails [] whatever the answers and metadata hold', async () => {
    const c = await scenario('anon', [{ status: 200 }], {
      submit: false,
      pollExtra: { settings: { anonymous: true } },
    });
    await answer(h, {
      pollId: c.poll.pollId,
      answers: [
        { slideId: c.poll.q1, value: 'write to frank@example.com' },
        { slideId: c.poll.q2, value: 'frank@example.com' },
      ],
      participantMetadata: { email: 'frank.meta@example.org' },
      metadata: { contact: 'frank.resp@example.net' },
    });
    const d = await settled(acct, c.hook.data.id, finished);
    expect(d.status).toBe('delivered');
    const [req] = c.requests();
    checkAttemptsSeen(c.requests(), d.id, c.secret, c.hook.data.legacySecret);
    const body = JSON.parse(req!.rawBody);
    expect(body.email).toBeNull();
    expect(body.emails).toEqual([]);
    expect(Object.keys(body.responses).sort()).toEqual([c.poll.q1, c.poll.q2].sort());
  });
});

describe('saved webhooks and logic-triggered deliveries', () => {
  it('X-Service-Secret goes with saved webhooks only; a logic-triggered delivery is signed and retried alike', async () => {
    const c = await scenario('saved', [{ status: 200 }], { submit: false });
    const logicPath = `/logic-${++paths}`;
    receiver.script(logicPath, [{ status: 503 }, { status: 200 }]);
    expected.set(logicPath, { secretOfAttempt: [c.secret], legacySecret: '' });
    const upd = await h.app.inject({
      method: 'POST',
      url: '/slide/update',
      headers: bearer(acct.key),
      payload: {
        slideId: c.poll.q1,
        logic: [
          {
            match: 'all',
            conditions: [{ op: 'answered' }],
            action: { type: 'trigger-webhook', url: receiver.url(logicPath) },
          },
        ],
      },
    });
    expect(upd.statusCode, upd.body).toBe(200);
    await answer(h, { pollId: c.poll.pollId, answers: [{ slideId: c.poll.q1, value: 'from logic' }] });
    await receiver.waitFor(() => at(logicPath).length >= 2 && c.requests().length >= 1);
    const saved = c.requests();
    expect(saved).toHaveLength(1);
    checkSigned(saved[0]!, c.secret, c.hook.data.legacySecret);
    const logic = at(logicPath);
    expect(logic).toHaveLength(2);
    for (const r of logic) {
      checkSigned(r, c.secret, null);
      expect(Object.keys(r.headers).filter((k) => k.toLowerCase() === 'x-service-secret')).toEqual([]);
    }
    const id = logic[0]!.headers['x-service-delivery-id']!;
    expect(id).not.toBe(saved[0]!.headers['x-service-delivery-id']);
    expect(logic.map((r) => [r.headers['x-service-delivery-id'], r.headers['x-service-attempt']])).toEqual([
      [id, '1'],
      [id, '2'],
    ]);
    expect(JSON.parse(logic[0]!.rawBody)).toMatchObject({ type: 'submitted-responses', pollId: c.poll.pollId });
    const d = await until('the logic delivery to be delivered', async () => {
      const x = await getDelivery(acct, id);
      return x.status === 'delivered' ? x : undefined;
    });
    expect(d).toMatchObject({ webhookId: null, source: 'question-logic', attemptCount: 2 });
    expect(d.attempts.map((a) => a.statusCode)).toEqual([503, 200]);
  });
});

describe('every request received', () => {
  it('came from a known case, verifies with its secret two ways, and no (delivery id, attempt) arrived twice', () => {
    const hooks = receiver.received.filter((r) => !r.path.startsWith('/moved-'));
    expect(hooks.length).toBeGreaterThan(0);
    const seen = new Set<string>();
    for (const r of hooks) {
      const e = expected.get(r.path);
      expect(e, `request to unknown path ${r.path}`).toBeDefined();
      const n = Number(r.headers['x-service-attempt']);
      // The secret current when the attempt was sent (only the rotation case has two).
      checkSigned(r, e!.secretOfAttempt[Math.min(n, e!.secretOfAttempt.length) - 1]!, e!.legacySecret || null);
      const key = `${r.headers['x-service-delivery-id']}#${r.headers['x-service-attempt']}`;
      expect(seen.has(key), `duplicate ${key}`).toBe(false);
      seen.add(key);
    }
  });
});
