import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/app/ports/index.js';
import { bearer, harness, type Harness, type TestAccount } from '../support/app.js';
import { answer, createWebhook, visiblePoll } from '../support/fixtures.js';

/**
 * Route tests for DESIGN §2 "Respondents": submitting answers (public, apiOnly, validation,
 * completion, resubmission), the transactional hand-off to webhooks, and the reads (responses,
 * participants, emails, CSV export). Runs on in-memory PGlite, or on PostgreSQL when
 * CANVASS_TEST_PG_URL is set. The batch window is the default 5 s.
 */

type Json = Record<string, unknown>;
type Method = 'GET' | 'POST' | 'DELETE';
type Problem = Json & { errors?: { path: string; message: string }[] };

const HOOK = 'https://hooks.example.com/canvass';

let h: Harness;
let acme: TestAccount;
let rival: TestAccount;

beforeAll(async () => {
  h = await harness();
  acme = await h.account({ name: 'Acme' });
  rival = await h.account({ name: 'Rival' });
});
afterAll(() => h?.close());

async function call(
  method: Method,
  url: string,
  key: string | undefined,
  payload?: unknown,
): Promise<LightMyRequestResponse> {
  return h.app.inject({
    method,
    url,
    headers: key ? bearer(key) : {},
    ...(payload === undefined ? {} : { payload: payload as Json }),
  });
}

const submit = (payload: Json, key?: string) => call('POST', '/participant/responses', key, payload);

function expectProblem(res: LightMyRequestResponse, status: number, code: string): Problem {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(body).toMatchObject({
    status,
    code,
    type: expect.any(String),
    title: expect.any(String),
    detail: expect.any(String),
  });
  return body;
}

async function slide(pollId: string, payload: Json, who = acme): Promise<string> {
  const res = await call('POST', '/slide', who.key, { pollId, ...payload });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.id;
}

/** A minimal RFC 4180 parser: quoted fields, doubled quotes, CRLF or LF row ends. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      /* the \n ends the row */
    } else if (c === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

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

    it('with a key of the account → 201 (any role)', async () => {
      const res = await submit({ pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'x' }] }, acme.key);
      expect(res.statusCode, res.body).toBe(201);
      const reader = await h.member(acme.accountId, 'read_only');
      expect(
        (await submit({ pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'y' }] }, reader)).statusCode,
      ).toBe(201);
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

