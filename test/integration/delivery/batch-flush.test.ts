import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushDueBatches } from '../../../src/app/delivery/flush-batches.js';
import { harness, type Harness, type TestAccount } from '../../support/app.js';
import { answer, createWebhook, visiblePoll } from '../../support/fixtures.js';

/** A delivery's payload, as far as these tests read it. */
type Body = {
  type: string;
  pollId: string;
  participantId: string;
  responses: Record<string, { value: unknown }>;
  metadata: unknown;
  submissionsComplete: boolean;
  timestamp: number;
  email: string | null;
  emails: string[];
};

/** The payloads of a webhook's deliveries. */
const bodiesOf = async (h: Harness, account: TestAccount, webhookId: string): Promise<Body[]> =>
  (await h.deps.store.deliveries.list({ accountIds: [account.accountId], webhookId }, { limit: 50 })).data.map(
    (d) => JSON.parse(d.body) as Body,
  );

/** A harness of its own with this batch window, a visible poll and a partial webhook to `url`. */
async function withWebhook(
  batchWindowMs: number,
  url: string,
  fn: (w: { h: Harness; acct: TestAccount; p: Awaited<ReturnType<typeof visiblePoll>>; hook: string }) => Promise<void>,
): Promise<void> {
  const h = await harness({ delivery: { batchWindowMs } });
  try {
    const acct = await h.account();
    const p = await visiblePoll(h, acct);
    const hook = (await createWebhook(h, acct, p.pollId, url)).data.id;
    await fn({ h, acct, p, hook });
  } finally {
    await h.close();
  }
}

