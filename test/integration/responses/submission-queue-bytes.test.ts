import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSubmissionQueue } from '../../../src/app/responses/submission-queue.js';
import { DomainError } from '../../../src/domain/errors.js';
import { buildApp } from '../../../src/http/app.js';
import { prometheusMetrics } from '../../../src/infra/metrics/prometheus.js';
import { harness, type Harness, type TestAccount } from '../../support/app.js';
import { visiblePoll } from '../../support/fixtures.js';
import { holdTransaction } from '../../support/hold.js';

/**
 * The submissions waiting to be written hold their bodies in memory (README, errors: 503): past
 * a byte budget, a new one is refused with 503 and Retry-After rather than the process running
 * out of heap; one alone is always taken, and those taken are all written.
 */

let h: Harness;
let acct: TestAccount;
beforeAll(async () => {
  h = await harness();
  acct = await h.account();
});
afterAll(() => h?.close());

/** A transaction holding the table submissions write (embedded: its one connection too). */
const holdParticipants = () =>
  holdTransaction(h.database.db, (trx) => sql`LOCK TABLE participants IN ACCESS EXCLUSIVE MODE`.execute(trx));

describe('the submission queue’s byte budget', () => {
  it('refuses a submission past it while the database is held, and writes those it took once it answers', async () => {
    const poll = await visiblePoll(h, acct);
    const queue = createSubmissionQueue(h.deps, { parallel: 1, maxBytes: 3_000 });
    const submit = (value: string) =>
      queue.submit(null, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value }] }, 1_000);
    const hold = await holdParticipants();

    const taken = [submit('one'), submit('two'), submit('three')];
    const refused = await submit('four').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ code: 'unavailable', retryAfter: 1 });

    await hold.release();
    const written = await Promise.all(taken);
    expect(written.map((r) => r.responseIds.length)).toEqual([1, 1, 1]);
    // Their bytes are given back: a new one is taken again.
    expect((await submit('five')).responseIds).toHaveLength(1);
  });

  it('takes one alone whatever its size', async () => {
    const poll = await visiblePoll(h, acct);
    const queue = createSubmissionQueue(h.deps, { maxBytes: 10 });
    const r = await queue.submit(null, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'big' }] }, 5_000);
    expect(r.responseIds).toHaveLength(1);
  });

  it.each([false, true])(
    'is given the size of each request by POST /participant/responses (metrics on: %s)',
    async (counted) => {
      const poll = await visiblePoll(h, acct);
      const app = await buildApp({
        deps: h.deps,
        logger: false,
        submissions: createSubmissionQueue(h.deps, { maxBytes: 150 }),
        ...(counted ? { metrics: { metrics: prometheusMetrics({ now: () => new Date() }) } } : {}),
      });
      const hold = await holdParticipants();
      try {
        const send = () =>
          app.inject({
            method: 'POST',
            url: '/participant/responses',
            payload: { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'x'.repeat(100) }] },
          });
        // Whichever reaches the queue first is taken (alone, whatever its size); the other is refused.
        const both = [send(), send()];
        const refused = await Promise.race(both);
        expect(refused.statusCode, refused.body).toBe(503);
        expect(refused.headers['retry-after']).toBe('1');
        await hold.release();
        expect((await Promise.all(both)).map((r) => r.statusCode).sort()).toEqual([201, 503]);
      } finally {
        await hold.release();
        await app.close();
      }
    },
  );
});
