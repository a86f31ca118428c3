import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/verify.js';
import type { Harness, TestAccount } from '../support/app.js';
import { answer, createWebhook, visiblePoll } from '../support/fixtures.js';
import { liveDelivery } from '../support/worker.js';

const live = liveDelivery({ delivery: { batchWindowMs: 300 } });
let h: Harness;
let acct: TestAccount;
let receiver: typeof live.receiver;
beforeAll(() => ({ h, acct, receiver } = live));

describe('delivery end to end', () => {
  it('batches answers in a row into one signed delivery that verifies', async () => {
    const poll = await visiblePoll(h, acct);
    const hook = await createWebhook(h, acct, poll.pollId, receiver.url('/hook'));
    expect(hook.signingSecret).toMatch(/^whsec_/);
    const p = await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'A friend' }] });
    await answer(h, {
      pollId: poll.pollId,
      participantId: p.participantId,
      answers: [{ slideId: poll.q2, value: 'Ann@Example.com' }],
      participantMetadata: { email: 'ann.work@example.org' },
    });
    const [req] = await receiver.waitFor((r) => r.length >= 1);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.received).toHaveLength(1);
    const body = JSON.parse(req!.rawBody);
    expect(body.type).toBe('submitted-responses');
    expect(Object.keys(body.responses).sort()).toEqual([poll.q1, poll.q2].sort());
    expect(body.email).toBe('ann@example.com');
    expect(body.emails).toEqual(['ann@example.com', 'ann.work@example.org']);
    expect(req!.headers['x-service-attempt']).toBe('1');
    expect(req!.headers['x-service-delivery-id']).toMatch(/^dlv_/);
    expect(req!.headers['x-service-secret']).toBe(hook.data.legacySecret);
    expect(req!.headers['content-type']).toBe('application/json');
    verifySignature({
      secret: hook.signingSecret!,
      header: req!.headers['x-service-signature'],
      rawBody: req!.rawBody,
    });
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(req!.headers['x-service-signature']!)!;
    expect(createHmac('sha256', hook.signingSecret!).update(`${t}.${req!.rawBody}`).digest('hex')).toBe(v1);
  });
});
