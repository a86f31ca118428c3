import { beforeAll, describe, expect, it } from 'vitest';
import {
  acme,
  addSlide,
  call,
  createPoll,
  expectProblem,
  paths,
  slideIds,
  usePollsApi,
  type Json,
} from '../../support/polls-api.js';

/**
 * Saving question logic (POST /slide, /slide/update) and survey action logic (POST /poll/update):
 * what is stored, what is refused (a skip-to outside the poll, a trigger-webhook URL that is not a
 * public https:// URL, malformed rules), and that a slide logic refers to cannot be deleted.
 * What logic does when respondents answer is tested in test/integration/logic-api.test.ts.
 */

usePollsApi();

describe('question logic and survey action logic', () => {
  let poll: Json & { id: string };
  let q: Json & { id: string };
  let end: Json & { id: string };
  beforeAll(async () => {
    poll = await createPoll(acme, { title: 'Logic' });
    end = await addSlide(poll.id, { type: 'thank-you', title: 'Bye' });
    q = await addSlide(poll.id, {
      type: 'question',
      title: 'Happy?',
      answers: [{ title: 'Yes' }, { title: 'No' }],
      idx: 0,
    });
  });

  it('stores valid question logic', async () => {
    const logic = [
      {
        match: 'any',
        conditions: [{ op: 'equals', value: 'No' }],
        action: { type: 'trigger-webhook', url: 'https://hooks.example.com/unhappy' },
      },
      { match: 'all', conditions: [{ op: 'answered' }], action: { type: 'skip-to', slideId: end.id } },
      {
        match: 'all',
        conditions: [
          { op: 'gt', value: 3 },
          { op: 'contains', value: ['a', 'b'] },
        ],
        action: { type: 'end-survey' },
      },
    ];
    const res = await call('POST', '/slide/update', acme.key, { slideId: q.id, logic });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.logic).toEqual(logic);
    const listed = (await call('GET', `/slides?pollId=${poll.id}`, acme.key))
      .json()
      .data.find((s: { id: string }) => s.id === q.id);
    expect(listed.logic).toEqual(logic);
    const created = await addSlide(poll.id, {
      title: 'Self',
      logic: [{ match: 'all', conditions: [], action: { type: 'continue' } }],
    });
    expect(created.logic).toEqual([{ match: 'all', conditions: [], action: { type: 'continue' } }]);
  });

  it('refuses skip-to a slide that is not in the poll', async () => {
    const other = await createPoll(acme, { title: 'Other' });
    const foreign = await addSlide(other.id, { title: 'Elsewhere' });
    for (const slideId of ['sld_doesnotexist0000000000', foreign.id]) {
      const body = expectProblem(
        await call('POST', '/slide', acme.key, {
          pollId: poll.id,
          type: 'short-answer',
          title: 'T',
          logic: [{ match: 'all', conditions: [], action: { type: 'skip-to', slideId } }],
        }),
        400,
        'validation_failed',
      );
      expect(paths(body)).toEqual(['/logic/0/action/slideId']);
    }
    const upd = expectProblem(
      await call('POST', '/slide/update', acme.key, {
        slideId: q.id,
        logic: [{ match: 'all', conditions: [], action: { type: 'skip-to', slideId: foreign.id } }],
      }),
      400,
      'validation_failed',
    );
    expect(paths(upd)).toEqual(['/logic/0/action/slideId']);
  });

  it.each([
    ['http://', 'http://hooks.example.com/x'],
    ['loopback', 'https://127.0.0.1/x'],
    ['metadata address', 'https://169.254.169.254/latest'],
    ['localhost', 'https://localhost/x'],
    ['credentials', 'https://u:p@hooks.example.com/x'],
  ])('refuses a trigger-webhook URL that is %s with invalid_url', async (_why, url) => {
    const body = expectProblem(
      await call('POST', '/slide', acme.key, {
        pollId: poll.id,
        type: 'short-answer',
        title: 'T',
        logic: [
          { match: 'all', conditions: [], action: { type: 'continue' } },
          { match: 'any', conditions: [{ op: 'answered' }], action: { type: 'trigger-webhook', url } },
        ],
      }),
      400,
      'invalid_url',
    );
    expect(paths(body)).toEqual(['/logic/1/action/url']);
  });

  it.each([
    [
      'an unknown op',
      [{ match: 'all', conditions: [{ op: 'matches', value: 'x' }], action: { type: 'continue' } }],
      'validation_failed',
    ],
    [
      'a comparison without a value',
      [{ match: 'all', conditions: [{ op: 'equals' }], action: { type: 'continue' } }],
      'validation_failed',
    ],
    ['an unknown action', [{ match: 'all', conditions: [], action: { type: 'explode' } }], 'validation_failed'],
    ['skip-to without slideId', [{ match: 'all', conditions: [], action: { type: 'skip-to' } }], 'validation_failed'],
    ['an unknown match', [{ match: 'some', conditions: [], action: { type: 'continue' } }], 'validation_failed'],
  ])('refuses question logic with %s', async (_why, logic, code) => {
    expectProblem(await call('POST', '/slide/update', acme.key, { slideId: q.id, logic }), 400, code);
  });

  it('stores valid survey action logic through /poll/update', async () => {
    const actionLogic = [
      {
        on: 'complete',
        match: 'all',
        conditions: [{ slideId: q.id, op: 'equals', value: 'No' }],
        action: { type: 'trigger-webhook', url: 'https://hooks.example.com/complete' },
      },
      { on: 'complete', action: { type: 'skip-to', slideId: end.id } },
    ];
    const res = await call('POST', '/poll/update', acme.key, { pollId: poll.id, actionLogic });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.actionLogic).toEqual(actionLogic);
    expect((await call('GET', `/poll?pollId=${poll.id}`, acme.key)).json().data.actionLogic).toEqual(actionLogic);
  });

  it.each([
    [
      'skip-to an unknown slide',
      () => [{ on: 'complete', action: { type: 'skip-to', slideId: 'sld_doesnotexist0000000000' } }],
      'validation_failed',
      '/actionLogic/0/action/slideId',
    ],
    [
      'a condition on an unknown slide',
      () => [{ on: 'complete', conditions: [{ slideId: 'sld_nope', op: 'answered' }], action: { type: 'end-survey' } }],
      'validation_failed',
      '/actionLogic/0/conditions/0/slideId',
    ],
    [
      'a comparison without value',
      () => [{ on: 'complete', conditions: [{ slideId: q.id, op: 'lt' }], action: { type: 'end-survey' } }],
      'validation_failed',
      '/actionLogic/0/conditions/0/value',
    ],
    [
      'an http:// webhook',
      () => [
        { on: 'complete', action: { type: 'continue' } },
        { on: 'complete', action: { type: 'trigger-webhook', url: 'http://hooks.example.com/x' } },
      ],
      'invalid_url',
      '/actionLogic/1/action/url',
    ],
    [
      'a private webhook address',
      () => [{ on: 'complete', action: { type: 'trigger-webhook', url: 'https://[::ffff:10.0.0.1]/x' } }],
      'invalid_url',
      '/actionLogic/0/action/url',
    ],
    [
      'another trigger than complete',
      () => [{ on: 'start', action: { type: 'end-survey' } }],
      'validation_failed',
      '/actionLogic/0/on',
    ],
  ])('/poll/update refuses action logic with %s', async (_why, actionLogic, code, path) => {
    const before = (await call('GET', `/poll?pollId=${poll.id}`, acme.key)).json().data.actionLogic;
    const body = expectProblem(
      await call('POST', '/poll/update', acme.key, { pollId: poll.id, actionLogic: actionLogic() }),
      400,
      code,
    );
    expect(paths(body)).toContain(path);
    expect((await call('GET', `/poll?pollId=${poll.id}`, acme.key)).json().data.actionLogic).toEqual(before);
  });

  it('a slide that another slide skips to cannot be deleted', async () => {
    await call('POST', '/slide/update', acme.key, {
      slideId: q.id,
      logic: [{ match: 'all', conditions: [{ op: 'answered' }], action: { type: 'skip-to', slideId: end.id } }],
    });
    expectProblem(await call('DELETE', `/slide?slideId=${end.id}`, acme.key), 409, 'conflict');
    expect(await slideIds(poll.id)).toContain(end.id);
  });

  it.each([
    ['skips to it', (id: string) => [{ on: 'complete', action: { type: 'skip-to', slideId: id } }]],
    [
      'has a condition on it',
      (id: string) => [
        { on: 'complete', conditions: [{ slideId: id, op: 'answered' }], action: { type: 'end-survey' } },
      ],
    ],
  ])('a slide that survey action logic %s cannot be deleted', async (_why, actionLogic) => {
    const target = await createPoll(acme, { title: 'Action logic refs' });
    const s = await addSlide(target.id, { title: 'Referenced' });
    expect(
      (await call('POST', '/poll/update', acme.key, { pollId: target.id, actionLogic: actionLogic(s.id) })).statusCode,
    ).toBe(200);
    expectProblem(await call('DELETE', `/slide?slideId=${s.id}`, acme.key), 409, 'conflict');
    expect(await slideIds(target.id)).toEqual([s.id]);
    expect((await call('POST', '/poll/update', acme.key, { pollId: target.id, actionLogic: [] })).statusCode).toBe(200);
    expect((await call('DELETE', `/slide?slideId=${s.id}`, acme.key)).statusCode).toBe(200);
  });
});
