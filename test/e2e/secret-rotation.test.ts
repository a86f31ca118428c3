import { beforeAll, describe, expect, it } from 'vitest';
import { rotateSigningSecret } from '../../src/app/accounts/rotate-signing-secret.js';
import { verifySignature, WebhookVerificationError } from '../../src/verify.js';
import { type Harness, type TestAccount } from '../support/app.js';
import { answer, createWebhook, visiblePoll } from '../support/fixtures.js';
import { liveDelivery } from '../support/worker.js';

// After a rotation, attempts carry the new signature first and the old one after it for the
// overlap period, so a receiver still holding the old secret loses nothing; after it, only the new.

const OVERLAP_MS = 3_600_000;
// Wall time plus a jump the test makes to pass the overlap without waiting for it.
let offset = 0;
const live = liveDelivery(
  { delivery: { batchWindowMs: 0, secretOverlapMs: OVERLAP_MS } },
  () => new Date(Date.now() + offset),
);
let h: Harness;
let acct: TestAccount;
let receiver: typeof live.receiver;
beforeAll(() => ({ h, acct, receiver } = live));

describe('signing secret rotation', () => {
  it('signs with both secrets through the overlap, and with the new one only after it', async () => {
    const poll = await visiblePoll(h, acct);
    const oldSecret = (await createWebhook(h, acct, poll.pollId, receiver.url('/rotation'))).signingSecret!;
    const send = async (value: string) => {
      const before = receiver.received.length;
      await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value }] });
      return (await receiver.waitFor((r) => r.length > before))[before]!;
    };
    const check = (secret: string, r: { headers: Record<string, string>; rawBody: string }) =>
      verifySignature({
        secret,
        header: r.headers['x-service-signature'],
        rawBody: r.rawBody,
        now: Date.now() + offset,
      });

    const { signingSecret: newSecret } = await rotateSigningSecret(h.deps, acct.accountId);
    const during = await send('during the overlap');
    expect(during.headers['x-service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(() => check(oldSecret, during)).not.toThrow();
    expect(() => check(newSecret, during)).not.toThrow();

    offset = OVERLAP_MS + 1_000;
    const after = await send('after the overlap');
    expect(after.headers['x-service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(() => check(newSecret, after)).not.toThrow();
    expect(() => check(oldSecret, after)).toThrow(WebhookVerificationError);
  });
});