// The flush reads what all its batches need a statement per kind (polls, respondents, answers),
// so one flush mixes polls, webhooks and respondents: each batch must still become the delivery
// of its own respondent's answers to its own webhook.
describe('flushing due batches', () => {
  let h: Harness;
  let acme: TestAccount;
  beforeAll(async () => {
    h = await harness();
    acme = await h.account({ name: 'Acme' });
  });
  afterAll(() => h?.close());

  it('makes one delivery per batch, of its respondent’s answers to its webhook, across polls and in several rounds', async () => {
    const p1 = await visiblePoll(h, acme, { title: 'First' });
    const p2 = await visiblePoll(h, acme, { title: 'Second' });
    const a = (await createWebhook(h, acme, p1.pollId, 'https://hooks.example.com/a')).data.id;
    const b = (await createWebhook(h, acme, p2.pollId, 'https://hooks.example.com/b')).data.id;
    const c = (await createWebhook(h, acme, p2.pollId, 'https://hooks.example.com/c')).data.id;

    // r1 answers twice within the window (one batch of two answers); r2 and r3 once each.
    await answer(h, {
      pollId: p1.pollId,
      participantId: 'r1',
      answers: [{ slideId: p1.q1, value: 'r1 first' }],
      metadata: { step: 1 },
    });
    await answer(h, {
      pollId: p1.pollId,
      participantId: 'r1',
      answers: [{ slideId: p1.q2, value: 'r1@example.com' }],
      metadata: { step: 2 },
    });
    await answer(h, { pollId: p1.pollId, participantId: 'r2', answers: [{ slideId: p1.q1, value: 'r2 only' }] });
    await answer(h, {
      pollId: p2.pollId,
      participantId: 'r3',
      answers: [{ slideId: p2.q1, value: 'r3 on the second poll' }],
    });

    expect(await flushDueBatches(h.deps, 3)).toBe(0); // nothing due before the window ends
    h.clock.advance(h.deps.delivery.batchWindowMs + 1);
    // Four batches (r1→a, r2→a, r3→b, r3→c), three at most per flush.
    expect(await flushDueBatches(h.deps, 3)).toBe(3);
    expect(await flushDueBatches(h.deps, 3)).toBe(1);
    expect(await flushDueBatches(h.deps, 3)).toBe(0);

    const toA = (await bodiesOf(h, acme, a)).sort((x, y) => x.participantId.localeCompare(y.participantId));
    expect(
      toA.map((d) => [
        d.pollId,
        d.participantId,
        Object.fromEntries(Object.entries(d.responses).map(([k, v]) => [k, v.value])),
      ]),
    ).toEqual([
      [p1.pollId, 'r1', { [p1.q1]: 'r1 first', [p1.q2]: 'r1@example.com' }],
      [p1.pollId, 'r2', { [p1.q1]: 'r2 only' }],
    ]);
    // The latest answer's metadata (the test clock stands still, so both answers have ids of the
    // same millisecond: the batch's own order says which came last), and the completion as it stands.
    expect(toA[0]!.metadata).toEqual({ step: 2 });
    expect(toA[0]!.submissionsComplete).toBe(true);
    expect(toA[1]!.submissionsComplete).toBe(false);
    for (const hook of [b, c]) {
      expect(
        (await bodiesOf(h, acme, hook)).map((d) => [
          d.pollId,
          d.participantId,
          Object.values(d.responses).map((r) => r.value),
        ]),
      ).toEqual([[p2.pollId, 'r3', ['r3 on the second poll']]]);
    }
  });

  it("gives a later batch the address the respondent gave in an earlier one: a payload's addresses are the respondent's", async () => {
    const p = await visiblePoll(h, acme, { title: 'Addresses' });
    const hook = (await createWebhook(h, acme, p.pollId, 'https://hooks.example.com/addresses')).data.id;
    await answer(h, {
      pollId: p.pollId,
      participantId: 'early',
      answers: [{ slideId: p.q2, value: 'Early@Example.com' }],
    });
    h.clock.advance(h.deps.delivery.batchWindowMs + 1);
    expect(await flushDueBatches(h.deps, 10)).toBe(1);
    await answer(h, {
      pollId: p.pollId,
      participantId: 'early',
      answers: [{ slideId: p.q1, value: 'no address here' }],
      metadata: { contact: 'later@example.com' },
    });
    h.clock.advance(h.deps.delivery.batchWindowMs + 1);
    expect(await flushDueBatches(h.deps, 10)).toBe(1);
    const bodies = (await bodiesOf(h, acme, hook)).sort((x, y) => x.emails.length - y.emails.length);
    // The second delivery carries only its own answer, and both addresses, the earlier first.
    expect(bodies.map((b) => Object.keys(b.responses))).toEqual([[p.q2], [p.q1]]);
    expect(bodies[1]).toMatchObject({ email: 'early@example.com', emails: ['early@example.com', 'later@example.com'] });
  });
});

describe('payload addresses without a batch window', () => {
  it("gives each partial delivery the respondent's earlier addresses too", () =>
    withWebhook(0, 'https://hooks.example.com/unbatched', async ({ h, acct, p, hook }) => {
      await answer(h, { pollId: p.pollId, participantId: 'x', answers: [{ slideId: p.q2, value: 'x@example.com' }] });
      h.clock.advance(1);
      await answer(h, { pollId: p.pollId, participantId: 'x', answers: [{ slideId: p.q1, value: 'hello' }] });
      const bodies = await bodiesOf(h, acct, hook);
      const later = bodies.find((b) => Object.keys(b.responses).includes(p.q1))!;
      expect(Object.keys(later.responses)).toEqual([p.q1]);
      expect(later.email).toBe('x@example.com');
    }));
});

