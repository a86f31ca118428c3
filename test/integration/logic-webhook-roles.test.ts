import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../src/domain/access.js';
import { bearer, harness, keysByRole, ROLES, type Harness, type TestAccount } from '../support/app.js';

// Saving, changing or removing a Trigger webhook action is webhook management: owner, admin and
// billing_admin only. Every write route that carries logic is checked for every role, with and
// without a webhook action in the same request; so is deleting a poll, which deletes its
// webhooks and webhook actions with it.

let h: Harness;
let acct: TestAccount;
let keys: Record<Role, string>;
const MANAGERS: Role[] = ['owner', 'admin', 'billing_admin'];

const HOOK = { type: 'trigger-webhook', url: 'https://hooks.example.com/in' };
const questionRule = (action: object) => ({ match: 'all', conditions: [{ op: 'answered' }], action });
const surveyRule = (action: object) => ({ on: 'complete', action });

const send = (method: 'POST' | 'DELETE', url: string, key: string, payload?: object) =>
  h.app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });

async function ownerPost(url: string, payload: object) {
  const res = await send('POST', url, acct.key, payload);
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json().data;
}

/** A poll with one slide carrying a webhook rule and one carrying none, made by the owner. */
async function fixture() {
  const poll = await ownerPost('/poll', { accountId: acct.accountId, title: 'Roles', actionLogic: [surveyRule(HOOK)] });
  const hooked = await ownerPost('/slide', {
    pollId: poll.id,
    type: 'short-answer',
    title: 'Hooked',
    logic: [questionRule(HOOK)],
  });
  const plain = await ownerPost('/slide', { pollId: poll.id, type: 'short-answer', title: 'Plain' });
  return { pollId: poll.id as string, hooked: hooked.id as string, plain: plain.id as string };
}

type Case = { name: string; webhook: boolean; run: (key: string) => ReturnType<typeof send> };

const cases: Case[] = [
  {
    name: 'POST /poll with a webhook action',
    webhook: true,
    run: (k) => send('POST', '/poll', k, { accountId: acct.accountId, title: 'P', actionLogic: [surveyRule(HOOK)] }),
  },
  {
    name: 'POST /poll with other logic',
    webhook: false,
    run: (k) =>
      send('POST', '/poll', k, {
        accountId: acct.accountId,
        title: 'P',
        actionLogic: [surveyRule({ type: 'end-survey' })],
      }),
  },
  {
    name: 'POST /survey (dry run) with a webhook action',
    webhook: true,
    run: (k) =>
      send('POST', '/survey', k, {
        accountId: acct.accountId,
        title: 'P',
        dryRun: true,
        actionLogic: [surveyRule(HOOK)],
      }),
  },
  {
    name: 'POST /commit of a preview with a webhook action',
    webhook: true,
    run: async (k) => {
      const preview = await send('POST', '/poll', acct.key, {
        accountId: acct.accountId,
        title: 'P',
        dryRun: true,
        actionLogic: [surveyRule(HOOK)],
      });
      return send('POST', '/commit', k, { data: preview.json().data });
    },
  },
  {
    name: 'POST /commit of a preview with other logic',
    webhook: false,
    run: async (k) => {
      const preview = await send('POST', '/poll', acct.key, {
        accountId: acct.accountId,
        title: 'P',
        dryRun: true,
        actionLogic: [surveyRule({ type: 'end-survey' })],
      });
      return send('POST', '/commit', k, { data: preview.json().data });
    },
  },
  {
    name: 'POST /poll/update adding a webhook action',
    webhook: true,
    run: async (k) =>
      send('POST', '/poll/update', k, {
        pollId: (await fixture()).pollId,
        actionLogic: [surveyRule(HOOK), surveyRule({ ...HOOK, url: 'https://hooks.example.com/other' })],
      }),
  },
  {
    name: 'POST /poll/update changing a webhook URL',
    webhook: true,
    run: async (k) =>
      send('POST', '/poll/update', k, {
        pollId: (await fixture()).pollId,
        actionLogic: [surveyRule({ ...HOOK, url: 'https://hooks.example.com/moved' })],
      }),
  },
  {
    name: 'POST /poll/update removing a webhook action',
    webhook: true,
    run: async (k) => send('POST', '/poll/update', k, { pollId: (await fixture()).pollId, actionLogic: [] }),
  },
  {
    name: 'POST /poll/update keeping the webhook action, adding other logic',
    webhook: false,
    run: async (k) =>
      send('POST', '/poll/update', k, {
        pollId: (await fixture()).pollId,
        actionLogic: [
          surveyRule({ type: 'end-survey' }),
          surveyRule({ type: 'trigger-webhook', url: 'https://HOOKS.example.com:443/in' }),
        ],
      }),
  },
  {
    name: 'POST /poll/update of other fields',
    webhook: false,
    run: async (k) => send('POST', '/poll/update', k, { pollId: (await fixture()).pollId, title: 'Renamed' }),
  },
  {
    name: 'POST /slide with a webhook action',
    webhook: true,
    run: async (k) =>
      send('POST', '/slide', k, {
        pollId: (await fixture()).pollId,
        type: 'short-answer',
        title: 'Q',
        logic: [questionRule(HOOK)],
      }),
  },
  {
    name: 'POST /slide with other logic',
    webhook: false,
    run: async (k) =>
      send('POST', '/slide', k, {
        pollId: (await fixture()).pollId,
        type: 'short-answer',
        title: 'Q',
        logic: [questionRule({ type: 'end-survey' })],
      }),
  },
  {
    name: 'POST /slide/update adding a webhook action',
    webhook: true,
    run: async (k) =>
      send('POST', '/slide/update', k, { slideId: (await fixture()).plain, logic: [questionRule(HOOK)] }),
  },
  {
    name: 'POST /slide/update changing the conditions of a webhook action',
    webhook: true,
    run: async (k) =>
      send('POST', '/slide/update', k, {
        slideId: (await fixture()).hooked,
        logic: [{ ...questionRule(HOOK), conditions: [{ op: 'equals', value: 'yes' }] }],
      }),
  },
  {
    name: 'POST /slide/update removing a webhook action',
    webhook: true,
    run: async (k) =>
      send('POST', '/slide/update', k, {
        slideId: (await fixture()).hooked,
        logic: [questionRule({ type: 'end-survey' })],
      }),
  },
  {
    name: 'POST /slide/update keeping the webhook action, adding other logic',
    webhook: false,
    run: async (k) =>
      send('POST', '/slide/update', k, {
        slideId: (await fixture()).hooked,
        title: 'Renamed',
        logic: [questionRule({ type: 'end-survey' }), questionRule(HOOK)],
      }),
  },
  {
    name: 'POST /slide/update of other fields on a slide with a webhook action',
    webhook: false,
    run: async (k) => send('POST', '/slide/update', k, { slideId: (await fixture()).hooked, title: 'Renamed' }),
  },
  {
    name: 'DELETE /slide of a slide with a webhook action',
    webhook: true,
    run: async (k) => send('DELETE', `/slide?slideId=${(await fixture()).hooked}`, k),
  },
  {
    name: 'DELETE /slide of a slide without one',
    webhook: false,
    run: async (k) => send('DELETE', `/slide?slideId=${(await fixture()).plain}`, k),
  },
  // Deleting a poll deletes its webhooks and its webhook actions with it.
  {
    name: 'DELETE /poll of a poll with webhook actions',
    webhook: true,
    run: async (k) => deletePoll(k, (await fixture()).pollId),
  },
  {
    name: 'DELETE /poll of a poll whose only webhook action is its own',
    webhook: true,
    run: async (k) => deletePoll(k, await plainPoll([], [surveyRule(HOOK)])),
  },
  {
    name: 'DELETE /poll of a poll whose only webhook action is on a slide',
    webhook: true,
    run: async (k) => deletePoll(k, await plainPoll([questionRule(HOOK)])),
  },
  {
    name: 'DELETE /poll of a poll with a webhook',
    webhook: true,
    run: async (k) => {
      const pollId = await plainPoll();
      await ownerPost('/webhooks', { pollId, url: 'https://hooks.example.com/wh', deliveryRule: 'complete' });
      return deletePoll(k, pollId);
    },
  },
  {
    name: 'DELETE /poll of a poll with neither',
    webhook: false,
    run: async (k) => deletePoll(k, await plainPoll([questionRule({ type: 'end-survey' })])),
  },
];

