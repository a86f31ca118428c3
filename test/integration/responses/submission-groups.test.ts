import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/domain/ids.js';
import type { DB } from '../../../src/infra/db/schema.js';
import { DomainError } from '../../../src/domain/errors.js';
import type { Delivery } from '../../../src/domain/delivery.js';
import type { Deps, Store } from '../../../src/app/ports/index.js';
import { createSubmissionQueue } from '../../../src/app/responses/submission-queue.js';
import { submitGroup, type Submission } from '../../../src/app/responses/submit-responses.js';
import { buildApp } from '../../../src/http/app.js';
import { harness, type Harness, type TestAccount } from '../../support/app.js';
import { onPostgres } from '../../support/db.js';
import { answer, createWebhook, visiblePoll } from '../../support/fixtures.js';

/**
 * Group commit of submissions: several respondents share one transaction and each statement.
 * What must hold is that a group behaves exactly like its submissions written one by one: each
 * gets its own answer, a refused one is refused alone, and one respondent's concurrent
 * submissions still see each other. Real storage (PGlite, or PostgreSQL with CANVASS_TEST_PG_URL).
 */

let h: Harness;
let acme: TestAccount;

beforeAll(async () => {
  h = await harness();
  acme = await h.account({ name: 'Acme' });
});
afterAll(() => h?.close());

/** A poll with two slides, a batched ("partial") webhook and a "complete" one. */
async function pollWithHooks(extra: Record<string, unknown> = {}) {
  const poll = await visiblePoll(h, acme, extra);
  const partial = (await createWebhook(h, acme, poll.pollId, 'https://hooks.example.com/partial', 'partial')).data.id;
  const complete = (await createWebhook(h, acme, poll.pollId, 'https://hooks.example.com/complete', 'complete')).data
    .id;
  return { ...poll, partial, complete };
}

async function deliveriesOf(webhookId: string): Promise<Delivery[]> {
  return (await h.deps.store.deliveries.list({ accountIds: [acme.accountId], webhookId }, { limit: 500 })).data;
}

async function answersOf(pollId: string, participantId: string) {
  return h.deps.store.responses.ofParticipant(pollId, participantId);
}

/** The real store, with its transactions counted. */
function countingTransactions(deps: Deps): { deps: Deps; count: () => number } {
  let n = 0;
  const store = {
    ...deps.store,
    transaction: <T>(fn: Parameters<Deps['store']['transaction']>[0]) =>
      (n++, deps.store.transaction(fn)) as Promise<T>,
  };
  return { deps: { ...deps, store }, count: () => n };
}

