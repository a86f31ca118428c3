import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, harness, type Harness, type TestAccount } from '../../support/app.js';
import { answer } from '../../support/fixtures.js';

// Poll ids are chosen by the client on /commit. An id that belongs, or ever belonged, to one
// account must never carry another account's data onto what hangs on it: logic endpoints with
// their alert state and recipients, and the delivery log.

let h: Harness;
let a: TestAccount;
let b: TestAccount;

beforeAll(async () => {
  h = await harness();
  a = await h.account({ name: 'A' });
  b = await h.account({ name: 'B' });
});
afterAll(() => h?.close());

const post = (url: string, payload: object, key: string) =>
  h.app.inject({ method: 'POST', url, headers: bearer(key), payload });
const HOOK_URL = 'https://hooks.example.com/a-only';

/** A visible poll of `acct` with survey logic that triggers HOOK_URL on completion, answered once. */
async function answeredLogicPoll(acct: TestAccount, id?: string): Promise<string> {
  const body = {
    accountId: acct.accountId,
    title: 'Logic',
    actionLogic: [{ on: 'complete', action: { type: 'trigger-webhook', url: HOOK_URL } }],
  };
  let pollId: string;
  if (id) {
    const res = await post(
      '/commit',
      { data: { ...(await post('/poll', { ...body, dryRun: true }, acct.key)).json().data, id } },
      acct.key,
    );
    expect(res.statusCode, res.body).toBe(201);
    pollId = res.json().data.id;
  } else {
    pollId = (await post('/poll', body, acct.key)).json().data.id;
  }
  const slide = (await post('/slide', { pollId, type: 'short-answer', title: 'Q' }, acct.key)).json().data;
  expect((await post('/poll/update', { pollId, isVisible: true }, acct.key)).statusCode).toBe(200);
  await answer(h, { pollId, answers: [{ slideId: slide.id, value: 'hello' }], complete: true });
  return pollId;
}

async function endpointsOf(pollId: string) {
  return h.database.db.selectFrom('endpoints').select(['id', 'account_id']).where('poll_id', '=', pollId).execute();
}

describe('a deleted poll id', () => {
  it('cannot be committed by another account, and its endpoints are gone', async () => {
    const pollId = await answeredLogicPoll(a);
    const [endpoint] = await endpointsOf(pollId);
    expect(endpoint?.account_id).toBe(a.accountId);

    const del = await h.app.inject({ method: 'DELETE', url: `/poll?pollId=${pollId}`, headers: bearer(a.key) });
    expect(del.statusCode, del.body).toBe(200);
    expect(await endpointsOf(pollId)).toEqual([]);

    const preview = (await post('/poll', { accountId: b.accountId, title: 'Mine now', dryRun: true }, b.key)).json()
      .data;
    const taken = await post('/commit', { data: { ...preview, id: pollId } }, b.key);
    expect(taken.statusCode, taken.body).toBe(404);
    expect(taken.json().code).toBe('not_found');
    expect(await h.deps.store.polls.get(pollId)).toBeUndefined();
    // A repeat answers the same: the refusal does not depend on a first attempt.
    expect((await post('/commit', { data: { ...preview, id: pollId } }, b.key)).statusCode).toBe(404);
  });

  it("stays its own account's: that account may commit it again, and its deliveries get their own endpoint", async () => {
    const first = await answeredLogicPoll(a);
    expect(
      (await h.app.inject({ method: 'DELETE', url: `/poll?pollId=${first}`, headers: bearer(a.key) })).statusCode,
    ).toBe(200);
    const again = await answeredLogicPoll(a, first);
    expect(again).toBe(first);
    const endpoints = await endpointsOf(first);
    expect(endpoints.map((e) => e.account_id)).toEqual([a.accountId]);
    const deliveries = await h.database.db
      .selectFrom('deliveries')
      .select(['account_id', 'endpoint_id'])
      .where('poll_id', '=', first)
      .execute();
    expect(new Set(deliveries.map((d) => d.account_id))).toEqual(new Set([a.accountId]));
    expect(deliveries.map((d) => d.endpoint_id)).toContain(endpoints[0]!.id);
  });
});

