import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { ANSWER_ROW_BYTES, EMAILS_PAGE_BYTES } from '../../../src/app/responses/list-emails.js';
import { MAX_RESPONDENT_BYTES } from '../../../src/domain/answer.js';
import type { TestAccount } from '../../support/app.js';
import { answer, visiblePoll } from '../../support/fixtures.js';
import { acme, call, expectProblem, h, rival, useResponsesApi, type Json } from '../../support/responses-api.js';

/**
 * Route tests for reading answers (src/app/responses/list-{responses,participants,emails}.ts):
 * GET /responses by poll or account, bounded in time and paged; GET /participants; GET /emails
 * with each participant's addresses, none for an anonymous poll.
 */

useResponsesApi();

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
    // Times no id can tell (before 1970, after the year 8888) still bound only by time.
    const wide = await list(
      `accountId=${reads.accountId}&createdAfter=0001-01-01T00:00:00Z&createdBefore=9999-12-31T00:00:00Z`,
    );
    expect(wide.data.map((r) => r.id)).toEqual(ids);
    expect((await list(`accountId=${reads.accountId}&createdBefore=1969-12-31T00:00:00Z`)).data).toEqual([]);
    expect((await list(`accountId=${reads.accountId}&createdAfter=9000-01-01T00:00:00Z`)).data).toEqual([]);
    expectProblem(
      await call('GET', `/responses?accountId=${reads.accountId}&createdAfter=yesterday`, reads.key),
      400,
      'validation_failed',
    );
    // An end not after the start selects nothing: a swapped pair, refused rather than empty.
    const swapped = await call(
      'GET',
      `/responses?accountId=${reads.accountId}&createdAfter=${iso(t0 + 5_400_000)}&createdBefore=${iso(t0 + 1_800_000)}`,
      reads.key,
    );
    expectProblem(swapped, 400, 'validation_failed');
    expect(swapped.json().errors[0].path).toBe('query:/createdBefore');
  });

  it('a bound finer than a millisecond keeps the row stored at the millisecond it passes', async () => {
    const at = `2026-03-01T00:00:00.0005Z`; // half a millisecond after the first answer
    expect((await list(`accountId=${reads.accountId}&createdBefore=${at}`)).data.map((r) => r.id)).toEqual([ids[0]]);
    expect((await list(`accountId=${reads.accountId}&createdAfter=${at}`)).data.map((r) => r.id)).toEqual(ids.slice(1));
    const last = await call(
      'GET',
      `/responses?accountId=${reads.accountId}&createdBefore=9999-12-31T23:59:59.9995Z`,
      reads.key,
    );
    expect(last.statusCode, last.body).toBe(200);
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
    // Both named: the poll is looked for in that account, never the account ignored or an empty page.
    for (const route of ['/responses', '/emails']) {
      const other = await call('GET', `${route}?pollId=${pollA.pollId}&accountId=${rival.accountId}`, reads.key);
      expectProblem(other, 404, 'not_found');
      const same = await call('GET', `${route}?pollId=${pollA.pollId}&accountId=${reads.accountId}`, reads.key);
      expect(same.statusCode, same.body).toBe(200);
      expect(same.json().data.length).toBeGreaterThan(0);
    }
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

/** Respondents of the poll, a millisecond apart, each answering its address (`<id>@example.com`). */
async function withAddresses(poll: Awaited<ReturnType<typeof visiblePoll>>, ids: readonly string[]) {
  for (const id of ids) {
    h.clock.advance(1);
    await answer(h, {
      pollId: poll.pollId,
      participantId: id,
      answers: [{ slideId: poll.q2, value: `${id}@example.com` }],
    });
  }
}

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

  it('keeps each respondent to their own poll: one participant id in two polls lists each its own addresses', async () => {
    const acct = await h.account({ name: 'Same ids' });
    const p1 = await visiblePoll(h, acct);
    const p2 = await visiblePoll(h, acct);
    h.clock.advance(1);
    await answer(h, { pollId: p1.pollId, participantId: 'x', answers: [{ slideId: p1.q2, value: 'one@example.com' }] });
    h.clock.advance(1);
    await answer(h, { pollId: p2.pollId, participantId: 'x', answers: [{ slideId: p2.q2, value: 'two@example.com' }] });
    const data = (await call('GET', `/emails?accountId=${acct.accountId}`, acct.key)).json().data;
    expect(data).toEqual([
      { pollId: p1.pollId, participantId: 'x', email: 'one@example.com', emails: ['one@example.com'] },
      { pollId: p2.pollId, participantId: 'x', email: 'two@example.com', emails: ['two@example.com'] },
    ]);
  });

  it(`ends a page early once its respondents' stored answers would pass ${EMAILS_PAGE_BYTES} bytes; one not counted weighs ${MAX_RESPONDENT_BYTES}`, async () => {
    const poll = await visiblePoll(h, acme);
    const ids = ['r0', 'r1', 'r2', 'r3', 'r4'];
    await withAddresses(poll, ids);
    // As counted by submissions: a third of the page each for r0..r2 (their one answer's row
    // included); r3 never counted; r4 small.
    const third = Math.floor(EMAILS_PAGE_BYTES / 3) - ANSWER_ROW_BYTES;
    await sql`UPDATE participants SET answer_bytes = CASE id WHEN 'r3' THEN NULL WHEN 'r4' THEN 10 ELSE ${third} END
      WHERE poll_id = ${poll.pollId}`.execute(h.database.db);
    const pages: string[][] = [];
    let cursor: string | null = null;
    for (;;) {
      const res = await call(
        'GET',
        `/emails?pollId=${poll.pollId}&limit=100${cursor ? `&startCursor=${cursor}` : ''}`,
        acme.key,
      );
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      pages.push(body.data.map((d: { participantId: string; email: string }) => `${d.participantId} ${d.email}`));
      if (!body.hasNextPage) break;
      cursor = body.endCursor;
    }
    expect(pages).toEqual([
      ['r0 r0@example.com', 'r1 r1@example.com', 'r2 r2@example.com'],
      ['r3 r3@example.com', 'r4 r4@example.com'],
    ]);
  });

  it(`weighs each answer's row too (${ANSWER_ROW_BYTES} bytes): respondents of many small answers end a page early`, async () => {
    const poll = await visiblePoll(h, acme);
    const ids = Array.from({ length: 20 }, (_, i) => `many${String(i).padStart(2, '0')}`);
    await withAddresses(poll, ids);
    // 999 more one-byte answers each (star ratings, say), as the public endpoint would store them.
    await sql`INSERT INTO responses (id, account_id, poll_id, participant_id, slide_id, value, metadata, metadata_from, synthetic, created_at)
      SELECT r.id || '_' || g, r.account_id, r.poll_id, r.participant_id, ${poll.q1}, '1'::jsonb, '{}'::jsonb, NULL, false, r.created_at
      FROM responses r, generate_series(1, 999) g WHERE r.poll_id = ${poll.pollId}`.execute(h.database.db);
    const weight = async (id: string) =>
      (
        await sql<{
          b: number;
        }>`SELECT answer_bytes AS b FROM participants WHERE poll_id = ${poll.pollId} AND id = ${id}`.execute(
          h.database.db,
        )
      ).rows[0]!.b +
      1_000 * ANSWER_ROW_BYTES;
    const perPage = Math.floor(EMAILS_PAGE_BYTES / (await weight(ids[0]!)));
    expect(perPage).toBeLessThan(ids.length);
    const first = await call('GET', `/emails?pollId=${poll.pollId}&limit=100`, acme.key);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ hasNextPage: true });
    expect(first.json().data.map((d: { participantId: string }) => d.participantId)).toEqual(ids.slice(0, perPage));
    expect(first.json().data[0].email).toBe(`${ids[0]}@example.com`);
    const rest = await call(
      'GET',
      `/emails?pollId=${poll.pollId}&limit=100&startCursor=${first.json().endCursor}`,
      acme.key,
    );
    expect(rest.json().data.map((d: { participantId: string }) => d.participantId)).toEqual(ids.slice(perPage));
  });

  it("weighs an anonymous poll's respondents as nothing: their answers are not read", async () => {
    const poll = await visiblePoll(h, acme, { settings: { anonymous: true } });
    await withAddresses(poll, ['a0', 'a1', 'a2']);
    await sql`UPDATE participants SET answer_bytes = ${EMAILS_PAGE_BYTES} WHERE poll_id = ${poll.pollId}`.execute(
      h.database.db,
    );
    const res = await call('GET', `/emails?pollId=${poll.pollId}&limit=100`, acme.key);
    expect(res.json()).toMatchObject({ hasNextPage: false });
    expect(res.json().data.map((d: { participantId: string; email: null }) => [d.participantId, d.email])).toEqual([
      ['a0', null],
      ['a1', null],
      ['a2', null],
    ]);
  });
});
