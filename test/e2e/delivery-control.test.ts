import { beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/verify.js';
import { bearer, type Harness, type TestAccount } from '../support/app.js';
import { answer, createWebhook, visiblePoll } from '../support/fixtures.js';
import { liveDelivery } from '../support/worker.js';

// Putting deliveries right and holding them, against a real HTTPS receiver: resend, recover,
// URL change, pause and resume, test events.

let h: Harness;
let acct: TestAccount;
let secret: string;
let receiver: ReturnType<typeof liveDelivery>['receiver'];

// Three attempts, then given up; the retry waits long enough for a test to act on a pending one.
const RETRY_MS = 2_500;

const live = liveDelivery({ delivery: { batchWindowMs: 0, retryLadderMs: [RETRY_MS, 50] } });
beforeAll(() => ({ h, acct, receiver } = live));

const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
  const res = await h.app.inject({ method, url, headers: bearer(acct.key), ...(payload ? { payload } : {}) });
  return { status: res.statusCode, body: res.json() };
};
const detail = async (id: string) => (await call('GET', `/webhooks/delivery?deliveryId=${id}`)).body.data;
async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
const deliveriesOf = async (webhookId: string, status?: string) =>
  (await call('GET', `/webhooks/deliveries?webhookId=${webhookId}&limit=100${status ? `&status=${status}` : ''}`)).body
    .data as { id: string; status: string; attemptCount: number; nextAttemptAt: string | null }[];
const at = (path: string, deliveryId?: string) =>
  receiver.received.filter(
    (r) => r.path === path && (!deliveryId || r.headers['x-service-delivery-id'] === deliveryId),
  );

/** A poll whose webhook points at `path`, and `n` respondents' deliveries made to it. */
async function deliveriesTo(path: string, n: number) {
  const poll = await visiblePoll(h, acct);
  const hook = await createWebhook(h, acct, poll.pollId, receiver.url(path));
  secret ??= (await h.deps.store.accounts.get(acct.accountId))!.signingSecret!;
  for (let i = 0; i < n; i++)
    await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: `answer ${i}` }] });
  const ids = await until(`${n} deliveries`, async () => {
    const d = await deliveriesOf(hook.data.id);
    return d.length === n && d.map((x) => x.id);
  });
  return { pollId: poll.pollId, q1: poll.q1, q2: poll.q2, webhookId: hook.data.id, ids };
}

async function givenUp(path: string, n: number) {
  receiver.script(path, [{ status: 500 }]);
  const made = await deliveriesTo(path, n);
  await until(
    'the deliveries to be given up',
    async () => (await deliveriesOf(made.webhookId, 'given_up')).length === n,
    30_000,
  );
  return made;
}

describe('resend', () => {
  it('sends a given-up delivery again with the same id and body, a higher attempt number, and logs who asked', async () => {
    const { ids } = await givenUp('/resend', 1);
    const id = ids[0]!;
    const before = at('/resend', id);
    expect(before.map((r) => r.headers['x-service-attempt'])).toEqual(['1', '2', '3']);
    receiver.script('/resend', [{ status: 200 }]);

    const res = await call('POST', '/webhooks/delivery/resend', { deliveryId: id });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.data).toMatchObject({ id, status: 'pending' });
    const [again] = await receiver.waitFor(() => at('/resend', id).length === 4).then(() => at('/resend', id).slice(3));
    expect(again!.headers['x-service-attempt']).toBe('4');
    expect(again!.rawBody).toBe(before[0]!.rawBody);
    verifySignature({ secret, header: again!.headers['x-service-signature'], rawBody: again!.rawBody });
    const d = await until('delivered', async () => {
      const x = await detail(id);
      return x.status === 'delivered' && x;
    });
    expect(d.attemptCount).toBe(4);
    expect(d.events).toEqual([
      expect.objectContaining({ kind: 'resend', attemptNumber: 4, by: expect.stringMatching(/@/) }),
    ]);
  });

  it('goes to the webhook’s URL as corrected since, and not at all once the webhook is gone', async () => {
    const { webhookId, ids } = await givenUp('/wrong', 1);
    const fixed = await call('POST', '/webhooks/update', { webhookId, url: receiver.url('/fixed') });
    expect(fixed.status).toBe(200);
    expect((await call('POST', '/webhooks/delivery/resend', { deliveryId: ids[0] })).status).toBe(202);
    const [moved] = await receiver.waitFor(() => at('/fixed', ids[0]).length === 1).then(() => at('/fixed', ids[0]));
    expect(moved!.headers['x-service-attempt']).toBe('4');

    const gone = await givenUp('/gone', 1);
    const del = await h.app.inject({
      method: 'DELETE',
      url: `/webhooks?id=${gone.webhookId}`,
      headers: bearer(acct.key),
    });
    expect(del.statusCode).toBe(200);
    const res = await call('POST', '/webhooks/delivery/resend', { deliveryId: gone.ids[0] });
    expect([res.status, res.body.code]).toEqual([409, 'conflict']);
    expect(at('/gone', gone.ids[0])).toHaveLength(3);
  });

  it('answers 409 for a delivery still on its way, and 404 for another account’s', async () => {
    receiver.script('/slow', [{ status: 500 }]);
    const { ids } = await deliveriesTo('/slow', 1);
    await until('a first attempt', async () => (await detail(ids[0]!)).attemptCount >= 1);
    const res = await call('POST', '/webhooks/delivery/resend', { deliveryId: ids[0] });
    expect([res.status, res.body.code]).toEqual([409, 'conflict']);
    const other = await h.account();
    const stranger = await h.app.inject({
      method: 'POST',
      url: '/webhooks/delivery/resend',
      headers: bearer(other.key),
      payload: { deliveryId: ids[0] },
    });
    expect(stranger.statusCode).toBe(404);
  });
});

