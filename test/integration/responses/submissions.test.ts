import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_ANSWERS_PER_RESPONDENT } from '../../../src/domain/answer.js';
import { newId } from '../../../src/domain/ids.js';
import { setPlan } from '../../../src/app/accounts/set-plan.js';
import type { Store } from '../../../src/app/ports/index.js';
import { answer, createWebhook, visiblePoll } from '../../support/fixtures.js';
import {
  acme,
  call,
  expectProblem,
  h,
  HOOK,
  rival,
  slide,
  submit,
  useResponsesApi,
} from '../../support/responses-api.js';

/**
 * Route tests for submitting answers, POST /participant/responses (src/app/responses/submit-responses.ts):
 * who may answer (public polls, apiOnly polls), validation, completion and resubmission, and the
 * hand-off to webhooks committed in the same transaction as the answers. The batch window is the
 * default 5 s.
 */

useResponsesApi();

describe('POST /participant/responses: who may answer', () => {
  it('a hidden poll → 404, even with its owner’s key', async () => {
    const poll = (await call('POST', '/poll', acme.key, { accountId: acme.accountId, title: 'Hidden' })).json().data;
    const q = await slide(poll.id, { type: 'short-answer', title: 'Q' });
    expectProblem(await submit({ pollId: poll.id, answers: [{ slideId: q, value: 'x' }] }), 404, 'not_found');
    expectProblem(await submit({ pollId: poll.id, answers: [{ slideId: q, value: 'x' }] }, acme.key), 404, 'not_found');
    expect(await h.database.db.selectFrom('responses').selectAll().where('poll_id', '=', poll.id).execute()).toEqual(
      [],
    );
  });

  it('a scheduled poll takes answers from its startAt until its endAt, and is a 404 outside them', async () => {
    const poll = await visiblePoll(h, acme);
    const at = (ms: number) => new Date(h.clock.now().getTime() + ms).toISOString();
    const schedule = { type: 'scheduled', startAt: at(60_000), endAt: at(120_000) };
    const set = await call('POST', '/poll/update', acme.key, { pollId: poll.pollId, schedule });
    expect(set.statusCode, set.body).toBe(200);
    const body = { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'x' }] };
    const early = await submit(body);
    expectProblem(early, 404, 'not_found');
    expect(early.json().detail).toContain(`opens at ${schedule.startAt}`);
    h.clock.advance(60_000);
    expect((await submit(body)).statusCode).toBe(201);
    h.clock.advance(60_000);
    const late = await submit(body);
    expectProblem(late, 404, 'not_found');
    expect(late.json().detail).toContain(`closed at ${schedule.endAt}`);
    const stored = await h.database.db.selectFrom('responses').selectAll().where('poll_id', '=', poll.pollId).execute();
    expect(stored).toHaveLength(1);
  });

  it('a missing poll → 404', async () => {
    expectProblem(await submit({ pollId: 'poll_0000000000000000000000', answers: [] }), 404, 'not_found');
  });

  it('a visible poll → 201 without a key; a prt_ participant id is generated', async () => {
    const poll = await visiblePoll(h, acme);
    const res = await submit({ pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'A friend' }] });
    expect(res.statusCode, res.body).toBe(201);
    const data = res.json().data;
    expect(data).toMatchObject({
      participantId: expect.stringMatching(/^prt_[0-9A-Za-z]{22}$/),
      complete: false,
      ended: false,
      nextSlideId: poll.q2,
    });
    expect(data.responseIds).toEqual([expect.stringMatching(/^rsp_[0-9A-Za-z]{22}$/)]);
    const stored = await h.database.db
      .selectFrom('responses')
      .selectAll()
      .where('id', '=', data.responseIds[0])
      .executeTakeFirstOrThrow();
    expect(stored).toMatchObject({
      poll_id: poll.pollId,
      participant_id: data.participantId,
      slide_id: poll.q1,
      value: 'A friend',
    });
  });

  it('keeps the client’s participant id (any string of 1..200 characters)', async () => {
    const poll = await visiblePoll(h, acme);
    for (const participantId of ['customer-42', 'ünï cødé / 🙂', 'x'.repeat(200)]) {
      const data = await answer(h, {
        pollId: poll.pollId,
        participantId,
        answers: [{ slideId: poll.q1, value: 'hi' }],
      });
      expect(data.participantId).toBe(participantId);
    }
    expectProblem(await submit({ pollId: poll.pollId, participantId: '', answers: [] }), 400, 'validation_failed');
    expectProblem(
      await submit({ pollId: poll.pollId, participantId: 'x'.repeat(201), answers: [] }),
      400,
      'validation_failed',
    );
  });

  it('an unknown key → 401, even on a public poll', async () => {
    const poll = await visiblePoll(h, acme);
    expectProblem(
      await submit({ pollId: poll.pollId, answers: [] }, 'cvk_00000000000000000000000000000000'),
      401,
      'unauthenticated',
    );
  });

  describe('an apiOnly poll', () => {
    let poll: Awaited<ReturnType<typeof visiblePoll>>;
    beforeAll(async () => {
      poll = await visiblePoll(h, acme, { settings: { apiOnly: true } });
    });

    it('without a key → 401 unauthenticated', async () => {
      expectProblem(
        await submit({ pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'x' }] }),
        401,
        'unauthenticated',
      );
    });

    it('with another account’s key → 404, exactly as for a missing poll', async () => {
      const theirs = expectProblem(
        await submit({ pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'x' }] }, rival.key),
        404,
        'not_found',
      );
      const missing = expectProblem(
        await submit({ pollId: 'poll_0000000000000000000000', answers: [] }, rival.key),
        404,
        'not_found',
      );
      expect(theirs.detail).toBe(missing.detail);
    });

    it('with another account’s key, outside its schedule → 404 as for a missing poll: the schedule is not shown', async () => {
      const closed = await visiblePoll(h, acme, {
        settings: { apiOnly: true },
        schedule: { type: 'scheduled', startAt: '2099-01-01T00:00:00.000Z' },
      });
      const body = { pollId: closed.pollId, answers: [{ slideId: closed.q1, value: 'x' }] };
      const theirs = expectProblem(await submit(body, rival.key), 404, 'not_found');
      const missing = expectProblem(
        await submit({ pollId: 'poll_0000000000000000000000', answers: [] }, rival.key),
        404,
        'not_found',
      );
      expect(theirs.detail).toBe(missing.detail);
      // The account's own key is told why.
      expect(expectProblem(await submit(body, acme.key), 404, 'not_found').detail).toMatch(/opens at 2099/);
    });

    it('with a key of the account → 201 (any role)', async () => {
      const res = await submit({ pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'x' }] }, acme.key);
      expect(res.statusCode, res.body).toBe(201);
      const reader = await h.member(acme.accountId, 'read_only');
      expect(
        (await submit({ pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'y' }] }, reader)).statusCode,
      ).toBe(201);
    });

    it('with a key of an account whose plan is below premium → 403 plan_required', async () => {
      const acct = await h.account({ name: 'Downgraded' });
      const theirs = await visiblePoll(h, acct, { settings: { apiOnly: true } });
      await setPlan(h.deps, acct.accountId, 'basic');
      const body = { pollId: theirs.pollId, answers: [{ slideId: theirs.q1, value: 'x' }] };
      expectProblem(await submit(body, acct.key), 403, 'plan_required');
      await setPlan(h.deps, acct.accountId, 'premium');
      expect((await submit(body, acct.key)).statusCode).toBe(201);
    });

    it('nothing was stored by the refused calls', async () => {
      const rows = await h.database.db
        .selectFrom('responses')
        .select('value')
        .where('poll_id', '=', poll.pollId)
        .execute();
      expect(rows.map((r) => r.value).sort()).toEqual(['x', 'y']);
    });
  });
});