describe('GET /responses', () => {
  let reads: TestAccount;
  let pollA: Awaited<ReturnType<typeof visiblePoll>>;
  let pollB: Awaited<ReturnType<typeof visiblePoll>>;
  const t0 = Date.parse('2026-03-01T00:00:00Z');
  const ids: string[] = [];

  beforeAll(async () => {
    reads = await h.account({ name: 'Reads' });
    pollA = await visiblePoll(h, reads);
    pollB = await visiblePoll(h, reads);
    h.clock.ms = t0;
    ids.push(
      ...(
        await answer(h, {
          pollId: pollA.pollId,
          participantId: 'p1',
          answers: [{ slideId: pollA.q1, value: 'first' }],
          metadata: { page: '/a' },
        })
      ).responseIds,
    );
    h.clock.ms = t0 + 3_600_000;
    // Ids of one submission share a millisecond: they list in id order.
    ids.push(
      ...(
        await answer(h, {
          pollId: pollA.pollId,
          participantId: 'p2',
          answers: [
            { slideId: pollA.q1, value: 'second' },
            { slideId: pollA.q2, value: 'p2@example.com' },
          ],
        })
      ).responseIds.sort(),
    );
    h.clock.ms = t0 + 7_200_000;
    ids.push(
      ...(
        await answer(h, { pollId: pollB.pollId, participantId: 'p3', answers: [{ slideId: pollB.q1, value: 'third' }] })
      ).responseIds,
    );
  });

  const list = async (query: string, key = reads.key) => {
    const res = await call('GET', `/responses?${query}`, key);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { data: Json[]; hasNextPage: boolean; endCursor: string | null };
  };

  it('?pollId lists that poll’s responses with their fields', async () => {
    const page = await list(`pollId=${pollA.pollId}`);
    expect(page.hasNextPage).toBe(false);
    expect(page.data.map((r) => r.id)).toEqual(ids.slice(0, 3));
    expect(page.data[0]).toEqual({
      id: ids[0],
      accountId: reads.accountId,
      pollId: pollA.pollId,
      participantId: 'p1',
      slideId: pollA.q1,
      value: 'first',
      metadata: { page: '/a' },
      synthetic: false,
      createdAt: new Date(t0).toISOString(),
    });
  });

  it('?accountId spans every poll of the account', async () => {
    expect((await list(`accountId=${reads.accountId}`)).data.map((r) => r.id)).toEqual(ids);
  });

  it('createdAfter and createdBefore bound the time (exclusive)', async () => {
    const iso = (ms: number) => new Date(ms).toISOString();
    const after = await list(`accountId=${reads.accountId}&createdAfter=${iso(t0 + 1_800_000)}`);
    expect(after.data.map((r) => r.id)).toEqual(ids.slice(1));
    const before = await list(`accountId=${reads.accountId}&createdBefore=${iso(t0 + 5_400_000)}`);
    expect(before.data.map((r) => r.id)).toEqual(ids.slice(0, 3));
    const between = await list(
      `accountId=${reads.accountId}&createdAfter=${iso(t0 + 1_800_000)}&createdBefore=${iso(t0 + 5_400_000)}`,
    );
    expect(between.data.map((r) => r.participantId)).toEqual(['p2', 'p2']);
    const exact = await list(
      `accountId=${reads.accountId}&createdAfter=${iso(t0)}&createdBefore=${iso(t0 + 7_200_000)}`,
    );
    expect(exact.data.map((r) => r.participantId)).toEqual(['p2', 'p2']);
    expectProblem(
      await call('GET', `/responses?accountId=${reads.accountId}&createdAfter=yesterday`, reads.key),
      400,
      'validation_failed',
    );
  });

  it('pages with startCursor and limit, without repeats or gaps', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await list(`accountId=${reads.accountId}&limit=2${cursor ? `&startCursor=${cursor}` : ''}`);
      seen.push(...page.data.map((r) => r.id as string));
      cursor = page.hasNextPage ? page.endCursor : null;
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toEqual(ids);
    expect(pages).toBe(2);
  });

  it('needs pollId or accountId; read_only members may read; others get 404', async () => {
    expectProblem(await call('GET', '/responses', reads.key), 400, 'validation_failed');
    const reader = await h.member(reads.accountId, 'read_only');
    expect((await list(`pollId=${pollA.pollId}`, reader)).data).toHaveLength(3);
    expectProblem(await call('GET', `/responses?pollId=${pollA.pollId}`, rival.key), 404, 'not_found');
    expectProblem(await call('GET', `/responses?accountId=${reads.accountId}`, rival.key), 404, 'not_found');
    expectProblem(await call('GET', `/responses?pollId=${pollA.pollId}`, undefined), 401, 'unauthenticated');
  });

  it('GET /participants?pollId lists the poll’s participants, paged', async () => {
    const res = await call('GET', `/participants?pollId=${pollA.pollId}`, reads.key);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.data.map((p: Json) => p.id)).toEqual(['p1', 'p2']);
    expect(body.data[0]).toMatchObject({
      id: 'p1',
      pollId: pollA.pollId,
      accountId: reads.accountId,
      complete: false,
      createdAt: new Date(t0).toISOString(),
    });
    expect(body.data[1]).toMatchObject({ id: 'p2', complete: true });
    const first = (await call('GET', `/participants?pollId=${pollA.pollId}&limit=1`, reads.key)).json();
    expect(first).toMatchObject({ hasNextPage: true });
    const next = (
      await call(
        'GET',
        `/participants?pollId=${pollA.pollId}&limit=1&startCursor=${encodeURIComponent(first.endCursor)}`,
        reads.key,
      )
    ).json();
    expect([...first.data, ...next.data].map((p: Json) => p.id)).toEqual(['p1', 'p2']);
    expect(next.hasNextPage).toBe(false);
    expectProblem(await call('GET', `/participants?pollId=${pollA.pollId}`, rival.key), 404, 'not_found');
    expectProblem(await call('GET', '/participants', reads.key), 400, 'validation_failed');
  });
});

