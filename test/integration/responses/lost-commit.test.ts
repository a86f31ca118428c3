import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommitOutcomeUnknownError } from '../../../src/app/ports/commit-outcome-unknown.js';
import type { SubmitResult } from '../../../src/app/responses/submit-responses.js';
import { createSubmissionQueue } from '../../../src/app/responses/submission-queue.js';
import { openDatabase, type Database } from '../../../src/infra/db/database.js';
import { buildApp } from '../../../src/http/app.js';
import { harness, type Harness, type TestAccount } from '../../support/app.js';
import { createPgDatabase, onPostgres } from '../../support/db.js';
import { createWebhook, visiblePoll } from '../../support/fixtures.js';
import { pgProxy, type Cut, type PgProxy } from '../../support/pg-proxy.js';

/**
 * A connection lost while a group of submissions commits leaves its outcome unknown to the
 * service: the server may have committed or rolled back. Each submission must then be stored
 * exactly once: neither written again beside its committed answers, nor lost, nor answered as a
 * failure once it is stored. A TCP proxy cuts the connection at the chosen COMMIT.
 * PostgreSQL only: the embedded database has no connection to lose.
 */
describe.skipIf(!onPostgres)('a submission group whose COMMIT loses its connection', () => {
  let made: Awaited<ReturnType<typeof createPgDatabase>>;
  let proxy: PgProxy;
  let database: Database;
  let h: Harness;
  let acme: TestAccount;

  beforeAll(async () => {
    made = await createPgDatabase();
    await (await openDatabase({ databaseUrl: made.url, dataDir: '', schema: 'apply', poolSize: 1 })).close();
    proxy = await pgProxy(made.url);
    database = await openDatabase({ databaseUrl: proxy.url, dataDir: '', schema: 'none', poolSize: 4 });
    h = await harness({ database });
    acme = await h.account();
  });
  afterAll(async () => {
    await h?.close();
    await database?.close();
    await proxy?.close();
    await made?.drop();
  });

  /**
   * A poll of two slides with a "partial" webhook (a batch window: each submission opens a batch,
   * written with the group's last statement, which takes COMMIT along) and a "complete" one;
   * respondents who each answer the first slide.
   */
  async function setUp() {
    const poll = await visiblePoll(h, acme);
    const partial = (await createWebhook(h, acme, poll.pollId, 'https://hooks.example.com/p', 'partial')).data.id;
    await createWebhook(h, acme, poll.pollId, 'https://hooks.example.com/c', 'complete');
    const submission = (participantId: string) => ({
      pollId: poll.pollId,
      participantId,
      answers: [{ slideId: poll.q1, value: `from ${participantId}` }],
    });
    const stored = async (participantId: string) =>
      (await h.deps.store.responses.ofParticipant(poll.pollId, participantId)).map((r) => r.id);
    /** The respondents with an open batch of the partial webhook, and the answers each holds. */
    const batched = async () =>
      Object.fromEntries(
        (await h.deps.store.batches.claimDue(new Date(Date.now() + 86_400_000), 100))
          .filter((b) => b.webhookId === partial)
          .map((b) => [b.participantId, b.responseIds.length]),
      );
    return { poll, submission, stored, batched };
  }

  /** The outcome's waits, shortened: what they bound is the time these tests take. */
  const FAST = { settleMs: 500, waitMs: 2_000 };

  /** Three submissions to a queue that writes one group at a time: the first alone, then the other two together. */
  function submitThree(s: Awaited<ReturnType<typeof setUp>>, ids: [string, string, string]) {
    const queue = createSubmissionQueue(h.deps, { parallel: 1, outcome: FAST });
    return Promise.allSettled(ids.map((id) => queue.submit(null, s.submission(id))));
  }

  const values = (settled: PromiseSettledResult<SubmitResult>[]) =>
    settled.map((r) => {
      if (r.status === 'rejected') throw r.reason;
      return r.value;
    });

  /**
   * Three respondents submit while the connection is cut at the `nth` COMMIT as `how` says;
   * each must be answered with its one answer, stored once, in one batch.
   */
  async function eachStoredOnce(how: Cut, nth: number, ids: [string, string, string]) {
    const s = await setUp();
    const cut = proxy.cut(how, nth);
    const settled = await submitThree(s, ids);
    await cut;
    const results = values(settled);
    for (const [i, id] of ids.entries()) {
      expect(results[i]!.responseIds).toHaveLength(1);
      expect(await s.stored(id)).toEqual(results[i]!.responseIds);
    }
    expect(await s.batched()).toEqual(Object.fromEntries(ids.map((id) => [id, 1])));
  }

  it('committed, answer lost: a group of two is not written again, and each gets its own stored answer', () =>
    eachStoredOnce('after-commit', 2, ['a1', 'a2', 'a3']));

  it('committed late (the server reads the COMMIT after the service asks): the group waits for it, and is not written again', async () => {
    const asked = proxy.sent('pg_xact_status');
    await eachStoredOnce('late-commit', 2, ['e1', 'e2', 'e3']);
    // Told at least once that the transaction still ran: the COMMIT is let through on the second question.
    expect(proxy.sent('pg_xact_status') - asked).toBeGreaterThanOrEqual(2);
  });

  it('never committed (the COMMIT lost on the way, the server holding the transaction open): it is ended, and each submission written again alone, once', async () => {
    const ended = proxy.sent('pg_terminate_backend');
    await eachStoredOnce('stuck-commit', 2, ['g1', 'g2', 'g3']);
    expect(proxy.sent('pg_terminate_backend') - ended).toBe(1);
  });

  it('committed, answer lost: a group of one is answered with what it stored, not as a failure', () =>
    eachStoredOnce('after-commit', 1, ['b1', 'b2', 'b3']));

  it('rolled back (COMMIT never reached the server): each submission is written again alone, once', () =>
    eachStoredOnce('before-commit', 2, ['c1', 'c2', 'c3']));

  it('rolled back, a group of one: it is written again, once', () =>
    eachStoredOnce('before-commit', 1, ['h1', 'h2', 'h3']));

  it('a group waiting to learn its outcome gives its place in the queue to the next one', async () => {
    const s = await setUp();
    const queue = createSubmissionQueue(h.deps, { parallel: 1, outcome: { settleMs: 3_000, waitMs: 6_000 } });
    const order: string[] = [];
    const submit = (id: string) => queue.submit(null, s.submission(id)).then(() => void order.push(id));
    const cut = proxy.cut('stuck-commit', 2);
    const first = ['j1', 'j2', 'j3'].map(submit);
    await cut;
    // The group of j2 and j3 now waits for its transaction to end (3 s); j4 need not wait for it.
    await submit('j4');
    await Promise.all(first);
    expect(order.indexOf('j4')).toBeLessThan(order.indexOf('j2'));
    for (const id of ['j1', 'j2', 'j3', 'j4']) expect(await s.stored(id)).toHaveLength(1);
  });

  it('committed, answer lost, database gone: the group fails as unknown and is not written again', async () => {
    const s = await setUp();
    const cut = proxy.cut('after-commit', 2, { down: true });
    const settled = await submitThree(s, ['d1', 'd2', 'd3']);
    await cut;
    proxy.up();
    expect(settled[0]!.status).toBe('fulfilled');
    for (const r of settled.slice(1)) {
      expect(r.status).toBe('rejected');
      expect((r as PromiseRejectedResult).reason).toBeInstanceOf(CommitOutcomeUnknownError);
    }
    // The group did commit: each respondent's one answer, and no second.
    for (const id of ['d1', 'd2', 'd3']) expect(await s.stored(id)).toHaveLength(1);
  });

  it('answers such a submission over HTTP with 503 and no Retry-After: sent again, it would be stored twice', async () => {
    const s = await setUp();
    const cut = proxy.cut('after-commit', 1, { down: true });
    const app = await buildApp({
      deps: h.deps,
      submissions: createSubmissionQueue(h.deps, { outcome: FAST }),
      logger: false,
    });
    const res = await app.inject({ method: 'POST', url: '/participant/responses', payload: s.submission('f1') });
    await app.close();
    await cut;
    proxy.up();
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBeUndefined();
    expect(res.json()).toMatchObject({ code: 'unavailable', detail: expect.stringMatching(/may have been stored/) });
    expect(await s.stored('f1')).toHaveLength(1);
  });
});