describe('a commit', () => {
  it("of another account's live poll id answers 404, and of the caller's own preview is idempotent", async () => {
    const live = (await post('/poll', { accountId: a.accountId, title: 'Live' }, a.key)).json().data;
    const preview = (await post('/poll', { accountId: b.accountId, title: 'B', dryRun: true }, b.key)).json().data;
    expect((await post('/commit', { data: { ...preview, id: live.id } }, b.key)).statusCode).toBe(404);

    const once = await post('/commit', { data: preview }, b.key);
    const twice = await post('/commit', { data: preview }, b.key);
    expect([once.statusCode, twice.statusCode]).toEqual([201, 200]);
    expect(twice.json().data.id).toBe(once.json().data.id);
    expect(twice.json().data.accountId).toBe(b.accountId);
  });

  it("of another account's poll id answers 404 when that poll's deletion commits between the commit's reads", async () => {
    const live = (await post('/poll', { accountId: a.accountId, title: 'Deleted meanwhile' }, a.key)).json().data;
    const preview = (await post('/poll', { accountId: b.accountId, title: 'B', dryRun: true }, b.key)).json().data;
    // The deletion lands after the commit has looked for a tombstone, before it looks for the poll.
    const polls = h.deps.store.polls;
    const get = polls.get.bind(polls);
    let deleted = false;
    polls.get = async (id) => {
      if (id === live.id && !deleted) {
        deleted = true;
        const del = await h.app.inject({ method: 'DELETE', url: `/poll?pollId=${id}`, headers: bearer(a.key) });
        expect(del.statusCode, del.body).toBe(200);
      }
      return get(id);
    };
    try {
      const res = await post('/commit', { data: { ...preview, id: live.id } }, b.key);
      expect(deleted).toBe(true);
      expect(res.statusCode, res.body).toBe(404);
    } finally {
      polls.get = get;
    }
    const stored = await h.database.db.selectFrom('polls').select('account_id').where('id', '=', live.id).execute();
    expect(stored).toEqual([]);
  });

  it('of a preview whose id another account guesses from its own preview made just before is not taken by it', async () => {
    const body = { accountId: b.accountId, title: 'B', dryRun: true };
    const [x, y] = await Promise.all([post('/poll', body, b.key), post('/poll', body, b.key)]);
    const ids = [x.json().data.id as string, y.json().data.id as string];
    // Made in the same millisecond (the test clock stands still), yet not one after the other.
    const digits = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    const value = (id: string) => [...id.slice(-14)].reduce((n, c) => n * 62n + BigInt(digits.indexOf(c)), 0n);
    const [low, high] = ids.map(value).sort((m, n) => (m < n ? -1 : 1));
    expect(high! - low!).toBeGreaterThan(1n);
  });
});

describe('logic endpoints', () => {
  it('are identified within their account: the same poll id and URL in two accounts make two endpoints', async () => {
    const base = {
      pollId: 'poll_shared_by_name',
      source: 'survey-logic' as const,
      slideId: null,
      url: HOOK_URL,
      createdAt: new Date(),
    };
    const ofA = await h.deps.store.endpoints.ensureLogic([{ ...base, id: 'end_a', accountId: a.accountId }]);
    const ofB = await h.deps.store.endpoints.ensureLogic([{ ...base, id: 'end_b', accountId: b.accountId }]);
    expect([ofA, ofB]).toEqual([['end_a'], ['end_b']]);
    expect(await h.deps.store.endpoints.ensureLogic([{ ...base, id: 'end_c', accountId: b.accountId }])).toEqual([
      'end_b',
    ]);
    expect(await h.deps.store.endpoints.getMany(b.accountId, ['end_a', 'end_b'])).toHaveLength(1);
  });

  it('are found or made all at once, each key once, in the order asked', async () => {
    const at = new Date();
    const of = (id: string, url: string, slideId: string | null = null) => ({
      id,
      accountId: a.accountId,
      pollId: 'poll_many_targets',
      source: slideId ? ('question-logic' as const) : ('survey-logic' as const),
      slideId,
      url,
      createdAt: at,
    });
    expect(await h.deps.store.endpoints.ensureLogic([of('end_m0', `${HOOK_URL}/0`)])).toEqual(['end_m0']);
    // One known, two new (one of them asked twice), and a question's target at a URL a survey rule has too.
    const ids = await h.deps.store.endpoints.ensureLogic([
      of('end_m1', `${HOOK_URL}/1`),
      of('end_mx', `${HOOK_URL}/0`),
      of('end_m2', `${HOOK_URL}/2`),
      of('end_m1b', `${HOOK_URL}/1`),
      of('end_mq', `${HOOK_URL}/0`, 'sld_question'),
    ]);
    expect(ids).toEqual(['end_m1', 'end_m0', 'end_m2', 'end_m1', 'end_mq']);
    expect(await h.deps.store.endpoints.getMany(a.accountId, ['end_mx', 'end_m1b'])).toEqual([]);
  });
});