describe('recover', () => {
  it('resends every given-up delivery of the window once', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const { webhookId, ids } = await givenUp('/recover', 4);
    receiver.script('/recover', [{ status: 200 }]);
    const res = await call('POST', '/webhooks/recover', { webhookId, since });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.data).toEqual({ resent: 4 });
    await until('all delivered', async () => (await deliveriesOf(webhookId, 'delivered')).length === 4);
    for (const id of ids) {
      expect(at('/recover', id).map((r) => r.headers['x-service-attempt'])).toEqual(['1', '2', '3', '4']);
      expect((await detail(id)).events).toEqual([expect.objectContaining({ kind: 'recover', attemptNumber: 4 })]);
    }
    // Nothing is left to recover in that window.
    expect((await call('POST', '/webhooks/recover', { webhookId, since })).body.data).toEqual({ resent: 0 });
    // A window that ends before the deliveries were made matches none of them.
    const early = await call('POST', '/webhooks/recover', { webhookId, since: '2020-01-01T00:00:00Z', until: since });
    expect(early.body.data).toEqual({ resent: 0 });
  });

  it('resends the window to the URL corrected since the deliveries were lost', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const { webhookId, ids } = await givenUp('/recover-wrong', 2);
    receiver.script('/recover-fixed', [{ status: 200 }]);
    const fixed = await call('POST', '/webhooks/update', { webhookId, url: receiver.url('/recover-fixed') });
    expect(fixed.status).toBe(200);
    const res = await call('POST', '/webhooks/recover', { webhookId, since });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.data).toEqual({ resent: 2 });
    await until('both delivered', async () => (await deliveriesOf(webhookId, 'delivered')).length === 2);
    for (const id of ids) {
      expect(at('/recover-fixed', id).map((r) => r.headers['x-service-attempt'])).toEqual(['4']);
      expect(at('/recover-wrong', id)).toHaveLength(3);
    }
  });

  it('refuses a window that ends before it starts, and a request naming no target', async () => {
    const bad = await call('POST', '/webhooks/recover', { since: '2026-01-02T00:00:00Z' });
    expect([bad.status, bad.body.code]).toEqual([400, 'validation_failed']);
    const { webhookId } = await deliveriesTo('/window', 0);
    const backwards = await call('POST', '/webhooks/recover', {
      webhookId,
      since: '2026-01-02T00:00:00Z',
      until: '2026-01-01T00:00:00Z',
    });
    expect([backwards.status, backwards.body.code]).toEqual([400, 'validation_failed']);
  });
});

