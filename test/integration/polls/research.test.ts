import { sql } from 'kysely';
import { storedBytes } from '../../../src/domain/answer.js';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  acme,
  acmeReader,
  addSlide,
  call,
  createPoll,
  expectProblem,
  h,
  paths,
  rival,
  SPEC_SETTINGS,
  usePollsApi,
  type Json,
} from '../../support/polls-api.js';

/**
 * Synthetic polls (settings.isSynthetic, fixed when the poll is created) and POST /research/start
 * (src/app/polls/start-research.ts): seeded synthetic respondents for every answerable slide.
 */

usePollsApi();

describe('synthetic polls and POST /research/start', () => {
  let synthetic: Json & { id: string };
  let normal: Json & { id: string };
  const runs: { id: string; seed: number }[] = [];

  beforeAll(async () => {
    synthetic = await createPoll(acme, { title: 'Synthetic research', isSynthetic: true });
    normal = await createPoll(acme, { title: 'Normal' });
    await addSlide(synthetic.id, { type: 'copy', title: 'Welcome' });
    await addSlide(synthetic.id, {
      type: 'question',
      title: 'Pick one',
      answers: [{ title: 'Red' }, { title: 'Blue' }, { title: 'Green' }],
    });
    await addSlide(synthetic.id, { type: 'star-rating', title: 'Rate us' });
    await addSlide(synthetic.id, { type: 'email-capture', title: 'Your email' });
    await addSlide(synthetic.id, { type: 'short-answer', title: 'Why?' });
    await addSlide(synthetic.id, { type: 'thank-you', title: 'Thanks' });
  });

  it('isSynthetic is stored as settings.isSynthetic', () => {
    expect(synthetic.settings).toEqual({ ...SPEC_SETTINGS, isSynthetic: true });
    expect(synthetic).not.toHaveProperty('isSynthetic');
    expect((normal.settings as Json).isSynthetic).toBe(false);
  });

  it.each([
    ['isSynthetic false on the synthetic poll', () => ({ pollId: synthetic.id, isSynthetic: false })],
    [
      'settings.isSynthetic false on the synthetic poll',
      () => ({ pollId: synthetic.id, settings: { isSynthetic: false } }),
    ],
    ['isSynthetic true on a normal poll', () => ({ pollId: normal.id, isSynthetic: true })],
  ])('POST /poll/update refuses %s with 409 immutable_field', async (_why, body) => {
    const b = body();
    expectProblem(await call('POST', '/poll/update', acme.key, { ...b, title: 'Changed' }), 409, 'immutable_field');
    const read = (await call('GET', `/poll?pollId=${b.pollId}`, acme.key)).json().data;
    expect(read.settings.isSynthetic).toBe(b.pollId === synthetic.id);
    expect(read.title).not.toBe('Changed');
  });

  it.each([
    ['the normal poll', () => normal, false],
    ['the synthetic poll', () => synthetic, true],
  ])('POST /poll/update refuses isSynthetic and settings.isSynthetic that disagree, on %s', async (_w, poll, flag) => {
    const body = { pollId: poll().id, isSynthetic: flag, settings: { isSynthetic: !flag }, title: 'Changed' };
    const problem = expectProblem(await call('POST', '/poll/update', acme.key, body), 400, 'validation_failed');
    expect(paths(problem)).toEqual(['/isSynthetic']);
    const read = (await call('GET', `/poll?pollId=${poll().id}`, acme.key)).json().data;
    expect(read.settings.isSynthetic).toBe(flag);
    expect(read.title).not.toBe('Changed');
  });

  it('restating the current value is not a change', async () => {
    const res = await call('POST', '/poll/update', acme.key, {
      pollId: synthetic.id,
      isSynthetic: true,
      settings: { showCounter: false },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.settings).toEqual({ ...SPEC_SETTINGS, isSynthetic: true, showCounter: false });
  });

  it('research on a normal poll is 409 not_synthetic and writes nothing', async () => {
    expectProblem(
      await call('POST', '/research/start', acme.key, { pollId: normal.id, participants: 5 }),
      409,
      'not_synthetic',
    );
    const rows = await h.database.db.selectFrom('responses').select('id').where('poll_id', '=', normal.id).execute();
    expect(rows).toEqual([]);
  });

  async function run(seed: number, participants = 7) {
    const res = await call('POST', '/research/start', acme.key, { pollId: synthetic.id, participants, seed });
    expect(res.statusCode, res.body).toBe(201);
    const data = res.json().data;
    runs.push({ id: data.id, seed });
    return data;
  }

  /** The answers of one run, participant by participant (ordered by the n behind each synthetic email). */
  async function answersOf(runId: string): Promise<Record<string, unknown>[]> {
    // A run's respondents carry its id; each one's answers hold it once (migration 017).
    const theirs = (await h.deps.store.responses.listParticipants({ pollId: synthetic.id }, { limit: 1000 })).data
      .filter((p) => p.synthetic && p.metadata.researchRunId === runId)
      .map((p) => p.id);
    const mine = (await Promise.all(theirs.map((id) => h.deps.store.responses.ofParticipant(synthetic.id, id))))
      .flat()
      .map((r) => {
        expect(r.metadata).toEqual({ researchRunId: runId });
        return { participant_id: r.participantId, slide_id: r.slideId, value: r.value };
      });
    const byParticipant = new Map<string, Record<string, unknown>>();
    for (const r of mine)
      byParticipant.set(r.participant_id, { ...byParticipant.get(r.participant_id), [r.slide_id]: r.value });
    const order = (answers: Record<string, unknown>) => {
      const email = Object.values(answers).find(
        (v) => typeof v === 'string' && /^synthetic-\d+@example\.com$/.test(v),
      ) as string;
      return Number(/\d+/.exec(email)![0]);
    };
    return [...byParticipant.values()].sort((a, b) => order(a) - order(b));
  }

  it('creates participants × answerable slides synthetic responses', async () => {
    const data = await run(42);
    expect(data).toMatchObject({
      pollId: synthetic.id,
      accountId: acme.accountId,
      participants: 7,
      seed: 42,
      responsesCreated: 28,
    });
    expect(data.id).toMatch(/^run_/);
    const answers = await answersOf(data.id);
    expect(answers).toHaveLength(7);
    // The run's id is stored once per synthetic respondent, not once per answer (migration 017).
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM responses WHERE poll_id = ${synthetic.id} AND metadata->>'researchRunId' = ${data.id}`.execute(
      h.database.db,
    );
    expect(rows[0]!.n).toBe(7);
    const slides = (await call('GET', `/slides?pollId=${synthetic.id}`, acme.key)).json().data as {
      id: string;
      type: string;
    }[];
    const answerable = slides
      .filter((s) => s.type !== 'copy' && s.type !== 'thank-you')
      .map((s) => s.id)
      .sort();
    for (const a of answers) expect(Object.keys(a).sort()).toEqual(answerable);
    const byType = Object.fromEntries(slides.map((s) => [s.type, s.id]));
    answers.forEach((a, n) => {
      expect(['Red', 'Blue', 'Green']).toContain(a[byType.question!]);
      expect(a[byType['star-rating']!]).toBeGreaterThanOrEqual(1);
      expect(a[byType['star-rating']!]).toBeLessThanOrEqual(5);
      expect(a[byType['email-capture']!]).toBe(`synthetic-${n}@example.com`);
      expect(typeof a[byType['short-answer']!]).toBe('string');
    });
    const participants = await h.database.db
      .selectFrom('participants')
      .select(['id', 'synthetic', 'complete', 'answer_bytes'])
      .where('poll_id', '=', synthetic.id)
      .execute();
    expect(participants).toHaveLength(7);
    expect(participants.every((p) => p.synthetic && p.complete)).toBe(true);
    // What each one's answers hold is counted, as a submission counts it (MAX_RESPONDENT_BYTES).
    for (const p of participants)
      expect(p.answer_bytes).toBe(storedBytes(await h.deps.store.responses.ofParticipant(synthetic.id, p.id)));
  });

  it('the same seed gives the same answers, another seed other answers', async () => {
    const again = await run(42);
    const other = await run(7);
    const first = runs.find((r) => r.seed === 42 && r.id !== again.id)!;
    const a = await answersOf(first.id);
    const b = await answersOf(again.id);
    const c = await answersOf(other.id);
    expect(b).toHaveLength(7);
    expect(b).toEqual(a);
    expect(c).toHaveLength(7);
    expect(c).not.toEqual(a);
  });

  it('defaults to 100 participants and bounds the count to 1..1000', async () => {
    const res = await call('POST', '/research/start', acme.key, { pollId: synthetic.id });
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toMatchObject({ participants: 100, responsesCreated: 400 });
    expect(typeof res.json().data.seed).toBe('number');
    for (const participants of [0, 1001, 2.5]) {
      const body = expectProblem(
        await call('POST', '/research/start', acme.key, { pollId: synthetic.id, participants }),
        400,
        'validation_failed',
      );
      expect(paths(body)).toContain('/participants');
    }
  });

  it('research is a write: read_only gets 403, another account and a missing poll 404', async () => {
    expectProblem(
      await call('POST', '/research/start', acmeReader, { pollId: synthetic.id, participants: 1 }),
      403,
      'role_forbidden',
    );
    expectProblem(
      await call('POST', '/research/start', rival.key, { pollId: synthetic.id, participants: 1 }),
      404,
      'not_found',
    );
    expectProblem(
      await call('POST', '/research/start', acme.key, { pollId: 'poll_missing', participants: 1 }),
      404,
      'not_found',
    );
  });

  it('a request sent again with its idempotencyKey is answered 200 with the run it made, not a second run', async () => {
    const poll = await createPoll(acme, { title: 'Idempotent research', isSynthetic: true });
    await addSlide(poll.id, { type: 'star-rating', title: 'Rate us' });
    const body = { pollId: poll.id, participants: 3, idempotencyKey: 'nightly-2026-12-07' };
    const first = await call('POST', '/research/start', acme.key, body);
    expect(first.statusCode, first.body).toBe(201);
    const again = await call('POST', '/research/start', acme.key, body);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().data).toEqual(first.json().data);
    const stored = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM participants WHERE poll_id = ${poll.id}`.execute(h.database.db);
    expect(stored.rows[0]!.n).toBe(3);
    // The key names that run: other parameters under it are a conflict; a new key, a new run.
    const other = await call('POST', '/research/start', acme.key, { ...body, participants: 4 });
    expect(expectProblem(other, 409, 'conflict').detail).toContain(first.json().data.id);
    const next = await call('POST', '/research/start', acme.key, { ...body, idempotencyKey: 'nightly-2026-12-08' });
    expect(next.statusCode, next.body).toBe(201);
    // Keys are the poll's: the same key on another poll makes a run there.
    const elsewhere = await createPoll(acme, { title: 'Other research', isSynthetic: true });
    await addSlide(elsewhere.id, { type: 'star-rating', title: 'Rate us' });
    expect((await call('POST', '/research/start', acme.key, { ...body, pollId: elsewhere.id })).statusCode).toBe(201);
  });

  it('a run on a poll with no slide to answer is 409 conflict and stores nothing', async () => {
    const bare = await createPoll(acme, { title: 'Nothing to answer', isSynthetic: true });
    const empty = await call('POST', '/research/start', acme.key, { pollId: bare.id, participants: 10 });
    expect(expectProblem(empty, 409, 'conflict').detail).toMatch(/no slide to answer/);
    await addSlide(bare.id, { type: 'copy', title: 'Welcome' });
    await addSlide(bare.id, { type: 'thank-you', title: 'Thanks' });
    expectProblem(
      await call('POST', '/research/start', acme.key, { pollId: bare.id, participants: 10 }),
      409,
      'conflict',
    );
    const stored = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM participants WHERE poll_id = ${bare.id}`.execute(h.database.db);
    expect(stored.rows[0]!.n).toBe(0);
  });

  it('a run makes at most 20,000 answers, and stores at most 16 MiB of them: past either, 409 and nothing stored', async () => {
    const wide = await createPoll(acme, { title: 'Wide synthetic', isSynthetic: true });
    for (let i = 0; i < 21; i++) await addSlide(wide.id, { type: 'star-rating', title: `Rate ${i}` });
    const many = await call('POST', '/research/start', acme.key, { pollId: wide.id, participants: 1000 });
    expect(expectProblem(many, 409, 'limit_reached').detail).toMatch(
      /at most 20000 answers; .* 952 participants at most/,
    );
    const fits = await call('POST', '/research/start', acme.key, { pollId: wide.id, participants: 952 });
    expect(fits.statusCode, fits.body).toBe(201);

    const heavy = await createPoll(acme, { title: 'Heavy synthetic', isSynthetic: true });
    const titles = Array.from({ length: 100 }, (_, i) => ({ title: `${i}`.padEnd(500, 'x') }));
    await addSlide(heavy.id, { type: 'checkbox', title: 'Pick many', multi: true, answers: titles });
    const big = await call('POST', '/research/start', acme.key, { pollId: heavy.id, participants: 1000 });
    expect(expectProblem(big, 409, 'limit_reached').detail).toMatch(/at most 16777216 bytes of answers/);
    const stored = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM participants WHERE poll_id = ${heavy.id}`.execute(h.database.db);
    expect(stored.rows[0]!.n).toBe(0);
  });
});