describe('a group of submissions', () => {
  it('writes each respondent as if alone: own ids, own completion, one batch each, a completed-survey delivery only for who finished', async () => {
    const p = await pollWithHooks();
    const subs: Submission[] = [
      { caller: null, input: { pollId: p.pollId, answers: [{ slideId: p.q1, value: 'first' }] } },
      {
        caller: null,
        input: {
          pollId: p.pollId,
          answers: [
            { slideId: p.q1, value: 'both' },
            { slideId: p.q2, value: 'both@example.com' },
          ],
        },
      },
      {
        caller: null,
        input: {
          pollId: p.pollId,
          participantId: 'visitor-7',
          answers: [{ slideId: p.q2, value: 'seven@example.com' }],
          participantMetadata: { plan: 'pro' },
        },
      },
    ];
    const results = await submitGroup(h.deps, subs);

    expect(results.map((r) => r.ok)).toEqual([true, true, true]);
    const [a, b, c] = results.map((r) => (r.ok ? r.value : undefined)!);
    expect(new Set([a!.participantId, b!.participantId, c!.participantId]).size).toBe(3);
    expect(c!.participantId).toBe('visitor-7');
    expect([a!.complete, b!.complete, c!.complete]).toEqual([false, true, false]);
    expect(b!.ended).toBe(true);
    expect(a!.nextSlideId).toBe(p.q2);

    for (const [i, r] of [a!, b!, c!].entries()) {
      const stored = await answersOf(p.pollId, r.participantId);
      expect(stored.map((x) => x.id).sort()).toEqual([...r.responseIds].sort());
      expect(stored.map((x) => x.value).sort()).toEqual(subs[i]!.input.answers.map((x) => x.value).sort());
    }
    const visitor = await h.deps.store.responses.getParticipant(p.pollId, 'visitor-7');
    expect(visitor?.metadata).toEqual({ plan: 'pro' });

    const batches = await h.deps.store.batches.claimDue(new Date(Date.now() + 86_400_000), 100);
    const mine = batches.filter((x) => x.webhookId === p.partial);
    expect(mine.map((x) => x.participantId).sort()).toEqual([a!.participantId, b!.participantId, 'visitor-7'].sort());
    expect(mine.find((x) => x.participantId === b!.participantId)?.responseIds.sort()).toEqual(
      [...b!.responseIds].sort(),
    );

    const completed = await deliveriesOf(p.complete);
    expect(completed.map((d) => d.participantId)).toEqual([b!.participantId]);
    expect(
      Object.values(JSON.parse(completed[0]!.body).responses)
        .map((x) => (x as { value: unknown }).value)
        .sort(),
    ).toEqual(['both', 'both@example.com']);
  });

  it('gives each new anonymous respondent an id that cannot be guessed from another’s in the group', async () => {
    const p = await pollWithHooks();
    const results = await submitGroup(
      h.deps,
      Array.from({ length: 6 }, (_, i) => ({
        caller: null,
        input: { pollId: p.pollId, answers: [{ slideId: p.q1, value: `anonymous ${i}` }] },
      })),
    );
    const tails = results.map((r) => (r.ok ? r.value.participantId : '').slice(-14));
    // One group shares one clock reading; counted ids would differ only in their last characters.
    for (const [i, a] of tails.entries())
      for (const b of tails.slice(i + 1)) expect(a.slice(0, 6) === b.slice(0, 6), `${a} ${b}`).toBe(false);
  });

  it('refuses a bad submission alone: unknown poll, unknown slide and a finished respondent fail, the others are written', async () => {
    const p = await pollWithHooks();
    const done = await answer(h, {
      pollId: p.pollId,
      participantId: 'finished',
      answers: [
        { slideId: p.q1, value: 'x' },
        { slideId: p.q2, value: 'f@example.com' },
      ],
    });
    expect(done.complete).toBe(true);
    const before = await h.deps.store.responses.getParticipant(p.pollId, 'finished');

    const results = await submitGroup(h.deps, [
      {
        caller: null,
        input: { pollId: p.pollId, participantId: 'good-1', answers: [{ slideId: p.q1, value: 'one' }] },
      },
      { caller: null, input: { pollId: 'poll_doesnotexist', answers: [{ slideId: p.q1, value: 'lost' }] } },
      { caller: null, input: { pollId: p.pollId, answers: [{ slideId: 'sld_nope', value: 'lost' }] } },
      {
        caller: null,
        input: {
          pollId: p.pollId,
          participantId: 'finished',
          answers: [{ slideId: p.q1, value: 'again' }],
          participantMetadata: { late: true },
        },
      },
      {
        caller: null,
        input: { pollId: p.pollId, participantId: 'good-2', answers: [{ slideId: p.q1, value: 'two' }] },
      },
    ]);

    expect(results.map((r) => r.ok)).toEqual([true, false, false, false, true]);
    const codes = results.map((r) => (r.ok ? null : r.error instanceof DomainError ? r.error.code : 'other'));
    expect(codes).toEqual([null, 'not_found', 'validation_failed', 'conflict', null]);
    expect((await answersOf(p.pollId, 'good-1')).map((x) => x.value)).toEqual(['one']);
    expect((await answersOf(p.pollId, 'good-2')).map((x) => x.value)).toEqual(['two']);
    expect((await answersOf(p.pollId, 'finished')).map((x) => x.value).sort()).toEqual(['f@example.com', 'x']);
    expect(await h.deps.store.responses.getParticipant(p.pollId, 'finished')).toEqual(before);
    const listed = await h.deps.store.responses.list({ pollId: p.pollId }, { limit: 100 });
    expect(listed.data.map((x) => x.value).sort()).toEqual(['f@example.com', 'one', 'two', 'x']);
  });
});

