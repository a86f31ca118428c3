import { describe, expect, it } from 'vitest';
import { MAX_WEBHOOK_TARGETS } from '../../../src/domain/logic.js';
import { MAX_SLIDES } from '../../../src/domain/slide.js';
import { acme, call, createPoll, expectProblem, usePollsApi } from '../../support/polls-api.js';

/**
 * What one poll may hold, since every submission reads all of it and may send a delivery to
 * each Trigger webhook target it matches: slides, and Trigger webhook targets (a URL on a
 * slide, or in the survey logic). Past either, a write is 409 limit_reached.
 */

usePollsApi();

const post = (url: string, payload: object) => call('POST', url, acme.key, payload);
const newPoll = async () => (await createPoll(acme, { title: 'Limits' })).id;
const hook = (n: number) => ({
  match: 'all',
  conditions: [{ op: 'answered' }],
  action: { type: 'trigger-webhook', url: `https://hooks.example.com/target/${n}` },
});

describe('a poll', () => {
  it(`holds at most ${MAX_SLIDES} slides`, async () => {
    const pollId = await newPoll();
    for (let i = 0; i < MAX_SLIDES; i++) {
      const res = await post('/slide', { pollId, type: 'short-answer', title: `Q${i}` });
      expect(res.statusCode, res.body).toBe(201);
    }
    const over = await post('/slide', { pollId, type: 'short-answer', title: 'One more' });
    expectProblem(over, 409, 'limit_reached');
  });

  it(`holds at most ${MAX_WEBHOOK_TARGETS} Trigger webhook targets, counted over its slides and its survey logic`, async () => {
    const pollId = await newPoll();
    const first = await post('/slide', {
      pollId,
      type: 'short-answer',
      title: 'Most targets',
      logic: Array.from({ length: MAX_WEBHOOK_TARGETS - 1 }, (_, i) => hook(i)),
    });
    expect(first.statusCode, first.body).toBe(201);
    // One more on the survey logic fills the poll.
    const survey = await post('/poll/update', {
      pollId,
      actionLogic: [{ on: 'complete', action: hook(1000).action }],
    });
    expect(survey.statusCode, survey.body).toBe(200);
    // A new slide naming one URL twice holds one target: one too many.
    const again = await post('/slide', {
      pollId,
      type: 'short-answer',
      title: 'Same URL twice',
      logic: [hook(0), hook(0)],
    });
    expectProblem(again, 409, 'limit_reached');
    const plain = await post('/slide', { pollId, type: 'short-answer', title: 'No targets' });
    expect(plain.statusCode, plain.body).toBe(201);
    const over = await post('/slide/update', { slideId: plain.json().data.id, logic: [hook(2000)] });
    expect(expectProblem(over, 409, 'limit_reached').errors).toEqual([
      { path: '/logic', message: expect.stringContaining(`of at most ${MAX_WEBHOOK_TARGETS}`) },
    ]);
    const surveyOver = await post('/poll/update', {
      pollId,
      actionLogic: [
        { on: 'complete', action: hook(1000).action },
        { on: 'complete', action: hook(1001).action },
      ],
    });
    expectProblem(surveyOver, 409, 'limit_reached');
    // Removing targets is always taken.
    const fewer = await post('/slide/update', { slideId: first.json().data.id, logic: [hook(0)] });
    expect(fewer.statusCode, fewer.body).toBe(200);
  });
});
