import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/app/ports/index.js';
import { createWebhook, visiblePoll } from '../../support/fixtures.js';
import { acme, call, expectProblem, h, HOOK, submit, useResponsesApi } from '../../support/responses-api.js';

/**
 * POST /participant/responses (src/app/responses/submission-queue.ts) when the poll or a webhook
 * it read is deleted before its writes: a 404, or the webhook left out, never a 500.
 */

useResponsesApi();

// The poll and its webhooks are read without a lock: a deletion can commit between that read
// and the writes, whose foreign keys then refuse them. The submission is read and written again.
describe('a deletion that commits between the read and the write', () => {
  /** The store, its first read of the polls answered with what `stale` read before the deletion. */
  const readingFirst = (stale: Awaited<ReturnType<Store['polls']['getForSubmission']>>): Store => {
    const real = h.deps.store;
    let first = true;
    return {
      ...real,
      transaction: (fn) =>
        real.transaction((tx) =>
          fn({
            ...tx,
            polls: {
              ...tx.polls,
              getForSubmission: async (ids) => {
                if (!first) return tx.polls.getForSubmission(ids);
                first = false;
                return stale;
              },
            },
          }),
        ),
    };
  };

  it('of a webhook: 201, the answer stored, and no batch for the deleted webhook', async () => {
    const poll = await visiblePoll(h, acme);
    const { data: hook } = await createWebhook(h, acme, poll.pollId, HOOK, 'partial');
    const stale = await h.deps.store.polls.getForSubmission([poll.pollId]);
    expect((await call('DELETE', `/webhooks?id=${hook.id}`, acme.key)).statusCode).toBe(200);
    const real = h.deps.store;
    h.deps.store = readingFirst(stale);
    try {
      const res = await submit({ pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'after the delete' }] });
      expect(res.statusCode, res.body).toBe(201);
    } finally {
      h.deps.store = real;
    }
    const db = h.database.db;
    expect(await db.selectFrom('responses').select('id').where('poll_id', '=', poll.pollId).execute()).toHaveLength(1);
    expect(await db.selectFrom('batches').select('id').where('poll_id', '=', poll.pollId).execute()).toEqual([]);
  });

  it('of the poll: 404, and nothing stored', async () => {
    const poll = await visiblePoll(h, acme);
    const stale = await h.deps.store.polls.getForSubmission([poll.pollId]);
    expect((await call('DELETE', `/poll?pollId=${poll.pollId}`, acme.key)).statusCode).toBe(200);
    const real = h.deps.store;
    h.deps.store = readingFirst(stale);
    try {
      expectProblem(
        await submit({ pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'x' }] }),
        404,
        'not_found',
      );
    } finally {
      h.deps.store = real;
    }
    expect(
      await h.database.db.selectFrom('responses').select('id').where('poll_id', '=', poll.pollId).execute(),
    ).toEqual([]);
  });
});
