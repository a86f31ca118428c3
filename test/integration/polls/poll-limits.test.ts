import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_WEBHOOK_TARGETS } from '../../../src/domain/logic.js';
import { MAX_SLIDES } from '../../../src/domain/slide.js';
import { bearer, harness, type Harness, type TestAccount } from '../../support/app.js';

/**
 * What one poll may hold, since every submission reads all of it and may send a delivery to
 * each Trigger webhook target it matches: slides, and Trigger webhook targets (a URL on a
 * slide, or in the survey logic). Past either, a write is 409 limit_reached.
 */

let h: Harness;
let acme: TestAccount;

beforeAll(async () => {
  h = await harness();
  acme = await h.account();
});
afterAll(() => h?.close());

const call = (url: string, payload: object) =>
  h.app.inject({ method: 'POST', url, headers: bearer(acme.key), payload });
const newPoll = async () =>
  (await call('/poll', { accountId: acme.accountId, title: 'Limits' })).json().data.id as string;
const hook = (n: number) => ({
  match: 'all',
  conditions: [{ op: 'answered' }],
  action: { type: 'trigger-webhook', url: `https://hooks.example.com/target/${n}` },
});

describe('a poll', () => {
  it(`holds at most ${MAX_SLIDES} slides`, async () => {
    const pollId = await newPoll();
    for (let i = 0; i < MAX_SLIDES; i++) {
      const res = await call('/slide', { pollId, type: 'short-answer', title: `Q${i}` });
      expect(res.statusCode, res.body).toBe(201);
    }
    const over = await call('/slide', { pollId, type: 'short-answer', title: 'One more' });
    expect([over.statusCode, over.json().code]).toEqual([409, 'limit_reached']);
  });

  it(`holds at most ${MAX_WEBHOOK_TARGETS} Trigger webhook targets, counted over its slides and its survey logic`, async () => {
    const pollId = await newPoll();
    const first = await call('/slide', {
      pollId,
      type: 'short-answer',
      title: 'Most targets',
      logic: Array.from({ length: MAX_WEBHOOK_TARGETS - 1 }, (_, i) => hook(i)),
    });
    expect(first.statusCode, first.body).toBe(201);
    // One more on the survey logic fills the poll.
    const survey = await call('/poll/update', {
      pollId,
      actionLogic: [{ on: 'complete', action: hook(1000).action }],
    });
    expect(survey.statusCode, survey.body).toBe(200);
    // A new slide naming one URL twice holds one target: one too many.
    const again = await call('/slide', {
      pollId,
      type: 'short-answer',
      title: 'Same URL twice',
      logic: [hook(0), hook(0)],
    });
    expect([again.statusCode, again.json().code]).toEqual([409, 'limit_reached']);
    const plain = await call('/slide', { pollId, type: 'short-answer', title: 'No targets' });
    expect(plain.statusCode, plain.body).toBe(201);
    const over = await call('/slide/update', { slideId: plain.json().data.id, logic: [hook(2000)] });
    expect([over.statusCode, over.json().code]).toEqual([409, 'limit_reached']);
    expect(over.json().errors).toEqual([
      { path: '/logic', message: expect.stringContaining(`of at most ${MAX_WEBHOOK_TARGETS}`) },
    ]);
    const surveyOver = await call('/poll/update', {
      pollId,
      actionLogic: [
        { on: 'complete', action: hook(1000).action },
        { on: 'complete', action: hook(1001).action },
      ],
    });
    expect([surveyOver.statusCode, surveyOver.json().code]).toEqual([409, 'limit_reached']);
    // Removing targets is always taken.
    const fewer = await call('/slide/update', { slideId: first.json().data.id, logic: [hook(0)] });
    expect(fewer.statusCode, fewer.body).toBe(200);
  });
});