/** A poll with `actionLogic` and one slide with `logic`, made by the owner. */
async function plainPoll(logic: object[] = [], actionLogic: object[] = []): Promise<string> {
  const poll = await ownerPost('/poll', { accountId: acct.accountId, title: 'Plain', actionLogic });
  await ownerPost('/slide', { pollId: poll.id, type: 'short-answer', title: 'Q', logic });
  return poll.id as string;
}

/** Deletes the poll with `key`; a refused delete must leave it in place. */
async function deletePoll(key: string, pollId: string) {
  const res = await send('DELETE', `/poll?pollId=${pollId}`, key);
  const after = await h.app.inject({ method: 'GET', url: `/poll?pollId=${pollId}`, headers: bearer(acct.key) });
  expect(after.statusCode, after.body).toBe(res.statusCode < 300 ? 404 : 200);
  return res;
}

beforeAll(async () => {
  h = await harness();
  acct = await h.account();
  keys = await keysByRole(h, acct);
});
afterAll(() => h?.close());

describe.each(cases)('$name', ({ webhook, run }) => {
  it.each(ROLES)('as %s', async (role) => {
    const res = await run(keys[role]);
    const allowed = role === 'read_only' ? false : webhook ? MANAGERS.includes(role) : true;
    if (allowed) {
      expect(res.statusCode, res.body).toBeLessThan(300);
    } else {
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().code).toBe('role_forbidden');
    }
  });
});

describe('the signing secret', () => {
  it('is never created or shown by an editor, and reaches the first manager who saves a webhook action', async () => {
    const other = await h.account();
    const editor = await h.member(other.accountId, 'editor');
    const poll = (await send('POST', '/poll', other.key, { accountId: other.accountId, title: 'Secret' })).json().data;

    const refused = await send('POST', '/slide', editor, {
      pollId: poll.id,
      type: 'short-answer',
      title: 'Q',
      logic: [questionRule(HOOK)],
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).not.toContain('whsec_');
    const plain = await send('POST', '/slide', editor, {
      pollId: poll.id,
      type: 'short-answer',
      title: 'Q',
      logic: [questionRule({ type: 'end-survey' })],
    });
    expect(plain.statusCode, plain.body).toBe(201);
    expect(plain.json().signingSecret).toBeUndefined();
    expect((await h.deps.store.accounts.get(other.accountId))?.signingSecret).toBeNull();
    // Nothing was saved by the refused request.
    const slides = (
      await h.app.inject({ method: 'GET', url: `/slides?pollId=${poll.id}`, headers: bearer(other.key) })
    ).json().data;
    expect(slides.map((s: { title: string }) => s.title)).toEqual(['Q']);

    const saved = await send('POST', '/slide', other.key, {
      pollId: poll.id,
      type: 'short-answer',
      title: 'Q2',
      logic: [questionRule(HOOK)],
    });
    expect(saved.statusCode, saved.body).toBe(201);
    expect(saved.json().signingSecret).toMatch(/^whsec_/);
  });
});