describe('Trigger webhook targets fired by a group', () => {
  it('send each delivery to the endpoint of its own poll, source and URL, one endpoint per target', async () => {
    const logicOn = async (pollId: string, urls: string[]) => {
      const res = await h.app.inject({
        method: 'POST',
        url: '/poll/update',
        headers: { authorization: `Bearer ${acme.key}` },
        payload: {
          pollId,
          actionLogic: urls.map((url) => ({ on: 'complete', action: { type: 'trigger-webhook', url } })),
        },
      });
      expect(res.statusCode, res.body).toBe(200);
    };
    const one = await visiblePoll(h, acme);
    const two = await visiblePoll(h, acme);
    await logicOn(one.pollId, ['https://hooks.example.com/shared', 'https://hooks.example.com/one']);
    await logicOn(two.pollId, ['https://hooks.example.com/shared']);
    const sub = (pollId: string, slideId: string, complete: boolean): Submission => ({
      caller: null,
      input: { pollId, answers: [{ slideId, value: 'hi' }], complete },
    });
    // Fire 0, 2, 1 and 2 targets: the second and fourth the same ones, of one poll.
    const results = await submitGroup(h.deps, [
      sub(one.pollId, one.q1, false),
      sub(one.pollId, one.q1, true),
      sub(two.pollId, two.q1, true),
      sub(one.pollId, one.q1, true),
    ]);
    expect(results.map((r) => r.ok)).toEqual([true, true, true, true]);
    const sent = await sql<{
      participant_id: string;
      url: string;
      poll_id: string;
      endpoint_poll: string;
      endpoint_url: string;
      endpoint_source: string;
    }>`
      SELECT d.participant_id, d.url, d.poll_id, e.poll_id AS endpoint_poll, e.url AS endpoint_url, e.source AS endpoint_source
      FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id
      WHERE d.poll_id IN (${one.pollId}, ${two.pollId}) AND d.source = 'survey-logic'`.execute(h.database.db);
    const of = (i: number) =>
      sent.rows
        .filter((r) => r.participant_id === (results[i]!.ok ? results[i]!.value.participantId : ''))
        .map((r) => r.url)
        .sort();
    expect([of(0), of(1), of(2), of(3)]).toEqual([
      [],
      ['https://hooks.example.com/one', 'https://hooks.example.com/shared'],
      ['https://hooks.example.com/shared'],
      ['https://hooks.example.com/one', 'https://hooks.example.com/shared'],
    ]);
    for (const r of sent.rows)
      expect([r.endpoint_poll, r.endpoint_url, r.endpoint_source]).toEqual([r.poll_id, r.url, 'survey-logic']);
    const endpoints = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM endpoints WHERE poll_id IN (${one.pollId}, ${two.pollId}) AND webhook_id IS NULL`.execute(
      h.database.db,
    );
    expect(endpoints.rows[0]!.n).toBe(3);
  });
});

describe('a respondent who completes the poll in one submission', () => {
  it('is inserted complete and not updated after; one who completes later is updated once', async () => {
    const p = await pollWithHooks();
    const updated: string[] = [];
    const deps = beforeOutcome(h.deps, (o) => void updated.push(...o.participants.map((x) => x.id)));
    const both = [
      { slideId: p.q1, value: 'all at once' },
      { slideId: p.q2, value: 'once@example.com' },
    ];
    const results = await submitGroup(deps, [
      { caller: null, input: { pollId: p.pollId, participantId: 'one-go', answers: both } },
      { caller: null, input: { pollId: p.pollId, participantId: 'two-steps', answers: [both[0]!] } },
      { caller: null, input: { pollId: p.pollId, participantId: 'says-done', answers: [both[0]!], complete: true } },
    ]);
    expect(results.map((r) => r.ok && r.value.complete)).toEqual([true, false, true]);
    expect(updated).toEqual([]);
    const stored = await h.deps.store.responses.getParticipant(p.pollId, 'one-go');
    expect(stored?.complete).toBe(true);
    expect(stored?.completedAt).toEqual(stored?.createdAt);
    expect((await h.deps.store.responses.getParticipant(p.pollId, 'two-steps'))?.completedAt).toBeNull();

    const later = await submitGroup(deps, [
      { caller: null, input: { pollId: p.pollId, participantId: 'two-steps', answers: [both[1]!] } },
    ]);
    expect(later[0]!.ok && later[0]!.value.complete).toBe(true);
    expect(updated).toEqual(['two-steps']);
    expect((await h.deps.store.responses.getParticipant(p.pollId, 'two-steps'))?.complete).toBe(true);
    const completed = await deliveriesOf(p.complete);
    expect(completed.map((d) => d.participantId).sort()).toEqual(['one-go', 'says-done', 'two-steps']);
  });

  it('a later first-time submission under the same id is refused: the row it finds is complete', async () => {
    const p = await pollWithHooks();
    const [won] = await submitGroup(h.deps, [oneGo(p, 'twice', 'left')]);
    const [lost] = await submitGroup(h.deps, [oneGo(p, 'twice', 'right')]);
    expect(won).toMatchObject({ ok: true, value: { complete: true } });
    expect(lost).toMatchObject({ ok: false, error: { code: 'conflict' } });
    expect((await answersOf(p.pollId, 'twice')).map((x) => x.value).sort()).toEqual(['left', 'left@example.com']);
    expect((await deliveriesOf(p.complete)).map((d) => d.participantId)).toEqual(['twice']);
  });
});

/** A submission of both slides under `participantId`: it completes the poll by itself. */
const oneGo = (p: { pollId: string; q1: string; q2: string }, participantId: string, value: string): Submission => ({
  caller: null,
  input: {
    pollId: p.pollId,
    participantId,
    answers: [
      { slideId: p.q1, value },
      { slideId: p.q2, value: `${value}@example.com` },
    ],
  },
});

/** The real store, `hook` running in each group's transaction just before its last statement. */
function beforeOutcome(
  deps: Deps,
  hook: (o: Parameters<Store['submissions']['writeOutcome']>[0]) => void | Promise<void>,
): Deps {
  const store = {
    ...deps.store,
    transaction: <T>(fn: Parameters<Deps['store']['transaction']>[0]) =>
      deps.store.transaction((inner) => {
        const submissions = {
          ...inner.submissions,
          writeOutcome: async (o: Parameters<Store['submissions']['writeOutcome']>[0]) => {
            await hook(o);
            return inner.submissions.writeOutcome(o);
          },
        };
        return fn({ ...inner, submissions });
      }) as Promise<T>,
  };
  return { ...deps, store };
}

describe.skipIf(!onPostgres)('two first submissions of one id at once, each completing it (PostgreSQL)', () => {
  // The first has inserted the respondent complete and holds it uncommitted; the second waits on
  // that row's lock, and then finds it complete under another submission's seq.
  async function race(p: Awaited<ReturnType<typeof pollWithHooks>>) {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const holding = new Promise<void>((r) => (reached = r));
    const held = beforeOutcome(h.deps, () => (reached(), gate));
    const left = submitGroup(held, [oneGo(p, 'raced', 'left')]);
    await holding;
    const right = submitGroup(h.deps, [oneGo(p, 'raced', 'right')]);
    await waitUntilBlocked(h.database.db);
    release();
    return [(await left)[0]!, (await right)[0]!] as const;
  }

  it('the second is refused when the poll takes no resubmissions, and none of its answers is stored', async () => {
    const p = await pollWithHooks();
    const [left, right] = await race(p);
    expect(left).toMatchObject({ ok: true, value: { complete: true } });
    expect(right).toMatchObject({ ok: false, error: { code: 'conflict' } });
    expect((await answersOf(p.pollId, 'raced')).map((x) => x.value).sort()).toEqual(['left', 'left@example.com']);
    expect((await deliveriesOf(p.complete)).map((d) => d.participantId)).toEqual(['raced']);
  });

  it('both are stored when it takes resubmissions, and the respondent completes once', async () => {
    const p = await pollWithHooks({ settings: { allowResubmissions: true } });
    const [left, right] = await race(p);
    expect(left).toMatchObject({ ok: true, value: { complete: true } });
    expect(right).toMatchObject({ ok: true, value: { complete: true } });
    expect((await answersOf(p.pollId, 'raced')).map((x) => x.value).sort()).toEqual(
      ['left', 'left@example.com', 'right', 'right@example.com'].sort(),
    );
    expect((await deliveriesOf(p.complete)).map((d) => d.participantId)).toEqual(['raced']);
  });
});

describe('the submission queue', () => {
  it('groups submissions that arrive while a group is being written: 12 submissions, 2 transactions', async () => {
    const p = await pollWithHooks();
    const counted = countingTransactions(h.deps);
    const queue = createSubmissionQueue(counted.deps, { parallel: 1 });
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        queue.submit(null, { pollId: p.pollId, answers: [{ slideId: p.q1, value: `answer ${i}` }] }),
      ),
    );
    expect(counted.count()).toBe(2);
    for (const [i, r] of results.entries())
      expect((await answersOf(p.pollId, r.participantId)).map((x) => x.value)).toEqual([`answer ${i}`]);
  });

  it('writes a second group at once only when enough wait to fill one: 5 submissions make 2 groups, 20 make 3', async () => {
    const p = await pollWithHooks();
    const few = countingTransactions(h.deps);
    const queue = createSubmissionQueue(few.deps, { parallel: 2, minSecondGroup: 8 });
    const submit = (i: number) =>
      queue.submit(null, { pollId: p.pollId, answers: [{ slideId: p.q1, value: `answer ${i}` }] });
    // The first goes alone at once; four wait (under 8), so they share the next group.
    await Promise.all(Array.from({ length: 5 }, (_, i) => submit(i)));
    expect(few.count()).toBe(2);
    const many = countingTransactions(h.deps);
    const busy = createSubmissionQueue(many.deps, { parallel: 2, minSecondGroup: 8 });
    // The first alone; once 8 wait a second group takes them; the other 11 share a third.
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        busy.submit(null, { pollId: p.pollId, answers: [{ slideId: p.q1, value: `more ${i}` }] }),
      ),
    );
    expect(many.count()).toBe(3);
  });

  it('refuses a submission with 503 and Retry-After while too many wait, and writes the ones it took', async () => {
    const p = await pollWithHooks();
    const queue = createSubmissionQueue(h.deps, { parallel: 1, maxWaiting: 2 });
    const submit = (i: number) =>
      queue.submit(null, { pollId: p.pollId, answers: [{ slideId: p.q1, value: `waiting ${i}` }] });
    // The first is written at once; two wait; the fourth finds the queue full.
    const settled = await Promise.allSettled([0, 1, 2, 3].map(submit));
    expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
    expect((settled[3] as PromiseRejectedResult).reason).toMatchObject({ code: 'unavailable', retryAfter: 1 });
    const stored = await h.deps.store.responses.list({ pollId: p.pollId }, { limit: 100 });
    expect(stored.data.map((r) => r.value).sort()).toEqual(['waiting 0', 'waiting 1', 'waiting 2']);
    // Over HTTP: 503, with the seconds to wait.
    const app = await buildApp({
      deps: h.deps,
      submissions: createSubmissionQueue(h.deps, { maxWaiting: 0 }),
      logger: false,
    });
    const res = await app.inject({
      method: 'POST',
      url: '/participant/responses',
      payload: { pollId: p.pollId, answers: [{ slideId: p.q1, value: 'refused' }] },
    });
    await app.close();
    expect([res.statusCode, res.json().code, res.headers['retry-after']]).toEqual([503, 'unavailable', '1']);
  });

  it("keeps one respondent's concurrent submissions apart: both land, and they complete the respondent once", async () => {
    const p = await pollWithHooks();
    const queue = createSubmissionQueue(h.deps, { parallel: 2 });
    const people = Array.from({ length: 15 }, (_, i) => `person-${i}`);
    const results = await Promise.all(
      people.flatMap((id) => [
        queue.submit(null, {
          pollId: p.pollId,
          participantId: id,
          answers: [{ slideId: p.q1, value: `${id} says hi` }],
        }),
        queue.submit(null, {
          pollId: p.pollId,
          participantId: id,
          answers: [{ slideId: p.q2, value: `${id}@example.com` }],
        }),
      ]),
    );
    // Exactly one of each pair saw the respondent finish.
    for (let i = 0; i < people.length; i++)
      expect([results[2 * i]!.complete, results[2 * i + 1]!.complete].filter(Boolean)).toHaveLength(1);
    for (const id of people) {
      const participant = await h.deps.store.responses.getParticipant(p.pollId, id);
      expect(participant?.complete).toBe(true);
      expect((await answersOf(p.pollId, id)).map((x) => x.slideId).sort()).toEqual([p.q1, p.q2].sort());
    }
    const completed = await deliveriesOf(p.complete);
    expect(completed.map((d) => d.participantId).sort()).toEqual([...people].sort());
    for (const d of completed) expect(Object.keys(JSON.parse(d.body).responses)).toHaveLength(2);
  });

  it('a submission the database refuses fails alone: the rest of its group is written', async () => {
    const p = await pollWithHooks();
    const queue = createSubmissionQueue(h.deps, { parallel: 1 });
    // The HTTP layer turns NUL away with a 400; below it, PostgreSQL refuses it in jsonb.
    const send = (value: string) => queue.submit(null, { pollId: p.pollId, answers: [{ slideId: p.q1, value }] });
    const outcomes = await Promise.allSettled([send('first'), send('second'), send('bad \u0000 byte'), send('fourth')]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    const listed = await h.deps.store.responses.list({ pollId: p.pollId }, { limit: 100 });
    expect(listed.data.map((x) => x.value).sort()).toEqual(['first', 'fourth', 'second']);
  });
});

describe.skipIf(!onPostgres)('a submission that waits for a respondent held by another writer (PostgreSQL)', () => {
  it('sees the answers that writer committed while it waited, and completes the respondent', async () => {
    const p = await pollWithHooks();
    await answer(h, { pollId: p.pollId, participantId: 'held', answers: [{ slideId: p.q1, value: 'first' }] });
    // Another writer, on a connection of its own: locks the respondent, answers the other
    // slide, and commits only once the submission below is waiting on that lock.
    const [result] = await h.database.db.connection().execute(async (other) => {
      await sql`BEGIN`.execute(other);
      await sql`SELECT id FROM participants WHERE poll_id = ${p.pollId} AND id = 'held' FOR UPDATE`.execute(other);
      await sql`
        INSERT INTO responses (id, account_id, poll_id, participant_id, slide_id, value, metadata, synthetic, created_at)
        SELECT ${newId('rsp')}, account_id, id, 'held', ${p.q2}, '"held@example.com"', '{}', false, now() FROM polls WHERE id = ${p.pollId}`.execute(
        other,
      );
      const pending = submitGroup(h.deps, [
        {
          caller: null,
          input: { pollId: p.pollId, participantId: 'held', answers: [{ slideId: p.q1, value: 'again' }] },
        },
      ]);
      await waitUntilBlocked(other);
      await sql`COMMIT`.execute(other);
      return pending;
    });
    expect(result!.ok && result!.value.complete).toBe(true);
    expect((await h.deps.store.responses.getParticipant(p.pollId, 'held'))?.complete).toBe(true);
    expect((await deliveriesOf(p.complete)).filter((d) => d.participantId === 'held')).toHaveLength(1);
  });
});

/** Until some other session of this database waits on a lock (the submission, on the held row). */
async function waitUntilBlocked(conn: Kysely<DB>): Promise<void> {
  for (const until = Date.now() + 10_000; Date.now() < until;) {
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`.execute(conn);
    if (rows[0]!.n > 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the submission never waited on the held respondent');
}