describe('POST /participant/responses: validation', () => {
  let poll: Awaited<ReturnType<typeof visiblePoll>>;
  beforeAll(async () => {
    poll = await visiblePoll(h, acme);
  });

  it('an unknown slide → 400 naming /answers/<i>/slideId', async () => {
    const p = expectProblem(
      await submit({ pollId: poll.pollId, answers: [{ slideId: 'sld_0000000000000000000000', value: 'x' }] }),
      400,
      'validation_failed',
    );
    expect(p.errors).toEqual([
      { path: '/answers/0/slideId', message: expect.stringContaining('sld_0000000000000000000000') },
    ]);
    const second = expectProblem(
      await submit({
        pollId: poll.pollId,
        answers: [
          { slideId: poll.q1, value: 'ok' },
          { slideId: 'nope', value: 'x' },
        ],
      }),
      400,
      'validation_failed',
    );
    expect(second.errors?.[0]?.path).toBe('/answers/1/slideId');
  });

  it('a slide of another poll is unknown here', async () => {
    const other = await visiblePoll(h, acme);
    const p = expectProblem(
      await submit({ pollId: poll.pollId, answers: [{ slideId: other.q1, value: 'x' }] }),
      400,
      'validation_failed',
    );
    expect(p.errors?.[0]?.path).toBe('/answers/0/slideId');
  });

  it.each([
    ['a number for a short-answer slide', 'q1', 5],
    ['an array for a short-answer slide', 'q1', ['a']],
    ['null for a short-answer slide', 'q1', null],
    ['not an address for an email slide', 'q2', 'not an email'],
    ['a boolean for an email slide', 'q2', true],
  ] as const)('%s → 400 naming the slide', async (_n, which, value) => {
    const slideId = poll[which];
    const p = expectProblem(
      await submit({ pollId: poll.pollId, answers: [{ slideId, value }] }),
      400,
      'validation_failed',
    );
    expect(p.errors).toEqual([{ path: '/answers/0/value', message: expect.stringContaining(slideId) }]);
    expect(p.detail).toContain(slideId);
  });

  it('kinds of other slide types are checked too', async () => {
    const p = await visiblePoll(h, acme);
    const stars = await slide(p.pollId, { type: 'star-rating', title: 'Stars' });
    const pick = await slide(p.pollId, {
      type: 'checkbox',
      title: 'Pick',
      answers: [{ title: 'Red' }, { title: 'Blue' }],
      multi: true,
    });
    const copy = await slide(p.pollId, { type: 'copy', title: 'Just text' });
    expect(
      (
        await submit({
          pollId: p.pollId,
          answers: [
            { slideId: stars, value: 4 },
            { slideId: pick, value: ['Red', 'Blue'] },
          ],
        })
      ).statusCode,
    ).toBe(201);
    for (const [slideId, value] of [
      [stars, '4'],
      [stars, 6],
      [pick, 'Red'],
      [pick, ['Green']],
      [pick, ['Red', 'Red']],
      [pick, ['Red', 'Blue', 'Red']],
      [copy, 'x'],
    ] as const) {
      const e = expectProblem(
        await submit({ pollId: p.pollId, answers: [{ slideId, value }] }),
        400,
        'validation_failed',
      );
      expect(e.errors?.[0]?.message).toContain(slideId);
    }
  });

  it('limits what one submission may hold: each slide once, metadata of at most 16 KiB as JSON', async () => {
    const twice = expectProblem(
      await submit({
        pollId: poll.pollId,
        answers: [
          { slideId: poll.q1, value: 'one' },
          { slideId: poll.q1, value: 'two' },
        ],
      }),
      400,
      'validation_failed',
    );
    expect(twice.errors).toEqual([{ path: '/answers/1/slideId', message: expect.stringContaining('twice') }]);
    const big = { note: 'x'.repeat(16_384) };
    for (const key of ['metadata', 'participantMetadata'])
      expect(
        expectProblem(
          await submit({ pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'x' }], [key]: big }),
          400,
          'validation_failed',
        ).errors,
      ).toEqual([{ path: `/${key}`, message: expect.stringContaining('16384 bytes') }]);
    const fits = { note: 'x'.repeat(16_000) };
    const res = await submit({ pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'x' }], metadata: fits });
    expect(res.statusCode, res.body).toBe(201);
  });

  it('metadata is measured as storage hands it back: numbers in plain decimal, not as a few bytes of exponent', async () => {
    // 16,107 bytes as sent; as PostgreSQL prints it from jsonb, 0.000…5 with 323 zeros each: 754 KB.
    const tiny = `[${Array(2_300).fill('5e-324').join(',')}]`;
    for (const key of ['metadata', 'participantMetadata']) {
      const res = await h.app.inject({
        method: 'POST',
        url: '/participant/responses',
        headers: { 'content-type': 'application/json' },
        payload: `{"pollId":"${poll.pollId}","answers":[{"slideId":"${poll.q1}","value":"x"}],"${key}":{"m":${tiny}}}`,
      });
      expect(expectProblem(res, 400, 'validation_failed').errors).toEqual([
        { path: `/${key}`, message: expect.stringContaining('plain decimal') },
      ]);
    }
    // The same count of small numbers is taken, and comes back as sent.
    const small = await submit({
      pollId: poll.pollId,
      participantId: 'numbers',
      answers: [{ slideId: poll.q1, value: 'x' }],
      metadata: { m: Array(2_300).fill(0.5) },
    });
    expect(small.statusCode, small.body).toBe(201);
    const [stored] = await h.deps.store.responses.ofParticipant(poll.pollId, 'numbers');
    expect((stored!.metadata as { m: number[] }).m).toHaveLength(2_300);
  });

  it('a respondent’s merged participantMetadata is held to 16 KiB: a submission that would grow it past is 409 and stores nothing', async () => {
    const half = (prefix: string) => ({ [`${prefix}`]: 'x'.repeat(10_000) });
    const first = await submit({
      pollId: poll.pollId,
      participantId: 'grows',
      answers: [{ slideId: poll.q1, value: 'a' }],
      participantMetadata: half('a'),
    });
    expect(first.statusCode, first.body).toBe(201);
    const more = expectProblem(
      await submit({
        pollId: poll.pollId,
        participantId: 'grows',
        answers: [{ slideId: poll.q2, value: 'grows@example.com' }],
        participantMetadata: half('b'),
      }),
      409,
      'limit_reached',
    );
    expect(more.errors).toEqual([{ path: '/participantMetadata', message: expect.stringContaining('16384') }]);
    expect((await h.deps.store.responses.ofParticipant(poll.pollId, 'grows')).map((r) => r.value)).toEqual(['a']);
    // Replacing a key with a value no longer is taken.
    const same = await submit({
      pollId: poll.pollId,
      participantId: 'grows',
      answers: [],
      participantMetadata: { a: 'shorter' },
    });
    expect(same.statusCode, same.body).toBe(201);
  });

  it(`a submission that would bring a respondent past ${MAX_ANSWERS_PER_RESPONDENT} stored answers is refused with 409, and nothing of it is stored`, async () => {
    const first = await submit({
      pollId: poll.pollId,
      participantId: 'chatty',
      answers: [{ slideId: poll.q1, value: 'first' }],
    });
    expect(first.statusCode, first.body).toBe(201);
    // As if the respondent had answered the first slide again and again, never finishing.
    const again = Array.from({ length: MAX_ANSWERS_PER_RESPONDENT - 2 }, (_, i) => [newId('rsp'), `again ${i}`]);
    await sql`INSERT INTO responses (id, account_id, poll_id, participant_id, slide_id, value, created_at)
      SELECT v.id, ${acme.accountId}, ${poll.pollId}, 'chatty', ${poll.q1}, to_jsonb(v.value), now()
      FROM unnest(${again.map((a) => a[0])}::text[], ${again.map((a) => a[1])}::text[]) AS v(id, value)`.execute(
      h.database.db,
    );
    const once = (value: string) =>
      submit({ pollId: poll.pollId, participantId: 'chatty', answers: [{ slideId: poll.q1, value }] });
    // Two answers at 999 stored would pass the cap: refused whole, not taken whole.
    const two = expectProblem(
      await submit({
        pollId: poll.pollId,
        participantId: 'chatty',
        answers: [
          { slideId: poll.q1, value: 'one of two' },
          { slideId: poll.q2, value: 'two@example.com' },
        ],
      }),
      409,
      'limit_reached',
    );
    expect(two.detail).toContain(`stored ${MAX_ANSWERS_PER_RESPONDENT - 1} answers`);
    expect(two.detail).toContain('2 more do not fit');
    expect(await h.deps.store.responses.ofParticipant(poll.pollId, 'chatty')).toHaveLength(
      MAX_ANSWERS_PER_RESPONDENT - 1,
    );
    const last = await once('the last one taken');
    expect(last.statusCode, last.body).toBe(201);
    expect(await h.deps.store.responses.ofParticipant(poll.pollId, 'chatty')).toHaveLength(MAX_ANSWERS_PER_RESPONDENT);
    const over = expectProblem(await once('one too many'), 409, 'limit_reached');
    expect(over.detail).toContain(String(MAX_ANSWERS_PER_RESPONDENT));
    expect(await h.deps.store.responses.ofParticipant(poll.pollId, 'chatty')).toHaveLength(MAX_ANSWERS_PER_RESPONDENT);
  });

  it('an answer value that nests (an object, an array holding objects) → 400 before the poll is read', async () => {
    for (const value of [{}, [{}], { title: 'x' }, [['a']]]) {
      const p = expectProblem(
        await submit({ pollId: 'poll_0000000000000000000000', answers: [{ slideId: poll.q1, value }] }),
        400,
        'validation_failed',
      );
      expect(p.errors?.[0]?.path).toBe('/answers/0/value');
    }
  });

  it('a refused submission stores nothing, not even the valid answers before the bad one', async () => {
    const res = await submit({
      pollId: poll.pollId,
      participantId: 'half-bad',
      answers: [
        { slideId: poll.q1, value: 'fine' },
        { slideId: poll.q2, value: 42 },
      ],
    });
    expectProblem(res, 400, 'validation_failed');
    expect(
      await h.database.db.selectFrom('responses').selectAll().where('participant_id', '=', 'half-bad').execute(),
    ).toEqual([]);
    expect(await h.database.db.selectFrom('participants').selectAll().where('id', '=', 'half-bad').execute()).toEqual(
      [],
    );
  });

  it.each([
    ['no answers field', {}],
    ['answers not an array', { answers: {} }],
    ['an unknown top-level field', { answers: [], extra: 1 }],
    ['complete not a boolean', { answers: [], complete: 'yes' }],
    ['metadata not an object', { answers: [], metadata: 'x' }],
  ])('malformed body (%s) → 400 validation_failed', async (_n, body) => {
    expectProblem(await submit({ pollId: poll.pollId, ...body }), 400, 'validation_failed');
  });
});