describe('GET /emails', () => {
  it('gives email/emails per participant: answers, then participant metadata, then response metadata', async () => {
    const poll = await visiblePoll(h, acme);
    h.clock.advance(1);
    await answer(h, {
      pollId: poll.pollId,
      participantId: 'ann',
      answers: [{ slideId: poll.q2, value: 'Ann@Example.com' }],
      participantMetadata: { email: 'ann.work@example.org' },
      metadata: { ref: 'ANN@example.com', other: 'ref@example.net' },
    });
    h.clock.advance(1);
    await answer(h, {
      pollId: poll.pollId,
      participantId: 'nobody',
      answers: [{ slideId: poll.q1, value: 'no address' }],
    });
    const res = await call('GET', `/emails?pollId=${poll.pollId}`, acme.key);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      data: [
        {
          pollId: poll.pollId,
          participantId: 'ann',
          email: 'ann@example.com',
          emails: ['ann@example.com', 'ann.work@example.org', 'ref@example.net'],
        },
        { pollId: poll.pollId, participantId: 'nobody', email: null, emails: [] },
      ],
      hasNextPage: false,
      endCursor: expect.any(String),
    });
  });

  it('an anonymous poll → email null and emails [] for everyone', async () => {
    const poll = await visiblePoll(h, acme, { settings: { anonymous: true } });
    await answer(h, {
      pollId: poll.pollId,
      participantId: 'anon',
      answers: [{ slideId: poll.q2, value: 'anon@example.com' }],
      participantMetadata: { email: 'x@example.com' },
    });
    const res = await call('GET', `/emails?pollId=${poll.pollId}`, acme.key);
    expect(res.json().data).toEqual([{ pollId: poll.pollId, participantId: 'anon', email: null, emails: [] }]);
  });

  it('?accountId spans polls; another account → 404', async () => {
    const acct = await h.account({ name: 'Emails' });
    const p1 = await visiblePoll(h, acct);
    const p2 = await visiblePoll(h, acct, { settings: { anonymous: true } });
    h.clock.advance(1);
    await answer(h, { pollId: p1.pollId, participantId: 'a', answers: [{ slideId: p1.q2, value: 'a@example.com' }] });
    h.clock.advance(1);
    await answer(h, { pollId: p2.pollId, participantId: 'b', answers: [{ slideId: p2.q2, value: 'b@example.com' }] });
    const data = (await call('GET', `/emails?accountId=${acct.accountId}`, acct.key)).json().data;
    expect(data).toEqual([
      { pollId: p1.pollId, participantId: 'a', email: 'a@example.com', emails: ['a@example.com'] },
      { pollId: p2.pollId, participantId: 'b', email: null, emails: [] },
    ]);
    expectProblem(await call('GET', `/emails?accountId=${acct.accountId}`, rival.key), 404, 'not_found');
    expectProblem(await call('GET', `/emails?pollId=${p1.pollId}`, rival.key), 404, 'not_found');
    expectProblem(await call('GET', '/emails', acct.key), 400, 'validation_failed');
  });
});

