import { beforeAll, describe, expect, it } from 'vitest';
import {
  acme,
  addSlide,
  call,
  createPoll,
  expectProblem,
  h,
  paths,
  slideIds,
  usePollsApi,
  type Json,
} from '../../support/polls-api.js';

/**
 * Route tests for slides (src/http/routes/slides.ts): POST /slide, GET /slides, POST /slide/update
 * and DELETE /slide, with their places (idx) kept dense; and the point-of-sale rule: a poll whose
 * pageRules include /pos/home or /pos/post-purchase holds no file-upload slide.
 */

usePollsApi();

describe('slides', () => {
  let poll: Json & { id: string };
  beforeAll(async () => {
    poll = await createPoll(acme, { title: 'With slides' });
  });

  it('POST /slide creates a slide at the end', async () => {
    const res = await call('POST', '/slide', acme.key, {
      pollId: poll.id,
      type: 'question',
      title: ' <b>Favourite</b> colour? ',
      subtitle: ' pick <i>one</i> ',
      answers: [{ title: ' Red ' }, { title: '<em>Blue</em>' }],
    });
    expect(res.statusCode, res.body).toBe(201);
    const s = res.json().data;
    expect(s.id).toMatch(/^sld_[0-9A-Za-z]{22}$/);
    expect(s).toMatchObject({
      pollId: poll.id,
      accountId: acme.accountId,
      idx: 0,
      type: 'question',
      title: 'Favourite colour?',
      subtitle: 'pick one',
      multi: false,
      logic: [],
    });
    expect(s.answers).toEqual([
      { id: expect.stringMatching(/^ans_/), title: 'Red' },
      { id: expect.stringMatching(/^ans_/), title: 'Blue' },
    ]);
    const second = await addSlide(poll.id, { type: 'star-rating', title: 'Rate us' });
    expect(second.idx).toBe(1);
    expect(await slideIds(poll.id)).toEqual([s.id, second.id]);
  });

  it('idx inserts a slide at that place and moves the rest down', async () => {
    const [a, b] = await slideIds(poll.id);
    const front = await addSlide(poll.id, { title: 'First', idx: 0 });
    expect(front.idx).toBe(0);
    const middle = await addSlide(poll.id, { title: 'Middle', idx: 2 });
    const far = await addSlide(poll.id, { title: 'Far', idx: 500 });
    const slides = (await call('GET', `/slides?pollId=${poll.id}`, acme.key)).json().data as {
      id: string;
      idx: number;
    }[];
    expect(slides.map((s) => s.id)).toEqual([front.id, a, middle.id, b, far.id]);
    expect(slides.map((s) => s.idx)).toEqual([0, 1, 2, 3, 4]);
    const read = (await call('GET', `/poll?pollId=${poll.id}`, acme.key)).json().data;
    expect(read.slides.map((s: { id: string }) => s.id)).toEqual(slides.map((s) => s.id));
  });

  it('POST /slide/update changes fields and keeps the rest', async () => {
    const [, questionId] = await slideIds(poll.id);
    h.clock.advance(1000);
    const res = await call('POST', '/slide/update', acme.key, {
      slideId: questionId,
      title: 'Favourite colours?',
      multi: true,
      answers: [{ title: 'Red' }, { title: 'Green' }, { title: 'Blue' }],
    });
    expect(res.statusCode, res.body).toBe(200);
    const s = res.json().data;
    expect(s).toMatchObject({
      id: questionId,
      type: 'question',
      title: 'Favourite colours?',
      subtitle: 'pick one',
      multi: true,
      idx: 1,
    });
    expect(s.answers.map((a: { title: string }) => a.title)).toEqual(['Red', 'Green', 'Blue']);
    expect(Date.parse(s.updatedAt)).toBeGreaterThan(Date.parse(s.createdAt));
    const listed = (await call('GET', `/slides?pollId=${poll.id}`, acme.key))
      .json()
      .data.find((x: { id: string }) => x.id === questionId);
    expect(listed).toEqual(s);
  });

  it('POST /slide/update with idx moves the slide to that place', async () => {
    const before = await slideIds(poll.id);
    const moved = before[0]!;
    const res = await call('POST', '/slide/update', acme.key, { slideId: moved, idx: 2 });
    expect(res.statusCode).toBe(200);
    const expected = [...before.slice(1, 3), moved, ...before.slice(3)];
    expect(await slideIds(poll.id)).toEqual(expected);
    const back = await call('POST', '/slide/update', acme.key, { slideId: moved, idx: 0 });
    expect(back.statusCode).toBe(200);
    expect(await slideIds(poll.id)).toEqual(before);
    const last = await call('POST', '/slide/update', acme.key, { slideId: moved, idx: 99 });
    expect(last.json().data.idx).toBe(before.length - 1);
    expect(await slideIds(poll.id)).toEqual([...before.slice(1), moved]);
    await call('POST', '/slide/update', acme.key, { slideId: moved, idx: 0 });
    const slides = (await call('GET', `/slides?pollId=${poll.id}`, acme.key)).json().data as { idx: number }[];
    expect(slides.map((s) => s.idx)).toEqual([0, 1, 2, 3, 4]);
  });

  it('DELETE /slide removes it; a slide added afterwards goes at the end', async () => {
    const before = await slideIds(poll.id);
    const victim = before[2]!;
    const res = await call('DELETE', `/slide?slideId=${victim}`, acme.key);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: { id: victim, deleted: true } });
    const after = before.filter((id) => id !== victim);
    expect(await slideIds(poll.id)).toEqual(after);
    expectProblem(await call('DELETE', `/slide?slideId=${victim}`, acme.key), 404, 'not_found');
    expectProblem(await call('POST', '/slide/update', acme.key, { slideId: victim, title: 'x' }), 404, 'not_found');
    const appended = await addSlide(poll.id, { title: 'Appended' });
    expect(await slideIds(poll.id)).toEqual([...after, appended.id]);
    const slides = (await call('GET', `/slides?pollId=${poll.id}`, acme.key)).json().data as { idx: number }[];
    expect(slides.map((s) => s.idx)).toEqual([0, 1, 2, 3, 4]);
  });

  it.each([
    ['an unknown type', { type: 'essay' }, '/type'],
    ['a missing title', { title: undefined }, '/title'],
    ['an unknown field', { colour: 'red' }, '/colour'],
    ['a negative idx', { idx: -1 }, '/idx'],
    ['an unknown key in an answer', { type: 'question', answers: [{ title: 'A', score: 1 }] }, '/answers/0/score'],
  ])('POST /slide refuses %s', async (_why, extra, path) => {
    const body = expectProblem(
      await call('POST', '/slide', acme.key, { pollId: poll.id, type: 'short-answer', title: 'T', ...extra }),
      400,
      'validation_failed',
    );
    expect(paths(body)).toContain(path);
  });

  it.each([
    ['a title that is only HTML', { title: '<br>' }, '/title'],
    ['a choice slide without answers', { type: 'dropdown' }, '/answers'],
    ['duplicate answers', { type: 'question', answers: [{ title: 'A' }, { title: ' A ' }] }, '/answers/1/title'],
  ])('POST /slide refuses %s', async (_why, extra, path) => {
    const count = (await slideIds(poll.id)).length;
    const body = expectProblem(
      await call('POST', '/slide', acme.key, { pollId: poll.id, type: 'short-answer', title: 'T', ...extra }),
      400,
      'validation_failed',
    );
    expect(paths(body)).toContain(path);
    expect(await slideIds(poll.id)).toHaveLength(count);
  });

  it('slides added at the same time each get their own place', async () => {
    const target = await createPoll(acme, { title: 'Concurrent slides' });
    const made = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        call('POST', '/slide', acme.key, { pollId: target.id, type: 'short-answer', title: `S${i}` }),
      ),
    );
    expect(made.map((r) => r.statusCode)).toEqual(Array(8).fill(201));
    const slides = (await call('GET', `/slides?pollId=${target.id}`, acme.key)).json().data as {
      idx: number;
      title: string;
    }[];
    expect(slides.map((s) => s.idx)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(slides.map((s) => s.title).sort()).toEqual(['S0', 'S1', 'S2', 'S3', 'S4', 'S5', 'S6', 'S7']);
  });

  it('a binary slide needs no answers', async () => {
    const s = await addSlide(poll.id, { type: 'binary', title: 'Yes or no?' });
    expect(s.answers).toEqual([]);
  });

  it("answers' own ids must each name one answer: none blank, none repeated", async () => {
    const cases: [{ id?: string; title: string }[], string][] = [
      [[{ id: '  ', title: 'A' }, { title: 'B' }], '/answers/0/id'],
      [
        [
          { id: 'same', title: 'A' },
          { id: ' same ', title: 'B' },
        ],
        '/answers/1/id',
      ],
    ];
    const before = await slideIds(poll.id);
    for (const [answers, path] of cases) {
      const res = await call('POST', '/slide', acme.key, { pollId: poll.id, type: 'question', title: 'Q', answers });
      expect(expectProblem(res, 400, 'validation_failed').errors).toEqual([{ path, message: expect.any(String) }]);
    }
    expect(await slideIds(poll.id)).toEqual(before);
    const kept = await addSlide(poll.id, {
      type: 'question',
      title: 'Q',
      answers: [
        { id: ' a1 ', title: 'A' },
        { id: 'b1', title: 'B' },
      ],
    });
    expect(kept.answers).toEqual([
      { id: 'a1', title: 'A' },
      { id: 'b1', title: 'B' },
    ]);
  });

  it('POST /slide on a missing poll is 404', async () => {
    expectProblem(
      await call('POST', '/slide', acme.key, { pollId: 'poll_missing', type: 'short-answer', title: 'T' }),
      404,
      'not_found',
    );
  });
});