describe('update', () => {
  it('moves pending retries to the new URL, with their ids', async () => {
    receiver.script('/old', [{ status: 503 }]);
    const { webhookId, ids } = await deliveriesTo('/old', 1);
    await until('a failed first attempt', async () => {
      const d = await detail(ids[0]!);
      return d.attemptCount === 1 && d.status === 'pending' && d;
    });
    const res = await call('POST', '/webhooks/update', {
      webhookId,
      url: receiver.url('/new'),
      deliveryRule: 'complete',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({
      id: webhookId,
      url: receiver.url('/new'),
      deliveryRule: 'complete',
      paused: false,
    });
    const [moved] = await receiver.waitFor(() => at('/new', ids[0]).length === 1).then(() => at('/new', ids[0]));
    expect(moved!.headers['x-service-attempt']).toBe('2');
    expect(at('/old', ids[0])).toHaveLength(1);
    expect((await detail(ids[0]!)).url).toBe(receiver.url('/new'));
  });

  it('applies a new delivery rule to the events that follow', async () => {
    const { pollId, q1, q2, webhookId } = await deliveriesTo('/rule', 1);
    const res = await call('POST', '/webhooks/update', { webhookId, deliveryRule: 'complete' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // With no batch window a "partial" webhook's delivery is made with the submission itself.
    const p = await answer(h, { pollId, answers: [{ slideId: q1, value: 'partway' }] });
    expect(await deliveriesOf(webhookId)).toHaveLength(1);
    await answer(h, { pollId, participantId: p.participantId, answers: [{ slideId: q2, value: 'done@example.com' }] });
    const made = await deliveriesOf(webhookId);
    expect(made).toHaveLength(2);
    expect((await detail(made[0]!.id)).type).toBe('completed-survey');
  });

  it('checks a new URL as at creation', async () => {
    const { webhookId } = await deliveriesTo('/check', 0);
    const res = await call('POST', '/webhooks/update', { webhookId, url: 'http://example.com/' });
    expect([res.status, res.body.code]).toEqual([400, 'invalid_url']);
  });
});

describe('pause', () => {
  it('holds deliveries with no attempt, and resuming sends what waited', async () => {
    const { webhookId } = await deliveriesTo('/paused', 0);
    const paused = await call('POST', '/webhooks/update', { webhookId, paused: true });
    expect(paused.body.data.paused).toBe(true);
    const poll = (await call('GET', `/webhooks?accountId=${acct.accountId}&limit=100`)).body.data.find(
      (w: { id: string }) => w.id === webhookId,
    ).pollId as string;
    const slides = (await call('GET', `/slides?pollId=${poll}`)).body.data as { id: string }[];
    for (let i = 0; i < 3; i++)
      await answer(h, { pollId: poll, answers: [{ slideId: slides[0]!.id, value: `p${i}` }] });
    // Each is claimed and parked: no due time, no attempt counted, nothing sent.
    await until('three parked deliveries', async () => {
      const d = await deliveriesOf(webhookId);
      return (
        d.length === 3 && d.every((x) => x.nextAttemptAt === null && x.attemptCount === 0 && x.status === 'pending')
      );
    });
    expect(at('/paused')).toHaveLength(0);

    const resumed = await call('POST', '/webhooks/update', { webhookId, paused: false });
    expect(resumed.body.data.paused).toBe(false);
    await until('three delivered', async () => (await deliveriesOf(webhookId, 'delivered')).length === 3);
    expect(at('/paused').map((r) => r.headers['x-service-attempt'])).toEqual(['1', '1', '1']);
  });
});

describe('test event', () => {
  it('is signed with the account secret, comes from a made-up respondent and is marked as a test', async () => {
    const { webhookId } = await deliveriesTo('/test-event', 0);
    const res = await call('POST', '/webhooks/test', { webhookId });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.data.test).toBe(true);
    const [req] = await receiver.waitFor(() => at('/test-event').length === 1).then(() => at('/test-event'));
    verifySignature({ secret, header: req!.headers['x-service-signature'], rawBody: req!.rawBody });
    const body = JSON.parse(req!.rawBody);
    expect(body.type).toBe('submitted-responses');
    expect(body.participantId).toMatch(/^test_/);
    expect(body.metadata).toEqual({ test: true });
    expect(Object.keys(body.responses).length).toBeGreaterThan(0);
    expect(req!.headers['x-service-delivery-id']).toBe(res.body.data.id);
    const d = await detail(res.body.data.id);
    expect(d.test).toBe(true);
    expect(d.events).toEqual([expect.objectContaining({ kind: 'test', attemptNumber: 1 })]);
  });
});

describe('the account-wide log', () => {
  it('lists every webhook’s deliveries, with several statuses at once', async () => {
    type Row = { status: string };
    const list = async (q: string) =>
      (await call('GET', `/webhooks/deliveries?accountId=${acct.accountId}&limit=100${q}`)).body.data as Row[];
    const finished = (rows: Row[]) => rows.filter((d) => d.status === 'delivered' || d.status === 'given_up');
    // The worker may finish a delivery between the two reads: read both again until they agree
    // on one moment (a delivery's status only moves on).
    let all: Row[] = [];
    let some: Row[] = [];
    for (let i = 0; i < 50; i++) {
      all = await list('');
      some = await list('&status=delivered,given_up');
      if (some.length === finished(all).length) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(some.length).toBeGreaterThan(0);
    expect(some.every((d) => d.status === 'delivered' || d.status === 'given_up')).toBe(true);
    expect(some.length).toBe(finished(all).length);
    const bad = await call('GET', `/webhooks/deliveries?accountId=${acct.accountId}&status=delivered,lost`);
    expect(bad.status).toBe(400);
  });
});
