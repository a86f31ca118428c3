import { describe, expect, it } from 'vitest';
import { MAX_WEBHOOK_TARGETS } from '../../../src/domain/logic.js';
import { sql } from 'kysely';
import { MAX_POLL_SLIDE_BYTES, MAX_SLIDES, slideBytes, type Slide } from '../../../src/domain/slide.js';
import { POLLS_PAGE_BYTES } from '../../../src/app/polls/list-polls.js';
import { acme, call, createPoll, expectProblem, h, usePollsApi } from '../../support/polls-api.js';

/**
 * What one poll may hold, since every submission reads all of it and may send a delivery to
 * each Trigger webhook target it matches: slides, their bytes, and Trigger webhook targets (a
 * URL on a slide, or in the survey logic). Past any, a write is 409 limit_reached.
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

  describe(`holds at most ${MAX_POLL_SLIDE_BYTES} bytes of slides`, () => {
    // At the request schema's sizes, in a two-byte character: about 125 KB a slide.
    const fat = (n: number) => ({
      type: 'question',
      title: `${n}`.padEnd(1000, 'é'),
      subtitle: 'é'.repeat(2000),
      answers: Array.from({ length: 100 }, (_, j) => ({ id: `a${j}`, title: `${j}`.padEnd(500, 'é') })),
    });
    const sizeOf = (s: ReturnType<typeof fat>) =>
      slideBytes({ ...s, type: 'question', subtitle: s.subtitle, multi: false, logic: [] });
    const stored = async (pollId: string) =>
      (await h.deps.store.slides.listByPoll(pollId)).reduce((n: number, s: Slide) => n + slideBytes(s), 0);

    it('refuses a slide, or a change of one, that would take the poll past them; one that does not grow is taken', async () => {
      const pollId = await newPoll();
      const ids: string[] = [];
      let n = 0;
      while ((await stored(pollId)) + sizeOf(fat(n)) <= MAX_POLL_SLIDE_BYTES) {
        const res = await post('/slide', { pollId, ...fat(n++) });
        expect(res.statusCode, res.body).toBe(201);
        ids.push(res.json().data.id);
      }
      expect(ids.length).toBeGreaterThan(1);
      const over = await post('/slide', { pollId, ...fat(n) });
      expect(expectProblem(over, 409, 'limit_reached').errors).toEqual([
        { path: '/', message: expect.stringContaining(`of at most ${MAX_POLL_SLIDE_BYTES}`) },
      ]);
      // The room left takes a small slide; a change that grows it past the bound does not.
      const small = await post('/slide', { pollId, type: 'short-answer', title: 'Small' });
      expect(small.statusCode, small.body).toBe(201);
      const grown = await post('/slide/update', { slideId: small.json().data.id, ...fat(n) });
      expectProblem(grown, 409, 'limit_reached');
      // Moving a slide, or making it smaller, is always taken.
      const moved = await post('/slide/update', { slideId: ids[1], idx: 0 });
      expect(moved.statusCode, moved.body).toBe(200);
      const smaller = await post('/slide/update', { slideId: ids[0], subtitle: 'short' });
      expect(smaller.statusCode, smaller.body).toBe(200);
      expect(await stored(pollId)).toBeLessThanOrEqual(MAX_POLL_SLIDE_BYTES);
    });

    it('lets a poll saved larger be edited, as long as the edit does not grow it', async () => {
      const pollId = await newPoll();
      const a = (await post('/slide', { pollId, type: 'short-answer', title: 'A' })).json().data.id;
      const b = (await post('/slide', { pollId, type: 'short-answer', title: 'B' })).json().data.id;
      await sql`UPDATE slides SET subtitle = ${'x'.repeat(MAX_POLL_SLIDE_BYTES)} WHERE id = ${a}`.execute(
        h.database.db,
      );
      const same = await post('/slide/update', { slideId: b, title: 'C' });
      expect(same.statusCode, same.body).toBe(200);
      const longer = await post('/slide/update', { slideId: b, title: 'Longer' });
      expectProblem(longer, 409, 'limit_reached');
      const added = await post('/slide', { pollId, type: 'short-answer', title: 'D' });
      expectProblem(added, 409, 'limit_reached');
      const shrunk = await post('/slide/update', { slideId: a, subtitle: 'short' });
      expect(shrunk.statusCode, shrunk.body).toBe(200);
      const after = await post('/slide', { pollId, type: 'short-answer', title: 'D' });
      expect(after.statusCode, after.body).toBe(201);
    });
  });
});

describe('GET /polls', () => {
  it(`ends a page early before its polls' stored bodies pass ${POLLS_PAGE_BYTES / 2 ** 20} MiB, and the next page goes on from there`, async () => {
    const acct = await h.account({ name: 'Many translations' });
    // Ten polls of about 0.9 MB of translations each: about 9 MB in all.
    const text = 'x'.repeat(10_000);
    const translations = Object.fromEntries(Array.from({ length: 90 }, (_, i) => [`t${i}`, text]));
    const made: string[] = [];
    for (let i = 0; i < 10; i++) {
      const poll = await createPoll(acct, {
        title: `Translated ${i}`,
        languageSettings: { defaultLanguage: 'en', languages: { fr: { enabled: true, translations } } },
      });
      made.push(poll.id);
    }
    const list = (cursor?: string) =>
      call('GET', `/polls?accountId=${acct.accountId}&limit=100${cursor ? `&startCursor=${cursor}` : ''}`, acct.key);
    const first = await list();
    expect(first.statusCode, first.body.slice(0, 300)).toBe(200);
    const page = first.json() as { data: { id: string }[]; hasNextPage: boolean; endCursor: string };
    expect(page.data.length).toBeGreaterThan(0);
    expect(page.data.length).toBeLessThan(10);
    expect(first.body.length).toBeLessThan(POLLS_PAGE_BYTES + 1024 * 1024);
    expect(page.hasNextPage).toBe(true);
    expect(page.endCursor).toBe(page.data[page.data.length - 1]!.id);
    const rest = (await list(page.endCursor)).json() as { data: { id: string }[]; hasNextPage: boolean };
    expect(rest.hasNextPage).toBe(false);
    expect([...page.data, ...rest.data].map((p) => p.id)).toEqual([...made].sort());
    // The sizes are kept with the polls as they are written (migration 027), and are what a page
    // is cut by: the first poll weighed as 8 MiB leaves the next to the next page.
    const stamped = await call('POST', '/poll/update', acct.key, {
      pollId: made[1],
      // Its translations rewritten, as large as before and a little larger.
      languageSettings: {
        defaultLanguage: 'en',
        languages: { de: { enabled: true, translations: { ...translations, extra: 'y'.repeat(5_000) } } },
      },
    });
    expect(stamped.statusCode, stamped.body).toBe(200);
    const sizes = await sql<{ kept: number | null; printed: number }>`
      SELECT body_bytes AS kept, octet_length(body::text) AS printed FROM polls WHERE id = ANY(${made}::text[])`.execute(
      h.database.db,
    );
    expect(sizes.rows).toHaveLength(10);
    for (const s of sizes.rows) expect(s.kept).toBe(s.printed);
    const listed = async () => ((await list()).json() as { data: { id: string }[] }).data.map((p) => p.id);
    const byKept = await listed();
    expect(byKept.length).toBeLessThan(10);
    // A poll without a kept size is counted as it is listed.
    await sql`UPDATE polls SET body_bytes = NULL WHERE id = ANY(${made}::text[])`.execute(h.database.db);
    expect(await listed()).toEqual(byKept);
    await sql`UPDATE polls SET body_bytes = ${POLLS_PAGE_BYTES} WHERE id = ${made[0]}`.execute(h.database.db);
    const cut = (await list()).json() as { data: { id: string }[]; hasNextPage: boolean; endCursor: string };
    expect([cut.data.map((p) => p.id), cut.hasNextPage, cut.endCursor]).toEqual([[made[0]], true, made[0]]);

    // A submission's read of the polls leaves their translations behind.
    const [read] = await h.deps.store.polls.getForSubmission([made[0]!]);
    expect(read!.poll.title).toBe('Translated 0');
    expect('languageSettings' in read!.poll).toBe(false);
  });
});