describe('completion and resubmission', () => {
  it('answering every answerable slide completes the respondent', async () => {
    const poll = await visiblePoll(h, acme);
    await slide(poll.pollId, { type: 'thank-you', title: 'Thanks!' });
    const first = await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'one' }] });
    expect(first.complete).toBe(false);
    const second = await answer(h, {
      pollId: poll.pollId,
      participantId: first.participantId,
      answers: [{ slideId: poll.q2, value: 'a@example.com' }],
    });
    expect(second).toMatchObject({ participantId: first.participantId, complete: true });
    const row = await h.database.db
      .selectFrom('participants')
      .selectAll()
      .where('poll_id', '=', poll.pollId)
      .where('id', '=', first.participantId)
      .executeTakeFirstOrThrow();
    expect(row.complete).toBe(true);
    expect(row.completed_at).toEqual(h.clock.now());
  });

  it('complete: true completes the respondent at once', async () => {
    const poll = await visiblePoll(h, acme);
    const res = await answer(h, {
      pollId: poll.pollId,
      answers: [{ slideId: poll.q1, value: 'only this' }],
      complete: true,
    });
    expect(res.complete).toBe(true);
  });

  it('after completion a new submission → 409 conflict, and nothing is stored', async () => {
    const poll = await visiblePoll(h, acme);
    const done = await answer(h, {
      pollId: poll.pollId,
      answers: [{ slideId: poll.q1, value: 'one' }],
      complete: true,
    });
    const again = await submit({
      pollId: poll.pollId,
      participantId: done.participantId,
      answers: [{ slideId: poll.q2, value: 'b@example.com' }],
    });
    expectProblem(again, 409, 'conflict');
    const rows = await h.database.db
      .selectFrom('responses')
      .selectAll()
      .where('participant_id', '=', done.participantId)
      .execute();
    expect(rows).toHaveLength(1);
    // Another respondent is unaffected.
    expect((await submit({ pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'two' }] })).statusCode).toBe(201);
  });

  it('settings.allowResubmissions lets a completed respondent submit again; it stays complete, and the new answer is stored', async () => {
    const poll = await visiblePoll(h, acme, { settings: { allowResubmissions: true } });
    const done = await answer(h, {
      pollId: poll.pollId,
      answers: [{ slideId: poll.q1, value: 'one' }],
      complete: true,
    });
    const again = await answer(h, {
      pollId: poll.pollId,
      participantId: done.participantId,
      answers: [{ slideId: poll.q1, value: 'changed my mind' }],
    });
    expect(again.complete).toBe(true);
    const stored = await h.deps.store.responses.ofParticipant(poll.pollId, done.participantId);
    // Sorted by value: ids made in the same clock millisecond sort in no set order.
    expect(stored.map((r) => [r.value, r.id]).sort()).toEqual([
      ['changed my mind', again.responseIds[0]],
      ['one', done.responseIds[0]],
    ]);
  });

  it('concurrent first submissions of one new participant id all succeed (no 500 on the race)', async () => {
    const poll = await visiblePoll(h, acme);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        submit({
          pollId: poll.pollId,
          participantId: 'racer',
          answers: [{ slideId: poll.q1, value: `try ${i}` }],
          participantMetadata: { [`k${i}`]: i },
        }),
      ),
    );
    for (const r of results) expect(r.statusCode, r.body).toBe(201);
    const participants = await h.database.db
      .selectFrom('participants')
      .selectAll()
      .where('poll_id', '=', poll.pollId)
      .execute();
    expect(participants).toHaveLength(1);
    // Every submission's participant metadata was merged, none lost to the race.
    expect(participants[0]!.metadata).toEqual({ k0: 0, k1: 1, k2: 2, k3: 3, k4: 4, k5: 5 });
    const rows = await h.database.db.selectFrom('responses').selectAll().where('poll_id', '=', poll.pollId).execute();
    expect(rows).toHaveLength(6);
  });

  it('concurrent completing submissions of one participant: one 201, the rest 409, one completed-survey delivery', async () => {
    const poll = await visiblePoll(h, acme);
    const { data: hook } = await createWebhook(h, acme, poll.pollId, HOOK, 'complete');
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        submit({
          pollId: poll.pollId,
          participantId: 'finisher',
          answers: [{ slideId: poll.q1, value: `final ${i}` }],
          complete: true,
        }),
      ),
    );
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes, results.map((r) => r.body).join('\n')).toEqual([201, 409, 409, 409, 409]);
    const deliveries = await h.database.db
      .selectFrom('deliveries')
      .selectAll()
      .where('webhook_id', '=', hook.id)
      .execute();
    expect(deliveries.map((d) => d.type)).toEqual(['completed-survey']);
    expect(
      await h.database.db.selectFrom('responses').selectAll().where('poll_id', '=', poll.pollId).execute(),
    ).toHaveLength(1);
  });
});