// "On every submission": a submission that stores no answer but completes the respondent is one
// too. A partial webhook hears of it (no answers, `submissionsComplete: true`); a submission that
// neither answers nor completes makes nothing.
describe('a partial webhook and a submission with no answers', () => {
  for (const batchWindowMs of [0, 1_000]) {
    it(`goes out when it completes the respondent, and not otherwise (batch window ${batchWindowMs} ms)`, () =>
      withWebhook(batchWindowMs, 'https://hooks.example.com/empty', async ({ h, acct, p, hook }) => {
        const flushed = async () => {
          h.clock.advance(batchWindowMs + 1);
          await flushDueBatches(h.deps, 10);
          return bodiesOf(h, acct, hook);
        };
        await answer(h, { pollId: p.pollId, participantId: 'x', answers: [{ slideId: p.q2, value: 'x@example.com' }] });
        expect(await flushed()).toHaveLength(1);

        // Nothing answered, nothing completed: no event.
        expect(await answer(h, { pollId: p.pollId, participantId: 'x', answers: [] })).toMatchObject({
          complete: false,
        });
        expect(await flushed()).toHaveLength(1);

        expect(await answer(h, { pollId: p.pollId, participantId: 'x', answers: [], complete: true })).toMatchObject({
          complete: true,
          responseIds: [],
        });
        const bodies = await flushed();
        expect(bodies).toHaveLength(2);
        const last = bodies.find((b) => !Object.keys(b.responses).length);
        expect(last).toMatchObject({
          type: 'submitted-responses',
          responses: {},
          submissionsComplete: true,
          email: 'x@example.com',
        });
      }));
  }

  it('joins the open batch when the respondent answered within the window: one delivery, complete', () =>
    withWebhook(1_000, 'https://hooks.example.com/joined', async ({ h, acct, p, hook }) => {
      await answer(h, { pollId: p.pollId, participantId: 'y', answers: [{ slideId: p.q1, value: 'first' }] });
      h.clock.advance(400);
      const completedAt = h.clock.now().getTime();
      await answer(h, { pollId: p.pollId, participantId: 'y', answers: [], complete: true });
      h.clock.advance(601);
      expect(await flushDueBatches(h.deps, 10)).toBe(1);
      const bodies = await bodiesOf(h, acct, hook);
      expect(bodies.map((b) => [Object.keys(b.responses), b.submissionsComplete])).toEqual([[[p.q1], true]]);
      // The event's time is the completion's, the batch's latest submission.
      expect(bodies[0]!.timestamp).toBe(completedAt);
    }));

  it('is joined by a completion after the window but before a flush claims the batch, and takes its time', () =>
    withWebhook(1_000, 'https://hooks.example.com/late', async ({ h, acct, p, hook }) => {
      await answer(h, { pollId: p.pollId, participantId: 'z', answers: [{ slideId: p.q1, value: 'first' }] });
      h.clock.advance(1_500); // due, not yet flushed
      const completedAt = h.clock.now().getTime();
      await answer(h, { pollId: p.pollId, participantId: 'z', answers: [], complete: true });
      expect(await flushDueBatches(h.deps, 10)).toBe(1);
      const bodies = await bodiesOf(h, acct, hook);
      expect(bodies.map((b) => [b.submissionsComplete, b.timestamp])).toEqual([[true, completedAt]]);
    }));
});

// "Send only if fully completed": a webhook changed to it while a batch of answers was open
// sends that batch no more than any later answer.
describe('a partial webhook changed to complete-only within the batch window', () => {
  it('sends nothing of the batch that was open', () =>
    withWebhook(1_000, 'https://hooks.example.com/changed', async ({ h, acct, p, hook }) => {
      await answer(h, { pollId: p.pollId, participantId: 'y', answers: [{ slideId: p.q1, value: 'hello' }] });
      const changed = await h.app.inject({
        method: 'POST',
        url: '/webhooks/update',
        headers: { authorization: `Bearer ${acct.key}` },
        payload: { webhookId: hook, deliveryRule: 'complete' },
      });
      expect(changed.statusCode, changed.body).toBe(200);
      h.clock.advance(1_000);
      await flushDueBatches(h.deps, 10);
      expect(await bodiesOf(h, acct, hook)).toEqual([]);
      // Nor is the batch kept for a later flush.
      expect(await flushDueBatches(h.deps, 10)).toBe(0);
    }));
});
