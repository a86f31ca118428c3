import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedBodies } from '../../../src/infra/db/repositories/deliveries.js';
import type { NewDelivery } from '../../../src/domain/delivery.js';
import { bearer, harness, type Harness, type TestAccount } from '../../support/app.js';
import { createWebhook, visiblePoll } from '../../support/fixtures.js';

// One event sent to many targets (complete webhooks, Trigger webhook targets) carries one body,
// made once and passed to storage once (deliveryInserts), each delivery stored with it whole.

let h: Harness;
let acct: TestAccount;
beforeAll(async () => {
  // No batch window: a partial webhook's delivery is made with the submission, beside the others.
  h = await harness({ delivery: { batchWindowMs: 0 } });
  acct = await h.account();
});
afterAll(() => h?.close());

describe('deliveries of one event to many targets', () => {
  it("are each stored with their event's body: complete webhooks and survey targets one, the partial webhook and the question's target the other", async () => {
    const poll = await visiblePoll(h, acct);
    const question = await h.app.inject({
      method: 'POST',
      url: '/slide/update',
      headers: bearer(acct.key),
      payload: {
        slideId: poll.q1,
        logic: [
          {
            match: 'all',
            conditions: [{ op: 'answered' }],
            action: { type: 'trigger-webhook', url: 'https://hooks.example.com/question' },
          },
        ],
      },
    });
    expect(question.statusCode, question.body).toBe(200);
    for (let i = 0; i < 3; i++)
      await createWebhook(h, acct, poll.pollId, `https://hooks.example.com/complete/${i}`, 'complete');
    await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/partial', 'partial');
    const logic = await h.app.inject({
      method: 'POST',
      url: '/poll/update',
      headers: bearer(acct.key),
      payload: {
        pollId: poll.pollId,
        actionLogic: [0, 1].map((i) => ({
          on: 'complete',
          conditions: [{ slideId: poll.q1, op: 'answered' }],
          action: { type: 'trigger-webhook', url: `https://hooks.example.com/logic/${i}` },
        })),
      },
    });
    expect(logic.statusCode, logic.body).toBe(200);
    // An earlier submission first, so that the completion's answers (all of the respondent's)
    // and this submission's own differ.
    const send = async (payload: object) => {
      const res = await h.app.inject({ method: 'POST', url: '/participant/responses', payload });
      expect(res.statusCode, res.body).toBe(201);
    };
    await send({
      pollId: poll.pollId,
      participantId: 'ann',
      answers: [{ slideId: poll.q2, value: 'ann@example.com' }],
    });
    const long = 'long answer '.repeat(1_000).slice(0, 9_999);
    await send({
      pollId: poll.pollId,
      participantId: 'ann',
      complete: true,
      answers: [{ slideId: poll.q1, value: long }],
    });
    const rows = await h.database.db
      .selectFrom('deliveries')
      .select(['url', 'type', 'body'])
      .where('poll_id', '=', poll.pollId)
      .orderBy('url')
      .execute();
    const answered = (r: { body: string }) => Object.keys(JSON.parse(r.body).responses).sort();
    const completed = rows.filter((r) => r.type === 'completed-survey');
    expect(completed.map((r) => r.url)).toEqual([
      ...[0, 1, 2].map((i) => `https://hooks.example.com/complete/${i}`),
      ...[0, 1].map((i) => `https://hooks.example.com/logic/${i}`),
    ]);
    const [first] = completed;
    expect(JSON.parse(first!.body)).toMatchObject({ type: 'completed-survey', pollId: poll.pollId });
    expect(answered(first!)).toEqual([poll.q1, poll.q2].sort());
    for (const r of completed) expect(r.body).toBe(first!.body);
    // The last submission's own event: to the partial webhook and to the question's target.
    const own = rows.filter((r) => r.type === 'submitted-responses' && answered(r).includes(poll.q1));
    expect(own.map((r) => r.url)).toEqual(['https://hooks.example.com/partial', 'https://hooks.example.com/question']);
    expect(answered(own[0]!)).toEqual([poll.q1]);
    expect(own[1]!.body).toBe(own[0]!.body);
    // And the first submission's, to the partial webhook alone.
    expect(rows).toHaveLength(8);
  });
});

describe('sharedBodies', () => {
  const row = (body: string) => ({ body }) as NewDelivery;

  it('passes each body shared by identity once, and each row its place among them', () => {
    const a = JSON.stringify({ event: 'a' });
    const b = JSON.stringify({ event: 'b' });
    expect(sharedBodies([a, a, b, a, b].map(row))).toEqual({ bodies: [a, b], at: [1, 1, 2, 1, 2] });
  });

  it('says none are shared when every body is distinct', () => {
    expect(sharedBodies(['x', 'y', 'z'].map(row))).toBeUndefined();
  });
});