describe('the hand-off to webhooks is committed with the answers', () => {
  it('a partial webhook: the batch row exists right after the 201, holding the response ids', async () => {
    const poll = await visiblePoll(h, acme);
    const { data: hook } = await createWebhook(h, acme, poll.pollId, HOOK, 'partial');
    const first = await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'one' }] });
    const batches = await h.database.db.selectFrom('batches').selectAll().where('webhook_id', '=', hook.id).execute();
    expect(batches).toHaveLength(1);
    expect(batches[0]).toMatchObject({
      participant_id: first.participantId,
      poll_id: poll.pollId,
      response_ids: first.responseIds,
    });
    expect(batches[0]!.flush_at.getTime()).toBe(h.clock.now().getTime() + 5_000);

    // A second answer within the window joins the same batch; the flush time does not move.
    h.clock.advance(1_000);
    const second = await answer(h, {
      pollId: poll.pollId,
      participantId: first.participantId,
      answers: [{ slideId: poll.q2, value: 'z@example.com' }],
    });
    const after = await h.database.db.selectFrom('batches').selectAll().where('webhook_id', '=', hook.id).execute();
    expect(after).toHaveLength(1);
    expect(after[0]!.response_ids).toEqual([...first.responseIds, ...second.responseIds]);
    expect(after[0]!.flush_at.getTime()).toBe(batches[0]!.flush_at.getTime());
    expect(
      await h.database.db.selectFrom('deliveries').selectAll().where('webhook_id', '=', hook.id).execute(),
    ).toEqual([]);
  });

  it('a complete-only webhook: the delivery row exists right after the completing 201', async () => {
    const poll = await visiblePoll(h, acme);
    const { data: hook } = await createWebhook(h, acme, poll.pollId, HOOK, 'complete');
    const first = await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'one' }] });
    expect(
      await h.database.db.selectFrom('deliveries').selectAll().where('webhook_id', '=', hook.id).execute(),
    ).toEqual([]);
    expect(await h.database.db.selectFrom('batches').selectAll().where('webhook_id', '=', hook.id).execute()).toEqual(
      [],
    );
    await answer(h, {
      pollId: poll.pollId,
      participantId: first.participantId,
      answers: [{ slideId: poll.q2, value: 'z@example.com' }],
    });
    const rows = await h.database.db.selectFrom('deliveries').selectAll().where('webhook_id', '=', hook.id).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      status: 'pending',
      type: 'completed-survey',
      participant_id: first.participantId,
      attempt_count: 0,
    });
    const body = JSON.parse(rows[0]!.body);
    expect(Object.keys(body.responses).sort()).toEqual([poll.q1, poll.q2].sort());
  });

  it('when the hand-off fails, the answers are not stored either (one transaction)', async () => {
    const poll = await visiblePoll(h, acme);
    await createWebhook(h, acme, poll.pollId, HOOK, 'partial');
    const real = h.deps.store;
    const failing: Store = {
      ...real,
      transaction: (fn) =>
        real.transaction((tx) =>
          fn({
            ...tx,
            submissions: {
              ...tx.submissions,
              writeOutcome: async () => {
                throw new Error('simulated storage failure');
              },
            },
          }),
        ),
    };
    h.deps.store = failing;
    try {
      const res = await submit({
        pollId: poll.pollId,
        participantId: 'lost-in-crash',
        answers: [{ slideId: poll.q1, value: 'one' }],
      });
      expect(res.statusCode).toBe(500);
    } finally {
      h.deps.store = real;
    }
    expect(
      await h.database.db.selectFrom('responses').selectAll().where('participant_id', '=', 'lost-in-crash').execute(),
    ).toEqual([]);
    expect(
      await h.database.db.selectFrom('participants').selectAll().where('id', '=', 'lost-in-crash').execute(),
    ).toEqual([]);
    // And it works again once storage does.
    expect(
      (
        await submit({
          pollId: poll.pollId,
          participantId: 'lost-in-crash',
          answers: [{ slideId: poll.q1, value: 'one' }],
        })
      ).statusCode,
    ).toBe(201);
  });
});