describe('point-of-sale rule: no file-upload slides', () => {
  it.each(['/pos/home', '/pos/post-purchase'])(
    'a poll with pageRules [%s] refuses a file-upload slide',
    async (rule) => {
      const poll = await createPoll(acme, { pageRules: [rule] });
      expectProblem(
        await call('POST', '/slide', acme.key, { pollId: poll.id, type: 'file-upload', title: 'Receipt' }),
        400,
        'pos_file_upload',
      );
      expect(await slideIds(poll.id)).toEqual([]);
      const other = await addSlide(poll.id, { type: 'short-answer', title: 'Ok' });
      expectProblem(
        await call('POST', '/slide/update', acme.key, { slideId: other.id, type: 'file-upload' }),
        400,
        'pos_file_upload',
      );
      expect((await call('GET', `/slides?pollId=${poll.id}`, acme.key)).json().data[0].type).toBe('short-answer');
    },
  );

  it.each(['/pos/post-purchase', '/pos/home'])(
    'a poll holding a file-upload slide refuses pageRules [%s]',
    async (rule) => {
      const poll = await createPoll(acme, { pageRules: ['/account'] });
      await addSlide(poll.id, { type: 'file-upload', title: 'Upload' });
      expectProblem(
        await call('POST', '/poll/update', acme.key, { pollId: poll.id, pageRules: ['/checkouts/(.)', rule] }),
        400,
        'pos_file_upload',
      );
      expect((await call('GET', `/poll?pollId=${poll.id}`, acme.key)).json().data.pageRules).toEqual(['/account']);
    },
  );

  it('a point-of-sale rule and a file-upload slide sent at the same time never both land', async () => {
    for (let i = 0; i < 5; i++) {
      const poll = await createPoll(acme, { title: `Race ${i}` });
      const [rule, slide] = await Promise.all([
        call('POST', '/poll/update', acme.key, { pollId: poll.id, pageRules: ['/pos/home'] }),
        call('POST', '/slide', acme.key, { pollId: poll.id, type: 'file-upload', title: 'Upload' }),
      ]);
      expect(rule.statusCode === 200 && slide.statusCode === 201, `${rule.body} ${slide.body}`).toBe(false);
      const loser = rule.statusCode === 200 ? slide : rule;
      expectProblem(loser, 400, 'pos_file_upload');
      const read = (await call('GET', `/poll?pollId=${poll.id}`, acme.key)).json().data;
      expect(
        read.pageRules.includes('/pos/home') && read.slides.some((s: { type: string }) => s.type === 'file-upload'),
      ).toBe(false);
    }
  });

  it('other surfaces take file-upload slides', async () => {
    const poll = await createPoll(acme, { pageRules: ['/(.)/thank_you', '/:order_number/orders/:variable'] });
    const s = await addSlide(poll.id, { type: 'file-upload', title: 'Upload' });
    expect(s.type).toBe('file-upload');
  });
});
