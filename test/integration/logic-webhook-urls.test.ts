import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../src/domain/access.js';
import { bearer, harness, keysByRole, ROLES, type Harness, type TestAccount } from '../support/app.js';

// A Trigger webhook action's URL is shown in full only to the roles that manage webhooks; the
// others see its origin with the path masked, and may send the masked form back unchanged.

let h: Harness;
let acct: TestAccount;
let keys: Record<Role, string>;
const MANAGERS: Role[] = ['owner', 'admin', 'billing_admin'];

const SECRET_URL = 'https://hooks.example.com/in/tok_s3cr3t?key=k3y';
const OTHER_URL = 'https://hooks.example.com/second/tok_0th3r';
const MASKED = 'https://hooks.example.com/***';
const ELSEWHERE_URL = 'https://elsewhere.example.com/tok_3lsewhere';
const hook = (url: string) => ({ type: 'trigger-webhook', url });
const questionRule = (action: object, op = 'answered') => ({ match: 'all', conditions: [{ op }], action });
const surveyRule = (action: object) => ({ on: 'complete', action });

const call = (method: 'GET' | 'POST', url: string, key: string, payload?: object) =>
  h.app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });

async function ok(method: 'GET' | 'POST', url: string, key: string, payload?: object) {
  const res = await call(method, url, key, payload);
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json();
}

async function fixture() {
  const poll = (
    await ok('POST', '/poll', acct.key, {
      accountId: acct.accountId,
      title: 'Masked',
      actionLogic: [surveyRule(hook(SECRET_URL)), surveyRule(hook(OTHER_URL))],
    })
  ).data;
  const slide = (
    await ok('POST', '/slide', acct.key, {
      pollId: poll.id,
      type: 'short-answer',
      title: 'Hooked',
      logic: [questionRule(hook(SECRET_URL))],
    })
  ).data;
  return { pollId: poll.id as string, slideId: slide.id as string };
}

const storedPoll = async (pollId: string) => (await ok('GET', `/poll?pollId=${pollId}`, acct.key)).data;
const urlsOf = (rules: { action: { url?: string } }[]) => rules.map((r) => r.action.url);

beforeAll(async () => {
  h = await harness();
  acct = await h.account();
  keys = await keysByRole(h, acct);
});
afterAll(() => h?.close());

describe('reading logic', () => {
  it.each(ROLES)('as %s, every answer carrying logic shows the URLs by role', async (role) => {
    const { pollId } = await fixture();
    const full = MANAGERS.includes(role);
    const reads = [
      await call('GET', `/poll?pollId=${pollId}`, keys[role]),
      await call('GET', `/polls?accountId=${acct.accountId}`, keys[role]),
      await call('GET', `/slides?pollId=${pollId}`, keys[role]),
    ];
    for (const res of reads) {
      expect(res.statusCode, res.body).toBe(200);
      expect(res.body.includes('tok_s3cr3t'), res.body).toBe(full);
      expect(res.body.includes(MASKED)).toBe(!full);
    }
    expect(reads[1]!.body.includes('tok_0th3r')).toBe(full);
    const poll = reads[0]!.json().data;
    expect(urlsOf(poll.actionLogic)).toEqual(full ? [SECRET_URL, OTHER_URL] : [MASKED, MASKED]);
    expect(urlsOf(poll.slides[0].logic)).toEqual([full ? SECRET_URL : MASKED]);
  });

  it('an editor re-committing a saved preview sees the URLs masked', async () => {
    const preview = (
      await ok('POST', '/poll', acct.key, {
        accountId: acct.accountId,
        title: 'P',
        dryRun: true,
        actionLogic: [surveyRule(hook(SECRET_URL))],
      })
    ).data;
    await ok('POST', '/commit', acct.key, { data: preview });
    const res = await call('POST', '/commit', keys.editor, { data: preview });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).not.toContain('tok_s3cr3t');
    expect(urlsOf(res.json().data.actionLogic)).toEqual([MASKED]);
  });
});

