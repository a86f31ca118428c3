import { beforeAll, describe, expect, it } from 'vitest';
import { setPlan } from '../../../src/app/accounts/set-plan.js';
import { bearer, type TestAccount } from '../../support/app.js';
import {
  acme,
  acmeEditor,
  acmeReader,
  addSlide,
  call,
  createPoll,
  expectProblem,
  h,
  rival,
  slideIds,
  usePollsApi,
  type Json,
  type Method,
} from '../../support/polls-api.js';

/**
 * Authentication and authorisation on every route of polls, slides, translations, research and
 * account settings: 401 without a valid key (before the body is looked at), 403 plan_required
 * below premium, 403 role_forbidden for a read_only key's writes, and another account's poll,
 * slide or account answered exactly as a missing one, changing nothing.
 */

usePollsApi();

describe('authentication and authorisation', () => {
  let acmePoll: Json & { id: string };
  let acmeSlide: Json & { id: string };
  let rivalPoll: Json & { id: string };
  let free: TestAccount;
  let basic: TestAccount;

  beforeAll(async () => {
    acmePoll = await createPoll(acme, {
      title: 'Private to Acme',
      isSynthetic: true,
      languageSettings: { defaultLanguage: 'en', languages: { en: { enabled: true, translations: { title: 'Hi' } } } },
    });
    acmeSlide = await addSlide(acmePoll.id, { title: 'Acme slide' });
    rivalPoll = await createPoll(rival, { title: 'Rival poll' });
    free = await h.account({ plan: 'free', name: 'Free' });
    basic = await h.account({ plan: 'basic', name: 'Basic' });
  });

  type Req = { method: Method; url: string; body?: Json };
  /** Every endpoint, aimed at the given poll, slide and account. */
  const endpoints = (pollId: string, slideId: string, accountId: string): [string, Req][] => [
    ['POST /poll', { method: 'POST', url: '/poll', body: { accountId, title: 'x' } }],
    ['POST /survey', { method: 'POST', url: '/survey', body: { accountId, title: 'x' } }],
    ['POST /poll dryRun', { method: 'POST', url: '/poll', body: { accountId, title: 'x', dryRun: true } }],
    [
      'POST /commit',
      { method: 'POST', url: '/commit', body: { data: { id: 'poll_0000000000000000000000', accountId, title: 'x' } } },
    ],
    ['GET /poll', { method: 'GET', url: `/poll?pollId=${pollId}` }],
    ['GET /polls', { method: 'GET', url: `/polls?accountId=${accountId}` }],
    ['POST /poll/update', { method: 'POST', url: '/poll/update', body: { pollId, title: 'Hijacked' } }],
    ['DELETE /poll', { method: 'DELETE', url: `/poll?pollId=${pollId}` }],
    ['POST /research/start', { method: 'POST', url: '/research/start', body: { pollId, participants: 1 } }],
    ['GET /poll/translations', { method: 'GET', url: `/poll/translations?pollId=${pollId}&language=en` }],
    [
      'POST /poll/translations/update',
      {
        method: 'POST',
        url: '/poll/translations/update',
        body: { pollId, language: 'en', translations: { title: 'Hijacked' } },
      },
    ],
    ['GET /account/settings', { method: 'GET', url: `/account/settings?accountId=${accountId}` }],
    [
      'PATCH /account/settings',
      { method: 'PATCH', url: '/account/settings', body: { accountId, smsDisplaySettings: { message: 'Hijacked' } } },
    ],
    ['POST /slide', { method: 'POST', url: '/slide', body: { pollId, type: 'short-answer', title: 'x' } }],
    ['GET /slides', { method: 'GET', url: `/slides?pollId=${pollId}` }],
    ['POST /slide/update', { method: 'POST', url: '/slide/update', body: { slideId, title: 'Hijacked' } }],
    ['DELETE /slide', { method: 'DELETE', url: `/slide?slideId=${slideId}` }],
  ];
  const send = (r: Req, key: string | undefined, headers: Record<string, string> = {}) =>
    h.app.inject({
      method: r.method,
      url: r.url,
      headers: { ...(key ? bearer(key) : {}), ...headers },
      ...(r.body ? { payload: r.body } : {}),
    });

  it('every endpoint answers 401 unauthenticated without a key, before looking at the body', async () => {
    for (const [name, r] of endpoints(acmePoll.id, acmeSlide.id, acme.accountId)) {
      const res = await send(r, undefined);
      expect(res.statusCode, name).toBe(401);
      expectProblem(res, 401, 'unauthenticated');
      expect(res.headers['www-authenticate'], name).toBe('Bearer realm="canvass"');
      expect(res.headers['cache-control'], name).toBe('no-store');
    }
    expectProblem(await call('POST', '/poll', undefined, { nonsense: true }), 401, 'unauthenticated');
  });

  it.each([
    ['an unknown key', { authorization: `Bearer cvk_${'A'.repeat(32)}` }],
    ['a malformed key', { authorization: 'Bearer not-a-key' }],
    ['another scheme', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
    ['an empty bearer', { authorization: 'Bearer ' }],
  ])('every endpoint answers 401 for %s', async (_why, headers) => {
    for (const [name, r] of endpoints(acmePoll.id, acmeSlide.id, acme.accountId)) {
      const res = await send(r, undefined, headers);
      expect(res.statusCode, name).toBe(401);
      expectProblem(res, 401, 'unauthenticated');
      expect(res.headers['www-authenticate'], name).toBe('Bearer realm="canvass"');
      expect(res.headers['cache-control'], name).toBe('no-store');
    }
  });

  it('accounts on the free and basic plans get 403 plan_required', async () => {
    for (const acct of [free, basic]) {
      expectProblem(
        await call('POST', '/poll', acct.key, { accountId: acct.accountId, title: 'x' }),
        403,
        'plan_required',
      );
      expectProblem(await call('GET', `/polls?accountId=${acct.accountId}`, acct.key), 403, 'plan_required');
      expectProblem(
        await call('PATCH', '/account/settings', acct.key, {
          accountId: acct.accountId,
          smsDisplaySettings: { message: 'x' },
        }),
        403,
        'plan_required',
      );
      // a non-member learns nothing about the account, not even its plan
      expectProblem(
        await call('POST', '/poll', rival.key, { accountId: acct.accountId, title: 'x' }),
        404,
        'not_found',
      );
    }
  });

  it('an account downgraded below premium loses access to its polls and slides', async () => {
    const down = await h.account({ name: 'Downgraded' });
    const poll = await createPoll(down);
    const slide = await addSlide(poll.id, {}, down.key);
    await setPlan(h.deps, down.accountId, 'basic');
    for (const [name, r] of endpoints(poll.id, slide.id, down.accountId)) {
      const res = await send(r, down.key);
      expect(res.statusCode, name).toBe(403);
      expectProblem(res, 403, 'plan_required');
    }
    await setPlan(h.deps, down.accountId, 'enterprise');
    expect((await call('GET', `/poll?pollId=${poll.id}`, down.key)).statusCode).toBe(200);
  });

  it('a read_only key may read but every write is 403 role_forbidden', async () => {
    const reads = ['GET /poll', 'GET /polls', 'GET /poll/translations', 'GET /account/settings', 'GET /slides'];
    for (const [name, r] of endpoints(acmePoll.id, acmeSlide.id, acme.accountId)) {
      const res = await send(r, acmeReader);
      if (reads.includes(name)) {
        expect(res.statusCode, name).toBe(200);
      } else {
        expect(res.statusCode, `${name}: ${res.body}`).toBe(403);
        expectProblem(res, 403, 'role_forbidden');
      }
    }
    const read = (await call('GET', `/poll?pollId=${acmePoll.id}`, acme.key)).json().data;
    expect(read.title).toBe('Private to Acme');
    expect(await slideIds(acmePoll.id)).toEqual([acmeSlide.id]);
  });

  it('an editor may write polls and slides', async () => {
    const poll = await createPoll(acme, { title: 'By editor' }, acmeEditor);
    const slide = await addSlide(poll.id, {}, acmeEditor);
    expect(
      (await call('POST', '/poll/update', acmeEditor, { pollId: poll.id, isVisible: true })).json().data.isVisible,
    ).toBe(true);
    expect((await call('DELETE', `/slide?slideId=${slide.id}`, acmeEditor)).statusCode).toBe(200);
    expect((await call('DELETE', `/poll?pollId=${poll.id}`, acmeEditor)).statusCode).toBe(200);
  });

  it("another account's poll, slide or account id is a 404 identical to a missing one", async () => {
    const foreign = endpoints(acmePoll.id, acmeSlide.id, acme.accountId);
    const missing = endpoints('poll_0000000000MISSING0000', 'sld_00000000000MISSING0000', 'acc_00000000000MISSING0000');
    for (const [i, [name, r]] of foreign.entries()) {
      const a = await send(r, rival.key);
      const b = await send(missing[i]![1], rival.key);
      const pa = expectProblem(a, 404, 'not_found');
      const pb = expectProblem(b, 404, 'not_found');
      expect(pa, name).toEqual(pb);
      expect(a.headers['content-type'], name).toBe(b.headers['content-type']);
    }
    // nothing of Acme's changed, and Rival's own poll is still there
    const read = (await call('GET', `/poll?pollId=${acmePoll.id}`, acme.key)).json().data;
    expect(read.title).toBe('Private to Acme');
    expect(read.slides.map((s: { id: string; title: string }) => [s.id, s.title])).toEqual([
      [acmeSlide.id, 'Acme slide'],
    ]);
    const tr = (await call('GET', `/poll/translations?pollId=${acmePoll.id}&language=en`, acme.key)).json().data;
    expect(tr.translations).toEqual({ title: 'Hi' });
    const settings = (await call('GET', `/account/settings?accountId=${acme.accountId}`, acme.key)).json().data;
    expect(settings.smsDisplaySettings).not.toEqual({ message: 'Hijacked' });
    const rivalList = (await call('GET', `/polls?accountId=${rival.accountId}`, rival.key))
      .json()
      .data.map((p: { id: string }) => p.id);
    expect(rivalList).toEqual([rivalPoll.id]);
    const research = await h.database.db
      .selectFrom('responses')
      .select('id')
      .where('poll_id', '=', acmePoll.id)
      .execute();
    expect(research).toEqual([]);
  });

  it('a 404 for a foreign poll does not reveal that it exists, even to a read_only key of another account', async () => {
    const rivalReader = await h.member(rival.accountId, 'read_only');
    const foreign = expectProblem(
      await call('POST', '/poll/update', rivalReader, { pollId: acmePoll.id, title: 'x' }),
      404,
      'not_found',
    );
    const missing = expectProblem(
      await call('POST', '/poll/update', rivalReader, { pollId: 'poll_0000000000MISSING0000', title: 'x' }),
      404,
      'not_found',
    );
    expect(foreign).toEqual(missing);
  });

  it('unknown routes answer a problem document too', async () => {
    expectProblem(await call('GET', '/nope', acme.key), 404, 'not_found');
  });
});