describe('GET /responses/export', () => {
  const HEADER = [
    'responseId',
    'participantId',
    'slideId',
    'slideTitle',
    'slideType',
    'value',
    'synthetic',
    'createdAt',
  ];

  it('answers text/csv with a header row and one row per answer', async () => {
    const poll = await visiblePoll(h, acme);
    h.clock.advance(1_000);
    const at = h.clock.now().toISOString();
    const a = await answer(h, {
      pollId: poll.pollId,
      participantId: 'csv-1',
      answers: [
        { slideId: poll.q1, value: 'plain' },
        { slideId: poll.q2, value: 'c@example.com' },
      ],
    });
    h.clock.advance(1_000);
    const b = await answer(h, {
      pollId: poll.pollId,
      participantId: 'csv-2',
      answers: [{ slideId: poll.q1, value: 'second' }],
    });
    const res = await call('GET', `/responses/export?pollId=${poll.pollId}`, acme.key);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toContain('attachment');
    expect(res.body.split('\r\n')[0]).toBe(HEADER.join(','));
    const rows = parseCsv(res.body);
    expect(rows[0]).toEqual(HEADER);
    expect(rows).toHaveLength(4);
    // Time order between submissions; the answers of one submission share a millisecond.
    expect(
      rows
        .slice(1, 3)
        .map((r) => r[0])
        .sort(),
    ).toEqual([...a.responseIds].sort());
    expect(rows[3]![0]).toBe(b.responseIds[0]);
    const byId = new Map(rows.slice(1).map((r) => [r[0], r]));
    expect(byId.get(a.responseIds[0]!)).toEqual([
      a.responseIds[0],
      'csv-1',
      poll.q1,
      'What brought you here?',
      'short-answer',
      'plain',
      'false',
      at,
    ]);
    expect(byId.get(a.responseIds[1]!)).toEqual([
      a.responseIds[1],
      'csv-1',
      poll.q2,
      'Your email?',
      'email-capture',
      'c@example.com',
      'false',
      at,
    ]);
    expect(byId.get(b.responseIds[0]!)!.slice(1, 6)).toEqual([
      'csv-2',
      poll.q1,
      'What brought you here?',
      'short-answer',
      'second',
    ]);
  });

  it('a poll with no responses → just the header row', async () => {
    const poll = await visiblePoll(h, acme);
    const res = await call('GET', `/responses/export?pollId=${poll.pollId}`, acme.key);
    expect(res.statusCode).toBe(200);
    expect(parseCsv(res.body)).toEqual([HEADER]);
  });

  it('escapes commas, quotes and newlines; neutralises formula-leading cells', async () => {
    const poll = await visiblePoll(h, acme);
    const values = [
      'a, b and c',
      'she said "hi"',
      'line one\nline two',
      'cr\r\nlf',
      '=HYPERLINK("https://evil.example","click")',
      '+1 555 0100',
      '-2+3',
      '@SUM(A1:A2)',
      '\t=1+1',
      '=1,"2"\n3',
    ];
    const ids: string[] = [];
    for (const value of values) {
      h.clock.advance(1);
      ids.push(...(await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value }] })).responseIds);
    }
    h.clock.advance(1);
    await answer(h, {
      pollId: poll.pollId,
      participantId: '=cmd|"/c calc"!A1',
      answers: [{ slideId: poll.q1, value: 'ok' }],
    });

    const res = await call('GET', `/responses/export?pollId=${poll.pollId}`, acme.key);
    expect(res.statusCode).toBe(200);
    const rows = parseCsv(res.body);
    expect(rows).toHaveLength(1 + values.length + 1);
    for (const r of rows) expect(r).toHaveLength(HEADER.length);
    const got = rows.slice(1, 1 + values.length).map((r) => r[5]);
    expect(got).toEqual([
      'a, b and c',
      'she said "hi"',
      'line one\nline two',
      'cr\r\nlf',
      `'=HYPERLINK("https://evil.example","click")`,
      `'+1 555 0100`,
      `'-2+3`,
      `'@SUM(A1:A2)`,
      `'\t=1+1`,
      `'=1,"2"\n3`,
    ]);
    // No cell of the file starts with a formula character.
    for (const r of rows) for (const cell of r) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
    expect(rows.at(-1)![1]).toBe(`'=cmd|"/c calc"!A1`);
  });

  it('multi-choice and numeric values are written as JSON', async () => {
    const poll = await visiblePoll(h, acme);
    const pick = await slide(poll.pollId, {
      type: 'checkbox',
      title: 'Colours, please',
      answers: [{ title: 'Red' }, { title: 'Blue' }],
      multi: true,
    });
    const stars = await slide(poll.pollId, { type: 'star-rating', title: 'Stars' });
    await answer(h, {
      pollId: poll.pollId,
      answers: [
        { slideId: pick, value: ['Red', 'Blue'] },
        { slideId: stars, value: 5 },
      ],
    });
    const rows = parseCsv((await call('GET', `/responses/export?pollId=${poll.pollId}`, acme.key)).body);
    const bySlide = new Map(rows.slice(1).map((r) => [r[2], r]));
    expect(bySlide.get(pick)!.slice(3, 6)).toEqual(['Colours, please', 'checkbox', '["Red","Blue"]']);
    expect(bySlide.get(stars)!.slice(4, 6)).toEqual(['star-rating', '5']);
  });

  it('another account’s poll → 404 problem document, as for a missing one', async () => {
    const poll = await visiblePoll(h, acme);
    await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'secret answer' }] });
    const theirs = expectProblem(
      await call('GET', `/responses/export?pollId=${poll.pollId}`, rival.key),
      404,
      'not_found',
    );
    expect(JSON.stringify(theirs)).not.toContain('secret answer');
    const missing = expectProblem(
      await call('GET', '/responses/export?pollId=poll_0000000000000000000000', rival.key),
      404,
      'not_found',
    );
    expect(theirs.detail).toBe(missing.detail);
    expectProblem(await call('GET', `/responses/export?pollId=${poll.pollId}`, undefined), 401, 'unauthenticated');
    expectProblem(await call('GET', '/responses/export', acme.key), 400, 'validation_failed');
  });

  it('streams a poll with more rows than one page (500) in order', async () => {
    const poll = await visiblePoll(h, acme);
    const answers = Array.from({ length: 200 }, (_, i) => ({ slideId: poll.q1, value: `v${i}` }));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(...(await answer(h, { pollId: poll.pollId, answers })).responseIds);
    const rows = parseCsv((await call('GET', `/responses/export?pollId=${poll.pollId}`, acme.key)).body);
    expect(rows).toHaveLength(601);
    expect(rows.slice(1).map((r) => r[0])).toEqual([...ids].sort());
  });
});