describe('an editor saving what they read', () => {
  it('POST /poll/update with a rule put before the masked ones keeps each its stored URL, in order', async () => {
    const { pollId } = await fixture();
    const read = (await ok('GET', `/poll?pollId=${pollId}`, keys.editor)).data;
    expect(urlsOf(read.actionLogic)).toEqual([MASKED, MASKED]);
    const actionLogic = [surveyRule({ type: 'end-survey' }), ...read.actionLogic];
    const res = await call('POST', '/poll/update', keys.editor, { pollId, actionLogic });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).not.toContain('tok_');
    expect(urlsOf(res.json().data.actionLogic)).toEqual([undefined, MASKED, MASKED]);
    expect(urlsOf((await storedPoll(pollId)).actionLogic)).toEqual([undefined, SECRET_URL, OTHER_URL]);
  });

  it('POST /poll/update with masked rules of two origins reordered keeps each rule its own URL', async () => {
    const { pollId } = await fixture();
    const mixed = [surveyRule(hook(SECRET_URL)), surveyRule(hook(ELSEWHERE_URL))];
    await ok('POST', '/poll/update', acct.key, { pollId, actionLogic: mixed });
    const read = (await ok('GET', `/poll?pollId=${pollId}`, keys.editor)).data;
    expect(urlsOf(read.actionLogic)).toEqual([MASKED, 'https://elsewhere.example.com/***']);
    await ok('POST', '/poll/update', keys.editor, { pollId, actionLogic: [...read.actionLogic].reverse() });
    expect(urlsOf((await storedPoll(pollId)).actionLogic)).toEqual([ELSEWHERE_URL, SECRET_URL]);
  });

  it('POST /poll/update of the title alone answers with the URLs masked', async () => {
    const { pollId } = await fixture();
    const res = await call('POST', '/poll/update', keys.editor, { pollId, title: 'Renamed' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).not.toContain('tok_');
    expect(res.body).toContain(MASKED);
  });

  it('POST /slide/update with the masked logic and a new title keeps the stored URL', async () => {
    const { pollId, slideId } = await fixture();
    const [slide] = (await ok('GET', `/slides?pollId=${pollId}`, keys.editor)).data;
    const res = await call('POST', '/slide/update', keys.editor, { slideId, title: 'Renamed', logic: slide.logic });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).not.toContain('tok_');
    expect(urlsOf(res.json().data.logic)).toEqual([MASKED]);
    const stored = (await storedPoll(pollId)).slides[0];
    expect(stored.title).toBe('Renamed');
    expect(urlsOf(stored.logic)).toEqual([SECRET_URL]);
  });

  it.each([
    ['onto other conditions', [questionRule(hook(MASKED), 'not-equals')]],
    ['of another origin', [questionRule(hook('https://elsewhere.example.com/***'))]],
    ['twice for one stored action', [questionRule(hook(MASKED)), questionRule(hook(MASKED))]],
  ])('a masked URL moved %s is a changed webhook action, refused', async (_name, logic) => {
    const { pollId, slideId } = await fixture();
    const res = await call('POST', '/slide/update', keys.editor, { slideId, logic });
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json().code).toBe('role_forbidden');
    expect(urlsOf((await storedPoll(pollId)).slides[0].logic)).toEqual([SECRET_URL]);
  });

  it('a masked URL of the poll rules copied into a slide is a new webhook action, refused', async () => {
    const { pollId, slideId } = await fixture();
    const read = (await ok('GET', `/poll?pollId=${pollId}`, keys.editor)).data;
    const copied = [...read.slides[0].logic, questionRule(read.actionLogic[1].action, 'not-equals')];
    const res = await call('POST', '/slide/update', keys.editor, { slideId, logic: copied });
    expect(res.statusCode, res.body).toBe(403);
    expect(res.body).not.toContain('tok_');
  });

  it('POST /poll/update with one masked rule dropped is a removed webhook action, refused', async () => {
    const { pollId } = await fixture();
    const read = (await ok('GET', `/poll?pollId=${pollId}`, keys.editor)).data;
    const res = await call('POST', '/poll/update', keys.editor, { pollId, actionLogic: read.actionLogic.slice(1) });
    expect(res.statusCode, res.body).toBe(403);
    expect(urlsOf((await storedPoll(pollId)).actionLogic)).toEqual([SECRET_URL, OTHER_URL]);
  });
});

