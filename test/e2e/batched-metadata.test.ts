import { beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/verify.js';
import { bearer, type Harness, type TestAccount } from '../support/app.js';
import { answer, createWebhook, visiblePoll } from '../support/fixtures.js';
import { liveDelivery } from '../support/worker.js';

// A delivery that covers several submissions (a batch, or a completed survey) carries their
// metadata merged in order, and the addresses found in every one of them.

let frozen: number | null = null;
// Wall time, except while the submissions are made: then it stands still, so they surely fall in
// one batch window however slow the machine.
const live = liveDelivery({ delivery: { batchWindowMs: 500 } }, () => new Date(frozen ?? Date.now()));
let h: Harness;
let acct: TestAccount;
let receiver: typeof live.receiver;
beforeAll(() => ({ h, acct, receiver } = live));

describe('a delivery of several submissions', () => {
  it('merges their metadata (later keys win) and finds addresses in the earlier ones', async () => {
    const poll = await visiblePoll(h, acct);
    const q3 = (
      await h.app.inject({
        method: 'POST',
        url: '/slide',
        headers: bearer(acct.key),
        payload: { pollId: poll.pollId, type: 'short-answer', title: 'Anything else?' },
      })
    ).json().data.id;
    const hook = await createWebhook(h, acct, poll.pollId, receiver.url('/partial'), 'partial');
    await createWebhook(h, acct, poll.pollId, receiver.url('/complete'), 'complete');
    frozen = Date.now();
    // Addresses only in the first and second submissions' metadata (and the last one's answer).
    const p = await answer(h, {
      pollId: poll.pollId,
      answers: [{ slideId: poll.q1, value: 'A friend' }],
      metadata: { contact: 'First@Example.com', page: '/a' },
    });
    await answer(h, {
      pollId: poll.pollId,
      participantId: p.participantId,
      answers: [{ slideId: q3, value: 'More' }],
      metadata: { cc: ['second@example.com'] },
    });
    await answer(h, {
      pollId: poll.pollId,
      participantId: p.participantId,
      answers: [{ slideId: poll.q2, value: 'third@example.com' }],
      metadata: { page: '/b', step: 3 },
      complete: true,
    });
    frozen = null;

    const got = await receiver.waitFor(
      (r) => r.some((x) => x.path === '/partial') && r.some((x) => x.path === '/complete'),
    );
    for (const path of ['/partial', '/complete']) {
      const req = got.find((r) => r.path === path)!;
      verifySignature({
        secret: hook.signingSecret!,
        header: req.headers['x-service-signature'],
        rawBody: req.rawBody,
      });
      const body = JSON.parse(req.rawBody);
      expect(Object.keys(body.responses), path).toHaveLength(3);
      expect(body.metadata, path).toEqual({
        contact: 'First@Example.com',
        page: '/b',
        cc: ['second@example.com'],
        step: 3,
      });
      expect(body.emails, path).toEqual(['third@example.com', 'first@example.com', 'second@example.com']);
      expect(body.email, path).toBe('third@example.com');
    }
  });
});
