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
  h = await harness();
  acct = await h.account();
});
afterAll(() => h?.close());

describe('deliveries of one event to many targets', () => {
  it('are each stored with the event body, complete webhooks and Trigger webhook targets alike', async () => {
    const poll = await visiblePoll(h, acct);
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
    // Large enough that a copy per target would show: about 200 KB of answers.
    const long = 'long answer '.repeat(8_000);
    const submitted = await h.app.inject({
      method: 'POST',
      url: '/participant/responses',
      payload: { pollId: poll.pollId, complete: true, answers: [{ slideId: poll.q1, value: long.slice(0, 9_999) }] },
    });
    expect(submitted.statusCode, submitted.body).toBe(201);
    const rows = await h.database.db
      .selectFrom('deliveries')
      .select(['url', 'type', 'body'])
      .where('poll_id', '=', poll.pollId)
      .orderBy('url')
      .execute();
    const completed = rows.filter((r) => r.type === 'completed-survey');
    expect(completed.map((r) => r.url)).toEqual([
      ...[0, 1, 2].map((i) => `https://hooks.example.com/complete/${i}`),
      ...[0, 1].map((i) => `https://hooks.example.com/logic/${i}`),
    ]);
    const [first] = completed;
    expect(JSON.parse(first!.body)).toMatchObject({ type: 'completed-survey', pollId: poll.pollId });
    for (const r of completed) expect(r.body).toBe(first!.body);
    // The partial webhook's event is its own.
    const partial = rows.filter((r) => r.url.endsWith('/partial'));
    if (partial.length) expect(JSON.parse(partial[0]!.body).type).toBe('submitted-responses');
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