describe('a role that manages webhooks sending the masked form', () => {
  it('keeps the stored URL it stands for: a form read with a masked view saves nothing new', async () => {
    const { pollId, slideId } = await fixture();
    const read = (await ok('GET', `/poll?pollId=${pollId}`, keys.editor)).data;
    expect(urlsOf(read.actionLogic)).toEqual([MASKED, MASKED]);
    await ok('POST', '/poll/update', keys.admin, { pollId, actionLogic: read.actionLogic });
    expect(urlsOf((await storedPoll(pollId)).actionLogic)).toEqual([SECRET_URL, OTHER_URL]);
    const slide = read.slides.find((s: { id: string }) => s.id === slideId);
    await ok('POST', '/slide/update', keys.owner, { slideId, logic: slide.logic });
    const stored = (await storedPoll(pollId)).slides.find((s: { id: string }) => s.id === slideId);
    expect(urlsOf(stored.logic)).toEqual([SECRET_URL]);
  });

  it('beside full URLs of its group, stands for the stored URLs they do not name, or is refused when that cannot be told', async () => {
    const { pollId } = await fixture();
    // Both stored actions read https://hooks.example.com/***: the one named in full is kept by name.
    await ok('POST', '/poll/update', keys.admin, {
      pollId,
      actionLogic: [surveyRule(hook(MASKED)), surveyRule(hook(SECRET_URL))],
    });
    expect(urlsOf((await storedPoll(pollId)).actionLogic)).toEqual([OTHER_URL, SECRET_URL]);
    // One replaced by a new URL, or one removed, beside a masked one: which it stands for is unknown.
    for (const actionLogic of [
      [surveyRule(hook('https://hooks.example.com/new/tok_n3w')), surveyRule(hook(MASKED))],
      [surveyRule(hook(MASKED))],
    ]) {
      const res = await call('POST', '/poll/update', keys.owner, { pollId, actionLogic });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().code).toBe('invalid_url');
    }
    expect(urlsOf((await storedPoll(pollId)).actionLogic)).toEqual([OTHER_URL, SECRET_URL]);
  });

  it('that stands for no stored action is refused as an invalid URL, on update and on create', async () => {
    const { pollId } = await fixture();
    const elsewhere = 'https://elsewhere.example.com/***';
    const res = await call('POST', '/poll/update', keys.owner, {
      pollId,
      actionLogic: [surveyRule(hook(SECRET_URL)), surveyRule(hook(elsewhere))],
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid_url', errors: [{ path: '/actionLogic/1/action/url' }] });
    expect(urlsOf((await storedPoll(pollId)).actionLogic)).toEqual([SECRET_URL, OTHER_URL]);
    const created = await call('POST', '/poll', acct.key, {
      accountId: acct.accountId,
      title: 'Masked on create',
      actionLogic: [surveyRule(hook(MASKED))],
    });
    expect(created.statusCode, created.body).toBe(400);
    expect(created.json()).toMatchObject({ code: 'invalid_url', errors: [{ path: '/actionLogic/0/action/url' }] });
  });
});

it('a stored URL the policy now refuses is not checked again on save: editors can save, and no error quotes it', async () => {
  const loose = await harness({ allowPrivateTargets: true });
  try {
    const owner = await loose.account();
    const editor = await loose.member(owner.accountId, 'editor');
    const privateUrl = 'https://10.1.2.3/in/tok_pr1vate';
    const post = (url: string, key: string, payload: object) =>
      loose.app.inject({ method: 'POST', url, headers: bearer(key), payload });
    const poll = (
      await post('/poll', owner.key, {
        accountId: owner.accountId,
        title: 'P',
        actionLogic: [surveyRule(hook(privateUrl))],
      })
    ).json().data;
    const slide = (
      await post('/slide', owner.key, {
        pollId: poll.id,
        type: 'short-answer',
        title: 'S',
        logic: [questionRule(hook(privateUrl))],
      })
    ).json().data;
    (loose.deps.urlPolicy as { allowPrivateTargets: boolean }).allowPrivateTargets = false;
    const read = await loose.app.inject({ method: 'GET', url: `/poll?pollId=${poll.id}`, headers: bearer(editor) });
    const { actionLogic, slides } = read.json().data;
    expect(urlsOf(actionLogic)).toEqual(['https://10.1.2.3/***']);
    const saves = [
      await post('/poll/update', editor, { pollId: poll.id, title: 'Renamed', actionLogic }),
      await post('/slide/update', editor, { slideId: slide.id, logic: slides[0].logic }),
      await post('/slide/update', editor, { slideId: slide.id, title: 'Renamed' }),
    ];
    for (const res of saves) {
      expect(res.statusCode, res.body).toBe(200);
      expect(res.body).not.toContain('tok_');
    }
    // A URL not saved before is checked as ever.
    const fresh = await post('/poll/update', owner.key, {
      pollId: poll.id,
      actionLogic: [surveyRule(hook(privateUrl)), surveyRule(hook('https://10.9.9.9/new'))],
    });
    expect(fresh.statusCode, fresh.body).toBe(400);
    expect(fresh.json().code).toBe('invalid_url');
  } finally {
    await loose.close();
  }
});
